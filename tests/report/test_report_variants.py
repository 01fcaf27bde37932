"""``report --from HARNESS DIR`` without a harness run: the marking of changed words (hypothesis), the
documents' order and the one-line refusals. The end-to-end checks, against each harness's real logs, are in
tests/integrations/ (test_harness_tasks_lm_eval.py, test_harness_tasks_lighteval_e2e.py,
test_exports_inspect_scrambled.py) and the fifth harness's in tests/integrations/test_fifth_harness.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrambled_bench.builder.scrambler import scramble
from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.report.variants import changed_words, numeric_order, variant_tables

words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12)
texts = st.lists(words, min_size=1, max_size=30).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(texts, st.sampled_from(["kfl", "kf", "rs50", "rs100", "sub"]), st.integers(0, 3))
def test_marks_cover_exactly_the_words_that_changed(text: str, scramble_type: str, seed: int) -> None:
    scrambled = scramble(text, scramble_type, seed=seed, sample_id="0", place="text")
    pieces = changed_words(text, scrambled)
    assert "".join(piece for piece, _ in pieces) == scrambled  # nothing lost, nothing added
    marked = [word for piece, changed in pieces if changed for word in piece.split()]
    differing = [after for before, after in zip(text.split(), scrambled.split()) if before != after]
    assert marked == differing


@given(texts)
def test_an_unchanged_prompt_has_no_mark(text: str) -> None:
    assert not any(changed for _, changed in changed_words(text, text))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--from", "lm-eval", "EMPTY"], "no logged samples of lm-evaluation-harness"),
        (["--from", "lm-eval", "MISSING"], "no such folder (give lm_eval's --output_path)"),
        (["--from", "inspect", "MISSING"], "no such folder (give inspect eval's --log-dir)"),
        (["--from", "lm_eval", "EMPTY"], "no harness called 'lm_eval' (closest: lm-eval)"),
        (["--from-lighteval", "EMPTY"], "No such option: --from-lighteval"),  # deprecated in 1.1.0, gone
        (["runs/a", "--from", "lm-eval", "EMPTY"], "give run folders or --from lm-eval DIR, not both"),
        (
            ["--from", "lm-eval", "EMPTY", "--compare"],
            "--compare applies to run folders, not to --from lm-eval",
        ),
        ([], "give run folders to report"),
    ],
)
def test_bad_input_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    (tmp_path / "EMPTY").mkdir()
    argv = [
        "report",
        *(str(tmp_path / arg) if arg in ("EMPTY", "MISSING", "runs/a") else arg for arg in extra),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0] and "Traceback" not in err, err


def test_documents_are_shown_in_numeric_order() -> None:
    assert sorted(["10", "2", "0", "1"], key=numeric_order) == ["0", "1", "2", "10"]


def test_a_variants_rpg_near_chance_is_footnoted_in_the_variants_table() -> None:
    """`report --from HARNESS`: a 4-way task whose canonical accuracy (7 of 30) is no better than chance gets
    its variant's RPG marked, with the reason under the table."""
    gain = {"value": 1 / 3, "ci": [-1.0, 2.18], "n": 30, "original_accuracy": 7 / 30, "substituted_accuracy": 0.2,
            "chance": 0.25, "original_accuracy_ci": [0.118, 0.409]}  # fmt: skip
    metric = {"value": 0.2, "difference": -1 / 30, "ci": [-0.2, 0.13], "method": "BCa", "mcnemar_p": 1.0,
              "n_paired": 30, "n_unpaired": 0, "relative_performance_gain": gain}  # fmt: skip
    section = {"arc": {"metrics": {"acc,none": {"value": 7 / 30, "n": 30}},
                       "types": {"kfl": {"task": "arc_kfl", "metrics": {"acc,none": metric}}}}}  # fmt: skip
    [table] = variant_tables(section)
    assert table.rows[1][7] == "33.33 [1]"
    assert (
        "[1] RPG not meaningful: original accuracy 23.3% [11.8%, 40.9%] contains chance (25.0%)"
        in table.notes
    )
