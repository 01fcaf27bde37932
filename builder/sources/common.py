"""What every source reader returns: records to scramble, their column types, and the source's metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scrambled_bench.builder.sources.fetch import Upstream

COLUMN_TYPES = ("string", "bool", "list<string>")
"""The column types a source may declare (mapped to Arrow types by the build)."""

QA_COLUMNS = (("question", "string"), ("choices", "list<string>"), ("answer", "string"))
"""The multiple-choice columns every source has, first after ``id``, ``original``, ``scrambled``."""


@dataclass(frozen=True)
class SourceInfo:
    """The facts about a source that the dataset card and the manifest print."""

    name: str
    pretty_name: str
    upstream: Upstream
    license: str
    license_note: str
    citation: str
    scrambled_field: str
    """What ``original``/``scrambled`` hold for this source (evidence, dialogue, question)."""
    columns: tuple[tuple[str, str], ...]
    """Every column after ``id``, ``original``, ``scrambled``, with its type from :data:`COLUMN_TYPES`."""


@dataclass(frozen=True)
class SourceRecord:
    """One row before scrambling.

    ``scramble_key`` is the sample id the scrambler hashes (the source name and the row id).
    """

    scramble_key: str
    fields: dict[str, Any]


@dataclass
class SourceData:
    """A source read from upstream: its records (in their upstream order) and build notes."""

    info: SourceInfo
    records: list[SourceRecord]
    notes: dict[str, Any] = field(default_factory=dict)
    """Counts and choices worth recording in the manifest (window, rows dropped and why)."""


def line_error(location: str, line_number: int, message: str) -> str:
    """A one-line error message that names the file and line.

    >>> line_error("/m/a.jsonl", 3, "missing field(s) evidence")
    '/m/a.jsonl:3: missing field(s) evidence'
    """
    return f"{location}:{line_number}: {message}"
