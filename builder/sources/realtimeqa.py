"""RealtimeQA (Kasai et al., 2023): weekly news questions with evidence, ``past/YYYY/YYYYMMDD_qa.jsonl``.

One row per distinct evidence text in the window (ScrRec uses them all); ``used_for_qa`` marks the rows
whose question the evidence answers (ScrQA). For the paper's window 2023-03-17..2023-08-04 this gives
the 408 evidence texts and 346 questions of Cao et al. (2023); any other window (data exists for 2022
to 2026) builds a fresh, contamination-resistant version in which every question with evidence is used.

Cleaning, as in the authors' released outputs: HTML tags removed, entities unescaped, whitespace
collapsed, a final period added when the text does not end with one; rows without evidence dropped;
exact duplicates (same evidence, question, choices and answer in two weekly files) removed.
"""

from __future__ import annotations

import datetime as dt
import html
import re
from dataclasses import dataclass, field
from typing import Any

from scrambled_bench.builder.sources import realtimeqa_paper
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

UPSTREAM = Upstream("realtimeqa", "realtimeqa_public", "main")
PAPER_WINDOW = (dt.date(2023, 3, 17), dt.date(2023, 8, 4))
"""The paper's window (inclusive), the default."""

WEEKLY_FILE = re.compile(r"^(\d{8})_qa\.jsonl$")
"""Weekly question files; aggregate files upstream (``20220617-20220624_qa.jsonl``...) are not read."""

REQUIRED_FIELDS = ("question_id", "question_sentence", "choices", "answer", "evidence")

INFO = SourceInfo(
    name="realtimeqa", pretty_name="RealtimeQA", upstream=UPSTREAM, license="unknown",
    license_note=(
        "No licence file upstream; questions and evidence come from news quizzes (CNN, The Week...). "
        "Redistributed for research, as the paper and the upstream repository do."
    ),
    scrambled_field="the evidence text",
    columns=(*QA_COLUMNS, ("used_for_qa", "bool"), ("date", "string")),
    citation="""@inproceedings{kasai2023realtime,
  title={RealTime {QA}: What's the Answer Right Now?},
  author={Jungo Kasai and Keisuke Sakaguchi and Yoichi Takahashi and Ronan Le Bras and Akari Asai and Xinyan Velocity Yu and Dragomir Radev and Noah A. Smith and Yejin Choi and Kentaro Inui},
  booktitle={Thirty-seventh Conference on Neural Information Processing Systems Datasets and Benchmarks Track},
  year={2023},
  url={https://openreview.net/forum?id=HfKOIPCvsv}
}""",
)  # fmt: skip

_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")


def clean_evidence(text: str) -> str:
    """Strip HTML, unescape entities, collapse whitespace and end with a period, as the paper's outputs do.

    >>> clean_evidence('The <a href="x">two banks</a> &amp; more  \\n failed')
    'The two banks & more failed.'
    >>> clean_evidence("   ")
    ''
    """
    text = _SPACE.sub(" ", html.unescape(_TAG.sub("", text))).strip()
    if text and not text.endswith("."):
        text += "."
    return text


def parse_window(window: str | None) -> tuple[dt.date, dt.date]:
    """Parse ``START:END`` (ISO dates, inclusive); ``None`` is the paper's window.

    >>> parse_window("2026-01-01:2026-07-17")
    (datetime.date(2026, 1, 1), datetime.date(2026, 7, 17))
    >>> parse_window("2026/01/01:2026-07-17")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: window '2026/01/01:2026-07-17': unknown date format '2026/01/01' (expected YYYY-MM-DD:YYYY-MM-DD)
    """
    if window is None or window == "":
        return PAPER_WINDOW
    parts = window.split(":")
    if len(parts) != 2:
        raise ScrambledBenchError(f"window {window!r}: expected START:END as YYYY-MM-DD:YYYY-MM-DD")
    dates = []
    for part in parts:
        try:
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", part.strip()):
                raise ValueError
            dates.append(dt.date.fromisoformat(part.strip()))
        except ValueError:
            raise ScrambledBenchError(
                f"window {window!r}: unknown date format {part!r} (expected YYYY-MM-DD:YYYY-MM-DD)"
            ) from None
    start, end = dates
    if start > end:
        raise ScrambledBenchError(f"window {window!r} is empty: {start} is after {end}")
    return start, end


def format_window(window: tuple[dt.date, dt.date]) -> str:
    """The window as ``START:END``.

    >>> format_window(PAPER_WINDOW)
    '2023-03-17:2023-08-04'
    """
    return f"{window[0].isoformat()}:{window[1].isoformat()}"


def weekly_files(reader: SourceReader, window: tuple[dt.date, dt.date]) -> list[tuple[dt.date, str]]:
    """The weekly files whose date lies in the window, oldest first, as (date, upstream path)."""
    found = []
    for year in range(window[0].year, window[1].year + 1):
        folder = f"past/{year}"
        for name in reader.list_files(UPSTREAM, folder):
            match = WEEKLY_FILE.match(name)
            if match is None:
                continue
            try:
                day = dt.datetime.strptime(match.group(1), "%Y%m%d").date()
            except ValueError:
                raise ScrambledBenchError(
                    f"{reader.origin(UPSTREAM, folder + '/' + name)}: unknown date format in the file name "
                    "(expected YYYYMMDD_qa.jsonl)"
                ) from None
            if window[0] <= day <= window[1]:
                found.append((day, f"{folder}/{name}"))
    found.sort()
    if not found:
        raise ScrambledBenchError(
            f"the RealtimeQA window {format_window(window)} is empty: no weekly files "
            f"past/YYYY/YYYYMMDD_qa.jsonl in it"
        )
    return found


def _parse_question(
    location: str, line_number: int, row: dict[str, Any]
) -> tuple[str, str, list[str], str, str]:
    """Validate one upstream row, an object with every required field: (question_id, question, choices,
    answer letter, raw evidence)."""
    question_id, question, choices, answer, evidence = (row[name] for name in REQUIRED_FIELDS)
    if evidence is None:
        evidence = ""
    for name, value in (
        ("question_id", question_id),
        ("question_sentence", question),
        ("evidence", evidence),
    ):
        if not isinstance(value, str):
            raise ScrambledBenchError(
                line_error(location, line_number, f"field {name} is not a string: {value!r}")
            )
    if not isinstance(choices, list) or not choices or not all(isinstance(c, str) for c in choices):
        raise ScrambledBenchError(
            line_error(location, line_number, f"field choices is not a list of strings: {choices!r}")
        )
    if len(choices) > len(LETTERS):
        raise ScrambledBenchError(
            line_error(location, line_number, f"{len(choices)} choices, at most {len(LETTERS)} supported")
        )
    # Upstream writes the answer as ["2"], and in a few weeks as "2".
    index = answer[0] if isinstance(answer, list) and len(answer) == 1 else answer
    index = str(index).strip() if isinstance(index, (str, int)) and not isinstance(index, bool) else ""
    # isdecimal, not isdigit: "²" is a digit that int() refuses
    if not index.isdecimal() or not 0 <= int(index) < len(choices):
        raise ScrambledBenchError(
            line_error(
                location,
                line_number,
                f"field answer {answer!r} is not one index into the {len(choices)} choices",
            )
        )
    return (
        question_id,
        question.strip(),
        [choice.strip() for choice in choices],
        LETTERS[int(index)],
        evidence,
    )


def load(reader: SourceReader, *, window: str | None = None) -> SourceData:
    """Read RealtimeQA for ``window`` (``START:END``; ``None`` is the paper's) into one record per evidence."""
    span = parse_window(window)
    read = QuestionsRead(paper_window=span == PAPER_WINDOW)
    for day, path in weekly_files(reader, span):
        read.add_file(day, reader.origin(UPSTREAM, path), reader.read_text(UPSTREAM, path))
    rows, qa_sharing_evidence = one_row_per_evidence(read.questions)
    records = [SourceRecord(scramble_key=f"realtimeqa/{row['id']}", fields=row) for row in rows]
    notes = {
        "window": format_window(span),
        "paper_window": read.paper_window,
        "questions_read": len(read.questions) + read.without_evidence + read.duplicates,
        "dropped_without_evidence": read.without_evidence,
        "dropped_duplicates": read.duplicates,
        "excluded_from_qa_by_hand": sum(1 for q in read.questions if not q["used_for_qa"]),
        "qa_questions_sharing_an_evidence_dropped": qa_sharing_evidence,
        "rows": len(records),
        "rows_used_for_qa": sum(1 for record in records if record.fields["used_for_qa"]),
    }
    return SourceData(info=INFO, records=records, notes=notes)


@dataclass
class QuestionsRead:
    """The window's questions as the weekly files are read, oldest first: each validated, its evidence
    cleaned (and, in the paper's window, corrected by the errata), exact duplicates and rows without evidence
    dropped and counted. A question id seen in an earlier week gets the week's date (``id@YYYYMMDD``)."""

    paper_window: bool
    questions: list[dict[str, Any]] = field(default_factory=list)
    without_evidence: int = 0
    duplicates: int = 0
    _ids: set[str] = field(default_factory=set)
    _contents: set[tuple] = field(default_factory=set)

    def add_file(self, day: dt.date, location: str, text: str) -> None:
        """Read one weekly file (``location`` names it in errors)."""
        for line_number, row in parse_jsonl_lines(text.splitlines(), location, REQUIRED_FIELDS):
            self._add(day, location, line_number, row)

    def _add(self, day: dt.date, location: str, line_number: int, row: dict[str, Any]) -> None:
        question_id, question, choices, answer, raw_evidence = _parse_question(location, line_number, row)
        row_id = question_id if question_id not in self._ids else f"{question_id}@{day:%Y%m%d}"
        if row_id in self._ids:
            raise ScrambledBenchError(
                line_error(location, line_number, f"question_id {question_id!r} repeats in one file")
            )
        self._ids.add(row_id)
        evidence = clean_evidence(raw_evidence)
        if not evidence:
            self.without_evidence += 1
            return
        if self.paper_window:
            for wrong, right in realtimeqa_paper.EVIDENCE_ERRATA.get(row_id, ()):
                evidence = evidence.replace(wrong, right)
        content = (evidence, question, tuple(choices), answer)
        if content in self._contents:
            self.duplicates += 1
            return
        self._contents.add(content)
        excluded = self.paper_window and (
            row_id in realtimeqa_paper.EXCLUDED_QUESTION_IDS
            or row_id in realtimeqa_paper.ADDITIONAL_EXCLUSIONS
        )
        self.questions.append(
            {
                "id": row_id,
                "original": evidence,
                "question": question,
                "choices": choices,
                "answer": answer,
                "used_for_qa": not excluded,
                "date": day.isoformat(),
            }
        )


def one_row_per_evidence(questions: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """One row per distinct evidence (``original``), in first-seen order: its question is the first one the
    evidence answers (``used_for_qa``), if any, else its first question. Also how many questions used for QA
    were dropped because an earlier one shares their evidence.

    >>> rows, dropped = one_row_per_evidence([
    ...     {"id": "a", "original": "E.", "used_for_qa": False}, {"id": "b", "original": "E.", "used_for_qa": True},
    ...     {"id": "c", "original": "E.", "used_for_qa": True}, {"id": "d", "original": "F.", "used_for_qa": True}])
    >>> [row["id"] for row in rows], dropped
    (['b', 'd'], 1)
    """
    by_evidence: dict[str, dict[str, Any]] = {}
    qa_sharing_evidence = 0
    for question in questions:
        chosen = by_evidence.get(question["original"])
        if chosen is None:
            by_evidence[question["original"]] = question
        elif question["used_for_qa"]:
            if chosen["used_for_qa"]:
                qa_sharing_evidence += 1
            else:
                by_evidence[question["original"]] = question
    return list(by_evidence.values()), qa_sharing_evidence
