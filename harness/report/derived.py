"""A report section for scrambled variants of other benchmarks (``report --from-lm-eval DIR`` or
``--from-lighteval DIR``): per canonical task, the harness's own metric per scramble type with the paired
difference from the canonical task and its interval, McNemar's p and RPG (the ``scrambled_tasks`` section
that ``score`` computes), and, for the HTML page, a few logged prompts per type, original and scrambled side
by side with the changed words marked, as HELM's frontend shows perturbed instances.

The prompts are what the harness logged: lm-eval's ``--log_samples`` (``arguments``' first argument) and
lighteval's ``--save-details`` (``doc.query``), paired by the documents' ids.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.harness.report.tables import Footnotes, ReportTable
from scrambled_bench.metrics.chance import chance_note

HARNESS_OPTIONS = {"lm-eval": "--from-lm-eval", "lighteval": "--from-lighteval"}
"""The harnesses whose derived tasks (``scramble lm-eval:TASK`` / ``lighteval:SPEC``) ``report`` reads."""
INSTANCES_PER_TYPE = 3
COLUMNS = ["type", "metric", "value %", "difference %", "interval %", "McNemar p", "RPG %", "n paired"]
WORD = re.compile(r"\S+|\s+")


@dataclass(frozen=True)
class InstancePair:
    """One logged document of a variant beside the canonical task's: the two prompts, and which words of
    the scrambled one changed (``segments``: text pieces, each marked changed or not)."""

    task: str
    scramble_type: str
    doc_id: Any
    original: str
    segments: tuple[tuple[str, bool], ...]


def changed_words(original: str, scrambled: str) -> tuple[tuple[str, bool], ...]:
    """The scrambled text as pieces, each marked whether it differs from the original's (words aligned by
    ``difflib`` over whitespace-separated words, so an inserted or dropped word does not shift the rest).

    >>> changed_words("The quick brown fox", "The qucik bworn fox")
    (('The ', False), ('qucik', True), (' ', False), ('bworn', True), (' fox', False))
    """
    before, after = WORD.findall(original), WORD.findall(scrambled)
    pieces: list[tuple[str, bool]] = []
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, _, _, start, end in matcher.get_opcodes():
        for token in after[start:end]:
            changed = tag != "equal" and not token.isspace()
            if pieces and pieces[-1][1] == changed:
                pieces[-1] = (pieces[-1][0] + token, changed)
            else:
                pieces.append((token, changed))
    return tuple(pieces)


def _percent(value: Any) -> str:
    return "" if value is None else f"{100 * value:.2f}"


def derived_tables(document: Mapping[str, Any]) -> list[ReportTable]:
    """One table per canonical task of a ``scrambled_tasks`` section: the canonical task's metrics, then
    each type's, with the paired difference (percentage points), its interval, McNemar's p and RPG.

    >>> section = {"t": {"metrics": {"acc": {"value": 0.5, "n": 2}}, "types": {"kfl": {"task": "t_kfl",
    ...     "metrics": {"acc": {"value": 0.0, "difference": -0.5, "ci": [-1.0, 0.0], "method": "BCa",
    ...     "mcnemar_p": 1.0, "n_paired": 2, "n_unpaired": 0}}}}}}
    >>> [table] = derived_tables({"scrambled_tasks": section, "folder": "out"})
    >>> table.rows
    [['canonical', 'acc', '50.00', '', '', '', '', '2'], ['kfl', 'acc', '0.00', '-50.00', '[-100.00, 0.00]', '1', '', '2']]
    """
    tables = []
    for canonical, entry in document["scrambled_tasks"].items():
        rows = [
            ["canonical", key, _percent(metric.get("value")), "", "", "", "", str(metric.get("n") or "")]
            for key, metric in entry["metrics"].items()
        ]
        methods, notes, chance_notes = set(), [], Footnotes()
        for scramble_type, variant in entry["types"].items():
            for key, metric in variant["metrics"].items():
                ci = metric.get("ci")
                gain = (metric.get("relative_performance_gain") or {}).get("value")
                near_chance = chance_note(metric.get("relative_performance_gain"), scale=100, unit="%")
                p_value = metric.get("mcnemar_p")
                if metric.get("method"):
                    methods.add(str(metric["method"]))
                if metric.get("n_unpaired"):
                    notes.append(
                        f"{scramble_type} {key}: {metric['n_unpaired']} documents logged by one task only, left out"
                    )
                if metric.get("note"):
                    notes.append(f"{scramble_type} {key}: {metric['note']}")
                rows.append(
                    [
                        scramble_type,
                        key,
                        _percent(metric.get("value")),
                        _percent(metric.get("difference")),
                        f"[{_percent(ci[0])}, {_percent(ci[1])}]" if ci else "",
                        "" if p_value is None else f"{p_value:.3g}",
                        _percent(gain) + (f" {chance_notes.mark(near_chance)}" if near_chance else ""),
                        str(metric.get("n_paired", "")),
                    ]
                )
        notes.extend(chance_notes.lines())
        caption = (
            f"Each variant against {canonical} over the documents both logged (paired by id, targets checked): "
            "the difference in percentage points with its interval, McNemar's exact p for 0/1 metrics, RPG "
            "where sub ran; values are the harness's own. "
            + ("; ".join(sorted(methods)) or "No paired metric.")
        )
        tables.append(
            ReportTable(
                key=f"scrambled-{canonical}",
                title=f"{canonical}: scrambled variants ({document.get('folder', '')})",
                columns=list(COLUMNS),
                rows=rows,
                notes=notes,
                caption=caption,
            )
        )
    return tables


def _first_argument(arguments: Any) -> str | None:
    """lm-eval's logged prompt: the first argument of the first request (``{"gen_args_0": {"arg_0": ...}}``,
    or ``[[prompt, ...]]`` in older versions)."""
    if isinstance(arguments, Mapping) and arguments:
        first = next(iter(arguments.values()))
        return first.get("arg_0") if isinstance(first, Mapping) else None
    if isinstance(arguments, list) and arguments and isinstance(arguments[0], list) and arguments[0]:
        return arguments[0][0]
    return None


def _lm_eval_prompts(folder: Path, tasks: set[str]) -> dict[str, dict[Any, str]]:
    from scrambled_bench.harness.exports.logged_samples import LM_EVAL_SAMPLES, newest_per_task

    newest = newest_per_task(folder.rglob("samples_*.jsonl"), LM_EVAL_SAMPLES, tasks.__contains__)
    prompts: dict[str, dict[Any, str]] = {}
    for task, path in newest.items():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                prompt = _first_argument(row.get("arguments"))
                if prompt is not None:
                    prompts.setdefault(task, {}).setdefault(row.get("doc_id"), prompt)
    return prompts


def _lighteval_prompts(folder: Path, tasks: set[str]) -> dict[str, dict[Any, str]]:
    import pyarrow.parquet as pq

    from scrambled_bench.harness.exports.lighteval_variants import DETAILS
    from scrambled_bench.harness.exports.logged_samples import newest_per_task

    prompts: dict[str, dict[Any, str]] = {}
    for task, path in newest_per_task(folder.rglob("details_*.parquet"), DETAILS, tasks.__contains__).items():
        for row in pq.read_table(path, columns=["doc"]).to_pylist():
            doc = row.get("doc") or {}
            if doc.get("query") is not None:
                prompts.setdefault(task, {}).setdefault(doc.get("id"), doc["query"])
    return prompts


PROMPT_READERS = {"lm-eval": _lm_eval_prompts, "lighteval": _lighteval_prompts}


def derived_instances(
    source: str, folder: Path, document: Mapping[str, Any], *, per_type: int = INSTANCES_PER_TYPE
) -> list[InstancePair]:
    """The first ``per_type`` documents (by id) of each variant that both it and its canonical task logged,
    with their prompts; none where the harness logged no prompts."""
    section = document["scrambled_tasks"]
    tasks = {canonical for canonical in section} | {
        variant["task"] for entry in section.values() for variant in entry["types"].values()
    }
    prompts = PROMPT_READERS[source](Path(folder), tasks)
    pairs = []
    for canonical, entry in section.items():
        originals = prompts.get(canonical, {})
        for scramble_type, variant in entry["types"].items():
            scrambled = prompts.get(variant["task"], {})
            shared = sorted(set(originals) & set(scrambled), key=lambda doc_id: (str(type(doc_id)), doc_id))
            for doc_id in shared[:per_type]:
                pairs.append(
                    InstancePair(
                        canonical,
                        scramble_type,
                        doc_id,
                        originals[doc_id],
                        changed_words(originals[doc_id], scrambled[doc_id]),
                    )
                )
    return pairs


def derived_report(
    source: str, folder: Path, *, confidence_level: float, n_resamples: int, seed: int
) -> tuple[list[ReportTable], list[InstancePair]]:
    """The tables and the logged instances of a harness's output folder of derived tasks; a one-line error
    where it holds none."""
    from scrambled_bench.harness.exports.logged_samples import scrambled_tasks_section
    from scrambled_bench.harness.paired import CompareSettings

    settings = CompareSettings(n_resamples=n_resamples, confidence_level=confidence_level, seed=seed)
    section = scrambled_tasks_section(source, Path(folder), settings) if Path(folder).is_dir() else {}
    document = {"folder": str(folder), "scrambled_tasks": section}
    if not section:
        raise ScrambledBenchError(
            f"{folder} holds no scrambled variants of other tasks (made by `scrambled-bench scramble "
            f"{source}:TASK`); the bench's own tasks there are scored by `scrambled-bench score "
            f"{HARNESS_OPTIONS[source]} {folder}`"
        )
    return derived_tables(document), derived_instances(source, folder, document)


def render_instances(instances: Sequence[InstancePair]) -> str:
    """The HTML of the logged instances: a table per (task, type), the original prompt beside the scrambled
    one with its changed words in ``<mark>``, every text escaped.

    >>> pair = InstancePair("t", "kfl", 0, "a <b> word", changed_words("a <b> word", "a <b> wrod"))
    >>> "<mark>wrod</mark>" in render_instances([pair]) and "&lt;b&gt;" in render_instances([pair])
    True
    """
    import html

    body = ""
    groups: dict[tuple[str, str], list[InstancePair]] = {}
    for pair in instances:
        groups.setdefault((pair.task, pair.scramble_type), []).append(pair)
    for (task, scramble_type), pairs in groups.items():
        rows = ""
        for pair in pairs:
            marked = "".join(
                f"<mark>{html.escape(text)}</mark>" if changed else html.escape(text)
                for text, changed in pair.segments
            )
            rows += (
                f"<tr><th>{html.escape(str(pair.doc_id))}</th>"
                f"<td class='prompt'>{html.escape(pair.original)}</td><td class='prompt'>{marked}</td></tr>"
            )
        body += (
            f"<section class='instances'><h3>{html.escape(task)}: {html.escape(scramble_type)}</h3>"
            "<table><tr><th>doc</th><th>original prompt</th><th>scrambled prompt (changed words marked)</th></tr>"
            f"{rows}</table></section>"
        )
    return body


__all__ = [
    "HARNESS_OPTIONS",
    "InstancePair",
    "changed_words",
    "derived_instances",
    "derived_report",
    "derived_tables",
    "render_instances",
]
