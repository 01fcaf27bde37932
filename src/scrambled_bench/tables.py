"""A table as data, shared by everything that reports one (the report's tables, a probe run's): its key,
title, columns, rows of string cells, numbered footnotes and caption. Renderers (markdown, CSV, HTML) take
these and nothing else."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ReportTable:
    """A table as data: ``rows`` are lists of cells (strings), aligned with ``columns``."""

    key: str
    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Footnotes: why a cell is marked (``[1]`` refers to the first note), where the rows come from."""
    caption: str = ""
    """What a reader must know before comparing the rows (with the paper's rows: whether they compare)."""


class Footnotes:
    """A table's numbered footnotes; the same text keeps one number.

    >>> notes = Footnotes()
    >>> notes.mark("RPG undefined: equal anchors"), notes.mark("other"), notes.mark("RPG undefined: equal anchors")
    ('[1]', '[2]', '[1]')
    >>> notes.lines()
    ['[1] RPG undefined: equal anchors', '[2] other']
    """

    def __init__(self) -> None:
        self._texts: list[str] = []

    def mark(self, text: str) -> str:
        if text not in self._texts:
            self._texts.append(text)
        return f"[{self._texts.index(text) + 1}]"

    def lines(self) -> list[str]:
        return [f"[{number}] {text}" for number, text in enumerate(self._texts, start=1)]
