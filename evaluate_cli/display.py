"""What the commands print: rich tables and progress bars (the CLI's presentation, kept out of the library)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.measure import Measurement
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.segment import Segments
from rich.table import Table

from scrambled_bench.evaluation.results import PERCENT, incompleteness, scores_in
from scrambled_bench.evaluation.store import endpoint_text
from scrambled_bench.evaluation.tokens import tokens_by_type
from scrambled_bench.metrics.chance import chance_note
from scrambled_bench.metrics.readers import UNCHANGED_RECOVERY_RULES
from scrambled_bench.tables import Footnotes


def build_progress(total: int | None, out: Console) -> Any:
    """A transient progress bar over a build's configs (``total`` None: not known); ``advance_config(config,
    rows)`` moves it."""
    bar = Progress(
        TextColumn("[bold]build"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=out,
        transient=True,
    )
    task = bar.add_task("reading sources", total=total)
    bar.advance_config = lambda config, rows: bar.update(
        task, advance=1, description=f"{config} ({rows} rows)"
    )
    return bar


class BuildAnnouncer:
    """For a command that may have to build the data first: prints what it builds and, once it starts,
    shows a progress bar (nothing at all when no build is needed). Use as a context manager."""

    def __init__(self, out: Console, *, progress: bool) -> None:
        self.out = out
        self.progress = progress
        self.bar: Any = None

    def announce(self, message: str) -> None:
        self.out.print(message)
        if self.progress and self.bar is None:
            self.bar = build_progress(None, self.out)
            self.bar.start()

    def advance(self, config: str, rows: int) -> None:
        if self.bar is not None:
            self.bar.advance_config(config, rows)

    def __enter__(self) -> BuildAnnouncer:
        return self

    def close(self) -> None:
        """Stop the bar, if one was started (again: nothing)."""
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def __exit__(self, *exc: object) -> None:
        self.close()


def console(*, stderr: bool = False) -> Console:
    """A console whose lines stay whole when written to a file or a pipe (paths and names stay greppable)."""
    out = Console(stderr=stderr, soft_wrap=True)
    if not out.is_terminal:
        out.width = max(out.width, 120)  # logs and pipes: no truncated config names
    return out


def print_table(out: Console, table: Any) -> None:
    """Print a rich ``table`` whole: one wider than the console is printed at its own width (its lines as
    long as they need, for a terminal to wrap), never with a cell cut ("218.…") or squeezed onto more
    lines. A log or a file then holds every number in full.

    >>> import io
    >>> from rich.table import Table
    >>> narrow = Console(width=20, file=io.StringIO())
    >>> table = Table()
    >>> table.add_column("config", no_wrap=True); table.add_column("RR %", no_wrap=True)
    >>> table.add_row("scrrec-zero-shot/realtimeqa/rs50", "-1406.1")
    >>> print_table(narrow, table)
    >>> "-1406.1" in narrow.file.getvalue() and "…" not in narrow.file.getvalue()
    True
    """
    needed = Measurement.get(out, out.options.update(width=10_000), table).maximum
    if needed <= out.width:
        out.print(table)
        return
    wide = out.options.update(width=needed, max_width=needed)
    out.print(Segments(out.render(table, wide)), crop=False, soft_wrap=True)


def print_run_summary(document: Mapping[str, Any], run_dir: Path) -> None:
    """One line per config: n, errors, unparsed, ED, RR, Acc, RPG (percent), prompt tokens; a footnote
    where a score is undefined, and what the columns' numbers mean; then the totals, where the reused
    answers came from and which endpoints gave the answers."""
    document = scores_in(document, PERCENT)  # results.json holds fractions
    out = console()
    notes = Footnotes()
    print_table(out, _run_table(document, notes))
    for line in notes.lines() + _column_notes(document):
        out.print(line, markup=False, highlight=False)
    _print_reader_changes(document, out)
    _print_engine(document, out)
    out.print(f"results: {run_dir / 'results.json'}")


def _run_table(document: Mapping[str, Any], notes: Footnotes) -> Table:
    """The run's table: a row per config, an incomplete one marked (in yellow, with why in ``notes``)."""
    table = Table(title=f"{document['model']} ({document['backend']})")
    table.add_column("config", no_wrap=True)
    for column in ("n", "errors", "unparsed", "ED", "RR %", "Acc %", "RPG %", "prompt tok"):
        table.add_column(column, justify="right", no_wrap=True)
    for name, entry in document["configs"].items():
        errors = f"{entry['n_errors']}" + (f" ({entry['error_rate']:.1%})" if entry["n_errors"] else "")
        mean_tokens = entry["prompt_tokens"]["mean"]
        lacking = incompleteness(entry)
        scored = str(entry["n_scored"])
        if lacking:  # the row's scores rest on fewer samples than asked for: say so in the row itself
            scored = f"{entry['n_scored']} of {entry['n_requests']} {notes.mark(f'incomplete: {lacking}')}"
        table.add_row(
            f"{name} (incomplete)" if lacking else name,
            scored,
            errors,
            str(entry["unparsed"]),
            *_score_cells(entry, notes),
            "-" if mean_tokens is None else f"{mean_tokens:.0f}",
            style="yellow" if lacking else None,
        )
    return table


def _print_engine(document: Mapping[str, Any], out: Console) -> None:
    """What the engine did: requests sent, reused and retried, the tokens, the endpoints, and what is left
    to do (failed, skipped or missing requests; warnings of the store)."""
    totals = document["totals"]
    engine = document["engine"]
    out.print(
        f"{engine.get('sent', 0)} request(s) sent, {_reused(engine)}, {engine.get('retries', 0)} retries; "
        f"tokens the endpoint reported: {totals['prompt_tokens']:,} prompt + {totals['completion_tokens']:,} "
        "completion",
        markup=False,
        highlight=False,
    )
    _print_endpoints(engine, out)
    if engine.get("stopped"):
        out.print(f"[yellow]stopped early, the endpoint is unreachable:[/] {engine['stopped']}")
    failed = totals.get("n_failed", totals["n_errors"] - totals.get("n_context_too_long", 0))
    if failed:
        out.print(
            f"[yellow]{failed} request(s) failed after their retries; the run is incomplete: "
            "rerun the same command to retry them[/]"
        )
    if totals.get("n_context_too_long"):
        out.print(
            f"{totals['n_context_too_long']} prompt(s) longer than the context window, counted as skips"
        )
    if totals["n_missing"]:
        out.print(f"[yellow]{totals['n_missing']} request(s) have no answer yet; rerun the same command[/]")
    for warning in engine.get("store_warnings", []):
        out.print(f"[yellow]warning:[/] {warning}")


def _column_notes(document: Mapping[str, Any]) -> list[str]:
    """What the run table's numbers mean, under it: prompt tokens are a mean, and a negative RR (where one
    is shown) is an output further from the original than the scrambled text."""
    lines = ["prompt tok: the mean prompt tokens per request, as the endpoint reported them."]
    rates = [
        (entry.get("recovery_rate") or {}).get("value") for entry in document.get("configs", {}).values()
    ]
    if any(rate is not None and rate < 0 for rate in rates):
        lines.append(
            "RR % below 0: the recovered text is further from the original (more edits away) than the "
            "scrambled text was; 100 is the original restored, 0 no closer than the scrambled text."
        )
    return lines


def _reused(engine: Mapping[str, Any]) -> str:
    """How many answers were reused and where they came from (the run folder, the folders beside it).

    >>> _reused({"reused": 5, "reused_from": {"runs/a": 2, "runs/b": 3}})
    '5 reused (2 from runs/a, this run folder; 3 from runs/b)'
    >>> _reused({"reused": 0, "reused_from": {"runs/a": 0}}), _reused({"reused": 4})
    ('0 reused', '4 reused from the run folder')
    """
    reused = engine.get("reused", 0)
    sources = {folder: count for folder, count in (engine.get("reused_from") or {}).items()}
    if "reused_from" not in engine:  # results written before the sources were counted
        return f"{reused} reused from the run folder"
    own, *others = sources.items() if sources else [("", 0)]
    parts = [f"{own[1]} from {own[0]}, this run folder"] if own[1] else []
    parts += [f"{count} from {folder}" for folder, count in others if count]
    return f"{reused} reused" + (f" ({'; '.join(parts)})" if parts else "")


def _print_endpoints(engine: Mapping[str, Any], out: Console) -> None:
    """Which endpoints gave the answers the results rest on, and the reply fingerprints they carried where
    they carried more than one (the endpoint changed its configuration meanwhile)."""
    endpoints = engine.get("endpoints") or []
    for entry in endpoints:
        prints = entry.get("system_fingerprints") or {}
        line = f"answers from {endpoint_text(entry['endpoint'])}: {entry['answers']}"
        if len(prints) > 1:
            listed = ", ".join(f"{name} ({count})" for name, count in prints.items())
            line += f", with {len(prints)} system_fingerprints: {listed}"
        out.print(line, markup=False, highlight=False)


def _score_cells(entry: Mapping[str, Any], notes: Any) -> list[str]:
    """A config's ED, RR, Acc and RPG as the terminal tables print them (percent scores, one line per config:
    intervals are in results.json and `scrambled-bench report --ci`); an undefined score is ``n/a`` with a
    footnote from ``notes`` (a :class:`~scrambled_bench.tables.Footnotes`) saying why."""

    def cell(key: str, name: str, digits: int) -> str:
        score = entry.get(key)
        if not score:
            return "-"
        if score.get("value") is None:
            undefined = score.get("undefined")
            return f"n/a {notes.mark(f'{name} undefined: {undefined}')}" if undefined else "-"
        near_chance = chance_note(score, unit="%")  # an RPG over an original accuracy no better than chance
        return f"{score['value']:.{digits}f}" + (f" {notes.mark(near_chance)}" if near_chance else "")

    return [
        cell("edit_distance", "ED", 2),
        cell("recovery_rate", "RR", 1),
        cell("accuracy", "Acc", 1),
        cell("relative_performance_gain", "RPG", 1),
    ]


def _print_reader_changes(document: Mapping[str, Any], out: Console) -> None:
    """Which answer reader read the outputs, and what it took away from recovered sentences, per rule."""
    reader = document.get("reader", "careful")
    lines = []
    for name, entry in document["configs"].items():
        if "recovery_rate" not in entry:
            continue
        changed = {
            rule: n for rule, n in (entry.get("rules") or {}).items() if rule not in UNCHANGED_RECOVERY_RULES
        }
        if changed:
            listed = ", ".join(f"{rule} {count}" for rule, count in changed.items())
            lines.append(f"{name}: {sum(changed.values())} of {entry['n_scored']} outputs changed ({listed})")
    out.print(
        f"answers read by the {reader} reader" + (":" if lines else "; no recovered sentence needed cleaning")
    )
    for line in lines:
        out.print(f"  {line}")


def print_dry_run(
    summary: Sequence[Mapping[str, Any]],
    model: str,
    kind: str,
    folder: Path,
    counted_by: str,
    *,
    reused_beside: int = 0,
) -> None:
    """The requests and prompt tokens a run would send, per config and per scramble type (the token
    inflation of scrambled text), and what counted them (``counted_by``: the counter's source); with how
    many requests it would take from the folders beside its own (``reused_beside``) instead."""
    rough = any(item["method"] == "rough" for item in summary)
    table = Table(title=f"dry run: {model} ({kind}), nothing sent for generation")
    for column in ("config", "requests", "to send", "prompt tokens", "per request"):
        table.add_column(column, justify="left" if column == "config" else "right")
    for item in summary:
        per_request = f"{item['prompt_tokens'] / item['to_send']:.1f}" if item["to_send"] else "-"
        table.add_row(
            item["config"],
            str(item["requests"]),
            str(item["to_send"]),
            f"{item['prompt_tokens']:,}",
            per_request,
        )
    total_send = sum(item["to_send"] for item in summary)
    total_tokens = sum(item["prompt_tokens"] for item in summary)
    table.add_row(
        "total", str(sum(item["requests"] for item in summary)), str(total_send), f"{total_tokens:,}", ""
    )
    out = console()
    print_table(out, table)
    by_type = Table(title="prompt tokens per scramble type")
    for column in ("type", "to send", "prompt tokens", "per request", "vs original"):
        by_type.add_column(column, justify="left" if column == "type" else "right")
    for row in tokens_by_type(summary):
        by_type.add_row(
            row["type"],
            str(row["requests"]),
            f"{row['prompt_tokens']:,}",
            "-" if row["per_request"] is None else f"{row['per_request']:.1f}",
            "-" if row["vs_original"] is None else f"x{row['vs_original']:.2f}",
        )
    print_table(out, by_type)
    # a rough estimate or a lower bound says so in its source; the rough one is blind to the scramble type
    how = f"rough estimate: {counted_by}, blind to the scramble type" if rough else f"counted by {counted_by}"
    out.print(f"{total_send} request(s), {total_tokens:,} prompt tokens ({how}); run folder: {folder}")
    if reused_beside:
        out.print(
            f"not sent: {reused_beside} request(s) answered in the run folders beside it, which the run takes"
        )


def print_cells(cells: Sequence[Any], out: Console) -> None:
    """Print each table: one row per model and metric, each cell "reproduced / paper / difference"."""
    titles = {
        "table1_aqua_fewshot_cot_acc": "Table 1: AQuA, few-shot chain of thought, Acc (question and exemplars scrambled)",
        "table3_scrrec_realtimeqa_fewshot": "Table 3: ScrRec RealtimeQA, few-shot",
        "table4_scrrec_realtimeqa_zeroshot": "Table 4: ScrRec RealtimeQA, zero-shot",
        "table5_scrqa_realtimeqa_zeroshot": "Table 5: ScrQA RealtimeQA, zero-shot",
        "table6_scrqa_dream_zeroshot": "Table 6: ScrQA DREAM, zero-shot (test + dev)",
        "table7_scrqa_dream_by_category_acc": "Table 7: ScrQA DREAM by question category, Acc",
        "table8_scrqa_dream_by_category_rpg": "Table 8: ScrQA DREAM by question category, RPG",
    }
    for table_name in dict.fromkeys(cell.table for cell in cells):
        in_table = [cell for cell in cells if cell.table == table_name]
        columns = list(dict.fromkeys(cell.column for cell in in_table))
        table = Table(
            title=titles.get(table_name, table_name), caption="each cell: reproduced / paper / difference"
        )
        # No cell is cut ("100.…", "orig…") and a metric name stays on one line, where its parts would read
        # as the cell's three lines (reproduced, paper, difference): a table wider than the console is
        # printed at its own width rather than squeezed.
        table.add_column("Model", no_wrap=True)
        table.add_column("Metric", no_wrap=True)
        for column in columns:
            table.add_column(column, justify="right", no_wrap=True)
        rows: dict[tuple[str, str], dict[str, Any]] = {}
        for cell in in_table:
            rows.setdefault((cell.model, cell.metric), {})[cell.column] = cell
        for (model, metric), by_column in rows.items():
            rendered = []
            for column in columns:
                cell = by_column.get(column)
                if cell is None:
                    rendered.append("")
                    continue
                paper = cell.paper_printed or "n/a"
                # round first so that -0.0000001 prints as +0.00, not -0.00
                difference = "" if cell.difference is None else f"{round(cell.difference, 2) + 0.0:+.2f}"
                style = {True: "green", False: "red", None: "dim"}[cell.matches]
                rendered.append(f"[{style}]{cell.reproduced:.2f}[/]\n{paper}\n{difference}")
            table.add_row(model, metric, *rendered)
        print_table(out, table)
    compared = [cell for cell in cells if cell.matches is not None]
    matching = sum(1 for cell in compared if cell.matches)
    out.print(f"{matching} of {len(compared)} cells match the paper to its two printed decimals")


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}%"


def print_score_summaries(summaries: Sequence[Mapping[str, Any]], out: Console) -> None:
    """One line per scored file, in percent (the JSON on stdout keeps the modules' fractions)."""
    for summary in summaries:
        if summary["task"] == "recovery":
            changed = ", ".join(
                f"{rule} {count}" for rule, count in summary.get("changed_by_rule", {}).items()
            )
            out.print(
                f"{summary['file']}: RR {_percent(summary['recovery_rate'])}, ED {summary['edit_distance']:.2f} "
                f"over {summary['num_samples']} sentences; reader {summary['reader']}"
                + (f" changed {changed}" if changed else " changed nothing")
            )
            continue
        parts = [
            f"{condition} Acc {_percent(scores['accuracy'])} (n={scores['num_samples']}, unparsed {scores['unparsed']})"
            for condition, scores in summary["conditions"].items()
        ]
        for condition, gain in summary.get("relative_performance_gain", {}).items():
            value = gain["relative_performance_gain"]
            reason = gain.get("relative_performance_gain_undefined")
            near_chance = None if reason else chance_note(gain, scale=100, unit="%")
            parts.append(
                f"{condition} RPG {_percent(value)}"
                + (f" (undefined: {reason})" if reason else "")
                + (f" ({near_chance})" if near_chance else "")
            )
        out.print(f"{summary['file']} ({summary['reader']} reader): " + "; ".join(parts))


def print_config_scores(document: Mapping[str, Any], out: Console) -> None:
    """A harness's logged outputs as ``run`` scores them: one line per config (n, unparsed, ED, RR, Acc, RPG),
    after the scrambled variants of other tasks where there are some (:func:`print_scrambled_tasks`)."""
    if "scrambled_tasks" in document:
        print_scrambled_tasks(document, out)
    if not document.get("configs"):
        return
    document = scores_in(document, PERCENT)  # the document holds fractions, as results.json
    table = Table(title=f"{document['source']} output in {document['folder']} ({document['reader']} reader)")
    for column in ("config", "n", "unparsed", "ED", "RR %", "Acc %", "RPG %"):
        table.add_column(column, no_wrap=True, justify="left" if column == "config" else "right")
    notes = Footnotes()
    for name, entry in document["configs"].items():
        table.add_row(name, str(entry["n_scored"]), str(entry["unparsed"]), *_score_cells(entry, notes))
    print_table(out, table)
    for line in notes.lines():
        out.print(line, markup=False, highlight=False)


def _rpg_cell(gain: Mapping[str, Any], notes: Any) -> str:
    """A variant's RPG as ``score``'s table prints it, as ``report --from`` does: the percent (marked where the
    canonical accuracy is near chance), ``undefined`` with a footnote saying why, or blank where ``sub`` did
    not run.

    >>> notes = Footnotes()
    >>> _rpg_cell({"value": None, "undefined": "equal anchors"}, notes), notes.lines()
    ('undefined [1]', ['[1] RPG undefined: equal anchors'])
    >>> _rpg_cell({}, notes)
    ''
    """
    if gain.get("value") is not None:
        near_chance = chance_note(gain, scale=100, unit="%")
        return f"{100 * gain['value']:.1f}" + (f" {notes.mark(near_chance)}" if near_chance else "")
    if gain.get("undefined"):
        return "undefined " + notes.mark(f"RPG undefined: {gain['undefined']}")
    return ""


SCRAMBLED_COLUMNS = (
    "task",
    "type",
    "metric",
    "value %",
    "difference (pp)",
    "interval (pp)",
    "McNemar p",
    "RPG %",
    "n",
)
"""The columns of :func:`print_scrambled_tasks`' table; the first three are names, the rest numbers."""


def print_scrambled_tasks(document: Mapping[str, Any], out: Console) -> None:
    """Derived tasks against their canonical task: per metric and type, the harness's value (percent) and the
    paired difference with its interval (percentage points; Tango's for 0/1 metrics, beside the McNemar
    score test's p it inverts), McNemar's p and RPG (percent, as the tables), the paired count marked where
    the comparison is underpowered."""
    notes = Footnotes()
    table = Table(title=f"scrambled variants in {document['folder']} (paired with the canonical task)")
    for column in SCRAMBLED_COLUMNS:
        table.add_column(column, no_wrap=True, justify="left" if column in SCRAMBLED_COLUMNS[:3] else "right")
    for canonical, entry in document["scrambled_tasks"].items():
        for key, metric in entry["metrics"].items():
            table.add_row(canonical, "canonical", key, _percent_value(metric.get("value")), "", "", "", "",
                          str(metric.get("n")))  # fmt: skip
        for scramble_type, variant in entry["types"].items():
            for key, metric in variant["metrics"].items():
                table.add_row(canonical, scramble_type, key, *_variant_cells(metric, notes))
    print_table(out, table)
    out.print(
        "interval: Tango's score interval for 0/1 metrics, which excludes 0 exactly when the McNemar score "
        "test's p beside it is below 1 - level; a paired bootstrap for other metrics (no p)",
        markup=False,
        highlight=False,
    )
    for line in notes.lines():
        out.print(line, markup=False, highlight=False)


def _percent_value(value: Any) -> str:
    """A fraction in percent with one decimal; blank for None.

    >>> _percent_value(0.1234), _percent_value(None)
    ('12.3', '')
    """
    return "" if value is None else f"{100 * value:.1f}"


def _variant_cells(metric: Mapping[str, Any], notes: Footnotes) -> list[str]:
    """A variant's metric against the canonical task: its value, the paired difference and its interval,
    McNemar's p, RPG and the paired count (marked where the comparison is underpowered)."""
    # deferred: metrics.statistics imports numpy, which the other commands that print here (run, build) do
    # not load
    from scrambled_bench.metrics.statistics import underpowered_note

    ci = metric.get("ci")
    paired = str(metric.get("n_paired", metric.get("n")))
    if metric.get("underpowered"):
        paired += f" {notes.mark(underpowered_note(metric['underpowered_below']))}"
    return [
        _percent_value(metric.get("value")),
        _percent_value(metric.get("difference")),
        f"[{_percent_value(ci[0])}, {_percent_value(ci[1])}]" if ci else "",
        "" if metric.get("mcnemar_p") is None else f"{metric['mcnemar_p']:.3g}",
        _rpg_cell(metric.get("relative_performance_gain") or {}, notes),
        paired,
    ]
