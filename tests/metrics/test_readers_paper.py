"""The ``paper`` reader: the authors' answer_cleansing, checked on every row of their released outputs."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrambled_bench.metrics.readers import PaperReader, Reading, parse_choices

paper = PaperReader()
CHOICES = ["Salad dressing", "Baby formula", "Ground beef", "Whole milk"]

# Folder of the released outputs -> the reader's dataset name.
QA_DATASETS = {
    "scrambled_realtimeQA": "realtimeqa",
    "scrambled_DREAM_test": "dream",
    "scrambled_DREAM_dev": "dream",
    "scrambled_AQuA": "aqua",
}
# Rows per folder in the three models' released outputs (files x rows per file).
EXPECTED_QA_ROWS = {
    "scrambled_realtimeQA": 21 * 346,
    "scrambled_DREAM_test": 21 * 512,
    "scrambled_DREAM_dev": 21 * 513,
    "scrambled_AQuA": 16 * 254,
}


def _rows(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


@pytest.fixture(scope="module")
def qa_files(shared_data) -> dict[str, list[dict]]:
    """Every ScrQA file, read once, keyed by its path under ``scrambled_qa/``."""
    base = shared_data / "paper_outputs" / "scrambled_qa"
    return {path.relative_to(base).as_posix(): _rows(path) for path in sorted(base.rglob("*.jsonl.gz"))}


def test_the_paper_reader_gives_the_authors_letter_on_every_released_row(qa_files):
    """``pred`` (zero-shot ScrQA) and ``pred_strict`` (AQuA chain of thought), every row, every model."""
    rows_per_folder: Counter = Counter()
    disagreements = []
    for path, rows in qa_files.items():
        folder = path.split("/")[0]
        dataset = QA_DATASETS[folder]
        field = "pred_strict" if dataset == "aqua" else "pred"
        for row in rows:
            read = paper.read_choice(row["output"], parse_choices(row["input"]), dataset=dataset).value
            if (read or "") != row[field]:
                disagreements.append((path, row["output"][:80], row[field], read))
        rows_per_folder[folder] += len(rows)
    assert disagreements == []
    assert dict(rows_per_folder) == EXPECTED_QA_ROWS


def test_the_paper_reader_gives_the_authors_recovered_sentence_on_every_released_row(shared_data):
    files = sorted((shared_data / "paper_outputs" / "scrambled_rec").rglob("*.jsonl.gz"))
    assert len(files) == 30  # 3 models x zero- and few-shot x 5 scramble types
    rows = [row for path in files for row in _rows(path)]
    assert len(rows) == 30 * 408
    assert [paper.read_recovery(row["output"]).value for row in rows] == [row["recovered"] for row in rows]


# ---------------------------------------------------------------- the rules one by one


def test_rule_1_cuts_at_the_first_full_stop_unless_a_choice_has_one():
    # the "B" after the full stop is gone; the "A" of "A map" is what is left
    assert paper.read_choice("A map. B", CHOICES, dataset="realtimeqa").value == "A"
    assert paper.read_choice("A map. B", ["x.", "y", "z"], dataset="dream").value == "A"
    assert paper.read_choice("x. B", ["x.", "y", "z"], dataset="dream") == Reading("A", "paper-choice-text")


def test_rule_2_cuts_at_a_repeated_prompt_and_the_marker_depends_on_the_dataset():
    echo = "Answer: Based on the dialogue, among A through C, the answer is"
    assert paper.read_choice(echo, ["x", "y", "z"], dataset="dream") == Reading(None, "paper-none")
    assert paper.read_choice("Evidence: C", CHOICES, dataset="realtimeqa").value is None
    assert paper.read_choice("Evidence: C", ["x", "y", "z"], dataset="dream").value == "C"
    assert paper.read_choice("Dialogue: C", ["x", "y", "z"], dataset="dream").value is None


def test_rule_3_any_capital_letter_of_the_dataset_counts():
    assert paper.read_choice("not in the USA", CHOICES, dataset="realtimeqa").value == "A"
    assert paper.read_choice("USA", ["x", "y", "z"], dataset="dream").value == "A"  # "U", "S": not letters
    assert paper.read_choice("D", ["x", "y", "z"], dataset="dream").value is None  # DREAM stops at C
    assert paper.read_choice("(A) or (B)", CHOICES, dataset="realtimeqa").value == "A"


def test_rule_4_choice_texts_win_and_the_in_place_removal_skips_an_element():
    assert paper.read_choice("(C) Baby formula", CHOICES, dataset="realtimeqa").value == "B"
    # Found, in order: "At", "At", "At seven". The walk removes the first "At" (a substring of "At seven")
    # and then, the list having shrunk, looks at "At seven" next: the second "At" survives and comes first.
    choices = ["At seven", "At", "Noon"]
    assert paper.read_choice("At noon At At seven", choices, dataset="dream").value == "B"
    # Without a duplicate, the substring is dropped and the longer text wins.
    assert paper.read_choice("At noon At seven", choices, dataset="dream").value == "A"


def test_rule_4_maps_a_choice_text_to_its_first_equal_choice():
    assert paper.read_choice("Maine", ["Ohio", "Maine", "Maine"], dataset="dream").value == "B"


def test_rule_6_chain_of_thought_reads_the_first_capital_after_the_last_answer_is():
    five = ["1", "2", "3", "4", "5"]
    assert paper.read_choice("the answer is (A). No: the answer is (C).", five, dataset="aqua").value == "C"
    assert paper.read_choice("the answer is 6. Alternatively, 7", five, dataset="aqua").value == "A"
    assert paper.read_choice("x = \\boxed{(C)}", five, dataset="aqua") == Reading(None, "paper-none")
    assert paper.read_choice("The answer is:(E)", five, dataset="aqua").value is None  # no "answer is "


def test_rule_7_recovery_cuts_at_the_next_scrambled_sentence_and_strips():
    assert paper.read_recovery("  The cat sat.  ") == Reading("The cat sat.", "paper-strip")
    assert paper.read_recovery("Here is it: The cat sat.").value == "Here is it: The cat sat."
    assert paper.read_recovery("The cat sat.\n\nScrambled sentence: x").value == "The cat sat."
    assert paper.read_recovery("   ").value == ""


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="unknown dataset 'mmlu'; choose realtimeqa, dream or aqua"):
        paper.read_choice("A", CHOICES, dataset="mmlu")
    with pytest.raises(ValueError, match="dream takes a list of 1 to 3 choice texts, got 4"):
        paper.read_choice("A", CHOICES, dataset="dream")
    with pytest.raises(ValueError, match="got a string"):
        paper.read_choice("A", "ABCD", dataset="realtimeqa")
    with pytest.raises(TypeError, match="output must be a string"):
        paper.read_choice(None, CHOICES, dataset="realtimeqa")
    with pytest.raises(TypeError, match="output must be a string"):
        paper.read_recovery(b"bytes")


def test_model_output_is_never_run_as_code(tmp_path):
    marker = tmp_path / "ran"
    payload = f"__import__('pathlib').Path({str(marker)!r}).touch() or 'answer is A'"
    for dataset in ("realtimeqa", "aqua"):
        paper.read_choice(payload, CHOICES, dataset=dataset)
    paper.read_recovery(payload)
    assert not marker.exists()


# ---------------------------------------------------------------- invariants

choice_texts = st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=5)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), choice_texts, st.sampled_from(["realtimeqa", "dream", "aqua"]))
def test_the_paper_reading_is_nothing_or_a_letter_of_the_dataset(output, choices, dataset):
    letters = {"realtimeqa": "ABCD", "dream": "ABC", "aqua": "ABCDE"}[dataset]
    choices = choices[: len(letters)]
    reading = paper.read_choice(output, choices, dataset=dataset)
    assert reading.value is None or (len(reading.value) == 1 and reading.value in letters)
    assert reading.rule.startswith("paper-")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_the_paper_recovery_is_a_stripped_prefix_of_the_output(output):
    reading = paper.read_recovery(output)
    assert reading.value is not None
    assert reading.value == reading.value.strip()
    assert reading.value in output
