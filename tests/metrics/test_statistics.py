"""The paired difference of right/wrong outcomes (metrics/statistics.py): Tango's score interval reproduces
the published worked examples, never contradicts the McNemar score test printed beside it (every paired
table up to n = 30, and any level), covers at its stated rate at small n, and the underpowered threshold is
what it says it is."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest, chi2, norm

from scrambled_bench.metrics import shared
from scrambled_bench.metrics import statistics as package_statistics
from scrambled_bench.metrics.statistics import (
    DEFAULT_SETTINGS,
    CompareSettings,
    mcnemar_score_p,
    paired_proportions,
    tango_interval,
    underpowered_below,
)

# Published 95 % (or 90 %) intervals for the difference of paired proportions by Tango's score method, as
# (a, b, c, d) = (both, first only, second only, neither), difference = (b - c) / n, rounded as published.
PUBLISHED = [
    # Tango (1998), Statistics in Medicine 17:891-908, its worked examples (the values as the ratesci R
    # package's test suite reproduces them: tests/testthat/test3.R, "Tango")
    ((4, 9, 3, 16), 0.95, (-0.027, 0.390), 3),
    ((43, 0, 1, 0), 0.90, (-0.096, 0.037), 3),
    # Agresti & Min (2005), Statistics in Medicine 24:729-740, their example (Tango's interval there)
    ((53, 16, 8, 9), 0.95, (-0.020, 0.207), 3),
    # Fagerland, Lydersen & Laake (2014), Statistics in Medicine 33:2850-2875: airway hyper-responsiveness
    # before and after stem cell transplantation (Bentur et al., 2009), Tango asymptotic score interval
    ((1, 1, 7, 12), 0.95, (-0.517, -0.026), 3),
]


@pytest.mark.parametrize(("table", "level", "expected", "digits"), PUBLISHED)
def test_tangos_interval_reproduces_the_published_examples(table, level, expected, digits) -> None:
    _, b, c, _ = table
    low, high = tango_interval(b, c, sum(table), level)
    assert (round(low, digits), round(high, digits)) == expected


def _statistic(gained: int, lost: int, n: int, delta: float) -> float:
    """Tango's score statistic written out again from the paper (eq. for the restricted MLE of p21), to
    check that each bound solves it."""
    a = 2 * n
    b = -gained - lost + (2 * n - gained + lost) * delta
    c = -lost * delta * (1 - delta)
    p21 = (math.sqrt(b * b - 4 * a * c) - b) / (2 * a)
    return (gained - lost - n * delta) / math.sqrt(n * (2 * p21 + delta * (1 - delta)))


def _arrays(lost: int, gained: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Paired right/wrong answers with ``lost`` pairs right only in the baseline, ``gained`` only in the other,
    and the rest split between both right and both wrong (which neither the interval nor the test reads)."""
    both = (n - lost - gained) // 2
    baseline = [True] * lost + [False] * gained + [True] * both + [False] * (n - lost - gained - both)
    other = [False] * lost + [True] * gained + [True] * both + [False] * (n - lost - gained - both)
    return np.array(baseline), np.array(other)


def test_every_paired_table_up_to_n_30_the_interval_excludes_0_exactly_when_p_is_below_05() -> None:
    """Every 2x2 paired table with n <= 30: the interval and the test depend on a table only through its
    discordant pairs (b, c) and n, so these are all of them (5,455 of (b, c, n)). At level 0.95 the interval
    excludes 0 exactly when the printed p < 0.05, contains the estimate, lies in [-1, 1], and each bound
    strictly inside (-1, 1) solves Tango's statistic = -+z."""
    z = norm.isf(0.025)
    checked = significant = 0
    for n in range(1, 31):
        for lost in range(n + 1):
            for gained in range(n + 1 - lost):
                found = paired_proportions(*_arrays(lost, gained, n))
                low, high = found["interval"]
                excludes = low > 0.0 or high < 0.0
                assert excludes == (found["p_value"] < 0.05), (lost, gained, n, found)
                assert -1.0 <= low <= found["difference"] <= high <= 1.0
                assert found["difference"] == pytest.approx((gained - lost) / n)
                if lost + gained:
                    assert found["p_value"] == pytest.approx(
                        chi2.sf((gained - lost) ** 2 / (gained + lost), 1)
                    )
                if -1.0 < low:
                    assert _statistic(gained, lost, n, low) == pytest.approx(z, abs=1e-6)
                if high < 1.0:
                    assert _statistic(gained, lost, n, high) == pytest.approx(-z, abs=1e-6)
                checked += 1
                significant += excludes
    assert checked == 5455 and 0 < significant < checked


@settings(max_examples=400, deadline=None)
@given(
    n=st.integers(1, 2000),
    shares=st.tuples(st.floats(0, 1), st.floats(0, 1)),
    level=st.floats(0.5, 0.999),
)
def test_at_any_level_the_interval_excludes_0_exactly_when_p_is_below_1_minus_level(n, shares, level) -> None:
    lost = round(shares[0] * n)
    gained = round(shares[1] * (n - lost))
    low, high = tango_interval(gained, lost, n, level)
    assert (low > 0.0 or high < 0.0) == (mcnemar_score_p(lost, gained) < 1.0 - level)
    # swapping the runs mirrors the interval
    assert tango_interval(lost, gained, n, level) == pytest.approx((-high, -low), abs=1e-9)


def test_no_discordant_pair_gives_p_1_and_tangos_interval_not_zero_width() -> None:
    """Where every pair agrees the score statistic is 0/0: p is 1, and the interval is Tango's +-z^2/(n+z^2)
    (a bootstrap said [0, 0], claiming certainty from six documents)."""
    z = norm.isf(0.025)
    for n in (1, 6, 30, 500):
        found = paired_proportions(*_arrays(0, 0, n))
        assert found["p_value"] == 1.0 and found["difference"] == 0.0
        assert found["interval"] == pytest.approx([-(z**2) / (n + z**2), z**2 / (n + z**2)])


def test_the_issues_small_n_case_no_longer_contradicts_itself() -> None:
    """n = 6 with two documents gained: the bootstrap gave an interval excluding 0 beside p = 0.5; now the
    interval contains 0 beside p = 0.16, and the comparison is flagged underpowered."""
    found = paired_proportions(*_arrays(0, 2, 6))
    low, high = found["interval"]
    assert low < 0.0 < high and found["p_value"] == pytest.approx(0.1573, abs=1e-4)
    assert found["underpowered"] and found["underpowered_below"] == 54


def test_tangos_interval_covers_at_its_stated_rate_at_small_n() -> None:
    """2,000 simulated pairs of runs on 20 questions (pairs: both right .5, only the baseline .1, only the
    other .2, neither .2; a true difference of 10 points): the 95 % interval holds it in about 95 % of them
    (checked here, as Tango and Fagerland et al. report it near nominal at small n)."""
    rng = np.random.default_rng(43)
    truth, covered = 0.1, 0
    for _ in range(2000):
        cells = rng.multinomial(20, [0.5, 0.1, 0.2, 0.2])
        low, high = tango_interval(int(cells[2]), int(cells[1]), 20, 0.95)
        covered += low <= truth <= high
    assert binomtest(covered, 2000, 0.95).pvalue > 0.001, covered


def _power(n: int, splits: list[tuple[float, float]], alpha: float) -> list[float]:
    """The exact power of the McNemar score test at ``alpha`` for n pairs, per split (rate of pairs only the
    other run gets right, rate of pairs only the baseline gets right)."""
    rejected = [
        (gained, lost)
        for gained in range(n + 1)
        for lost in range(n + 1 - gained)
        if mcnemar_score_p(lost, gained) < alpha
    ]
    return [
        sum(
            math.comb(n, gained)
            * math.comb(n - gained, lost)
            * only_other**gained
            * only_baseline**lost
            * (1.0 - only_other - only_baseline) ** (n - gained - lost)
            for gained, lost in rejected
        )
        for only_other, only_baseline in splits
    ]


def test_below_the_threshold_no_split_of_a_10_point_difference_reaches_the_power() -> None:
    """At the default alpha 0.05, power 0.8 and 10 points the threshold is 54: at 54 pairs, with every
    discordant pair one way, the test finds the difference 80 % of the time; at 53, no split of the same
    difference does (every discordant rate from 10 % to 30 % one way, 0 % to 20 % the other)."""
    threshold = underpowered_below(DEFAULT_SETTINGS.alpha, DEFAULT_SETTINGS.power, DEFAULT_SETTINGS.effect)
    assert threshold == 54
    assert _power(threshold, [(0.1, 0.0)], 0.05)[0] >= 0.8
    splits = [(0.1 + back, back) for back in (k / 200 for k in range(41))]
    assert max(_power(threshold - 1, splits, 0.05)) < 0.8


def test_the_flag_follows_the_settings() -> None:
    baseline, other = _arrays(3, 9, 40)
    assert paired_proportions(baseline, other)["underpowered"] is True
    found = paired_proportions(baseline, other, CompareSettings(effect=0.2))
    assert found["underpowered_below"] == 27 and found["underpowered"] is False


def test_the_statistics_take_their_intervals_from_the_metric_modules_one_home():
    """One implementation of each interval: the module the metric folders' copies are generated from."""
    for name in ("wilson_interval", "bootstrap_interval", "resampled_mean", "WILSON", "BCA", "PERCENTILE"):
        assert getattr(package_statistics, name) is getattr(shared, name), name
