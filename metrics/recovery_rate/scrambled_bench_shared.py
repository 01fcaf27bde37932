"""What the Scrambled Bench metric modules share: the paper's citation and links, the module info, input
checks, the checked ``add_batch``/``compute``, edit distances and bootstrap intervals.

Every metric folder carries an identical copy of this file, the way evaluate's ``bleu`` carries
``tokenizer_13a.py``, so each folder stays self-contained and can be pushed as a Hub Space as it is
(``evaluate.load`` copies a script's relative imports beside it). A test keeps the copies identical.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import datasets
import evaluate
import numpy as np
from rapidfuzz.distance import Levenshtein

PAPER_URL = "https://arxiv.org/abs/2311.18805"
CODE_URL = "https://github.com/ccqq77/unnatural-error-correction"

CITATION = """\
@inproceedings{cao-etal-2023-unnatural,
    title = "Unnatural Error Correction: {GPT}-4 Can Almost Perfectly Handle Unnatural Scrambled Text",
    author = "Cao, Qi and Kojima, Takeshi and Matsuo, Yutaka and Iwasawa, Yusuke",
    booktitle = "Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing",
    year = "2023",
    publisher = "Association for Computational Linguistics",
    url = "https://arxiv.org/abs/2311.18805",
}
"""


def metric_info(
    description: str,
    inputs_description: str,
    columns: Sequence[str],
    *,
    codebase_urls: Sequence[str] = (CODE_URL,),
    reference_urls: Sequence[str] = (PAPER_URL,),
) -> evaluate.MetricInfo:
    """The ``MetricInfo`` of a Scrambled Bench metric: the paper's citation and links, a string per column.

    >>> metric_info("RR", "Args: ...", ["predictions", "references"]).features["references"]
    Value('string')
    """
    return evaluate.MetricInfo(
        module_type="metric",
        description=description,
        citation=CITATION,
        inputs_description=inputs_description,
        features=datasets.Features({name: datasets.Value("string") for name in columns}),
        homepage=CODE_URL,
        codebase_urls=list(codebase_urls),
        reference_urls=list(reference_urls),
    )


def edit_distances(references: Sequence[str], others: Sequence[str]) -> list[int]:
    """Character-level Levenshtein distance (all edits cost 1) of each pair, surrounding whitespace stripped.

    >>> edit_distances(["kitten", "flaw "], ["sitting", " lawn"])
    [3, 2]
    """
    distance = Levenshtein.distance
    return [distance(reference.strip(), other.strip()) for reference, other in zip(references, others)]


def check_strings(name: str, values: object, *, allow_none: bool = False) -> list:
    """``values`` as a list after checking that it is a list of strings (or None, where allowed).

    >>> check_strings("references", ["A", None])
    Traceback (most recent call last):
    ...
    ValueError: references[1] must be a string, got NoneType: None
    """
    if values is None or isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise ValueError(f"{name} must be a list of strings, got {type(values).__name__}")
    values = list(values)
    for index, value in enumerate(values):
        if value is None and allow_none:
            continue
        if not isinstance(value, str):
            raise ValueError(f"{name}[{index}] must be a string, got {type(value).__name__}: {value!r:.60}")
    return values


def check_same_length(columns: dict[str, list]) -> None:
    """Every column holds the same samples, and there is at least one.

    >>> check_same_length({"predictions": ["a"], "references": ["a", "b"]})
    Traceback (most recent call last):
    ...
    ValueError: the inputs must have the same length (the same samples), got predictions=1, references=2
    """
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{name}={length}" for name, length in lengths.items())
        raise ValueError(f"the inputs must have the same length (the same samples), got {listed}")
    if not any(lengths.values()):
        raise ValueError(f"{', '.join(columns)} are empty: there is nothing to score")


def check_columns(columns: dict[str, object]) -> dict[str, list[str]]:
    """Every column as a list of strings (:func:`check_strings`, in order), all of the same samples
    (:func:`check_same_length`).

    >>> check_columns({"predictions": ["a"], "references": ("b",)})
    {'predictions': ['a'], 'references': ['b']}
    """
    checked = {name: check_strings(name, values) for name, values in columns.items()}
    check_same_length(checked)
    return checked


def check_bootstrap_options(confidence_level: object, n_resamples: object) -> None:
    """Reject a confidence level outside (0, 1) or a resample count below 1.

    >>> check_bootstrap_options(1.5, 100)
    Traceback (most recent call last):
    ...
    ValueError: confidence_level must be a number between 0 and 1 (exclusive), got 1.5
    """
    if confidence_level is not None and (
        isinstance(confidence_level, bool)
        or not isinstance(confidence_level, (int, float))
        or not 0 < confidence_level < 1
    ):
        raise ValueError(
            f"confidence_level must be a number between 0 and 1 (exclusive), got {confidence_level!r}"
        )
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")


def bootstrap_interval(
    statistic: Callable[[np.ndarray], np.ndarray],
    n_samples: int,
    confidence_level: float,
    n_resamples: int,
    seed: int,
) -> tuple[list[float] | None, int]:
    """Percentile-bootstrap interval of ``statistic`` over resampled sample indices.

    ``statistic`` maps an ``(n_resamples, n_samples)`` index array to one value per resample, NaN where
    the statistic is undefined for that resample; those are left out and counted. The interval is None
    when no resample has a defined value.

    >>> values = np.array([0.0, 1.0, 1.0, 1.0])
    >>> (low, high), undefined = bootstrap_interval(lambda idx: values[idx].mean(axis=1), 4, 0.9, 200, 0)
    >>> 0.0 <= low <= 0.75 <= high <= 1.0, undefined
    (True, 0)
    """
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, n_samples, size=(n_resamples, n_samples))
    values = np.asarray(statistic(indices), dtype=float)
    defined = values[~np.isnan(values)]
    if defined.size == 0:
        return None, int(values.size)
    tail = (1.0 - confidence_level) / 2.0
    low, high = np.quantile(defined, [tail, 1.0 - tail])
    return [float(low), float(high)], int(values.size - defined.size)


def resampled_mean(values: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The mean of ``values`` in each resample of an ``(n_resamples, n_samples)`` index array.

    >>> resampled_mean(np.array([0.0, 1.0]), np.array([[0, 0], [0, 1]])).tolist()
    [0.0, 0.5]
    """
    return values[indices].mean(axis=1)


def bootstrap_intervals(
    statistics: dict[str, Callable[[np.ndarray], np.ndarray]],
    n_samples: int,
    confidence_level: float,
    n_resamples: int,
    seed: int,
) -> dict[str, Any]:
    """:func:`bootstrap_interval` of each statistic under its name (all over the same resamples), then the
    bootstrap's ``confidence_level``, ``n_resamples`` and ``undefined_resamples``: the most resamples that
    any one statistic left out.

    >>> values = np.array([0.0, 1.0, 1.0, 1.0])
    >>> result = bootstrap_intervals({"mean_ci": lambda idx: resampled_mean(values, idx)}, 4, 0.9, 200, 0)
    >>> sorted(result), result["undefined_resamples"]
    (['confidence_level', 'mean_ci', 'n_resamples', 'undefined_resamples'], 0)
    """
    result: dict[str, Any] = {}
    undefined = 0
    for name, statistic in statistics.items():
        result[name], left_out = bootstrap_interval(statistic, n_samples, confidence_level, n_resamples, seed)
        undefined = max(undefined, left_out)
    result.update(confidence_level=confidence_level, n_resamples=n_resamples, undefined_resamples=undefined)
    return result


def computes_in_memory(module: Any) -> bool:
    """Whether ``module.compute(**inputs)`` may score ``inputs`` directly.

    evaluate's own ``compute`` writes every column to an Arrow cache file and reads it back before
    scoring, which costs far more than the arithmetic here. That round trip only matters when batches
    were added earlier (``add_batch``) or several processes share the metric; otherwise the result is
    the same without it.
    """
    return getattr(module, "num_process", 1) == 1 and getattr(module, "writer", None) is None


class CheckedMetric:
    """The ``add_batch`` and ``compute`` of a Scrambled Bench metric: every column is checked first (a
    one-line ``ValueError`` naming the argument and index), and a ``compute`` given its inputs scores them in
    memory where that gives the same result (:func:`computes_in_memory`).

    Mix it in before ``evaluate.Metric``: ``class RecoveryRate(CheckedMetric, evaluate.Metric)``. It is no
    ``evaluate.Metric`` itself, so ``evaluate.load`` still takes the script's own class for the module. A
    metric names its :attr:`extra_columns` and gives :meth:`check_inputs`.
    """

    extra_columns: tuple[str, ...] = ()
    """The input columns besides ``predictions`` and ``references``, in ``check_inputs``' order."""
    bootstrap: bool = False
    """Whether ``compute`` takes ``confidence_level`` and ``n_resamples`` (checked before anything else)."""

    @staticmethod
    def check_inputs(predictions: object, references: object, *extra: object) -> dict[str, list]:
        """The columns as lists, or a one-line ``ValueError`` naming the argument and index."""
        raise NotImplementedError

    def check_scorable(self, columns: dict[str, list]) -> None:
        """Refuse inputs whose score is undefined (none by default). It runs before evaluate has written
        anything: a raise inside ``_compute`` leaves the module's cache lock held and the next compute waits
        on it."""

    def _require_every_column(self, columns: dict[str, list], needs: str) -> None:
        # evaluate's Arrow cache holds every feature of every sample: a column left out cannot be written
        missing = [name for name in self.features if name not in columns]
        if missing:
            raise ValueError(f"{needs} {' and '.join(missing)} too")

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Check a batch (one-line ``ValueError`` naming the argument and index), then add it."""
        extra = [kwargs.pop(name, None) for name in self.extra_columns]
        columns = self.check_inputs(predictions, references, *extra)
        self._require_every_column(columns, "add_batch needs")
        return super().add_batch(**columns, **kwargs)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Check the inputs (one-line ``ValueError`` naming the argument), then compute."""
        if self.bootstrap:
            check_bootstrap_options(kwargs.get("confidence_level"), kwargs.get("n_resamples", 1000))
        extra = [kwargs.pop(name, None) for name in self.extra_columns]
        if predictions is None and references is None and all(values is None for values in extra):
            return super().compute(**kwargs)  # the inputs came through add_batch, which checked them
        columns = self.check_inputs(predictions, references, *extra)
        self.check_scorable(columns)
        if computes_in_memory(self):
            return self._compute(**columns, **kwargs)
        self._require_every_column(columns, "after add_batch, compute needs")
        return super().compute(**columns, **kwargs)
