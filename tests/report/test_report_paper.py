"""`report --paper`: the paper's models as reference rows in every table, each number equal to
metrics/paper_tables.json, marked as the paper's, with a caption saying whether the runs compare."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path

from report_runs import skilled_run

from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.report import build_tables, label_runs, load_run, render_markdown
from scrambled_bench.report.paper import comparability, paper_models, select_paper_models

PAPER_TABLES = json.loads((Path(__file__).parents[2] / "metrics" / "paper_tables.json").read_text())
# which paper table each report table mirrors, and how a row and a column read as the table's keys
LAYOUT = {
    "scrrec-few-shot": ("table3_scrrec_realtimeqa_fewshot", "types"),
    "scrrec-zero-shot": ("table4_scrrec_realtimeqa_zeroshot", "types"),
    "scrqa-realtimeqa": ("table5_scrqa_realtimeqa_zeroshot", "types"),
    "scrqa-dream": ("table6_scrqa_dream_zeroshot", "types"),
    "dream-categories-acc": ("table7_scrqa_dream_by_category_acc", "types"),
    "dream-categories-rpg": ("table8_scrqa_dream_by_category_rpg", "types"),
    "aqua-cot": ("table1_aqua_fewshot_cot_acc", "exemplars"),
}
QUESTION_RATES = {"original": 0, "rs20": 20, "rs50": 50, "rs100": 100}


def _paper_keys(layout: str, row: list[str], column: str) -> tuple[str, str]:
    """(row key, column key) of paper_tables.json for a report row (its second cell) and column."""
    if layout == "exemplars":
        return f"question_rs{QUESTION_RATES[row[1]]}", f"exemplars_rs{column.split()[1].rstrip('%')}"
    return row[1], column


def test_every_paper_number_in_the_report_is_the_papers(run_paths: list[Path]) -> None:
    runs = label_runs([load_run(p) for p in run_paths])
    tables = {t.key: t for t in build_tables(runs, paper=select_paper_models("all"))}
    shown: set[tuple[str, str, str, str]] = set()
    for key, (paper_table, layout) in LAYOUT.items():
        table = tables[key]
        columns = table.columns[2:-1] if table.columns[-1] == "errors" else table.columns[2:]
        paper_rows = [row for row in table.rows if row[0].endswith(" (paper)")]
        assert paper_rows, key
        for row in paper_rows:
            model = row[0].removesuffix(" (paper)")
            for column, cell in zip(columns, row[2 : 2 + len(columns)], strict=True):
                row_key, column_key = _paper_keys(layout, row, column)
                held = PAPER_TABLES[paper_table][model].get(row_key, {})
                if cell == "":
                    assert column_key not in held, (key, model, row_key, column_key)
                    continue
                expected = held[column_key]
                assert cell == ("< 0" if expected is None else f"{expected:.2f}"), (
                    key,
                    model,
                    row_key,
                    column,
                )
                shown.add((paper_table, model, row_key, column_key))
        assert "Rows marked (paper): Cao et al. (2023)" in " ".join(table.notes)
        assert table.caption.startswith("Comparable with the paper's rows")
    # and every number of the paper is shown, but RPG at the substituted text (0 by definition; the
    # category RPG table leaves that column out for the runs too)
    every = {
        (paper_table, model, row_key, column_key)
        for paper_table, _ in LAYOUT.values()
        for model, rows in PAPER_TABLES[paper_table].items()
        for row_key, columns in rows.items()
        for column_key in columns
    }
    missing = {cell for cell in every - shown if not (cell[0].startswith("table8") and cell[3] == "sub")}
    assert not missing
    assert len(shown) == 2 * 190 + 2 * 266 + 210 + 180 + 48  # Tables 3-4, 5-6, 7, 8 (less sub), 1


def test_reference_rows_leave_the_runs_cells_alone(run_paths: list[Path]) -> None:
    runs = label_runs([load_run(p) for p in run_paths])
    [table] = [
        t for t in build_tables(runs, paper=select_paper_models("gpt-4")) if t.key == "scrqa-realtimeqa"
    ]
    assert table.columns == [
        "model",
        "metric",
        "original",
        "rs20",
        "rs50",
        "rs100",
        "kf",
        "kfl",
        "sub",
        "errors",
    ]
    big_acc = table.rows[0]
    # the run has original, rs50, rs100 and sub: rs20, kf and kfl are empty, never filled from the paper
    assert big_acc[:2] == ["big-model", "Acc"] and [big_acc[i] for i in (3, 6, 7)] == ["", "", ""]
    assert big_acc[2] == "100.00" and big_acc[-1] == "0.0%"
    assert [row[0] for row in table.rows] == ["big-model"] * 2 + ["small-model"] * 2 + ["GPT-4 (paper)"] * 2
    assert table.rows[4][2:9] == ["97.69", "97.40", "96.82", "93.35", "93.35", "95.66", "62.14"]
    assert table.rows[4][-1] == ""
    text = render_markdown([table])
    assert "| GPT-4 (paper) | RPG | 100.00 | 99.19 | 97.56 | 87.80 | 87.80 | 94.31 | 0.00 |  |" in text
    assert (
        "*Comparable with the paper's rows (Cao et al. (2023), Table 5): big-model, small-model: no" in text
    )


def test_caption_says_how_a_run_differs_from_the_paper(run_paths: list[Path], tmp_path: Path) -> None:
    [table] = [
        t
        for t in build_tables(label_runs([load_run(run_paths[0])]), paper=select_paper_models("llama-2-7b"))
        if t.key == "scrqa-dream"
    ]
    assert "answer reader 'careful', not the paper's ('paper')" in table.caption
    assert "samples: 10 per config, not the paper's 1025" in table.caption
    paper_reader = skilled_run(tmp_path / "paper", "m", 0.9, settings={"parser": "paper"})
    [table] = [
        t
        for t in build_tables(label_runs([load_run(paper_reader)]), paper=select_paper_models("gpt-4"))
        if t.key == "scrqa-dream"
    ]
    assert "answer reader" not in table.caption and "samples: 10 per config" in table.caption
    assert comparability(prompt_mode="chat", reader="paper", samples=346, paper_samples=346) == []
    assert comparability(prompt_mode="chat", reader="careful", samples=346, paper_samples=346) == [
        "answer reader 'careful', not the paper's ('paper')"
    ]


def test_selection_is_case_insensitive_and_tables_hold_only_their_models(run_paths: list[Path]) -> None:
    assert [m.name for m in select_paper_models("GPT-4,falcon-40B, gpt-4")] == ["GPT-4", "Falcon-40b"]
    runs = label_runs([load_run(run_paths[0])])
    tables = {t.key: t for t in build_tables(runs, paper=select_paper_models("falcon-40b"))}
    assert any(row[0] == "Falcon-40b (paper)" for row in tables["scrqa-dream"].rows)
    # Table 1 holds three models and Tables 7-8 five: Falcon-40b is in none, so they get no paper rows
    assert not any(row[0].endswith("(paper)") for row in tables["aqua-cot"].rows)
    assert not tables["aqua-cot"].caption
    assert len(paper_models()) == 19


def _main(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def test_cli_paper_alone_selects_all_and_a_list_selects_some(run_paths: list[Path]) -> None:
    code, out, err = _main(["report", str(run_paths[0]), "--paper"])
    assert code == 0, err
    assert "| ByT5-xxl (paper) | RR |" in out and "| GPT-4 (paper) | Acc | 97.69 |" in out
    code, out, err = _main(["report", "--paper", str(run_paths[0])])  # a run folder after it is no selection
    assert code == 0, err
    assert "| ByT5-xxl (paper) |" in out
    code, out, _ = _main(["report", str(run_paths[0]), "--paper", "gpt-4,LLAMA-2-70B", "--format", "csv"])
    rows = list(csv.reader(io.StringIO(out)))
    models = {row[1] for row in rows if len(row) > 1 and row[1].endswith("(paper)")}
    assert code == 0 and models == {"GPT-4 (paper)", "Llama-2-70b (paper)"}


def test_cli_unknown_paper_model_is_one_line(run_paths: list[Path]) -> None:
    code, _, err = _main(["report", str(run_paths[0]), "--paper", "gpt-4,gpt-5"])
    assert code == 2 and err.startswith(
        "error: --paper: unknown paper model 'gpt-5'; the paper's models: GPT-4,"
    )
    assert err.count("\n") == 1
