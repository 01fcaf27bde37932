"""Character-level edit distance (Levenshtein) as the Scrambled Bench (Cao et al., EMNLP 2023) measures it.

Self-contained ``evaluate`` module: it imports nothing from scrambled_bench, only its sibling file
``scrambled_bench_shared.py`` (the citation, edit distances, input checks), so the folder can be pushed as a
Hub Space as is. The arithmetic lives in plain functions that the ``evaluate`` class only wires up.
"""

from __future__ import annotations

from collections.abc import Sequence

import evaluate
import numpy as np
from rapidfuzz.distance import Levenshtein

from .scrambled_bench_shared import (
    PAPER_URL,
    CheckedMetric,
    check_columns,
    edit_distances,
    metric_info,
)

_DESCRIPTION = """\
Character-level Levenshtein distance (ED: insertions, deletions and substitutions all cost 1) between each
prediction and its reference, the distance the Scrambled Bench's recovery rate is built on. Reports the
mean (the ED column of the paper's Tables 3 and 4), the median, and the mean normalised distance
(ED divided by the longer string's length). Surrounding whitespace is stripped from every string first,
as in the paper's evaluation.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): the texts to measure, e.g. the sentences a model recovered.
    references (`list` of `str`): the texts to measure them against, e.g. the original sentences.
Returns:
    edit_distance (`float`): mean ED, >= 0.
    median_edit_distance (`float`): median ED, >= 0.
    normalized_edit_distance (`float`): mean of ED / max(len(prediction), len(reference)), in [0, 1]
        (0 for two empty strings).
    num_samples (`int`): number of pairs.
Examples:
    >>> import evaluate
    >>> ed = evaluate.load("metrics/edit_distance")  # from a checkout; "ORG/edit_distance" from the Hub
    >>> ed.compute(predictions=["kitten", "flaw"], references=["sitting", "lawn"])
    {'edit_distance': 2.5, 'median_edit_distance': 2.5, 'normalized_edit_distance': 0.4642857142857143, 'num_samples': 2}
"""


def normalized_edit_distances(references: Sequence[str], others: Sequence[str]) -> list[float]:
    """ED divided by the longer stripped string's length, in [0, 1]; 0 for two empty strings.

    >>> normalized_edit_distances(["kitten", ""], ["sitting", ""])
    [0.42857142857142855, 0.0]
    """
    return [
        Levenshtein.normalized_distance(reference.strip(), other.strip())
        for reference, other in zip(references, others)
    ]


def check_inputs(predictions: object, references: object) -> dict[str, list[str]]:
    """The two columns as lists, after rejecting what cannot be measured, with a message naming the
    argument and index.

    >>> check_inputs(["a", None], ["a", "b"])
    Traceback (most recent call last):
    ...
    ValueError: predictions[1] must be a string, got NoneType: None
    """
    return check_columns({"predictions": predictions, "references": references})


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class EditDistance(CheckedMetric, evaluate.Metric):
    """Mean, median and normalised character-level Levenshtein distance."""

    check_inputs = staticmethod(check_inputs)

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(
            _DESCRIPTION,
            _KWARGS_DESCRIPTION,
            ["predictions", "references"],
            codebase_urls=[],
            reference_urls=[PAPER_URL, "https://github.com/rapidfuzz/RapidFuzz"],
        )

    def _compute(self, predictions, references):
        distances = np.array(edit_distances(references, predictions), dtype=float)
        return {
            "edit_distance": float(distances.mean()),
            "median_edit_distance": float(np.median(distances)),
            "normalized_edit_distance": float(np.mean(normalized_edit_distances(references, predictions))),
            "num_samples": len(predictions),
        }
