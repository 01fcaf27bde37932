"""The report's table model: run folders in, paper-shaped tables (plain data) out.

Each task's view (:class:`~scrambled_bench.harness.tasks.base.View`) says how its table looks: a column
per scramble type with a row per model and metric (ScrRec's ED over RR, Tables 3-4; ScrQA's Acc over RPG,
Tables 5-6), or AQuA's question types by exemplar rates (Table 1); plus the prompt tokens each type costs
and, for datasets with question categories, Tables 7-8. Every table carries the error rate of the
requests behind it. Rendering (``render``) and figures (``figures``) are separate steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrambled_bench.builder.scrambler import type_order
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.harness.results import CONFIG_FILE, RESULTS_FILE, SCORES_FILE
from scrambled_bench.harness.tasks import TASKS, Task


@dataclass
class Run:
    """One run folder's results.json and config.json."""

    path: Path
    results: dict[str, Any]
    config: dict[str, Any]
    label: str = ""

    def entries(self, task: str, dataset: str | None = None) -> dict[str, dict[str, Any]]:
        """Config name -> results entry, for one task (and dataset) of the run."""
        return {
            name: entry
            for name, entry in self.results["configs"].items()
            if entry["task"] == task and (dataset is None or entry["dataset"] == dataset)
        }

    def by_type(self, task: str, dataset: str) -> dict[str, dict[str, Any]]:
        """Scramble type -> results entry, for a task without exemplar rates."""
        return {entry["scramble_type"]: entry for entry in self.entries(task, dataset).values()}


@dataclass
class ReportTable:
    """A table as data: ``rows`` are lists of cells (strings), aligned with ``columns``."""

    key: str
    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Footnotes: why a cell is empty or marked."""


def load_run(path: Path) -> Run:
    """Read a run folder (or its results.json) with one-line errors for what is missing or corrupt."""
    from scrambled_bench.io import read_json

    path = Path(path)
    folder = path.parent if path.name == RESULTS_FILE else path
    results_path = folder / RESULTS_FILE
    if not folder.is_dir():
        raise ScrambledBenchError(f"run folder not found: {folder}")
    if not results_path.is_file():
        raise ScrambledBenchError(
            f"{folder}: no results.json (did the run finish? rerun the same `run` command)"
        )
    results = read_json(results_path)
    if not isinstance(results, dict) or not isinstance(results.get("configs"), dict):
        raise ScrambledBenchError(f"{results_path}: not a scrambled-bench results file (no 'configs' object)")
    config_path = folder / CONFIG_FILE
    config = read_json(config_path) if config_path.is_file() else {}
    config = config if isinstance(config, dict) else {}
    if config.get("run_id") and results.get("run_id") and config["run_id"] != results["run_id"]:
        # config.json is written when a run starts; a run stopped before it finished leaves the results of
        # the run before it, computed with other settings: never show those as this run's
        raise ScrambledBenchError(
            f"{results_path}: computed with other settings than {CONFIG_FILE} (run {results['run_id']}, settings "
            f"{config['run_id']}); rerun the same `run` command to finish it and rewrite the results"
        )
    return Run(folder, results, config)


def reread(run: Run, reader: str) -> Run:
    """The run as the answer ``reader`` reads its stored outputs (the run itself when it already did).

    Needs the run folder's samples.jsonl and scores.jsonl; a one-line error names what is missing."""
    from scrambled_bench.harness.results import rescore
    from scrambled_bench.harness.store import SAMPLES_FILE, parse_lines
    from scrambled_bench.io import read_jsonl
    from scrambled_bench.metrics.readers import get_reader

    get_reader(reader)
    if run.results.get("reader", "careful") == reader:
        return run
    for name in (SAMPLES_FILE, SCORES_FILE):
        if not (run.path / name).is_file():
            raise ScrambledBenchError(
                f"{run.path}: no {name}, so its outputs cannot be re-read with --parser {reader} "
                "(rerun the same `run` command with this version to write it)"
            )
    records, _ = parse_lines((run.path / SAMPLES_FILE).read_bytes())
    scores = [row for _, row in read_jsonl(run.path / SCORES_FILE)]
    settings = run.config.get("settings") or {}
    results = rescore(
        run.results,
        scores,
        {record["key"]: record for record in records},
        reader=reader,
        confidence_level=settings.get("confidence_level", 0.95),
        n_resamples=settings.get("n_resamples", 1000),
        seed=settings.get("seed", 0),
    )
    return Run(run.path, results, run.config, run.label)


def label_runs(runs: Sequence[Run]) -> list[Run]:
    """Row labels: the model name, with the backend (and then the folder) added only where needed to tell apart."""
    models = [str(run.results.get("model") or run.path.name) for run in runs]
    for run, model in zip(runs, models):
        run.label = model
        if models.count(model) > 1:
            run.label = f"{model} ({run.results.get('backend') or '?'})"
    labels = [run.label for run in runs]
    for run in runs:
        if labels.count(run.label) > 1:
            run.label = f"{run.label} [{run.path.name}]"
    return list(runs)


def format_score(score: Mapping[str, Any] | None, *, ci: bool, digits: int = 2) -> str:
    """A score cell: the value, with its interval where asked; ``-`` where there is none.

    >>> format_score({"value": 12.345, "ci": [10.0, 14.5]}, ci=True)
    '12.35 [10.00, 14.50]'
    >>> format_score({"value": None}, ci=False)
    '-'
    """
    if not score or score.get("value") is None:
        return "-"
    text = f"{score['value']:.{digits}f}"
    if ci and score.get("ci"):
        low, high = score["ci"]
        text += f" [{low:.{digits}f}, {high:.{digits}f}]"
    return text


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


def _types_table(task: Task, dataset: str, runs: Sequence[Run], *, ci: bool) -> list[ReportTable]:
    per_run = [(run, run.by_type(task.name, dataset)) for run in runs]
    types = ordered_types({t for _, entries in per_run for t in entries})
    if not types:
        return []
    key = table_key(task, dataset)
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
            cells = [format_score(entries.get(t, {}).get(metric.key), ci=ci) for t in types]
            table.rows.append([run.label, metric.label, *cells, errors if index == 0 else ""])
        tokens.rows.append([run.label, *[_token_cell(entries.get(t)) for t in types]])
    tables = [table]
    if task.view.prompt_tokens_table and any(cell != "-" for row in tokens.rows for cell in row[1:]):
        tables.append(tokens)
    category_view = task.view.categories.get(dataset)
    if category_view is not None:
        tables.extend(_category_tables(task, dataset, category_view, per_run, types, ci=ci))
    return tables


def _token_cell(entry: Mapping[str, Any] | None) -> str:
    if not entry or entry["prompt_tokens"]["mean"] is None:
        return "-"
    text = f"{entry['prompt_tokens']['mean']:.1f}"
    ratio = entry["prompt_tokens"].get("vs_original")
    return text + (f" ({ratio:.2f}x)" if ratio is not None and entry["scramble_type"] != "original" else "")


def _category_tables(
    task: Task,
    dataset: str,
    view: Any,
    per_run: Sequence[tuple[Run, dict[str, Any]]],
    types: Sequence[str],
    *,
    ci: bool,
) -> list[ReportTable]:
    """Per question category: Acc over every type (cf. Table 7), RPG over all but the lower anchor (Table 8),
    which is RPG's zero by definition."""
    lower_anchor = getattr(task, "anchors", ("", ""))[-1]
    gained = [t for t in types if t != lower_anchor]
    accuracy = ReportTable(f"{dataset}-categories-acc", view.accuracy_title, ["model", "category", *types])
    gain = ReportTable(f"{dataset}-categories-rpg", view.gain_title, ["model", "category", *gained])
    for run, entries in per_run:
        categories = sorted({c for e in entries.values() for c in (e.get("categories") or {})})
        for category in categories:
            items = {t: (entries.get(t, {}).get("categories") or {}).get(category) for t in types}
            accuracy.rows.append(
                [
                    run.label,
                    category,
                    *[format_score(items[t] and items[t]["accuracy"], ci=ci) for t in types],
                ]
            )
            gain.rows.append(
                [
                    run.label,
                    category,
                    *[
                        format_score(items[t] and items[t].get("relative_performance_gain"), ci=ci)
                        for t in gained
                    ],
                ]
            )
    return [table for table in (accuracy, gain) if table.rows]


def _exemplars_table(task: Task, dataset: str, runs: Sequence[Run], *, ci: bool) -> list[ReportTable]:
    per_run = [(run, list(run.entries(task.name, dataset).values())) for run in runs]
    rates = sorted({e["exemplar_rate"] for _, entries in per_run for e in entries})
    if not rates:
        return []
    metric = task.metrics[0]
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
                        format_score(cells.get((scramble_type, rate), {}).get(metric.key), ci=ci)
                        for rate in rates
                    ],
                    error_rate(
                        [cells[(scramble_type, rate)] for rate in row_rates],
                        [f"exemplars {rate}%" for rate in row_rates],
                    ),
                ]
            )
    return [table]


LAYOUTS = {"types": _types_table, "exemplars": _exemplars_table}
"""How a task's view lays out its table(s)."""


def build_tables(runs: Sequence[Run], *, ci: bool = False) -> list[ReportTable]:
    """Every paper-shaped table the runs have data for, task by task."""
    tables: list[ReportTable] = []
    for task in TASKS.values():
        for dataset in task.datasets:
            tables.extend(LAYOUTS[task.view.layout](task, dataset, runs, ci=ci))
    return tables
