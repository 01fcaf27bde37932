"""The statistics every comparison of the package uses, in one place: the paired difference of right/wrong
outcomes (Tango's score interval with the McNemar score test it inverts, and when such a comparison is
underpowered), paired bootstrap intervals for every other score, the Wilcoxon signed-rank test, Wilson
intervals, Benjamini-Hochberg adjustment and the minimum detectable difference.

Both ``report --compare`` (two runs of the bench on the same samples) and the pairing of a scrambled
variant with its canonical task (``score --from HARNESS DIR``, ``report --from HARNESS DIR``) take their
numbers from here, so the two cannot disagree.

**Paired 0/1 outcomes** (:func:`paired_proportions`). The difference of two accuracies on the same samples
gets Tango's (1998) asymptotic score interval for the difference of paired proportions, and the p printed
beside it is McNemar's test in its score form (the chi-square of the discordant pairs without continuity
correction), which is Tango's statistic at a difference of 0. The interval is the set of differences the
score test does not reject, so it excludes 0 exactly when that p is below 1 - level: the two never contradict
(a bootstrap percentile interval beside McNemar's exact test did, at small n, and claimed certainty,
[0, 0], where every pair agreed). Where no pair is discordant the test's statistic is 0/0: p is 1 (nothing
speaks against equality) and the interval is Tango's, ``+-z^2 / (n + z^2)``, not [0, 0]. Tango's interval has
coverage close to nominal down to small n (Tango 1998; Fagerland, Lydersen & Laake 2014, who recommend it),
which neither scipy nor statsmodels offers for paired samples (statsmodels' score intervals are for
independent samples), so it is solved here from the published statistic with ``scipy.optimize.brentq``.
Below :func:`underpowered_below` paired samples a comparison is flagged as underpowered.

The tests come from scipy and statsmodels. The bootstrap, for every score that is not 0/1, and Wilson's interval
of a proportion are the metric modules' own (:mod:`scrambled_bench.metrics.shared`, of which each metric folder
carries a generated copy): ``bootstrap_interval`` (``scipy.stats.bootstrap``, BCa where it is defined and the
percentile interval where it is not) and ``wilson_interval``, which every interval of ``results.json`` uses.

Pure functions over arrays, no I/O. scipy and statsmodels are imported inside the functions that use them:
they are slow to import, and ``report`` and ``probe`` import this module before they need a test.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from scrambled_bench.metrics.shared import (
    BCA,
    PERCENTILE,
    WILSON,
    bootstrap_interval,
    resampled_mean,
    wilson_interval,
)

__all__ = [
    "BCA",
    "DEFAULT_SETTINGS",
    "MCNEMAR_SCORE",
    "PERCENTILE",
    "TANGO",
    "WILSON",
    "CompareSettings",
    "benjamini_hochberg",
    "discordant_pairs",
    "is_binary",
    "mcnemar_score_p",
    "mean_interval",
    "minimum_detectable_difference",
    "paired_bootstrap",
    "paired_proportions",
    "resampled_mean",
    "standard_error",
    "tango_interval",
    "underpowered_below",
    "underpowered_note",
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
    effect: float = 0.10
    """The smallest difference of two paired proportions worth detecting (10 percentage points), with
    ``alpha`` and ``power``: what :func:`underpowered_below` asks of a comparison of 0/1 outcomes."""


DEFAULT_SETTINGS = CompareSettings()
"""1000 resamples, a 0.95 interval (BCa, percentile where BCa is undefined), seed 0."""

TANGO = "tango"
"""The interval method of a paired difference of 0/1 outcomes: Tango's score interval."""

MCNEMAR_SCORE = "McNemar score"
"""The test printed beside it: McNemar's chi-square without continuity correction, which that interval
inverts."""


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


def discordant_pairs(baseline: Sequence[bool], other: Sequence[bool]) -> tuple[int, int]:
    """The discordant pairs of paired right/wrong answers: (baseline right and other wrong, baseline wrong
    and other right).

    >>> discordant_pairs([True, True, False, False], [True, False, True, True])
    (1, 2)
    """
    a, b = np.asarray(baseline, dtype=bool), np.asarray(other, dtype=bool)
    if a.shape != b.shape:
        raise ValueError(f"paired answers need equal lengths, got {a.size} and {b.size}")
    return int(np.sum(a & ~b)), int(np.sum(~a & b))


def mcnemar_score_p(lost: int, gained: int) -> float:
    """McNemar's test on the discordant pairs as the score test: the chi-square ``(gained - lost)^2 /
    (gained + lost)`` on 1 degree of freedom, without continuity correction (statsmodels' ``mcnemar``), the
    test :func:`tango_interval` inverts. Where no pair is discordant the statistic is 0/0 and p is 1: nothing
    speaks against equal proportions.

    >>> round(mcnemar_score_p(2, 9), 4), mcnemar_score_p(0, 0), mcnemar_score_p(3, 3)
    (0.0348, 1.0, 1.0)
    """
    if lost + gained == 0:
        return 1.0
    from statsmodels.stats.contingency_tables import mcnemar

    return float(mcnemar([[0, lost], [gained, 0]], exact=False, correction=False).pvalue)


def _tango_statistic(b: int, c: int, n: int, delta: float) -> float:
    """Tango's (1998) score statistic for the paired difference ``(b - c) / n`` at ``delta``:
    ``(b - c - n delta) / sqrt(n (2 p21 + delta (1 - delta)))``, with ``p21`` the maximum likelihood estimate
    of the ``c`` cell's probability under ``delta`` (the root of Tango's quadratic ``A p^2 + B p + C``). At a
    variance of 0 (a bound of the range, or no discordant pair) it is 0 where the numerator is, else an
    infinity of the numerator's sign."""
    a_ = 2.0 * n
    b_ = -b - c + (2.0 * n - b + c) * delta
    c_ = -c * delta * (1.0 - delta)
    p21 = (math.sqrt(max(0.0, b_ * b_ - 4.0 * a_ * c_)) - b_) / (2.0 * a_)
    variance = n * (2.0 * p21 + delta * (1.0 - delta))
    numerator = b - c - n * delta
    if variance <= 0.0:
        return 0.0 if numerator == 0 else math.copysign(math.inf, numerator)
    return numerator / math.sqrt(variance)


def tango_interval(gained: int, lost: int, n: int, confidence_level: float) -> tuple[float, float]:
    """Tango's (1998) asymptotic score interval of the paired difference ``(gained - lost) / n`` (as
    fractions): the differences the score test at ``1 - confidence_level`` does not reject. ``gained``: pairs
    the other run has right and the baseline wrong; ``lost``: the reverse; ``n``: every pair.

    Each bound is a root of the statistic, found by ``scipy.optimize.brentq`` on the side of 0 where the
    statistic at 0 puts it, so the interval excludes 0 exactly when :func:`mcnemar_score_p` is below
    ``1 - confidence_level``. With no discordant pair it is ``+-z^2 / (n + z^2)``.

    Tango (1998), Statistics in Medicine 17:891-908; the numbers below are its worked examples:

    >>> [round(bound, 3) for bound in tango_interval(9, 3, 32, 0.95)]
    [-0.027, 0.39]
    >>> [round(bound, 3) for bound in tango_interval(0, 1, 44, 0.90)]
    [-0.096, 0.037]
    >>> [round(bound, 4) for bound in tango_interval(0, 0, 10, 0.95)]
    [-0.2775, 0.2775]
    """
    from scipy.optimize import brentq
    from scipy.stats import norm

    if n < 1 or gained < 0 or lost < 0 or gained + lost > n:
        raise ValueError(
            f"a paired table needs 0 <= gained + lost <= n and n >= 1, got {gained}, {lost}, {n}"
        )
    if not 0.0 < confidence_level < 1.0:
        raise ValueError(f"confidence_level must lie in (0, 1), got {confidence_level}")
    z = float(norm.isf((1.0 - confidence_level) / 2.0))
    estimate = (gained - lost) / n
    at_zero = _tango_statistic(gained, lost, n, 0.0)

    def root(target: float, low: float, high: float) -> float:
        return float(brentq(lambda d: _tango_statistic(gained, lost, n, d) - target, low, high, xtol=1e-12))

    # the statistic falls from +inf at -1 to -inf at 1 through 0 at the estimate: the lower bound solves
    # T = z, the upper T = -z; the sign of T(0) -+ z says on which side of 0 each lies
    if estimate <= -1.0:
        lower = -1.0
    elif at_zero > z:
        lower = root(z, 0.0, estimate)
    else:
        lower = root(z, -1.0, min(0.0, estimate))
    if estimate >= 1.0:
        upper = 1.0
    elif at_zero < -z:
        upper = root(-z, estimate, 0.0)
    else:
        upper = root(-z, max(0.0, estimate), 1.0)
    return lower + 0.0, upper + 0.0


@lru_cache(maxsize=32)
def underpowered_below(alpha: float, power: float, effect: float) -> int:
    """The fewest paired samples at which the McNemar score test at ``alpha`` detects a true difference of
    ``effect`` (a fraction) with ``power`` in its most favourable case: every discordant pair one way (the
    baseline never right where the other is wrong), so the discordant pairs are Binomial(n, effect) and the
    test rejects from the first count :func:`mcnemar_score_p` puts below ``alpha``. Any other split of the
    same difference has more discordant pairs and less power near this n, so below it every comparison of 0/1
    outcomes is underpowered for that difference, whatever the data.

    >>> underpowered_below(0.05, 0.8, 0.10), underpowered_below(0.05, 0.8, 0.20)
    (54, 27)
    """
    from scipy.stats import binom

    if not (0.0 < alpha < 1.0 and 0.0 < power < 1.0 and 0.0 < effect <= 1.0):
        raise ValueError(f"alpha, power and effect must lie in (0, 1), got {alpha}, {power}, {effect}")
    first = 1
    while mcnemar_score_p(0, first) >= alpha:
        first += 1
    n = first
    while binom.sf(first - 1, n, effect) < power:
        n += 1
    return n


def paired_proportions(
    baseline: Sequence[bool] | np.ndarray,
    other: Sequence[bool] | np.ndarray,
    settings: CompareSettings = DEFAULT_SETTINGS,
) -> dict[str, Any]:
    """The difference of two paired proportions (other minus baseline, fractions) with Tango's interval and
    the McNemar score test it inverts: ``difference``, ``interval``, ``method`` (:data:`TANGO`), ``test``
    (:data:`MCNEMAR_SCORE`), ``p_value``, ``discordant`` (baseline right and other wrong, baseline wrong and
    other right), ``n``, and ``underpowered`` (fewer pairs than ``underpowered_below``, also given).

    >>> found = paired_proportions([1, 1, 1, 1, 1, 1], [0, 1, 0, 0, 0, 1])
    >>> round(found["difference"], 4), [round(b, 4) for b in found["interval"]], round(found["p_value"], 4)
    (-0.6667, [-0.9032, -0.0161], 0.0455)
    >>> found["discordant"], found["underpowered"], found["underpowered_below"]
    ((4, 0), True, 54)
    >>> paired_proportions([1, 0], [1, 0])["interval"] != [0.0, 0.0]
    True
    """
    a, b = np.asarray(baseline, dtype=bool), np.asarray(other, dtype=bool)
    if a.size == 0:
        raise ValueError("a paired difference needs at least one pair")
    lost, gained = discordant_pairs(a, b)
    n = int(a.size)
    threshold = underpowered_below(settings.alpha, settings.power, settings.effect)
    return {
        "difference": (gained - lost) / n + 0.0,
        "interval": list(tango_interval(gained, lost, n, settings.confidence_level)),
        "method": TANGO,
        "test": MCNEMAR_SCORE,
        "p_value": mcnemar_score_p(lost, gained),
        "discordant": (lost, gained),
        "n": n,
        "underpowered": n < threshold,
        "underpowered_below": threshold,
    }


def underpowered_note(threshold: int, settings: CompareSettings = DEFAULT_SETTINGS) -> str:
    """The footnote of an underpowered comparison of 0/1 outcomes, saying what the threshold means.

    >>> underpowered_note(54)
    'underpowered: fewer than 54 paired samples, where even with every discordant pair one way the McNemar score test at alpha 0.05 would find a true 10-point difference less than 80% of the time'
    """
    return (
        f"underpowered: fewer than {threshold} paired samples, where even with every discordant pair one way "
        f"the McNemar score test at alpha {settings.alpha:g} would find a true {settings.effect * 100:g}-point "
        f"difference less than {settings.power:.0%} of the time"
    )


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
            "interval": wilson_interval(int(scores.sum()), int(scores.size), settings.confidence_level),
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
