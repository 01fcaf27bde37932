"""Recovery rate (RR) of the Scrambled Bench (Cao et al., EMNLP 2023): how much of the scrambling a model undid.

Self-contained ``evaluate`` module: it imports nothing from scrambled_bench, only its sibling file
``scrambled_bench_shared.py`` (the citation, edit distances, input checks, bootstrap intervals), so the folder
can be pushed as a Hub Space as is. The arithmetic lives in plain functions that the ``evaluate`` class only
wires up.
"""

from __future__ import annotations

from collections.abc import Sequence

import evaluate
import numpy as np

from .scrambled_bench_shared import (
    CheckedMetric,
    bootstrap_intervals,
    check_columns,
    edit_distances,
    metric_info,
    resampled_mean,
)

_DESCRIPTION = """\
Recovery rate (RR) of the Scrambled Sentence Recovery task (ScrRec): the share of the scrambling, measured
in character-level Levenshtein distance (ED) to the original sentence, that the model's recovered sentence
removed, over the whole set: RR = (sum ED(ori, scr) - sum ED(ori, rec)) / sum ED(ori, scr).
1 is perfect recovery, 0 an unchanged echo of the scrambled input, below 0 a result further from the
original than the input. (The paper prints the numerator with the sign reversed; its tables use this form.)
Surrounding whitespace is stripped from every string first, as in the paper's evaluation.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): the sentences the model recovered.
    references (`list` of `str`): the original sentences.
    scrambled (`list` of `str`): the scrambled sentences the model was given.
    confidence_level (`float`, optional): e.g. 0.95 to add bootstrap intervals over samples (BCa, or the
        percentile interval where BCa is undefined).
    n_resamples (`int`, default 1000): bootstrap resamples.
    seed (`int`, default 0): seed of the bootstrap, so intervals are reproducible.
Returns:
    recovery_rate (`float`): RR as a fraction, at most 1 (no lower bound).
    edit_distance (`float`): mean ED between predictions and references, >= 0.
    scrambled_edit_distance (`float`): mean ED between scrambled and references, >= 0.
    num_samples (`int`): number of sentences.
    With `confidence_level`: recovery_rate_ci and edit_distance_ci (`[low, high]`), each with its method
    beside it (recovery_rate_ci_method, edit_distance_ci_method: "bca" or "percentile"), confidence_level,
    n_resamples and undefined_resamples (resamples whose scrambled ED summed to 0, left out).
Examples:
    >>> import evaluate
    >>> rr = evaluate.load("metrics/recovery_rate")  # from a checkout; "ORG/recovery_rate" from the Hub
    >>> rr.compute(predictions=["The cat sat."], references=["The cat sat."], scrambled=["Teh cta sat."])
    {'recovery_rate': 1.0, 'edit_distance': 0.0, 'scrambled_edit_distance': 4.0, 'num_samples': 1}
"""


def recovery_rate(recovered_distances: Sequence[float], scrambled_distances: Sequence[float]) -> float:
    """RR = (sum ED(ori, scr) - sum ED(ori, rec)) / sum ED(ori, scr), from per-sample distances.

    Raises ``ValueError`` when the scrambled distances sum to 0 (nothing was scrambled: RR is undefined).

    >>> recovery_rate([0, 1], [4, 4])
    0.875
    >>> recovery_rate([4, 4], [4, 4])
    0.0
    """
    scrambled_total = float(np.sum(scrambled_distances))
    if scrambled_total == 0:
        raise ValueError(
            "recovery rate is undefined: every scrambled sentence equals its reference (sum of ED is 0)"
        )
    return (scrambled_total - float(np.sum(recovered_distances))) / scrambled_total


def check_inputs(predictions: object, references: object, scrambled: object) -> dict[str, list[str]]:
    """The three columns as lists, after rejecting what would give a wrong or undefined RR, with a message
    naming the argument and index.

    >>> check_inputs(["a"], ["a", "b"], ["b", "a"])
    Traceback (most recent call last):
    ...
    ValueError: the inputs must have the same length (the same samples), got predictions=1, references=2, scrambled=2
    """
    if scrambled is None:
        raise ValueError("scrambled is missing: pass the scrambled sentences the model was given")
    return check_columns({"predictions": predictions, "references": references, "scrambled": scrambled})


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class RecoveryRate(CheckedMetric, evaluate.Metric):
    """The ScrRec recovery rate, with the mean edit distances it is built from."""

    extra_columns = ("scrambled",)
    bootstrap = True
    check_inputs = staticmethod(check_inputs)

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(_DESCRIPTION, _KWARGS_DESCRIPTION, ["predictions", "references", "scrambled"])

    def check_scorable(self, columns: dict[str, list[str]]) -> None:
        """Refuse an undefined RR (every scrambled sentence equal to its reference)."""
        if all(r.strip() == s.strip() for r, s in zip(columns["references"], columns["scrambled"])):
            recovery_rate([], [0])

    def _compute(self, predictions, references, scrambled, confidence_level=None, n_resamples=1000, seed=0):
        recovered = np.array(edit_distances(references, predictions), dtype=float)
        scrambled_ed = np.array(edit_distances(references, scrambled), dtype=float)
        result = {
            "recovery_rate": recovery_rate(recovered, scrambled_ed),
            "edit_distance": float(recovered.mean()),
            "scrambled_edit_distance": float(scrambled_ed.mean()),
            "num_samples": len(predictions),
        }
        if confidence_level is None:
            return result

        def resampled_rate(indices: np.ndarray) -> np.ndarray:
            scrambled_totals = scrambled_ed[indices].sum(axis=-1)
            with np.errstate(divide="ignore", invalid="ignore"):
                rates = (scrambled_totals - recovered[indices].sum(axis=-1)) / scrambled_totals
            return np.where(scrambled_totals == 0, np.nan, rates)

        statistics = {
            "recovery_rate_ci": resampled_rate,
            "edit_distance_ci": lambda indices: resampled_mean(recovered, indices),
        }
        result.update(bootstrap_intervals(statistics, len(predictions), confidence_level, n_resamples, seed))
        return result
