"""integrations/pairing.py: the paired comparison of a scrambled variant with its canonical task."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.integrations.pairing import CompareSettings, DocScore, paired_difference, rpg
from scrambled_bench.metrics.statistics import paired_proportions

FAST = CompareSettings(n_resamples=100)
runs = st.dictionaries(st.integers(0, 30), st.sampled_from([0.0, 1.0]), min_size=1, max_size=20)


@settings(max_examples=40, deadline=None)
@given(runs, runs)
def test_the_difference_is_the_mean_over_the_documents_both_scored(canonical, variant):
    record = paired_difference(canonical, variant, FAST)
    shared = [doc_id for doc_id in canonical if doc_id in variant]
    assert record["n_paired"] == len(shared)
    assert record["n_unpaired"] == len(canonical) + len(variant) - 2 * len(shared)
    if not shared:
        assert record["difference"] is None and record["ci"] is None
        return
    expected = sum(variant[i] for i in shared) / len(shared) - sum(canonical[i] for i in shared) / len(shared)
    assert record["difference"] == pytest.approx(expected)
    low, high = record["ci"]
    assert -1.0 <= low <= record["difference"] <= high <= 1.0
    # 0/1 scores: Tango's interval and the McNemar score test it inverts, never contradicting each other
    found = paired_proportions([canonical[i] == 1 for i in shared], [variant[i] == 1 for i in shared], FAST)
    assert record["ci"] == pytest.approx(found["interval"]) and record["mcnemar_p"] == found["p_value"]
    assert (low > 0.0 or high < 0.0) == (record["mcnemar_p"] < 0.05)
    lost, gained = found["discordant"]
    assert record["discordant"] == {"lost": lost, "gained": gained}
    assert record["underpowered"] == (len(shared) < record["underpowered_below"] == 54)
    assert record["method"].startswith("Tango's score interval")
    swapped = paired_difference(variant, canonical, FAST)
    assert swapped["difference"] == pytest.approx(-record["difference"])


def test_scores_that_are_not_right_or_wrong_get_no_mcnemar():
    record = paired_difference({0: 0.5, 1: 0.25}, {0: 0.5, 1: 0.0}, FAST)
    assert record["mcnemar_p"] is None and record["difference"] == pytest.approx(-0.125)
    assert "McNemar" not in record["method"] and record["method"].startswith("paired bootstrap")
    assert record["underpowered"] is None and record["discordant"] is None


def test_documents_whose_targets_differ_are_refused():
    with pytest.raises(ScrambledBenchError, match="document 3: the canonical target 'Paris'"):
        paired_difference({3: DocScore(1, "Paris")}, {3: DocScore(1, "Prais")})


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), min_size=1, max_size=15))
def test_rpg_is_the_packaged_modules(rows):
    # imported here, not at the top: the metric module imports `evaluate` (transformers' pipelines and torch,
    # some seconds), which every xdist worker would otherwise pay while collecting the suite
    from scrambled_bench.metrics.relative_performance_gain.relative_performance_gain import (
        relative_performance_gain,
    )

    canonical = {i: float(c) for i, (c, _, _) in enumerate(rows)}
    variant = {i: float(v) for i, (_, v, _) in enumerate(rows)}
    sub = {i: float(s) for i, (_, _, s) in enumerate(rows)}
    gain = rpg(canonical, variant, sub, FAST)
    n = len(rows)
    accuracies = [sum(run.values()) / n for run in (variant, canonical, sub)]
    assert gain["n"] == n
    assert gain["original_accuracy"] == pytest.approx(accuracies[1])
    expected = relative_performance_gain(*accuracies)
    assert gain["value"] == (None if expected is None else pytest.approx(expected))
    if expected is None:
        assert gain["undefined"]


def test_rpg_needs_right_or_wrong_scores():
    assert rpg({0: 0.5}, {0: 1.0}, {0: 0.0}) is None
