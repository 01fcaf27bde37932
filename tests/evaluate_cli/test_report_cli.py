"""The `report` command's surface: its options are listed, and a bare `--paper` means every paper model."""

from __future__ import annotations

import contextlib
import io

from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.evaluate_cli.report import expand_bare_paper


def test_help_lists_the_reference_comparison_and_hub_options() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", "--help"]) == 0
    for option in (
        "--paper",
        "--params",
        "--compare",
        "--n-resamples",
        "--format",
        "--push",
        "--model-card-results",
        "--benchmark",
    ):
        assert option in out.getvalue(), option


def test_bare_paper_is_all_models_wherever_it_stands(tmp_path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    assert expand_bare_paper(["report", str(run), "--paper"]) == ["report", str(run), "--paper", "all"]
    assert expand_bare_paper(["report", "--paper", str(run)]) == ["report", "--paper", "all", str(run)]
    assert expand_bare_paper(["report", "--paper=gpt-4", str(run)]) == ["report", "--paper=gpt-4", str(run)]
    assert expand_bare_paper(["run", "--paper"]) == ["run", "--paper"]  # other commands are left alone


def test_params_without_a_figure_is_a_one_line_error(tmp_path) -> None:
    import json

    entry = {
        "task": "scrqa",
        "dataset": "dream",
        "scramble_type": "rs50",
        "n_errors": 0,
        "n_scored": 4,
        "prompt_tokens": {"mean": None},
        "accuracy": {"value": 50.0, "ci": None},
    }
    (tmp_path / "results.json").write_text(
        json.dumps({"schema": 1, "model": "m", "configs": {"scrqa/dream/rs50": entry}})
    )
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["report", str(tmp_path), "--params", "7B"])
    assert code == 2
    assert (
        err.getvalue() == "error: --params places runs in the size figure: add --plot DIR or --format html\n"
    )
