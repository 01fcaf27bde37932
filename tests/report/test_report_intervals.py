"""Intervals in results.json and `report --ci`: Wilson for accuracy (positive width at 0 of n and n of n),
the method and level stored beside each interval, and `--confidence-level` honoured (the intervals and their
labels change) or refused where it cannot apply."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from statsmodels.stats.proportion import proportion_confint
from test_report import _make_run
from typer.testing import CliRunner

from scrambled_bench.evaluate_cli.main import app, main


@pytest.fixture
def run_at_the_edges(tmp_path: Path) -> Path:
    # DREAM: original 4 of 4 right, rs50 0 of 4 right, sub 1 of 4
    return _make_run(tmp_path / "runs" / "edges", "edge-model", 0)


def test_results_json_stores_wilson_intervals_of_positive_width_with_method_and_level(run_at_the_edges: Path):
    results = json.loads((run_at_the_edges / "results.json").read_text())
    assert results["intervals"] == {"confidence_level": 0.95, "n_resamples": 1000, "seed": 0}
    configs = results["configs"]
    for name, correct in (("scrqa/dream/original", 4), ("scrqa/dream/rs50", 0)):
        accuracy = configs[name]["accuracy"]
        low, high = accuracy["ci"]
        assert high - low > 0, (name, accuracy)
        assert (low, high) == pytest.approx(proportion_confint(correct, 4, alpha=0.05, method="wilson"))
        assert (accuracy["ci_method"], accuracy["ci_level"]) == ("wilson", 0.95)
    edit_distance = configs["scrrec-zero-shot/realtimeqa/rs50"]["edit_distance"]
    assert edit_distance["ci_method"] in ("bca", "percentile")


def _row(text: str, model: str, metric: str) -> list[str]:
    [line] = [line for line in text.splitlines() if line.startswith(f"| {model} | {metric} |")]
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_report_ci_at_another_level_changes_the_intervals_and_their_labels(run_at_the_edges: Path) -> None:
    runner = CliRunner()
    stored = runner.invoke(app, ["report", str(run_at_the_edges), "--ci"])
    halved = runner.invoke(app, ["report", str(run_at_the_edges), "--ci", "--confidence-level", "0.5"])
    assert stored.exit_code == 0 and halved.exit_code == 0, (stored.output, halved.output)
    # columns: model, metric, original, rs50, sub, errors; rs50 is 0 of 4: an interval of positive width
    wide, narrow = _row(stored.stdout, "edge-model", "Acc"), _row(halved.stdout, "edge-model", "Acc")
    assert wide[3].startswith("0.00 [0.00, ") and wide[3] != "0.00 [0.00, 0.00]"
    high = lambda cell: float(re.search(r", ([\d.]+)\]", cell).group(1))
    assert high(narrow[3]) < high(wide[3])
    assert high(narrow[3]) == pytest.approx(
        100 * proportion_confint(0, 4, alpha=0.5, method="wilson")[1], abs=0.01
    )
    assert "Intervals [low, high]: 95%; Acc: Wilson score interval" in stored.stdout
    assert "Intervals [low, high]: 50%; Acc: Wilson score interval" in halved.stdout
    assert "95%" not in halved.stdout.split("Intervals [low, high]:")[1].split("\n")[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--ci", "--confidence-level", "1.0"],
            "Invalid value for '--confidence-level': must be between 0 and 1",
        ),
        (
            ["--ci", "--confidence-level", "0"],
            "Invalid value for '--confidence-level': must be between 0 and 1",
        ),
        (["--confidence-level", "0.9"], "--confidence-level set(s) the intervals that --ci, --compare"),
    ],
)
def test_a_level_that_cannot_apply_is_refused_in_one_line(
    run_at_the_edges: Path, args: list[str], message: str, capsys
) -> None:
    code = main(["report", str(run_at_the_edges), *args])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"error: {message}") and err.count("\n") == 1, err


def test_a_level_without_the_stored_outputs_is_refused(run_at_the_edges: Path, capsys) -> None:
    (run_at_the_edges / "samples.jsonl").unlink()
    assert main(["report", str(run_at_the_edges), "--ci"]) == 0  # as stored: nothing to recompute
    capsys.readouterr()
    code = main(["report", str(run_at_the_edges), "--ci", "--confidence-level", "0.8"])
    err = capsys.readouterr().err
    assert code == 2 and "no samples.jsonl, so its outputs cannot be given other intervals" in err
