"""``scrambled-bench score`` and ``reproduce`` end to end, bad input included (message and exit code)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scrambled_bench.evaluate_cli.main import main


def _write_jsonl(path: Path, rows: list) -> Path:
    path.write_text(
        "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows), encoding="utf-8"
    )
    return path


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


RECOVERY_ROWS = [
    {"prediction": " The cat sat.\n", "original": "The cat sat.", "scrambled": "Teh cat sat."},
    {"prediction": "A dog ran.", "original": "A dog ran.", "scrambled": "A dgo rna."},
    {"prediction": "Brids fly.", "original": "Birds fly.", "scrambled": "Brids fly."},
]

CHOICES = ["Salad dressing", "Baby formula", "Ground beef", "Whole milk"]
QA_ROWS = [
    # sample 1: gold B
    {
        "id": 1,
        "condition": "original",
        "prediction": " (B)Baby formula",
        "choices": CHOICES,
        "answer": "B",
        "dataset": "realtimeqa",
    },
    {
        "id": 1,
        "condition": "substituted",
        "prediction": "impossible to determine.",
        "choices": CHOICES,
        "answer": "B",
        "dataset": "realtimeqa",
    },
    {
        "id": 1,
        "condition": "rs50",
        "prediction": "B.\nQuestion: ...",
        "choices": CHOICES,
        "answer": "B",
        "dataset": "realtimeqa",
    },
    # sample 2: gold C
    {
        "id": 2,
        "condition": "original",
        "prediction": "The answer is C.",
        "choices": CHOICES,
        "answer": "C",
        "dataset": "realtimeqa",
    },
    {
        "id": 2,
        "condition": "substituted",
        "prediction": "(C)",
        "choices": CHOICES,
        "answer": "C",
        "dataset": "realtimeqa",
    },
    {
        "id": 2,
        "condition": "rs50",
        "prediction": "ground beef",
        "choices": CHOICES,
        "answer": "C",
        "dataset": "realtimeqa",
    },
    # sample 3: gold A
    {
        "id": 3,
        "condition": "original",
        "prediction": "A",
        "choices": CHOICES,
        "answer": "A",
        "dataset": "realtimeqa",
    },
    {
        "id": 3,
        "condition": "substituted",
        "prediction": "D",
        "choices": CHOICES,
        "answer": "A",
        "dataset": "realtimeqa",
    },
    {
        "id": 3,
        "condition": "rs50",
        "prediction": "(D)Whole milk",
        "choices": CHOICES,
        "answer": "A",
        "dataset": "realtimeqa",
    },
]


def test_score_recovery(tmp_path, capsys):
    predictions = _write_jsonl(tmp_path / "rec.jsonl", RECOVERY_ROWS)
    code, out, err = _run(
        capsys, "score", str(predictions), "--task", "recovery", "--details", str(tmp_path / "d.jsonl")
    )
    assert code == 0 and "error:" not in err
    summary = json.loads(out)
    assert summary["task"] == "recovery" and summary["num_samples"] == 3
    assert summary["recovery_rate"] == 0.75
    assert summary["edit_distance"] == pytest.approx(2 / 3)
    details = [json.loads(line) for line in (tmp_path / "d.jsonl").read_text().splitlines()]
    assert [d["recovered"] for d in details] == ["The cat sat.", "A dog ran.", "Brids fly."]
    assert [(d["edit_distance"], d["scrambled_edit_distance"]) for d in details] == [(0, 2), (0, 4), (2, 2)]


def test_score_recovery_with_interval(tmp_path, capsys):
    predictions = _write_jsonl(tmp_path / "rec.jsonl", RECOVERY_ROWS)
    code, out, _ = _run(
        capsys,
        "score",
        str(predictions),
        "--task",
        "recovery",
        "--confidence-level",
        "0.9",
        "--n-resamples",
        "200",
    )
    summary = json.loads(out)
    assert code == 0 and summary["confidence_level"] == 0.9 and len(summary["recovery_rate_ci"]) == 2


def test_score_qa_accuracy_per_condition_and_rpg(tmp_path, capsys):
    predictions = _write_jsonl(tmp_path / "qa.jsonl", QA_ROWS)
    code, out, err = _run(
        capsys, "score", str(predictions), "--task", "qa", "--details", str(tmp_path / "d.jsonl")
    )
    assert code == 0 and "error:" not in err
    summary = json.loads(out)
    assert summary["conditions"]["original"] == {"accuracy": 1.0, "num_samples": 3, "unparsed": 0}
    assert summary["conditions"]["substituted"] == {
        "accuracy": pytest.approx(1 / 3),
        "num_samples": 3,
        "unparsed": 1,
    }
    assert summary["conditions"]["rs50"]["accuracy"] == pytest.approx(2 / 3)
    gain = summary["relative_performance_gain"]
    assert list(gain) == ["rs50"]
    assert gain["rs50"]["relative_performance_gain"] == pytest.approx(0.5)  # (2/3 - 1/3) / (1 - 1/3)
    details = [json.loads(line) for line in (tmp_path / "d.jsonl").read_text().splitlines()]
    assert [d["parsed"] for d in details] == ["B", None, "B", "C", "C", "C", "A", "D", "D"]
    assert [d["line"] for d in details] == list(range(1, 10))


def test_score_qa_without_conditions(tmp_path, capsys):
    rows = [
        {"prediction": "(A)", "choices": ["x", "y"], "answer": "A", "dataset": "realtimeqa"},
        {"prediction": "y", "choices": ["x", "y"], "answer": "A", "dataset": "realtimeqa"},
    ]
    code, out, _ = _run(capsys, "score", str(_write_jsonl(tmp_path / "qa.jsonl", rows)), "--task", "qa")
    summary = json.loads(out)
    assert code == 0 and summary["conditions"] == {"all": {"accuracy": 0.5, "num_samples": 2, "unparsed": 0}}
    assert "relative_performance_gain" not in summary


def test_score_qa_chain_of_thought_is_the_aqua_dataset(tmp_path, capsys):
    rows = [{"prediction": "2 + 2 = 4. The answer is (B).", "choices": ["3", "4", "5"], "answer": "B"}]
    path = str(_write_jsonl(tmp_path / "cot.jsonl", rows))
    code, out, _ = _run(capsys, "score", path, "--task", "qa", "--dataset", "aqua")
    assert code == 0 and json.loads(out)["conditions"]["all"]["accuracy"] == 1.0


GOOD_QA = {"prediction": "A", "choices": ["x", "y"], "answer": "A", "dataset": "realtimeqa"}


@pytest.mark.parametrize(
    ("task", "rows", "message"),
    [
        ("recovery", ['{"prediction": "a", "original": "a"', GOOD_QA], r"rows\.jsonl:1: not valid JSON"),
        ("recovery", [{"prediction": "a", "original": "a"}], r"rows\.jsonl:1: missing field\(s\) scrambled"),
        (
            "recovery",
            [{"prediction": None, "original": "a", "scrambled": "b"}],
            r"rows\.jsonl:1: field 'prediction' must be a string, got null",
        ),
        ("recovery", [{"prediction": "a", "original": "a", "scrambled": "a"}], "recovery rate is undefined"),
        ("recovery", [], r"rows\.jsonl: no rows to score"),
        (
            "qa",
            [GOOD_QA, {"prediction": "A", "choices": "x y", "answer": "A", "dataset": "realtimeqa"}],
            r"rows\.jsonl:2: field 'choices' must be a list",
        ),
        (
            "qa",
            [{"prediction": "A", "choices": ["x", "y"], "answer": "C", "dataset": "realtimeqa"}],
            r"rows\.jsonl:1: field 'answer' must be one of the letters A, B",
        ),
        (
            "qa",
            [{"prediction": "A", "choices": ["x", "y"], "answer": "AB", "dataset": "realtimeqa"}],
            r"rows\.jsonl:1: field 'answer' must be one of the letters A, B",
        ),
        (
            "qa",
            [GOOD_QA, {"prediction": "A", "choices": ["x", "y"], "answer": "", "dataset": "realtimeqa"}],
            r"rows\.jsonl:2: field 'answer' must be one of the letters A, B",
        ),
        (
            "qa",
            [{"prediction": 3, "choices": ["x", "y"], "answer": "A", "dataset": "realtimeqa"}],
            r"rows\.jsonl:1: field 'prediction' must be a string, got 3",
        ),
        (
            "qa",
            [
                {**GOOD_QA, "condition": "original", "id": 1},
                {**GOOD_QA, "condition": "sub", "id": 1},
                {**GOOD_QA, "condition": "rs20", "id": 2},
            ],
            r"rows\.jsonl:3: id 2 of condition 'rs20' has no row in condition 'original'",
        ),
        (
            "qa",
            [
                {**GOOD_QA, "condition": "original"},
                {**GOOD_QA, "condition": "sub"},
                {**GOOD_QA, "condition": "kf"},
            ],
            r"rows\.jsonl:1: field 'id' is missing",
        ),
        (
            "qa",
            [
                {**GOOD_QA, "condition": "original", "id": 1},
                {**GOOD_QA, "condition": "original", "id": 1},
                {**GOOD_QA, "condition": "sub", "id": 1},
            ],
            r"rows\.jsonl:2: id 1 appears twice in condition 'original'",
        ),
    ],
)
def test_score_bad_input_is_one_line_naming_the_row(tmp_path, capsys, task, rows, message):
    path = _write_jsonl(tmp_path / "rows.jsonl", rows)
    code, out, err = _run(capsys, "score", str(path), "--task", task)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert re.search(message, err), err


def test_undefined_rpg_is_stated_in_the_summary_as_run_states_it(tmp_path, capsys):
    """RPG with no gain of the original over the substituted condition is None with its reason, the very
    verdict of the metric module that `run` writes into results.json; not an error, not a flipped ratio."""
    rows = [
        {**GOOD_QA, "condition": "original", "id": 1},
        {**GOOD_QA, "condition": "sub", "id": 1},
        {**GOOD_QA, "condition": "kf", "id": 1},
    ]
    path = _write_jsonl(tmp_path / "rows.jsonl", rows)
    code, out, err = _run(capsys, "score", str(path), "--task", "qa")
    assert code == 0, err
    gain = json.loads(out)["relative_performance_gain"]["kf"]
    assert gain["relative_performance_gain"] is None
    assert "original and substituted accuracy are equal" in gain["relative_performance_gain_undefined"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--task", "ner"], "Invalid value for '--task': 'ner' is not one of 'recovery', 'qa'"),
        (
            ["--task", "qa", "--confidence-level", "1.5"],
            "Invalid value for '--confidence-level': must be between 0 and 1, both excluded; got 1.5",
        ),
        (
            ["--task", "qa", "--confidence-level", "1"],
            "Invalid value for '--confidence-level': must be between 0 and 1, both excluded; got 1",
        ),
        (
            ["--task", "qa", "--n-resamples", "0"],
            "Invalid value for '--n-resamples': Input should be greater than",
        ),
    ],
)
def test_score_bad_options(tmp_path, capsys, extra, message):
    path = _write_jsonl(tmp_path / "rows.jsonl", [GOOD_QA])
    code, _, err = _run(capsys, "score", str(path), *extra)
    assert code == 2 and err.startswith(f"error: {message}") and err.count("\n") == 1


def test_score_missing_file(tmp_path, capsys):
    code, _, err = _run(capsys, "score", str(tmp_path / "nope.jsonl"), "--task", "qa")
    assert code == 2 and "nope.jsonl: no such file" in err


def test_reproduce_refuses_a_folder_without_outputs(tmp_path, capsys):
    code, _, err = _run(capsys, "reproduce", "--outputs", str(tmp_path))
    assert code == 2 and "no released outputs found" in err and err.count("\n") == 1


def test_reproduce_prints_tables_beside_the_paper(shared_data, tmp_path, capsys):
    code, out, _ = _run(
        capsys,
        "reproduce",
        "--outputs",
        str(shared_data / "paper_outputs"),
        "--parser",
        "paper",
        "--json",
        str(tmp_path / "cells.json"),
    )
    assert code == 0
    assert "Table 3: ScrRec RealtimeQA, few-shot" in out and "96.46" in out
    assert "160 of 160 cells match the paper" in out
    cells = json.loads((tmp_path / "cells.json").read_text())
    assert len(cells) == 160 and all(cell["matches"] for cell in cells)


def test_the_installed_command_reports_bad_input_without_a_traceback(tmp_path):
    path = _write_jsonl(tmp_path / "rows.jsonl", [{"prediction": "a", "original": "a"}])
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "scrambled_bench.evaluate_cli.main", "score", str(path), "--task", "recovery"],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == f"error: {path}:1: missing field(s) scrambled"
    assert "Traceback" not in done.stderr


def test_reproduced_tables_cut_no_number_or_name_on_a_narrow_console():
    """At 80 columns (a pipe, a small terminal) a wide table used to print "100.…" and fold "Acc question
    rs20" over the lines that hold the reproduced value, the paper's and the difference."""
    import io

    from rich.console import Console

    from scrambled_bench.evaluate_cli.display import print_cells
    from scrambled_bench.metrics.paper_reproduction import Cell

    columns = ["original", "rs20", "rs50", "rs100", "kf", "kfl", "sub"]
    cells = [
        Cell("table5_scrqa_realtimeqa_zeroshot", "Llama-2-70b", "RPG", column, 100.0, 100.0, "100.00", 346)
        for column in columns
    ] + [
        Cell("table1_aqua_fewshot_cot_acc", "GPT-4", "Acc question rs20", column, 66.5, 66.5, "66.50", 254)
        for column in ("exemplars rs0", "exemplars rs20", "exemplars rs50", "exemplars rs100")
    ]
    out = io.StringIO()
    print_cells(cells, Console(file=out, width=80, force_terminal=False, color_system=None))
    text = out.getvalue()
    assert "…" not in text
    assert text.count("100.00") == 2 * len(columns)
    assert "Acc question rs20" in text and "exemplars rs100" in text and "Llama-2-70b" in text
    assert "11 of 11 cells match the paper" in text


def test_many_files_and_folders_in_one_call(tmp_path, capsys):
    """One summary per file, a combined JSON on stdout, and the metric modules loaded once for all."""
    folder = tmp_path / "outputs"
    folder.mkdir()
    for name in ("a", "b"):
        _write_jsonl(folder / f"{name}.jsonl", QA_ROWS)
    single = _write_jsonl(tmp_path / "c.jsonl", QA_ROWS[:3])
    details = tmp_path / "details.jsonl"
    code, out, err = _run(
        capsys, "score", str(folder), str(single), "--task", "qa", "--details", str(details)
    )
    assert code == 0, err
    document = json.loads(out)
    assert document["reader"] == "careful" and document["units"]["accuracy"] == "fraction"
    assert [Path(s["file"]).name for s in document["files"]] == ["a.jsonl", "b.jsonl", "c.jsonl"]
    assert len(err.strip().splitlines()) == 3  # one human line per file, in percent
    assert "Acc 100.00%" in err
    rows = [json.loads(line) for line in details.read_text().splitlines()]
    assert len(rows) == 9 + 9 + 3 and {row["reader"] for row in rows} == {"careful"}
    assert {"file", "line", "parsed", "rule"} <= set(rows[0])


def test_the_paper_reader_is_chosen_and_recorded(tmp_path, capsys):
    rows = [
        {
            "prediction": "(C) A map, I think",
            "choices": ["A map", "A car", "A ship"],
            "answer": "A",
            "dataset": "dream",
        }
    ]
    path = str(_write_jsonl(tmp_path / "rows.jsonl", rows))
    _, careful, _ = _run(capsys, "score", path, "--task", "qa")
    _, paper, _ = _run(capsys, "score", path, "--task", "qa", "--parser", "paper")
    careful, paper = json.loads(careful), json.loads(paper)
    # the paper's rules read a choice's text before a letter; a careful reader takes the letter it was given
    assert (careful["reader"], paper["reader"]) == ("careful", "paper")
    assert careful["conditions"]["all"]["accuracy"] == 0.0 and paper["conditions"]["all"]["accuracy"] == 1.0


@pytest.mark.parametrize(
    ("rows", "extra", "message"),
    [
        (
            [{**GOOD_QA, "dataset": "squad"}],
            [],
            r"rows\.jsonl:1: field 'dataset' must be one of realtimeqa, dream, aqua",
        ),
        (
            [{k: v for k, v in GOOD_QA.items() if k != "dataset"}],
            [],
            r"rows\.jsonl:1: field 'dataset' is missing",
        ),
        (
            [{k: v for k, v in GOOD_QA.items() if k != "dataset"} | {"choices": ["a", "b", "c", "d"]}],
            ["--dataset", "dream"],
            r"rows\.jsonl:1: field 'choices' must be a list of 1 to 3 strings for dream",
        ),
        (
            [GOOD_QA],
            ["--parser", "fancy"],
            "Invalid value for '--parser': 'fancy' is not one of 'paper', 'careful'",
        ),
    ],
)
def test_reader_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, rows, extra, message):
    path = _write_jsonl(tmp_path / "rows.jsonl", rows)
    details = tmp_path / "details.jsonl"
    code, out, err = _run(capsys, "score", str(path), "--task", "qa", "--details", str(details), *extra)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert re.search(message, err), err
    assert not details.exists()


def test_score_accuracy_interval_is_wilson_with_width_at_none_and_all_right(tmp_path, capsys):
    """0 of n and n of n correct: Wilson intervals of positive width (a bootstrap of a constant sample would
    be [0, 0]), the same the metric module and results.json give, and the method named beside each."""
    from statsmodels.stats.proportion import proportion_confint

    rows = [
        {
            "prediction": prediction,
            "choices": ["x", "y"],
            "answer": "A",
            "dataset": "realtimeqa",
            "condition": c,
        }
        for c, prediction in (("none", "B"), ("all", "A"))
        for _ in range(6)
    ]
    path = _write_jsonl(tmp_path / "qa.jsonl", rows)
    code, out, _ = _run(capsys, "score", str(path), "--task", "qa", "--confidence-level", "0.9")
    assert code == 0
    conditions = json.loads(out)["conditions"]
    for condition, correct in (("none", 0), ("all", 6)):
        low, high = conditions[condition]["accuracy_ci"]
        assert high - low > 0 and conditions[condition]["accuracy_ci_method"] == "wilson"
        assert (low, high) == pytest.approx(proportion_confint(correct, 6, alpha=0.1, method="wilson"))


def test_an_rpg_whose_original_accuracy_is_no_better_than_chance_is_marked(tmp_path, capsys):
    """One of four right on a 4-way task: the original accuracy's interval holds chance (25 %), so the
    summary keeps RPG and says, as run and report do, that it is not meaningful there."""
    rows = []
    for identifier, gold in enumerate("ABCD"):
        for condition, prediction in (("original", "A"), ("sub", "(none)"), ("rs50", "A")):
            rows.append({"id": identifier, "condition": condition, "prediction": prediction,
                         "choices": CHOICES, "answer": gold, "dataset": "realtimeqa"})  # fmt: skip
    path = _write_jsonl(tmp_path / "rows.jsonl", rows)
    code, out, err = _run(capsys, "score", str(path), "--task", "qa")
    assert code == 0, err
    gain = json.loads(out)["relative_performance_gain"]["rs50"]
    assert gain["relative_performance_gain"] == 1.0 and gain["chance"] == 0.25
    low, high = gain["original_accuracy_ci"]
    assert low < 0.25 < high
    assert "rs50 RPG 100.00% (RPG not meaningful: original accuracy 25.0% [" in err
    assert "contains chance (25.0%)" in err
