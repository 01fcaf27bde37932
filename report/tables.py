"""The report's table model: run folders in, paper-shaped tables (plain data) out.

Each task's view (:class:`~scrambled_bench.evaluation.tasks.base.View`) says how its table looks: a column
per scramble type with a row per model and metric (ScrRec's ED over RR, Tables 3-4; ScrQA's Acc over RPG,
Tables 5-6), or AQuA's question types by exemplar rates (Table 1); plus the prompt tokens each type costs
and, for datasets with question categories, Tables 7-8. Every table carries the error rate of the
requests behind it; a value that is undefined is a footnote saying why, and a cell a run does not have is
empty. With the paper's models selected (``paper``), each table adds their rows, marked as the paper's, and
a caption saying whether the runs' settings make them comparable. Rendering (``render``) and figures
(``figures``) are separate steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scrambled_bench.builder.scrambler import is_unscrambled, type_order
from scrambled_bench.evaluation.tasks import TASKS, Metric, Task
from scrambled_bench.evaluation.tasks.base import ACCURACY, RPG
from scrambled_bench.metrics.chance import chance_note
from scrambled_bench.report.marks import (
    incomplete_caption,
    incomplete_mark,
    interval_note,
    percentile_note,
    stored_intervals,
)
from scrambled_bench.report.paper import (
    PAPER_CITATION,
    PAPER_SAMPLES,
    PaperModel,
    comparability,
    comparability_caption,
    exemplar_cells,
    models_in,
    paper_cell,
    paper_keys,
    table_name,
)
from scrambled_bench.report.runs import Run
from scrambled_bench.tables import Footnotes, ReportTable


def format_score(score: Mapping[str, Any] | None, *, ci: bool, digits: int = 2) -> str:
    """A score cell: the value, with its interval where asked; empty where there is none.

    >>> format_score({"value": 12.345, "ci": [10.0, 14.5]}, ci=True)
    '12.35 [10.00, 14.50]'
    >>> format_score({"value": None}, ci=False)
    ''
    """
    if not score or score.get("value") is None:
        return ""
    text = f"{score['value']:.{digits}f}"
    if ci and score.get("ci"):
        low, high = score["ci"]
        text += f" [{low:.{digits}f}, {high:.{digits}f}]"
    return text


def score_cell(
    score: Mapping[str, Any] | None, label: str, notes: Footnotes, *, ci: bool, digits: int = 2
) -> str:
    """A run's cell: its value; ``n/a [k]`` with a footnote saying why where the value is undefined; empty
    where the run has no such score.

    >>> notes = Footnotes()
    >>> score_cell({"value": None, "undefined": "equal anchors"}, "RPG", notes, ci=False), notes.lines()
    ('n/a [1]', ['[1] RPG undefined: equal anchors'])
    >>> score_cell(None, "RPG", notes, ci=False), score_cell({"value": 1.0, "ci": None}, "RPG", notes, ci=True)
    ('', '1.00')
    """
    if not score:
        return ""
    if score.get("value") is None:
        reason = score.get("undefined") or "no sample was scored"
        return f"n/a {notes.mark(f'{label} undefined: {reason}')}"
    text = format_score(score, ci=ci, digits=digits)
    fallback = percentile_note(score) if ci else None
    if fallback:
        text = f"{text} {notes.mark(fallback)}"
    near_chance = chance_note(score, unit="%")  # tables show percent
    return f"{text} {notes.mark(near_chance)}" if near_chance else text


def _add_caption(table: ReportTable, text: str) -> None:
    if text:
        table.caption = f"{table.caption} {text}".strip()


def ordered_types(types: set[str]) -> list[str]:
    """Scramble types in the builder's canonical order.

    >>> ordered_types({"sub", "rs50", "original"})
    ['original', 'rs50', 'sub']
    """
    return sorted(types, key=type_order)


def error_rate(entries: Sequence[Mapping[str, Any]], labels: Sequence[str] | None = None) -> str:
    """The row's error rate, then each config that had errors with its own rate: failures concentrate
    where prompts are longest (context-window skips at rs100 or sub), and a row total would hide that.

    >>> error_rate([{"n_errors": 0, "n_scored": 10}, {"n_errors": 2, "n_scored": 8}], ["rs20", "sub"])
    '10.0% (sub 20.0%)'
    """
    errors = sum(e["n_errors"] for e in entries)
    attempted = errors + sum(e["n_scored"] for e in entries)
    if not attempted:
        return "-"
    text = f"{errors / attempted:.1%}"
    if errors and labels is not None and len(entries) > 1:
        parts = [
            f"{label} {e['n_errors'] / (e['n_errors'] + e['n_scored']):.1%}"
            for label, e in zip(labels, entries, strict=True)
            if e["n_errors"]
        ]
        text += f" ({', '.join(parts)})"
    return text


def table_key(task: Task, dataset: str) -> str:
    """``scrqa-dream``; a task on one dataset is keyed by its name alone (``scrrec-zero-shot``)."""
    return task.name if len(task.datasets) == 1 else f"{task.name}-{dataset}"


def _paper_note(table: str | None) -> str:
    return (
        f"Rows marked (paper): {PAPER_CITATION}, {table_name(table)}, as printed (no intervals; '< 0' where the paper "
        "prints only that)."
    )


def _run_samples(entries: Sequence[Mapping[str, Any]]) -> int | None:
    """Samples per config of a run in one table: the most any of its configs asked for."""
    counts = [e.get("n_requests", e.get("n_scored", 0) + e.get("n_errors", 0)) for e in entries]
    return max(counts) if counts else None


def _caption(table: str | None, per_run: Sequence[tuple[Run, Sequence[Mapping[str, Any]]]]) -> str:
    """Whether each run's rows compare with the paper's rows of ``table``."""
    entries = []
    for run, run_entries in per_run:
        if not run_entries:
            continue
        mode = run.settings.get("prompt_mode")
        differences = comparability(
            prompt_mode=mode,
            reader=run.reader,
            samples=_run_samples(run_entries),
            paper_samples=PAPER_SAMPLES.get(table or ""),
        )
        entries.append((run.label, differences, mode))
    return comparability_caption(entries, table)


def _with_paper(
    table: ReportTable, paper_table: str | None, per_run: Sequence[tuple[Run, Sequence[Mapping[str, Any]]]]
) -> None:
    """The note and caption a table gets once it holds the paper's rows."""
    table.notes.append(_paper_note(paper_table))
    table.caption = _caption(paper_table, per_run)


def _types_table(
    task: Task, dataset: str, runs: Sequence[Run], *, ci: bool, paper: Sequence[PaperModel]
) -> list[ReportTable]:
    per_run = [(run, run.by_type(task.name, dataset)) for run in runs]
    run_types = {t for _, entries in per_run for t in entries}
    if not run_types:
        return []
    paper_table = task.view.paper_tables.get(dataset)
    references = models_in(paper_table, paper)
    paper_types = {
        t
        for model in references
        for metric in task.metrics
        for t in paper_keys(paper_table, model, metric.label)
    }
    types = ordered_types(run_types | paper_types)
    key = table_key(task, dataset)
    notes = Footnotes()
    table = ReportTable(key, task.view.titles[dataset], ["model", "metric", *types, "errors"])
    tokens = ReportTable(
        f"tokens-{dataset}",
        f"Prompt tokens on {dataset} {task.name} (mean per request as the endpoint counted them; x = vs original)",
        ["model", *types],
    )
    for run, entries in per_run:
        if not entries:
            continue
        errors = error_rate(list(entries.values()), list(entries))
        for index, metric in enumerate(task.metrics):
            cells = [
                score_cell(entries[t].get(metric.key), metric.label, notes, ci=ci)
                + incomplete_mark(entries[t], notes)
                if t in entries
                else ""
                for t in types
            ]
            table.rows.append([run.label, metric.label, *cells, errors if index == 0 else ""])
        tokens.rows.append([run.label, *[_token_cell(entries.get(t)) for t in types]])
    for model in references:
        for metric in task.metrics:
            cells = [_paper_text(paper_cell(paper_table, model, metric.label, t)) for t in types]
            table.rows.append([model.label, metric.label, *cells, ""])
    table.notes.extend(notes.lines())
    if references:
        _with_paper(table, paper_table, [(run, list(entries.values())) for run, entries in per_run])
    _add_caption(table, incomplete_caption([(run, list(entries.values())) for run, entries in per_run]))
    tables = [table]
    if task.view.prompt_tokens_table and any(
        cell not in ("-", "") for row in tokens.rows for cell in row[1:]
    ):
        tables.append(tokens)
    category_view = task.view.categories.get(dataset)
    if category_view is not None:
        tables.extend(_category_tables(task, dataset, category_view, per_run, types, ci=ci, paper=paper))
    return tables


def _paper_text(cell: Any) -> str:
    return "" if cell is None else cell.text


def _token_cell(entry: Mapping[str, Any] | None) -> str:
    if not entry or entry["prompt_tokens"]["mean"] is None:
        return ""
    text = f"{entry['prompt_tokens']['mean']:.1f}"
    ratio = entry["prompt_tokens"].get("vs_original")
    return text + (
        f" ({ratio:.2f}x)" if ratio is not None and not is_unscrambled(entry["scramble_type"]) else ""
    )


def _category_tables(
    task: Task,
    dataset: str,
    view: Any,
    per_run: Sequence[tuple[Run, dict[str, Any]]],
    types: Sequence[str],
    *,
    ci: bool,
    paper: Sequence[PaperModel],
) -> list[ReportTable]:
    """Per question category: Acc over every type (cf. Table 7), RPG over all but the lower anchor (Table 8),
    which is RPG's zero by definition. The paper's rows add its "all" category."""
    lower_anchor = task.anchors[-1] if task.anchors else None
    gained = [t for t in types if t != lower_anchor]
    with_categories = [(run, entries) for run, entries in per_run if _categories_of(entries)]
    tables = [
        _category_table(
            ReportTable(f"{dataset}-categories-acc", view.accuracy_title, ["model", "category", *types]),
            ACCURACY, types, with_categories, view.accuracy_paper_table, ci=ci, paper=paper,
        ),
        _category_table(
            ReportTable(f"{dataset}-categories-rpg", view.gain_title, ["model", "category", *gained]),
            RPG, gained, with_categories, view.gain_paper_table, ci=ci, paper=paper,
        ),
    ]  # fmt: skip
    return [table for table in tables if table.rows]


def _categories_of(entries: Mapping[str, Any]) -> list[str]:
    """The question categories a run's entries (of one task and dataset) score, sorted."""
    return sorted({c for e in entries.values() for c in (e.get("categories") or {})})


def _category_table(
    table: ReportTable,
    metric: Metric,
    types: Sequence[str],
    per_run: Sequence[tuple[Run, dict[str, Any]]],
    paper_table: str | None,
    *,
    ci: bool,
    paper: Sequence[PaperModel],
) -> ReportTable:
    """``table`` filled: a row per run and question category with ``metric`` per scramble type, then (where
    runs have rows) the paper's models' rows, with the footnotes and the caption."""
    notes = Footnotes()
    for run, entries in per_run:
        for category in _categories_of(entries):
            items = {t: (entries.get(t, {}).get("categories") or {}).get(category) for t in types}
            cells = [
                score_cell(items[t] and items[t].get(metric.key), metric.label, notes, ci=ci)
                + (incomplete_mark(entries.get(t), notes) if items[t] else "")
                for t in types
            ]
            table.rows.append([run.label, category, *cells])
    references = models_in(paper_table, paper) if table.rows else []
    for model in references:
        for category in paper_keys(paper_table, model):
            cells = [_paper_text(paper_cell(paper_table, model, category, t)) for t in types]
            table.rows.append([model.label, category, *cells])
    table.notes.extend(notes.lines())
    runs = [(run, list(entries.values())) for run, entries in per_run]
    if references:
        _with_paper(table, paper_table, runs)
    _add_caption(table, incomplete_caption(runs))
    return table


def _exemplars_table(
    task: Task, dataset: str, runs: Sequence[Run], *, ci: bool, paper: Sequence[PaperModel]
) -> list[ReportTable]:
    per_run = [(run, list(run.entries(task.name, dataset).values())) for run in runs]
    paper_table = task.view.paper_tables.get(dataset)
    references = models_in(paper_table, paper)
    paper_cells = {model: exemplar_cells(paper_table, model) for model in references}
    run_rates = {e["exemplar_rate"] for _, entries in per_run for e in entries}
    if not run_rates:
        return []
    rates = sorted(run_rates | {rate for cells in paper_cells.values() for _, rate in cells})
    metric = task.metrics[0]
    notes = Footnotes()
    table = ReportTable(
        table_key(task, dataset),
        task.view.titles[dataset],
        ["model", "question", *[f"exemplars {rate}%" for rate in rates], "errors"],
    )
    for run, entries in per_run:
        cells = {(e["scramble_type"], e["exemplar_rate"]): e for e in entries}
        for scramble_type in ordered_types({e["scramble_type"] for e in entries}):
            row_rates = [rate for rate in rates if (scramble_type, rate) in cells]
            table.rows.append(
                [
                    run.label,
                    scramble_type,
                    *[
                        score_cell(cells[(scramble_type, rate)].get(metric.key), metric.label, notes, ci=ci)
                        + incomplete_mark(cells[(scramble_type, rate)], notes)
                        if (scramble_type, rate) in cells
                        else ""
                        for rate in rates
                    ],
                    error_rate(
                        [cells[(scramble_type, rate)] for rate in row_rates],
                        [f"exemplars {rate}%" for rate in row_rates],
                    ),
                ]
            )
    for model, cells in paper_cells.items():
        for scramble_type in ordered_types({t for t, _ in cells}):
            table.rows.append(
                [model.label, scramble_type, *[_paper_text(cells.get((scramble_type, r))) for r in rates], ""]
            )
    table.notes.extend(notes.lines())
    if references:
        _with_paper(table, paper_table, per_run)
    _add_caption(table, incomplete_caption(per_run))
    return [table]


LAYOUTS = {"types": _types_table, "exemplars": _exemplars_table}
"""How a task's view lays out its table(s)."""


def build_tables(
    runs: Sequence[Run], *, ci: bool = False, paper: Sequence[PaperModel] = ()
) -> list[ReportTable]:
    """Every paper-shaped table the runs have data for, task by task, with the rows of the ``paper``'s
    models that each table's paper counterpart holds.

    >>> from pathlib import Path
    >>> run = Run(Path("runs/a"), {"configs": {"scrqa/dream/rs50": {"task": "scrqa", "dataset": "dream",
    ...     "scramble_type": "rs50", "n_errors": 0, "n_scored": 4, "prompt_tokens": {"mean": None},
    ...     "accuracy": {"value": 50.0, "ci": None}}}}, {}, label="m")
    >>> [table] = build_tables([run])
    >>> table.key, table.rows
    ('scrqa-dream', [['m', 'Acc', '50.00', '0.0%'], ['m', 'RPG', '', '']])
    """
    tables: list[ReportTable] = []
    for task in TASKS.values():
        for dataset in task.datasets:
            built = LAYOUTS[task.view.layout](task, dataset, runs, ci=ci, paper=paper)
            if ci:
                _label_intervals(built, task, dataset, runs)
            tables.extend(built)
    return tables


def _label_intervals(tables: Sequence[ReportTable], task: Task, dataset: str, runs: Sequence[Run]) -> None:
    """Each table's note on its intervals: their level and each metric's method (as the runs stored them)."""
    for run in runs:
        entries = list(run.entries(task.name, dataset).values())
        scores = [(metric.label, entry.get(metric.key)) for entry in entries for metric in task.metrics]
        scores += [
            (metric.label, item.get(metric.key))
            for entry in entries
            for item in (entry.get("categories") or {}).values()
            for metric in task.metrics
        ]
        for table in tables:
            if not any(row[0] == run.label for row in table.rows):
                continue
            # the metrics the table shows, as its title names them (a category table shows one)
            shown = [(label, score) for label, score in scores if f" {label} " in f" {table.title} "]
            note = interval_note(shown, stored_intervals(run.results, run.settings))
            text = note if len(runs) == 1 or not note else f"{run.label}: {note}"
            if text and text not in table.notes:
                table.notes.append(text)
