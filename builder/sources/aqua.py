"""AQuA-RAT (Ling et al., 2017): algebraic word problems with rationales, ``google-deepmind/AQuA`` test.json.

The 254 test problems, in file order. The question is what gets scrambled; the options (without their
``A)`` prefix, which upstream sometimes doubles as ``A)A)59``), the correct letter and the rationale
are kept, exactly as in the authors' released prompts.
"""

from __future__ import annotations

from typing import Any

from scrambled_bench.builder.sources.common import (
    QA_COLUMNS,
    SourceData,
    SourceInfo,
    SourceRecord,
    line_error,
)
from scrambled_bench.builder.sources.fetch import SourceReader, Upstream
from scrambled_bench.choices import LETTERS
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.io import parse_jsonl_lines

UPSTREAM = Upstream("google-deepmind", "AQuA", "master")
TEST_FILE = "test.json"
REQUIRED_FIELDS = ("question", "options", "rationale", "correct")

INFO = SourceInfo(
    name="aqua", pretty_name="AQuA-RAT", upstream=UPSTREAM, license="apache-2.0",
    license_note="Apache-2.0 (upstream LICENSE, Copyright 2017 Google Inc.).",
    scrambled_field="the question",
    columns=(*QA_COLUMNS, ("rationale", "string")),
    citation="""@inproceedings{ling2017program,
  title={Program Induction by Rationale Generation: Learning to Solve and Explain Algebraic Word Problems},
  author={Ling, Wang and Yogatama, Dani and Dyer, Chris and Blunsom, Phil},
  booktitle={Proceedings of the 55th Annual Meeting of the Association for Computational Linguistics (Volume 1: Long Papers)},
  pages={158--167},
  year={2017}
}""",
)  # fmt: skip


def strip_option_label(option: str, letter: str) -> str:
    """The text of an option without its ``A)`` label (also when upstream repeats it) and outer spaces.

    >>> strip_option_label("A)A)59", "A"), strip_option_label("B) 1.25", "B")
    ('59', '1.25')
    """
    text = option.strip()
    while text.startswith(f"{letter})"):
        text = text[2:].lstrip()
    return text.strip()


def problem_error(row: dict[str, Any]) -> str | None:
    """What is wrong with one upstream problem (an object with every required field), in words; None for a
    good one: options ``A)``, ``B)``... in order, one correct letter among them, a string question and
    rationale.

    >>> problem_error({"question": "q", "options": ["A)1", "B)2"], "correct": "B", "rationale": "r"}) is None
    True
    >>> problem_error({"question": "q", "options": ["A)1", "C)2"], "correct": "B", "rationale": "r"})
    "option 2 'C)2' does not start with B)"
    """
    options = row["options"]
    if (
        not isinstance(options, list)
        or not options
        or len(options) > len(LETTERS)
        or not all(isinstance(o, str) for o in options)
    ):
        return f"field options is not a list of strings: {options!r}"
    for index, option in enumerate(options):
        if not option.strip().startswith(f"{LETTERS[index]})"):
            return f"option {index + 1} {option!r} does not start with {LETTERS[index]})"
    correct = row["correct"]
    # one letter: `in` on the letter string would also accept "AB"
    if (
        not isinstance(correct, str)
        or len(correct.strip()) != 1
        or correct.strip() not in LETTERS[: len(options)]
    ):
        return f"field correct {correct!r} is not one of the option letters"
    for name in ("question", "rationale"):
        if not isinstance(row[name], str):
            return f"field {name} is not a string: {row[name]!r}"
    return None


def load(reader: SourceReader, *, window: str | None = None) -> SourceData:
    """Read the 254 AQuA-RAT test problems (``window`` does not apply to AQuA)."""
    location = reader.origin(UPSTREAM, TEST_FILE)
    records = []
    lines = reader.read_text(UPSTREAM, TEST_FILE).splitlines()
    for line_number, row in parse_jsonl_lines(lines, location, REQUIRED_FIELDS):
        problem = problem_error(row)
        if problem is not None:
            raise ScrambledBenchError(line_error(location, line_number, problem))
        records.append(_record(row, f"test-{len(records):03d}"))
    if not records:
        raise ScrambledBenchError(f"{location}: no problems in the file")
    return SourceData(info=INFO, records=records, notes={"rows": len(records)})


def _record(row: dict[str, Any], row_id: str) -> SourceRecord:
    """The record of a checked problem: its question scrambled, its options without their labels."""
    return SourceRecord(
        scramble_key=f"aqua/{row_id}",
        fields={
            "id": row_id,
            "original": row["question"],
            "question": row["question"],
            "choices": [
                strip_option_label(option, LETTERS[index]) for index, option in enumerate(row["options"])
            ],
            "answer": row["correct"].strip(),
            "rationale": row["rationale"],
        },
    )
