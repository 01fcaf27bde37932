"""The statistics every comparison of the package uses, in one place: paired bootstrap intervals, McNemar's
exact test, the Wilcoxon signed-rank test, Wilson intervals, Benjamini-Hochberg adjustment and the minimum
detectable difference.

Both ``report --compare`` (two runs of the bench on the same samples) and the pairing of a scrambled
variant with its canonical task (``score --from HARNESS DIR``, ``report --from HARNESS DIR``) take their
numbers from here, so the two cannot disagree. The tests come from scipy and statsmodels; the bootstrap is
the metric modules' own ``bootstrap_interval`` (``scipy.stats.bootstrap``, BCa where it is defined and the
percentile interval where it is not), which every interval of ``results.json`` uses.

Pure functions over arrays, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scrambled_bench.metrics.relative_performance_gain.scrambled_bench_shared import (
    BCA,
    PERCENTILE,
    WILSON,
    bootstrap_interval,
    resampled_mean,
)

__all__ = [
    "BCA",
    "DEFAULT_SETTINGS",
    "PERCENTILE",
    "WILSON",
    "CompareSettings",
    "benjamini_hochberg",
    "is_binary",
    "mcnemar_exact",
    "mean_interval",
    "minimum_detectable_difference",
    "paired_bootstrap",
    "resampled_mean",
    "standard_error",
    "wilcoxon_p",
    "wilson_interval",
    "wilson_percent",
]


@dataclass(frozen=True)
class CompareSettings:
    """How intervals and tests are made: bootstrap resamples, interval level and seed; the level and power
    of the minimum detectable difference."""

    n_resamples: int = 1000
    confidence_level: float = 0.95
    seed: int = 0
    alpha: float = 0.05
    power: float = 0.8


DEFAULT_SETTINGS = CompareSettings()
"""1000 resamples, a 0.95 interval (BCa, percentile where BCa is undefined), seed 0."""


def is_binary(values: Sequence[float] | np.ndarray) -> bool:
    """Whether every value is 0 or 1 (a right/wrong score: McNemar, Wilson and RPG apply).

    >>> is_binary([1.0, 0, 1]), is_binary([0.5]), is_binary([])
    (True, False, True)
    """
    return all(float(value) in (0.0, 1.0) for value in values)


def paired_bootstrap(
    statistic: Callable[[np.ndarray, np.ndarray], np.ndarray],
    baseline: np.ndarray,
    other: np.ndarray,
    settings: CompareSettings = DEFAULT_SETTINGS,
) -> dict[str, Any]:
    """The interval of ``statistic(other) - statistic(baseline)`` over resampled sample ids, the same ids for
    both runs: ``bootstrap_interval``'s ``interval``, ``method`` (``bca`` or ``percentile``),
    ``undefined_resamples`` and ``standard_error``.

    ``statistic`` maps a run's per-sample array and an index array to one value per index vector along the
    last axis (NaN where undefined; those are left out and counted).

    >>> a, b = np.array([0.0, 1.0, 0.0, 1.0, 0.0]), np.array([1.0, 1.0, 1.0, 1.0, 0.0])
    >>> result = paired_bootstrap(resampled_mean, a, b, CompareSettings(n_resamples=500))
    >>> low, high = result["interval"]
    >>> 0.0 <= low <= 0.4 <= high <= 1.0, result["undefined_resamples"]
    (True, 0)
    """
    return bootstrap_interval(
        lambda indices: statistic(other, indices) - statistic(baseline, indices),
        len(baseline),
        settings.confidence_level,
        settings.n_resamples,
        settings.seed,
    )


def mcnemar_exact(baseline: Sequence[bool], other: Sequence[bool]) -> tuple[float, tuple[int, int]]:
    """McNemar's exact test on paired right/wrong answers (statsmodels): its p-value and the discordant
    pairs (baseline right and other wrong, baseline wrong and other right).

    >>> mcnemar_exact([True, True, False, False], [True, False, True, True])
    (1.0, (1, 2))
    """
    from statsmodels.stats.contingency_tables import mcnemar

    a, b = np.asarray(baseline, dtype=bool), np.asarray(other, dtype=bool)
    table = [[int(np.sum(a & b)), int(np.sum(a & ~b))], [int(np.sum(~a & b)), int(np.sum(~a & ~b))]]
    return float(mcnemar(table, exact=True).pvalue), (table[0][1], table[1][0])


def wilcoxon_p(differences: Sequence[float]) -> float:
    """The Wilcoxon signed-rank p-value of paired differences (scipy); 1.0 where every difference is zero.

    >>> wilcoxon_p([0.0, 0.0]), round(wilcoxon_p([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), 4)
    (1.0, 0.0312)
    """
    from scipy.stats import wilcoxon

    values = np.asarray(differences, dtype=float)
    if not np.any(values != 0):
        return 1.0
    return float(wilcoxon(values).pvalue)


def wilson_interval(successes: int, n: int, confidence_level: float) -> tuple[float, float]:
    """Wilson's score interval of the proportion ``successes / n`` (statsmodels' ``proportion_confint``), as
    fractions; its bounds are exactly 0 at 0 of n and 1 at n of n, as the metric modules' own copy gives.

    >>> [round(bound, 4) for bound in wilson_interval(8, 10, 0.95)]
    [0.4902, 0.9433]
    >>> wilson_interval(0, 6, 0.95)[0], wilson_interval(6, 6, 0.95)[1]
    (0.0, 1.0)
    """
    from statsmodels.stats.proportion import proportion_confint

    if n < 1:
        raise ValueError(f"a proportion needs at least one sample, got n={n}")
    low, high = proportion_confint(successes, n, alpha=1.0 - confidence_level, method="wilson")
    low = 0.0 if successes == 0 else max(0.0, float(low))
    high = 1.0 if successes == n else min(1.0, float(high))
    return low, high


def wilson_percent(correct: int, total: int, confidence_level: float) -> tuple[float, float]:
    """:func:`wilson_interval` in percent (the tables' unit).

    >>> [round(bound, 2) for bound in wilson_percent(8, 10, 0.95)]
    [49.02, 94.33]
    """
    low, high = wilson_interval(correct, total, confidence_level)
    return low * 100.0, high * 100.0


def mean_interval(values: Sequence[float], settings: CompareSettings = DEFAULT_SETTINGS) -> dict[str, Any]:
    """The interval of the mean of per-document scores: Wilson's where every score is 0 or 1 (a proportion),
    else the bootstrap's (BCa, percentile where BCa is undefined). ``interval`` (fractions, None without a
    score) and ``method``.

    >>> mean_interval([1, 1, 0, 1])["method"], [round(b, 3) for b in mean_interval([1, 1, 0, 1])["interval"]]
    ('wilson', [0.301, 0.954])
    >>> found = mean_interval([0.5, 0.25, 1.0, 0.75], CompareSettings(n_resamples=200))
    >>> found["method"] in ("bca", "percentile"), 0.25 <= found["interval"][0] <= found["interval"][1] <= 1.0
    (True, True)
    >>> mean_interval([])
    {'interval': None, 'method': None}
    """
    scores = np.asarray(values, dtype=float)
    if scores.size == 0:
        return {"interval": None, "method": None}
    if is_binary(scores):
        return {
            "interval": list(wilson_interval(int(scores.sum()), int(scores.size), settings.confidence_level)),
            "method": WILSON,
        }
    found = bootstrap_interval(
        lambda indices: resampled_mean(scores, indices),
        int(scores.size),
        settings.confidence_level,
        settings.n_resamples,
        settings.seed,
    )
    return {"interval": found["interval"], "method": found["method"]}


def minimum_detectable_difference(standard_error: float, alpha: float, power: float) -> float:
    """The smallest true difference a two-sided test at ``alpha`` detects with ``power``:
    ``(z_{1-alpha/2} + z_{power}) * SE``.

    >>> round(minimum_detectable_difference(1.0, 0.05, 0.8), 4)
    2.8016
    """
    from scipy.stats import norm

    return float((norm.ppf(1.0 - alpha / 2.0) + norm.ppf(power)) * standard_error)


def benjamini_hochberg(p_values: Sequence[float], alpha: float) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (the false discovery rate across the tests), in order
    (statsmodels).

    >>> [round(p, 4) for p in benjamini_hochberg([0.01, 0.04, 0.03, 0.2], 0.05)]
    [0.04, 0.0533, 0.0533, 0.2]
    """
    from statsmodels.stats.multitest import multipletests

    if not p_values:
        return []
    return [float(p) for p in multipletests(list(p_values), alpha=alpha, method="fdr_bh")[1]]


def standard_error(differences: np.ndarray) -> float | None:
    """SE of the mean of paired differences; None where it says nothing (fewer than two, or no spread).

    >>> standard_error(np.array([1.0, 3.0])), standard_error(np.array([2.0, 2.0]))
    (1.0, None)
    """
    if differences.size < 2:
        return None
    spread = float(np.std(differences, ddof=1))
    return spread / float(np.sqrt(differences.size)) if spread > 0 else None
