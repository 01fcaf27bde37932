"""What the log readers of the harnesses share, below them and below ``score --from`` (:mod:`.scoring`):

- a logged document's scoring metadata and raw response, for the bench's own exported tasks
  (:func:`logged_meta`, :func:`first_text`);
- the folders of harnesses that write one results file per invocation beside one log file per task
  (lm-eval's ``results_<date>.json`` with ``samples_<task>_<date>.jsonl``, lighteval's with
  ``details_<task>_<date>.parquet``): each task's log found with the results file of its invocation, written
  once for both (:class:`ResultsLayout`, :func:`task_logs`).

The common steps of :meth:`~.base.Harness.read_logs` (the folder checked, a folder without logs refused)
are the interface's own, in :mod:`.base`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.integrations.exported import PREFIX, config_of, document_meta


def logged_meta(doc: Any, where: str) -> dict[str, Any]:
    """The scoring metadata of a logged document (``doc["meta"]``, a JSON string or a mapping), checked: a
    one-line error naming ``where`` when it is missing or unreadable.

    >>> logged_meta({"meta": '{"task": "scrqa", "dataset": "dream", "scramble_type": "kfl", "id": "1"}'}, "x")["id"]
    '1'
    >>> logged_meta({}, "samples.jsonl:3")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: samples.jsonl:3: the logged document has no scoring metadata ('meta'); is it a scrambled_bench task?
    """
    if not isinstance(doc, Mapping) or not doc.get("meta"):
        raise ScrambledBenchError(
            f"{where}: the logged document has no scoring metadata ('meta'); is it a {PREFIX} task?"
        )
    try:
        meta = document_meta(doc)
        config_of(meta)
    except (ValueError, KeyError, TypeError, ScrambledBenchError) as exc:
        raise ScrambledBenchError(f"{where}: unreadable scoring metadata ({exc})") from None
    # parquet gives every row of a struct column all of its fields; a field absent from the row is None
    return {key: value for key, value in meta.items() if value is not None}


def first_text(value: Any, where: str) -> str:
    """The first generation of a logged response: lm-eval logs ``[[text]]``, lighteval ``[text]``.

    >>> first_text([["B"]], "x"), first_text(["A", "C"], "x"), first_text([], "x"), first_text(None, "x")
    ('B', 'A', '', '')
    """
    while isinstance(value, list) and value:
        value = value[0]
    if value is None or value == []:
        return ""
    if not isinstance(value, str):
        raise ScrambledBenchError(f"{where}: the logged response is not text: {json.dumps(value)[:60]}")
    return value


def hashable_target(target: Any) -> Hashable:
    """A logged target as pairing compares it: a list or a mapping as its JSON (sorted keys), else itself.

    >>> hashable_target(["Nile", "Erie"]), hashable_target(2)
    ('["Nile", "Erie"]', 2)
    """
    return json.dumps(target, sort_keys=True) if isinstance(target, list | dict) else target


def checked_results(path: Path, document: Any, harness: str, sections: Sequence[str]) -> dict[str, Any]:
    """A harness's parsed results file, checked to be a JSON object whose ``sections`` (where present) are
    objects too; a one-line error naming the file otherwise.

    >>> checked_results(Path("r.json"), {"results": {}}, "lm-eval", ["results", "configs"])
    {'results': {}}
    >>> checked_results(Path("r.json"), {"results": []}, "lm-eval", ["results"])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: r.json: not a results file of lm-eval ('results' is not an object)
    """
    if not isinstance(document, Mapping):
        raise ScrambledBenchError(f"{path}: not a results file of {harness} (not a JSON object)")
    for section in sections:
        if document.get(section) is not None and not isinstance(document[section], Mapping):
            raise ScrambledBenchError(
                f"{path}: not a results file of {harness} ({section!r} is not an object)"
            )
    return dict(document)


@dataclass(frozen=True)
class ResultsLayout:
    """How a harness lays out one invocation's logs: a results file (``results``, with a ``date`` group)
    and one log file per task (``per_task``, with ``task`` and ``date`` groups, found by ``per_task_glob``).
    A task's log goes with the results file of the same date, in the same folder where ``beside`` (lm-eval),
    anywhere in the log folder otherwise (lighteval); ``sections`` are the results file's parts that must be
    objects, and ``command`` is what the user reruns when a results file is missing."""

    harness: str
    command: str
    results: re.Pattern[str]
    per_task: re.Pattern[str]
    per_task_glob: str
    sections: tuple[str, ...]
    beside: bool

    def key(self, folder: Path, date: str) -> tuple[Path | None, str]:
        """What a task's log and its results file share: the date, and the folder where ``beside``."""
        return (folder if self.beside else None, date)

    def missing_results(self, path: Path, date: str) -> ScrambledBenchError:
        """The error of a task's log without the results file of its invocation."""
        where = "beside it" if self.beside else "in the folder"
        return ScrambledBenchError(
            f"{path}: no results_{date}.json {where} ({self.harness} writes it when the run ends); "
            f"finish or rerun that {self.command}"
        )


@dataclass(frozen=True)
class TaskLog:
    """One task's log file, with the results file of its invocation (its path and its parsed contents)."""

    path: Path
    task: str
    date: str
    results_path: Path
    results: dict[str, Any]


def results_files(
    folder: Path, layout: ResultsLayout
) -> dict[tuple[Path | None, str], tuple[Path, dict[str, Any]]]:
    """Every results file under ``folder`` by :meth:`ResultsLayout.key`, parsed and checked."""
    found = {}
    for path in folder.rglob("results_*.json"):
        match = layout.results.match(path.name)
        if match is None:
            continue
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ScrambledBenchError(f"{path}: unreadable {layout.harness} results file ({exc})") from None
        found[layout.key(path.parent, match["date"])] = (
            path,
            checked_results(path, document, layout.harness, layout.sections),
        )
    return found


def task_logs(folder: Path, layout: ResultsLayout) -> list[TaskLog]:
    """Every task's log file under ``folder`` (any depth, in path order), each with the results file of its
    invocation; a one-line error for a log whose results file is missing (a run that has not ended)."""
    results = results_files(folder, layout)
    logs = []
    for path in sorted(folder.rglob(layout.per_task_glob)):
        match = layout.per_task.match(path.name)
        if match is None:
            continue
        found = results.get(layout.key(path.parent, match["date"]))
        if found is None:
            raise layout.missing_results(path, match["date"])
        logs.append(TaskLog(path, match["task"], match["date"], *found))
    return logs


__all__ = [
    "ResultsLayout",
    "TaskLog",
    "checked_results",
    "first_text",
    "hashable_target",
    "logged_meta",
    "results_files",
    "task_logs",
]
