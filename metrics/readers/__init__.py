"""Answer readers: how a model's raw text becomes what the metrics score.

A reader turns a ScrQA output into a choice letter and a ScrRec output into a recovered sentence. There are
two, with one interface (:class:`AnswerReader`), chosen by name with :func:`get_reader`:

- ``paper``: the authors' ``answer_cleansing`` rules, exactly, quirks included. It reproduces their parsed
  letters and sentences on every row of their released outputs, so the paper's tables can be recomputed.
- ``careful`` (the default): what a careful human reader would read. It also understands the shapes modern
  chat models answer in (markdown, quotes, "Answer: B", a restated question), and it declines to read an
  answer where there is none (an echo of the prompt, a hedge between two choices).

Every reading says which rule decided (:class:`Reading`), so disagreements between the readers can be
counted by rule. Pure functions over strings, no I/O; model output is only ever matched with regular
expressions and compared as text, never evaluated as code (the authors' scorer calls ``eval()`` on it).
"""

from __future__ import annotations

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.metrics.readers.careful import CarefulReader
from scrambled_bench.metrics.readers.common import (
    ANSWER_FORMATS,
    DATASET_LETTERS,
    UNCHANGED_RECOVERY_RULES,
    AnswerFormat,
    AnswerReader,
    Reading,
    parse_choices,
)
from scrambled_bench.metrics.readers.paper import PaperReader

__all__ = [
    "ANSWER_FORMATS",
    "DATASET_LETTERS",
    "DEFAULT_READER",
    "READERS",
    "UNCHANGED_RECOVERY_RULES",
    "AnswerFormat",
    "AnswerReader",
    "CarefulReader",
    "PaperReader",
    "Reading",
    "get_reader",
    "parse_choices",
]

READERS: dict[str, AnswerReader] = {"paper": PaperReader(), "careful": CarefulReader()}
DEFAULT_READER = "careful"


def get_reader(name: str) -> AnswerReader:
    """The answer reader called ``name`` ("paper" or "careful").

    >>> get_reader("careful").name
    'careful'
    >>> get_reader("authors")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: unknown answer reader 'authors'; choose paper or careful
    """
    try:
        return READERS[name]
    except (KeyError, TypeError):
        raise ScrambledBenchError(f"unknown answer reader {name!r}; choose paper or careful") from None
