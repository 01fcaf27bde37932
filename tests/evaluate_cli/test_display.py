"""What the terminal tables print: an undefined score is n/a with a footnote saying why, in run's summary and
in the table of a harness's re-scored outputs alike (one formatter)."""

from __future__ import annotations

from scrambled_bench.evaluate_cli.display import console, print_config_scores
from scrambled_bench.evaluation.results import FRACTION, units

UNDEFINED = "original and substituted accuracy are equal (0.5000): the original context gained nothing"


def harness_scores(configs: dict) -> dict:
    """A harness's re-scored outputs, as ``score --from-lm-eval`` gives them (fractions)."""
    return {
        "source": "lm-eval",
        "folder": "out",
        "reader": "careful",
        "units": units(FRACTION),
        "configs": configs,
    }


def test_harness_scores_footnote_an_undefined_rpg(capsys) -> None:
    document = harness_scores(
        {
            "scrqa/dream/kfl": {
                "n_scored": 4,
                "unparsed": 0,
                "accuracy": {"value": 0.5, "ci": None},
                "relative_performance_gain": {"value": None, "ci": None, "undefined": UNDEFINED},
            }
        }
    )
    print_config_scores(document, console())
    out = capsys.readouterr().out
    assert "50.0" in out and "n/a [1]" in out  # percent in the table; the reason below it
    assert f"[1] RPG undefined: {UNDEFINED}" in out


def test_a_scrambled_variants_undefined_rpg_is_footnoted_as_report_does(capsys) -> None:
    """``score --from HARNESS``'s table of scrambled variants (issue 43: the cell was blank): ``undefined``
    with the reason below, the words of ``report --from``'s table."""
    from scrambled_bench.report.variants import variant_tables

    gain = {"value": None, "ci": None, "undefined": UNDEFINED}
    kfl = {"value": 0.5, "difference": 0.0, "ci": [0.0, 0.0], "mcnemar_p": 1.0, "n_paired": 2, "n_unpaired": 0,
           "relative_performance_gain": gain}  # fmt: skip
    section = {"quiz": {"metrics": {"acc,none": {"value": 0.5, "n": 2}},
                        "types": {"kfl": {"task": "quiz_kfl", "n_unpaired": 0, "metrics": {"acc,none": kfl}},
                                  "sub": {"task": "quiz_sub", "n_unpaired": 0, "metrics": {"acc,none": {
                                      **kfl, "relative_performance_gain": None}}}}}}  # fmt: skip
    document = {**harness_scores({}), "scrambled_tasks": section}
    print_config_scores(document, console())
    out = capsys.readouterr().out
    assert "undefined [1]" in out and f"[1] RPG undefined: {UNDEFINED}" in out
    [table] = variant_tables(section)
    assert table.rows[1][7] == "undefined [1]" and table.notes == [f"[1] RPG undefined: {UNDEFINED}"]


def test_an_rpg_over_an_original_accuracy_no_better_than_chance_is_footnoted(capsys) -> None:
    """The issue's case: 23.3 % on a 4-way task, whose interval holds chance (25 %): RPG is shown with a
    footnote that it means nothing there; a clearly better original accuracy gets none."""
    near = {"value": 1 / 3, "ci": [-1.0, 2.18], "original_accuracy": 7 / 30, "substituted_accuracy": 0.2,
            "chance": 0.25, "original_accuracy_ci": [0.118, 0.409]}  # fmt: skip
    clear = {**near, "original_accuracy": 0.9, "original_accuracy_ci": [0.74, 0.97]}
    document = harness_scores(
        {
            "scrqa/dream/kfl": {
                "n_scored": 30,
                "unparsed": 0,
                "accuracy": {"value": 0.2},
                "relative_performance_gain": near,
            },
            "scrqa/dream/rs50": {
                "n_scored": 30,
                "unparsed": 0,
                "accuracy": {"value": 0.8},
                "relative_performance_gain": clear,
            },
        }
    )
    print_config_scores(document, console())
    out = capsys.readouterr().out
    assert "33.3 [1]" in out and "[2]" not in out
    assert "[1] RPG not meaningful: original accuracy 23.3% [11.8%, 40.9%] contains chance (25.0%)" in out


def incomplete_document(n_configs: int) -> dict:
    """A run's results.json (fractions) of long config names, some incomplete, with RR far below 0."""
    configs = {}
    for i in range(n_configs):
        configs[f"scrrec-zero-shot/realtimeqa/rs{10 * (i + 1)}"] = {
            "n_requests": 40,
            "n_scored": 22,
            "n_errors": 18,
            "error_rate": 0.45,
            "n_failed": 18,
            "n_missing": 0,
            "n_context_too_long": 0,
            "complete": False,
            "unparsed": 3,
            "edit_distance": {"value": 218.4321 + i, "ci": None},
            "recovery_rate": {"value": -14.06123 - i, "ci": None},
            "prompt_tokens": {"mean": 1234.4 + i, "total": 1, "reported": 1},
            "rules": {},
        }
        configs[f"scrqa/realtimeqa/kfkr{i}"] = {
            "n_requests": 40,
            "n_scored": 40,
            "n_errors": 0,
            "n_failed": 0,
            "n_missing": 0,
            "n_context_too_long": 0,
            "complete": True,
            "unparsed": 0,
            "accuracy": {"value": 0.3333333, "ci": None},
            "relative_performance_gain": {"value": -2.6245, "ci": None},
            "prompt_tokens": {"mean": 987.6, "total": 1, "reported": 1},
        }
    return {
        "model": "a-rather-long-model-name-of-some-organisation/SmolLM2-135M-Instruct-Q8_0.gguf",
        "backend": "openai",
        "reader": "careful",
        "units": units(FRACTION),
        "configs": configs,
        "totals": {"prompt_tokens": 123456, "completion_tokens": 7890, "n_errors": 36, "n_missing": 0},
        "engine": {"sent": 4, "reused": 80, "reused_from": {"runs/a": 60, "runs/b": 20}, "retries": 255},
    }


def test_a_run_table_written_to_a_file_holds_every_number_in_full(capsys) -> None:
    """Redirected (as in a log or CI), the table is as wide as its cells need: no number is cut off."""
    from pathlib import Path

    from scrambled_bench.evaluate_cli.display import print_run_summary

    print_run_summary(incomplete_document(3), Path("runs/x"))
    out = capsys.readouterr().out
    assert "…" not in out
    for i in range(3):
        [row] = [
            line for line in out.splitlines() if f"scrrec-zero-shot/realtimeqa/rs{10 * (i + 1)} " in line
        ]
        for number in (
            "22 of 40 [1]",
            "18 (45.0%)",
            f"{218.43 + i:.2f}",
            f"{-1406.1 - 100 * i:.1f}",
            f"{1234 + i}",
        ):
            assert number in row, (number, row)
        [row] = [line for line in out.splitlines() if f"scrqa/realtimeqa/kfkr{i} " in line]
        assert "33.3" in row and "-262.4" in row and "988" in row
    # what the numbers mean, under the table; where the reused answers came from
    assert "prompt tok: the mean prompt tokens per request" in out
    assert "RR % below 0: the recovered text is further from the original" in out
    assert (
        "4 request(s) sent, 80 reused (60 from runs/a, this run folder; 20 from runs/b), 255 retries" in out
    )
