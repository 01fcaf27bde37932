"""`report --compare`: paired statistics on shared samples, checked against numbers worked out by hand and a
simulation with a known effect; runs that cannot be compared are refused in one line."""

from __future__ import annotations

import contextlib
import io
import math
from pathlib import Path

import numpy as np
import pytest
from report_runs import BUILD, answer, qa_rows, skilled_run, write_run

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.evaluation.results import RESULTS_SCHEMA
from scrambled_bench.evaluation.tasks import TaskConfig
from scrambled_bench.metrics.statistics import paired_proportions
from scrambled_bench.report import label_runs, load_run
from scrambled_bench.report.compare import (
    CompareSettings,
    compare_runs,
    comparison_tables,
    paired_bootstrap,
)

RS50 = TaskConfig("scrqa", "realtimeqa", "rs50")
RS100 = TaskConfig("scrqa", "realtimeqa", "rs100")


def _pair_of_runs(root: Path, table: list[list[int]], configs: tuple[TaskConfig, ...] = (RS50,)) -> list:
    """Two runs whose right/wrong answers on each config form the 2x2 ``table``:
    [[both right, baseline only], [other only, both wrong]]."""
    (both, baseline_only), (other_only, neither) = table
    pattern_a = [True] * both + [True] * baseline_only + [False] * other_only + [False] * neither
    pattern_b = [True] * both + [False] * baseline_only + [True] * other_only + [False] * neither
    paths = []
    for name, pattern in (("a", pattern_a), ("b", pattern_b)):
        outputs = {
            c: [answer(c, row, right) for row, right in zip(qa_rows(c, len(pattern)), pattern)]
            for c in configs
        }
        paths.append(write_run(root / name, f"model-{name}", outputs))
    return label_runs([load_run(p) for p in paths])


def test_mcnemar_wilson_and_mdd_match_a_table_worked_by_hand(tmp_path: Path) -> None:
    runs = _pair_of_runs(tmp_path, [[30, 2], [9, 9]])
    [pair] = compare_runs(runs, CompareSettings(n_resamples=2000))
    [row] = [r for r in pair.rows if r.metric.label == "Acc"]
    assert (row.n_shared, row.baseline, row.other, row.difference) == (50, 64.0, 78.0, pytest.approx(14.0))
    assert row.discordant == (2, 9)
    # the McNemar score test: chi-square (9 - 2)^2 / (9 + 2) on 1 df, no continuity correction; its
    # two-sided normal tail (the exact test's 0.0654 was pinned here before the paired interval became
    # Tango's, which inverts this test)
    assert row.p_value == pytest.approx(math.erfc(7 / math.sqrt(11) / math.sqrt(2)))  # = 0.0348
    # Wilson: (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)
    z, n = 1.959963984540054, 50
    for correct, interval in ((32, row.wilson_baseline), (39, row.wilson_other)):
        p = correct / n
        centre, half = (
            (p + z * z / (2 * n)) / (1 + z * z / n),
            z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n),
        )
        assert interval == pytest.approx((100 * (centre - half), 100 * (centre + half)))
    # MDD: (z_.975 + z_.8) * sd(d) / sqrt(n), d = +100 on 9 samples, -100 on 2, 0 on 39
    sd = math.sqrt((11 * 100**2 - n * 14.0**2) / (n - 1))
    assert row.mdd == pytest.approx((1.959963984540054 + 0.8416212335729143) * sd / math.sqrt(n))
    low, high = row.interval
    # p < 0.05, so Tango's interval excludes 0, and the 50 shared samples are fewer than 54
    assert 0.0 < low < 14.0 < high and row.test == "McNemar score" and row.interval_method == "tango"
    assert row.underpowered is True and row.underpowered_below == 54
    assert row.p_adjusted == pytest.approx(row.p_value)  # one test: nothing to adjust


def test_bootstrap_interval_covers_a_known_difference_at_its_stated_rate() -> None:
    """200 simulated pairs of runs, each answering 150 questions with a true accuracy difference of 10 points
    (pairs: both right .5, only the baseline .1, only the other .2, neither .2); the 95% paired BCa bootstrap
    interval must contain 10 in about 95% of them."""
    from scipy.stats import binomtest

    truth, covered = 10.0, 0
    outcomes = np.array([[1, 1], [1, 0], [0, 1], [0, 0]], dtype=float) * 100.0
    for seed in range(200):
        rng = np.random.default_rng(10_000 + seed)
        pairs = outcomes[rng.choice(4, size=150, p=[0.5, 0.1, 0.2, 0.2])]
        found = paired_bootstrap(
            lambda values, idx: values[idx].mean(axis=-1),
            pairs[:, 0],
            pairs[:, 1],
            CompareSettings(seed=seed),
        )
        low, high = found["interval"]
        covered += low <= truth <= high
        assert found["undefined_resamples"] == 0 and found["method"] == "bca"
    assert binomtest(covered, 200, 0.95).pvalue > 0.01, covered
    assert covered >= 180


def test_compare_gives_acc_tangos_interval_on_the_shared_ids(tmp_path: Path) -> None:
    """Accuracy is paired right/wrong answers: its interval is Tango's for paired proportions (it was the
    paired bootstrap before, which stays for ED, RR and RPG), in percentage points."""
    runs = _pair_of_runs(tmp_path, [[5, 1], [3, 1]])
    settings = CompareSettings(n_resamples=300, seed=4)
    [pair] = compare_runs(runs, settings)
    [row] = [r for r in pair.rows if r.metric.label == "Acc"]
    a = [True] * 6 + [False] * 4
    b = [True] * 5 + [False] + [True] * 3 + [False]
    expected = paired_proportions(a, b, settings)
    assert row.interval == pytest.approx([100.0 * bound for bound in expected["interval"]])
    assert row.interval_method == "tango" and row.p_value == expected["p_value"]
    [table] = comparison_tables([pair], settings)
    assert any("Tango's 95% score interval for paired proportions" in note for note in table.notes)
    assert any(note.endswith("less than 80% of the time") and "fewer than 54" in note for note in table.notes)


def test_benjamini_hochberg_across_configs(tmp_path: Path) -> None:
    runs = _pair_of_runs(tmp_path, [[10, 0], [12, 8]], configs=(RS50, RS100))
    [pair] = compare_runs(runs)
    tested = [r for r in pair.rows if r.p_value is not None]
    # 12 discordant, all one way: chi-square 12^2 / 12 = 12 on 1 df (the exact test's 2 / 2^12 before)
    assert len(tested) == 2 and tested[0].p_value == pytest.approx(math.erfc(math.sqrt(12) / math.sqrt(2)))
    # two equal p-values: BH multiplies the largest by m / rank = 2 / 2, the other by 2 / 1, then takes the min
    assert [r.p_adjusted for r in tested] == pytest.approx([tested[0].p_value] * 2)


def test_rows_per_metric_and_partial_overlap(tmp_path: Path) -> None:
    big = skilled_run(tmp_path / "big", "big-model", 0.9)
    few = skilled_run(tmp_path / "few", "few-model", 0.5, n=6, seed=2, settings={"limit": 6})
    runs = label_runs([load_run(big), load_run(few)])
    [pair] = compare_runs(runs)
    metrics = {(r.config, r.metric.label) for r in pair.rows}
    assert ("scrrec-zero-shot/realtimeqa/rs50", "ED") in metrics and (
        "scrrec-zero-shot/realtimeqa/rs50",
        "RR",
    ) in metrics
    assert ("scrqa/dream/rs100", "RPG") in metrics and ("scrqa/dream/rs100", "Acc") in metrics
    assert ("scrqa/dream/original", "RPG") not in metrics  # 100 by definition: nothing to compare
    assert all(r.n_shared == 6 for r in pair.rows)
    [table] = comparison_tables([pair], CompareSettings())
    assert (
        "compared on the intersection: scrrec-few-shot/realtimeqa/rs20: 6 shared of 10 and 6" in table.caption
    )
    row = next(r for r in table.rows if r[:2] == ["scrqa/dream/rs100", "Acc"])
    assert row[2].startswith("6 of 10/6 [") and row[7] == "McNemar score"  # marked underpowered
    ed = next(
        r for r in pair.rows if r.config == "scrrec-zero-shot/realtimeqa/rs100" and r.metric.label == "ED"
    )
    from scipy.stats import wilcoxon

    from scrambled_bench.report.compare import load_samples

    a, b = (load_samples(run)["scrrec-zero-shot/realtimeqa/rs100"] for run in runs)
    differences = [b[i]["edit_distance"] - a[i]["edit_distance"] for i in b]
    expected = wilcoxon(differences).pvalue if any(differences) else 1.0
    assert ed.test == "Wilcoxon signed-rank" and ed.p_value == pytest.approx(expected)
    assert ed.difference == pytest.approx(np.mean(differences))


def _main(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def test_cli_compare_prints_the_comparison(tmp_path: Path) -> None:
    a = skilled_run(tmp_path / "a", "model-a", 0.9)
    b = skilled_run(tmp_path / "b", "model-b", 0.4, seed=3)
    code, out, err = _main(["report", str(a), str(b), "--compare", "--n-resamples", "200", "--seed", "1"])
    assert code == 0, err
    assert "### Paired comparison: model-b minus model-a (baseline)" in out
    assert (
        "| config | metric | n shared | model-a | model-b | difference | 95% paired CI | test | p | p (BH) | MDD |"
        in out
    )
    assert "200 resamples of the shared sample ids (seed 1)" in out


def _one_line_error(args: list[str]) -> str:
    code, _, err = _main(args)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    return err


def test_runs_that_cannot_be_compared_are_refused_in_one_line(tmp_path: Path) -> None:
    a = skilled_run(tmp_path / "a", "model-a", 0.9, n=4)
    assert _one_line_error(["report", str(a), "--compare"]) == (
        "error: --compare needs two or more runs (the first is the baseline); got 1\n"
    )
    # another build seed: the same ids hold other texts, so no prompt is shared
    reseeded = {**BUILD, "seed": 1, "manifest_sha256": "e" * 64}
    other = write_run(
        tmp_path / "b",
        "model-b",
        {RS50: ["A"] * 4},
        rows=lambda c: [{**row, "scrambled": row["scrambled"] + " (seed 1)"} for row in qa_rows(c, 4)],
        build=reseeded,
    )
    err = _one_line_error(["report", str(a), str(other), "--compare"])
    assert err.startswith(
        f"error: {a} and {other} share no samples to compare: they differ in build seed 0 vs 1"
    )
    # another build version: refused for any report, compare or not
    newer = skilled_run(tmp_path / "c", "model-c", 0.9, n=4, build={**BUILD, "version": "1.1.0"})
    err = _one_line_error(["report", str(a), str(newer)])
    assert (
        err
        == f"error: runs of different build versions: {a} (1.0.0), {newer} (1.1.0); report runs of one build together (rerun one on the other's build)\n"
    )


def test_newer_results_format_is_refused(tmp_path: Path) -> None:
    newer_schema = RESULTS_SCHEMA + 1
    newer = skilled_run(tmp_path / "n", "model-n", 0.9, n=2, configs=(RS50,), schema=newer_schema)
    err = _one_line_error(["report", str(newer)])
    assert err == (
        f"error: {newer / 'results.json'}: results format {newer_schema} is newer than this scrambled-bench "
        f"reads ({RESULTS_SCHEMA}); upgrade scrambled-bench to report it\n"
    )
    with pytest.raises(ScrambledBenchError, match=f"results format {newer_schema} is newer"):
        load_run(newer)
