"""One interval method per kind of score, valid at the edges (metrics/shared.py, of which each metric folder
carries a generated copy): Wilson for a proportion, BCa bootstrap for a mean or a ratio, the percentile
bootstrap where BCa is undefined; the modules name the method beside each interval."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from scrambled_bench.metrics import loaded
from scrambled_bench.metrics.shared import (
    bootstrap_interval,
    check_bootstrap_options,
    wilson_interval,
)


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=2000),
    share=st.floats(min_value=0.0, max_value=1.0),
    level=st.floats(min_value=0.01, max_value=0.999),
)
def test_wilson_has_width_contains_the_share_and_is_statsmodels(n: int, share: float, level: float) -> None:
    correct = round(share * n)
    low, high = wilson_interval(correct, n, level)
    assert 0.0 <= low <= correct / n <= high <= 1.0
    assert high - low > 0  # never certainty, at 0 of n and n of n included
    assert (low, high) == pytest.approx(
        proportion_confint(correct, n, alpha=1 - level, method="wilson"), abs=1e-12
    )


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=100, allow_nan=False), min_size=3, max_size=40))
def test_bootstrap_of_a_mean_brackets_it_and_names_its_method(values: list[float]) -> None:
    data = np.array(values)
    found = bootstrap_interval(lambda idx: data[idx].mean(axis=-1), len(data), 0.9, 200, 0)
    low, high = found["interval"]
    assert found["method"] in ("bca", "percentile") and found["undefined_resamples"] == 0
    assert data.min() - 1e-9 <= low <= high <= data.max() + 1e-9
    if np.ptp(data) == 0:  # every resample alike: BCa is undefined, the percentile interval is the value
        assert found["method"] == "percentile" and low == high == pytest.approx(data[0], rel=1e-12)


def test_rpg_falls_back_to_percentile_where_resamples_leave_it_undefined() -> None:
    """RPG needs Acc_ori > Acc_sub; with the anchors barely apart many resamples lose that, and BCa (whose
    acceleration needs every jackknife sample) gives way to the percentile interval of the defined ones."""
    rpg = loaded("relative_performance_gain")
    n = 12
    scores = rpg.compute(
        predictions=["A"] * 6 + ["B"] * 6,
        references=["A"] * n,
        original_predictions=["A"] * 7 + ["B"] * 5,
        substituted_predictions=["A"] * 6 + ["B"] * 6,
        confidence_level=0.95,
        n_resamples=300,
    )
    assert scores["undefined_resamples"] > 0
    assert scores["relative_performance_gain_ci_method"] == "percentile"
    assert scores["accuracy_ci_method"] == "wilson"
    clear = rpg.compute(
        predictions=["A"] * 9 + ["B"] * 11,
        references=["A"] * 20,
        original_predictions=["A"] * 18 + ["B"] * 2,
        substituted_predictions=["A"] * 2 + ["B"] * 18,
        confidence_level=0.95,
        n_resamples=300,
    )
    assert clear["undefined_resamples"] == 0 and clear["relative_performance_gain_ci_method"] == "bca"
    low, high = clear["relative_performance_gain_ci"]
    assert low < clear["relative_performance_gain"] < high


def test_recovery_rate_and_edit_distance_say_their_method() -> None:
    scores = loaded("recovery_rate").compute(
        predictions=["The cat sat.", "A dog ran.", "Brids fly.", "We wlaked."],
        references=["The cat sat.", "A dog ran.", "Birds fly.", "We walked."],
        scrambled=["Teh cat sat.", "A dgo rna.", "Brids fly.", "We wlaked."],
        confidence_level=0.9,
        n_resamples=200,
    )
    assert {scores["recovery_rate_ci_method"], scores["edit_distance_ci_method"]} <= {"bca", "percentile"}
    assert scores["edit_distance_ci"][0] <= scores["edit_distance"] <= scores["edit_distance_ci"][1]


@pytest.mark.parametrize("level", [0.0, 1.0, -0.1, 1.5, True])
def test_a_level_outside_the_open_interval_is_refused(level: object) -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        check_bootstrap_options(level, 100)
