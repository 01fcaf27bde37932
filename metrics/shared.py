"""What the Scrambled Bench metric modules share, in one home: the paper's citation and links, the module
info, input checks, the checked ``add_batch``/``compute``, edit distances, and the one set of interval
functions (Wilson for proportions, BCa bootstrap with a percentile fallback for means and ratios) that every
number of the package uses: the metric modules, and ``run``, ``score`` and ``report`` through
:mod:`scrambled_bench.metrics.statistics`, take them from here.

Every metric folder carries a generated copy of this file, ``scrambled_bench_shared.py``, the way evaluate's
``bleu`` carries ``tokenizer_13a.py``, so that each folder stays self-contained and can be pushed as a Hub
Space as it is (``evaluate.load`` copies a script's relative imports beside it). So this file imports
nothing of scrambled_bench, only what the folders' ``requirements.txt`` install. After editing it, run
``python scripts/sync_metric_folders.py`` (:mod:`scrambled_bench.metrics.folders`); a test fails while a
copy differs from it.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Sequence
from statistics import NormalDist  # the standard library's, not scrambled_bench.metrics.statistics
from typing import TYPE_CHECKING, Any

import numpy as np
from rapidfuzz.distance import Levenshtein

if TYPE_CHECKING:
    import evaluate

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
    # datasets and evaluate take seconds to import: only a metric module's info needs them, not the
    # intervals that scrambled_bench.metrics.statistics (report, probe) takes from here
    import datasets
    import evaluate

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


WILSON, BCA, PERCENTILE = "wilson", "bca", "percentile"
"""The interval methods, by the name every interval records beside itself (``<score>_ci_method``): Wilson's
score interval for a proportion (accuracy), the bias-corrected and accelerated bootstrap for a mean or a
ratio (ED, RR, RPG), and the percentile bootstrap where BCa is undefined."""


def wilson_interval(successes: int, n: int, confidence_level: float) -> list[float]:
    """Wilson's score interval of a proportion ``successes / n``, as fractions: never of zero width, at 0 of
    n and n of n included (a percentile bootstrap of a constant sample would claim certainty). It is the
    interval of ``statsmodels.stats.proportion.proportion_confint(method="wilson")``.

    >>> [round(bound, 4) for bound in wilson_interval(8, 10, 0.95)]
    [0.4902, 0.9433]
    >>> [round(bound, 4) for bound in wilson_interval(0, 6, 0.95)]
    [0.0, 0.3903]
    """
    if n < 1:
        raise ValueError(f"a proportion needs at least one sample, got n={n}")
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence_level) / 2.0)
    share = successes / n
    spread = z * z / n
    centre = (share + spread / 2.0) / (1.0 + spread)
    half = z / (1.0 + spread) * float(np.sqrt(share * (1.0 - share) / n + spread / (4.0 * n)))
    # at 0 of n (n of n) the bound is exactly 0 (1); the formula can miss it by a rounding error
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return [low, high]


def bootstrap_interval(
    statistic: Callable[[np.ndarray], np.ndarray],
    n_samples: int,
    confidence_level: float,
    n_resamples: int,
    seed: int,
) -> dict[str, Any]:
    """Bootstrap interval of ``statistic`` over resampled sample indices: BCa (``scipy.stats.bootstrap``)
    where it is defined, else the percentile interval of the resamples that define the statistic.

    ``statistic`` maps an index array of any shape to one value per index vector along its last axis (a
    resample, or a jackknife sample for BCa's acceleration), NaN where the statistic is undefined. Returns
    ``interval`` (``[low, high]``, None when no resample defines the statistic), ``method`` (``bca`` or
    ``percentile``: percentile where a resample or a jackknife sample leaves the statistic undefined, or
    where every resample agrees), ``undefined_resamples`` (left out) and ``standard_error`` (the spread of
    the defined resamples).

    >>> values = np.array([0.0, 1.0, 2.0, 4.0, 1.0, 3.0])
    >>> result = bootstrap_interval(lambda idx: values[idx].mean(axis=-1), 6, 0.9, 200, 0)
    >>> low, high = result["interval"]
    >>> 0.0 <= low <= values.mean() <= high <= 4.0, result["method"], result["undefined_resamples"]
    (True, 'bca', 0)
    >>> bootstrap_interval(lambda idx: np.full(idx.shape[:-1], np.nan), 6, 0.9, 200, 0)["interval"] is None
    True
    """
    if n_samples < 2:  # one sample: every resample is that sample (scipy needs two)
        return _one_sample_interval(statistic, n_samples, n_resamples)
    result = _scipy_bootstrap(statistic, n_samples, confidence_level, n_resamples, seed)
    return _interval_of(result, confidence_level)


def _bootstrap_result(
    interval: list[float] | None, method: str, undefined: int, spread: float | None
) -> dict[str, Any]:
    """What :func:`bootstrap_interval` returns, by its four names."""
    return {
        "interval": interval,
        "method": method,
        "undefined_resamples": undefined,
        "standard_error": spread,
    }


def _one_sample_interval(
    statistic: Callable[[np.ndarray], np.ndarray], n_samples: int, n_resamples: int
) -> dict[str, Any]:
    """The interval of fewer than two samples: every resample is the sample, so the interval is its value
    (zero spread), or None with every resample undefined where the statistic is undefined on it."""
    values = np.atleast_1d(np.asarray(statistic(np.arange(n_samples)), dtype=float))
    if values.size and not np.isnan(values[0]):
        return _bootstrap_result([float(values[0])] * 2, PERCENTILE, 0, 0.0)
    return _bootstrap_result(None, PERCENTILE, n_resamples, None)


def _scipy_bootstrap(
    statistic: Callable[[np.ndarray], np.ndarray],
    n_samples: int,
    confidence_level: float,
    n_resamples: int,
    seed: int,
) -> Any:
    """``scipy.stats.bootstrap``'s BCa result over the sample indices, seeded, its warnings silenced:
    degenerate or partly undefined resamples make BCa NaN (with a warning), and :func:`_interval_of` then
    takes the percentile interval instead."""
    from scipy.stats import bootstrap  # scipy.stats is slow to import; only the bootstrap needs it

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return bootstrap(
                (np.arange(n_samples),),
                lambda idx, axis=-1: np.asarray(statistic(idx), dtype=float),
                n_resamples=n_resamples,
                vectorized=True,
                confidence_level=confidence_level,
                method="BCa",
                **_seeded(bootstrap, seed),
            )


def _interval_of(result: Any, confidence_level: float) -> dict[str, Any]:
    """The interval a bootstrap ``result`` gives: BCa's where every resample defines the statistic and BCa
    is finite; a point where every defined resample agrees; else the percentile interval of the defined
    resamples (None where none is defined)."""
    distribution = np.asarray(result.bootstrap_distribution, dtype=float)
    defined = distribution[~np.isnan(distribution)]
    undefined = int(distribution.size - defined.size)
    if defined.size == 0:
        return _bootstrap_result(None, PERCENTILE, undefined, None)
    spread = float(np.std(defined, ddof=1)) if defined.size > 1 else 0.0
    if np.ptp(defined) <= 1e-12 * max(1.0, float(np.abs(defined).max())):
        # every resample agrees, up to rounding (a mean of equal values may differ in its last bit): BCa is
        # undefined, or unstable enough to put its low end above its high end
        value = float(np.median(defined))
        return _bootstrap_result([value, value], PERCENTILE, undefined, spread)
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    if undefined == 0 and not (np.isnan(low) or np.isnan(high)):
        return _bootstrap_result([low, high], BCA, 0, spread)
    tail = (1.0 - confidence_level) / 2.0
    low, high = np.quantile(defined, [tail, 1.0 - tail])
    return _bootstrap_result([float(low), float(high)], PERCENTILE, undefined, spread)


def _seeded(bootstrap: Callable[..., Any], seed: int) -> dict[str, Any]:
    # scipy 1.15 renamed random_state to rng; the Spaces may run an older scipy
    generator = np.random.default_rng(seed)
    return {"rng" if "rng" in inspect.signature(bootstrap).parameters else "random_state": generator}


def resampled_mean(values: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The mean of ``values`` over the last axis of an index array (one value per resample).

    >>> resampled_mean(np.array([0.0, 1.0]), np.array([[0, 0], [0, 1]])).tolist()
    [0.0, 0.5]
    """
    return values[indices].mean(axis=-1)


def bootstrap_intervals(
    statistics: dict[str, Callable[[np.ndarray], np.ndarray]],
    n_samples: int,
    confidence_level: float,
    n_resamples: int,
    seed: int,
) -> dict[str, Any]:
    """:func:`bootstrap_interval` of each statistic under its name, with the method beside it
    (``<name>_method``), all over the same resamples (one seed); then the bootstrap's ``confidence_level``,
    ``n_resamples`` and ``undefined_resamples``: the most resamples that any one statistic left out.

    >>> values = np.array([0.0, 1.0, 1.0, 1.0])
    >>> result = bootstrap_intervals({"mean_ci": lambda idx: resampled_mean(values, idx)}, 4, 0.9, 200, 0)
    >>> sorted(result), result["undefined_resamples"]
    (['confidence_level', 'mean_ci', 'mean_ci_method', 'n_resamples', 'undefined_resamples'], 0)
    """
    result: dict[str, Any] = {}
    undefined = 0
    for name, statistic in statistics.items():
        found = bootstrap_interval(statistic, n_samples, confidence_level, n_resamples, seed)
        result[name], result[f"{name}_method"] = found["interval"], found["method"]
        undefined = max(undefined, found["undefined_resamples"])
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
