"""The report command: paper-shaped tables and figures (the Hub: test_report_hub.py; the paper's models:
test_report_paper.py; paired comparison: test_report_compare.py; the HTML page in Chromium:
test_report_html.py)."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scrambled_bench.evaluate_cli.main import app
from scrambled_bench.evaluation.results import (
    collect_samples,
    compute_results,
    results_document,
    score_rows,
    write_json,
    write_jsonl,
)
from scrambled_bench.evaluation.tasks import TaskConfig, build_requests
from scrambled_bench.report import build_tables, label_runs, load_run, render_markdown

CHOICES = ["Ann", "Bob", "Cy"]


def _dream_rows(scramble_type: str, prefix: str, categories: Callable[[int], list[str]]) -> list[dict]:
    """Four DREAM questions (ids ``prefix``0-3) whose gold answer is A, the dialogue marked with the type."""
    return [
        {
            "id": f"{prefix}{i}",
            "original": "W: Hi.",
            "scrambled": f"W: Hi ({scramble_type}).",
            "question": f"Q{i}?",
            "choices": CHOICES,
            "answer": "A",
            "categories": categories(i),
        }
        for i in range(4)
    ]


def _make_run(folder: Path, model: str, correct_rs50: int, correct_original: int = 4) -> Path:
    """A run folder as `run` writes it, from synthetic outputs: DREAM ScrQA, ScrRec and AQuA configs."""

    def qa_rows(scramble_type: str) -> list[dict]:
        return _dream_rows(scramble_type, "d", lambda i: ["matching" if i < 2 else "logic"])

    def rec_rows(scramble_type: str) -> list[dict]:
        scrambled = {"rs50": "Rian flel all day.", "kfl": "Rian flel all dya."}[
            scramble_type
        ]  # scrambled ED 4, 6
        return [{"id": "r1", "original": "Rain fell all day.", "scrambled": scrambled, "used_for_qa": True}]

    aqua_rows = [
        {
            "id": "a1",
            "original": "2+2?",
            "scrambled": "2+2?",
            "choices": ["1", "2", "3", "4", "5"],
            "answer": "D",
        }
    ]
    outputs: dict[TaskConfig, list[str]] = {
        TaskConfig("scrqa", "dream", "original"): ["A"] * correct_original + ["B"] * (4 - correct_original),
        TaskConfig("scrqa", "dream", "sub"): ["B", "B", "B", "A"],
        TaskConfig("scrqa", "dream", "rs50"): ["A"] * correct_rs50 + ["C"] * (4 - correct_rs50),
        TaskConfig("scrrec-zero-shot", "realtimeqa", "rs50"): ["Rain fell all day."],
        TaskConfig("scrrec-zero-shot", "realtimeqa", "kfl"): ["Rian fell all day."],
        TaskConfig("aqua-cot", "aqua", "original", 0): ["The answer is (D)."],
        TaskConfig("aqua-cot", "aqua", "original", 100): ["The answer is (A)."],
    }
    rows = {"scrqa": qa_rows, "scrrec-zero-shot": rec_rows, "aqua-cot": lambda _: aqua_rows}
    requests = {c: build_requests(c, rows[c.task](c.scramble_type)) for c in outputs}
    completed = {
        r.key(model): {
            "key": r.key(model),
            "output": o,
            "prompt_tokens": 20 + len(r.prompt) % 7,
            "completion_tokens": 3,
        }
        for c in outputs
        for r, o in zip(requests[c], outputs[c])
    }
    collected = collect_samples(requests, completed, {}, model)
    configs = compute_results(collected, n_resamples=50)
    folder.mkdir(parents=True)
    write_json(
        folder / "results.json",
        results_document(configs, run_config={"model": model, "backend": "openai"}, engine={}),
    )
    write_jsonl(folder / "scores.jsonl", score_rows(collected))
    write_json(folder / "config.json", {"model": model, "settings": {"api_key_given": True}})
    records = {r.key(model): {**r.meta, "chat": r.chat} for c in outputs for r in requests[c]}
    (folder / "samples.jsonl").write_text(
        "".join(json.dumps({**records[k], **v}) + "\n" for k, v in completed.items())
    )
    return folder


@pytest.fixture
def two_runs(tmp_path: Path) -> list[Path]:
    return [
        _make_run(tmp_path / "runs" / "big", "big-model", 4),
        _make_run(tmp_path / "runs" / "small", "small-model", 2),
    ]


def test_an_rpg_whose_original_accuracy_holds_chance_is_marked_in_the_tables(tmp_path: Path) -> None:
    """Original accuracy 2 of 4 on 3-way questions: its interval holds chance (33 %), so the RPG cells say
    with a footnote that RPG is not meaningful there, as an undefined RPG is footnoted."""
    run = load_run(_make_run(tmp_path / "runs" / "near", "near-chance", 2, correct_original=2))
    scrqa = {t.key: t for t in build_tables([run])}["scrqa-dream"]
    [gain_row] = [row for row in scrqa.rows if row[1] == "RPG"]
    assert gain_row[scrqa.columns.index("rs50")].endswith(" [1]")
    assert any(
        note.startswith("[1] RPG not meaningful: original accuracy 50.0% [")
        and note.endswith("contains chance (33.3%)")
        for note in scrqa.notes
    )
    assert "RPG not meaningful" in render_markdown([scrqa])


def test_tables_have_the_papers_shape(two_runs: list[Path]) -> None:
    runs = label_runs([load_run(p) for p in two_runs])
    tables = {t.key: t for t in build_tables(runs)}
    assert set(tables) >= {
        "scrrec-zero-shot",
        "scrqa-dream",
        "dream-categories-acc",
        "dream-categories-rpg",
        "aqua-cot",
        "tokens-dream",
    }
    scrqa = tables["scrqa-dream"]
    assert scrqa.columns == ["model", "metric", "original", "rs50", "sub", "errors"]
    # big: rs50 4/4 -> Acc 100, RPG (1 - .25) / (1 - .25) = 100; small: 2/4 -> Acc 50, RPG (0.5-0.25)/0.75
    assert scrqa.rows[0] == ["big-model", "Acc", "100.00", "100.00", "25.00", "0.0%"]
    assert scrqa.rows[3][:4] == ["small-model", "RPG", "100.00", "33.33"]
    rec = tables["scrrec-zero-shot"]
    assert rec.columns == ["model", "metric", "rs50", "kfl", "errors"]
    assert rec.rows[0][:4] == ["big-model", "ED", "0.00", "2.00"] and rec.rows[1][1:4] == [
        "RR",
        "100.00",
        "66.67",
    ]
    aqua = tables["aqua-cot"]
    assert aqua.columns == ["model", "question", "exemplars 0%", "exemplars 100%", "errors"]
    assert aqua.rows[0] == ["big-model", "original", "100.00", "0.00", "0.0%"]
    by_category = tables["dream-categories-acc"]
    assert by_category.columns == ["model", "category", "original", "rs50", "sub"]
    # small-model at rs50 got d0, d1 right ("matching") and d2, d3 wrong ("logic")
    assert by_category.rows == [
        ["big-model", "logic", "100.00", "100.00", "50.00"],
        ["big-model", "matching", "100.00", "100.00", "0.00"],
        ["small-model", "logic", "100.00", "0.00", "50.00"],
        ["small-model", "matching", "100.00", "100.00", "0.00"],
    ]
    gain = tables["dream-categories-rpg"]
    assert gain.columns == ["model", "category", "original", "rs50"]
    # small-model, logic: original 2/2, sub 1/2 (d3), rs50 0/2 -> RPG (0 - .5) / (1 - .5) = -100%
    assert gain.rows[2] == ["small-model", "logic", "100.00", "-100.00"]


def test_cli_formats_plots_and_errors(two_runs: list[Path], tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["report", *map(str, two_runs)])
    assert result.exit_code == 0, result.output
    assert "| big-model | Acc | 100.00 | 100.00 | 25.00 | 0.0% |" in result.stdout

    result = runner.invoke(app, ["report", *map(str, two_runs), "--format", "csv", "--ci"])
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert ["table", "model", "metric", "original", "rs50", "sub", "errors"] in rows
    assert any(
        row[0] == "scrqa-dream" and row[1] == "small-model" and row[2] == "Acc" and "[" in row[4]
        for row in rows
    )

    out = tmp_path / "report.html"
    figures = tmp_path / "figures"
    result = runner.invoke(
        app, ["report", *map(str, two_runs), "-f", "html", "-o", str(out), "--plot", str(figures)]
    )
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("<!doctype html>") and "<td>big-model</td>" in out.read_text()
    for name in ("scrrec", "scrqa", "dream_categories", "aqua"):
        for suffix in ("png", "svg"):
            assert (figures / f"{name}.{suffix}").stat().st_size > 1000
    assert (figures / "scrqa.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["report", "/nonexistent/run"], "run folder not found: /nonexistent/run"),
        (["report", "{run}", "--format", "pdf"], "Invalid value for '--format' / '-f': 'pdf' is not one of"),
        (["report", "{run}", "--push", "not a repo"], "--push: expected a Hub repository id ORG/NAME"),
    ],
)
def test_cli_bad_input_is_one_line(two_runs: list[Path], args: list[str], message: str) -> None:
    args = [a.replace("{run}", str(two_runs[0])) for a in args]
    import contextlib

    from scrambled_bench.evaluate_cli.main import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(args)
    assert code != 0
    assert err.getvalue().startswith(f"error: {message}") and err.getvalue().count("\n") == 1
    assert "Traceback" not in err.getvalue()


def test_corrupt_results_file_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "results.json").write_text("{not json")
    from scrambled_bench.errors import ScrambledBenchError

    with pytest.raises(ScrambledBenchError, match=r"results.json:1: not valid JSON"):
        load_run(folder)


def test_markdown_escapes_pipes() -> None:
    from scrambled_bench.report import ReportTable

    assert "a\\|b" in render_markdown([ReportTable("k", "T", ["x"], [["a|b"]])])


def test_errors_column_names_the_configs_that_failed(tmp_path: Path) -> None:
    """Failures concentrate on some types (context-window skips where prompts are longest): the row's error
    rate alone hid that the sub column rested on half its samples."""
    model = "m"

    def rows(scramble_type: str) -> list[dict]:
        return _dream_rows(scramble_type, "q", lambda i: [])

    requests = {
        TaskConfig("scrqa", "dream", t): build_requests(TaskConfig("scrqa", "dream", t), rows(t))
        for t in ("original", "rs50", "sub")
    }
    completed, errors = {}, {}
    for config, config_requests in requests.items():
        for index, request in enumerate(config_requests):
            key = request.key(model)
            if config.scramble_type == "sub" and index < 2:
                errors[key] = {"key": key, "error_type": "context_too_long"}
            else:
                completed[key] = {"key": key, "output": "A"}
    configs = compute_results(collect_samples(requests, completed, errors, model), n_resamples=20)
    folder = tmp_path / "run"
    folder.mkdir()
    write_json(folder / "results.json", results_document(configs, run_config={"model": model}, engine={}))
    [table] = [t for t in build_tables(label_runs([load_run(folder)])) if t.key == "scrqa-dream"]
    assert table.rows[0][-1] == "16.7% (sub 50.0%)"
    assert table.rows[0][2:5] == ["100.00", "100.00", "100.00"]


def test_undefined_category_rpg_is_a_gap_in_the_figure(two_runs: list[Path], tmp_path: Path) -> None:
    from scrambled_bench.report import plot_figures

    runs = label_runs([load_run(p) for p in two_runs])
    for run in runs:  # make every category RPG undefined, as when original and sub accuracies are equal
        for entry in run.results["configs"].values():
            for category in (entry.get("categories") or {}).values():
                category["relative_performance_gain"] = {
                    "value": None,
                    "ci": None,
                    "undefined": "equal anchors",
                }
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    drawn = []
    original_bar = plt.Axes.bar

    def spy(self, x, height, *args, **kwargs):
        drawn.extend(height)
        return original_bar(self, x, height, *args, **kwargs)

    plt.Axes.bar = spy
    try:
        plot_figures(runs, tmp_path / "figures")
    finally:
        plt.Axes.bar = original_bar
    assert drawn and all(
        math.isnan(h) for h in drawn
    )  # NaN: nothing drawn, where 0.0 used to read as "no gain"


def test_a_run_is_re_read_with_another_answer_reader(tmp_path: Path) -> None:
    """`report --parser paper` reads a run's stored outputs as the paper's authors did: "Bob or Ann" hedges to
    a careful reader (no answer), and is the choice text found first (Bob) to the paper's rules."""
    folder = _make_run(tmp_path / "runs" / "hedging", "hedging-model", 4)
    samples = [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines()]
    for sample in samples:
        if sample.get("config") == "scrqa/dream/rs50":
            sample["output"] = "Bob or Ann"
    (folder / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    from scrambled_bench.report.runs import reread

    run = load_run(folder)
    careful = reread(run, "careful").results["configs"]["scrqa/dream/rs50"]
    paper = reread(run, "paper")
    assert paper.results["reader"] == "paper"
    assert careful["accuracy"]["value"] == 100.0  # results.json as written (the outputs were "A")
    assert paper.results["configs"]["scrqa/dream/rs50"]["accuracy"]["value"] == 0.0  # Bob is B, gold is A
    assert paper.results["configs"]["scrqa/dream/rs50"]["rules"] == {"paper-choice-text": 4}
    runner = CliRunner()
    result = runner.invoke(app, ["report", str(folder), "--parser", "paper"])
    assert result.exit_code == 0, result.output
    assert "| hedging-model | Acc | 100.00 | 0.00 |" in result.stdout


def test_a_run_folder_without_results_is_left_out_in_one_line(two_runs: list[Path], tmp_path: Path) -> None:
    """`report runs/*` while a run is going (or was killed before it wrote its results) reports the others
    and says, one line each, which folders it left out; it never refuses the whole report for one."""
    import contextlib

    from scrambled_bench.evaluate_cli.main import main

    going = tmp_path / "runs" / "going"
    going.mkdir()
    (going / "samples.jsonl").write_text("")
    stale = tmp_path / "runs" / "stale"
    import shutil

    shutil.copytree(two_runs[0], stale)
    (stale / "config.json").write_text(json.dumps({"run_id": "0123456789"}))
    (stale / "results.json").write_text(
        json.dumps({**json.loads((stale / "results.json").read_text()), "run_id": "9876543210"})
    )

    def report(*args: str) -> tuple[int, str, list[str]]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["report", *args])
        return code, out.getvalue(), err.getvalue().splitlines()

    everything = sorted(str(path) for path in (tmp_path / "runs").iterdir())  # runs/*
    code, out, err = report(*everything)
    assert code == 0, err
    assert "big-model" in out and "small-model" in out
    assert err == [
        (
            f"left out {going}: no results.json (a run still going, or stopped before it wrote any: killed, "
            "or interrupted before it sent a request); rerun the same `run` command"
        ),
        (
            f"left out {stale / 'results.json'}: computed with other settings than config.json (run "
            "9876543210, settings 0123456789); rerun the same `run` command to finish it and rewrite the results"
        ),
    ]
    # nothing to report is still an error, and so is a folder that does not exist (a mistyped path)
    code, _, err = report(str(going))
    assert code == 2 and err == [f"error: {going}: no results.json " + err[0].split("no results.json ", 1)[1]]
    code, _, err = report(str(going), str(stale))
    assert (
        code == 2 and len(err) == 1 and err[0].startswith("error: none of the 2 run folders can be reported")
    )
    code, _, err = report(str(two_runs[0]), str(tmp_path / "runs" / "typo"))
    assert (code, err) == (2, [f"error: run folder not found: {tmp_path / 'runs' / 'typo'}"])
    # a publication holds exactly the runs given: one left out refuses it, before anything is sent
    code, _, err = report(*everything, "--push", "org/results")
    assert code == 2 and len(err) == 1
    assert err[0].startswith(f"error: --push: a run given cannot be published ({going}: no results.json")
