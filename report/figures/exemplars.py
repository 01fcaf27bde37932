"""AQuA's accuracy by the exemplars' scramble rate (the paper's Table 1 as a figure): a panel per question
scramble type, the exemplar rate an ordered x axis shared by every panel, as is the accuracy. Each run is a
line of its own color, dodged where runs share a rate; the paper's models are lines of their own, or a band
with a median.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from scrambled_bench.evaluation.tasks import Task
from scrambled_bench.report.figures.common import (
    BAND_NOTE,
    BELOW_ZERO_NOTE,
    RUNS_NOTE,
    FigureInputs,
    ReportFigure,
    band_point,
    dodge,
    draw_band,
    draw_below_zero,
    finish,
    grid,
    label_outer,
    legend_entries,
    note_undefined,
    paper_look,
    paper_marker_note,
    places,
    point,
    run_look,
    spare,
    visible,
)
from scrambled_bench.report.figures.types import paper_caption, runs_caption
from scrambled_bench.report.paper import exemplar_cells, models_in
from scrambled_bench.report.runs import Run
from scrambled_bench.report.tables import ordered_types

PANEL = (4.6, 4.0)
DODGE = 12.0
"""Exemplar-rate points: how wide the runs at one rate are spread."""


def _run_points(run: Run, task: Task, dataset: str, scramble_type: str) -> list[tuple[int, Any, Any]]:
    metric = task.metrics[0]
    entries = run.entries(task.name, dataset).values()
    return sorted(
        (entry["exemplar_rate"], *point(entry.get(metric.key)))
        for entry in entries
        if entry["scramble_type"] == scramble_type
    )


def exemplars_figure(
    task: Task, dataset: str, runs: Sequence[Run], inputs: FigureInputs, *, title: str = ""
) -> Any:
    """A panel per question type the ``runs`` have: accuracy by exemplar rate, a line per run and per
    named paper model (or the paper's band)."""
    metric = task.metrics[0]
    table = task.view.paper_tables.get(dataset)
    held = models_in(table, inputs.paper)
    cells = {model: exemplar_cells(table, model) for model in held}
    types = ordered_types(
        {e["scramble_type"] for run in runs for e in run.entries(task.name, dataset).values()}
    )
    rows, columns, where = places(len(types))
    keys = [[0 if (r, c) in where else None for c in range(columns)] for r in range(rows)]
    fig, axes = grid(rows, columns, panel=PANEL, share_x=keys, share_y=keys)
    rates: set[int] = set()
    below_zero = False
    named = [model for model in held if model in inputs.named]
    for index, scramble_type in enumerate(types):
        ax = axes[where[index][0]][where[index][1]]
        if inputs.band and held:
            by_rate = {
                rate: band_point(cells[model].get((scramble_type, rate)) for model in held)
                for rate in sorted({r for model in held for t, r in cells[model] if t == scramble_type})
            }
            band = {rate: one for rate, one in by_rate.items() if one is not None}
            if band:
                draw_band(ax, list(band), list(band.values()), width=None)
                rates.update(band)
                below_zero |= any(one.low == -math.inf for one in band.values())
        offsets = dodge(len(runs) + len(named), DODGE)
        drawn = False
        for number, run in enumerate(runs):
            points = [
                (rate, value, ci)
                for rate, value, ci in _run_points(run, task, dataset, scramble_type)
                if value is not None
            ]
            if not points:
                continue
            drawn = True
            rates.update(rate for rate, _, _ in points)
            ax.errorbar(
                [rate + offsets[number] for rate, _, _ in points],
                [value for _, value, _ in points],
                yerr=[
                    [value - ci[0] if ci else math.nan for _, value, ci in points],
                    [ci[1] - value if ci else math.nan for _, value, ci in points],
                ],
                capsize=3,
                label=run.label,
                **run_look(number),
            )
        for number, model in enumerate(named, start=len(runs)):
            found = sorted((rate, cell) for (t, rate), cell in cells[model].items() if t == scramble_type)
            if not found:
                continue
            drawn = True
            rates.update(rate for rate, _ in found)
            xs = [rate + offsets[number] for rate, _ in found]
            ax.plot(
                xs,
                [0.0 if c.below_zero else c.value for _, c in found],
                label=model.label,
                **paper_look(model),
            )
            below = [x for x, (_, c) in zip(xs, found) if c.below_zero]
            if below:
                draw_below_zero(ax, below, paper_look(model)["color"])
                below_zero = True
        if not drawn:
            note_undefined(ax, metric.label, [])
        ax.set_title(f"questions {scramble_type}", fontsize="medium")
        ax.set_xlabel("exemplar questions scrambled (%)")
        ax.set_ylabel(metric.axis_label)
        ax.grid(alpha=0.3)
    for ax in visible(axes):
        ax.set_xticks(sorted(rates))
    label_outer(axes, keys, keys)
    notes = [RUNS_NOTE]
    if named:
        notes.append(paper_marker_note(named))
    if inputs.band and held:
        notes.append(BAND_NOTE)
    if below_zero:
        notes.append(BELOW_ZERO_NOTE)
    finish(fig, visible(axes), legend_entries(axes, runs), notes, title=title, cells=spare(axes))
    return fig


def figures(tasks: Sequence[Task], inputs: FigureInputs) -> list[ReportFigure]:
    """A figure per task laid out by exemplar rate and dataset, where runs have data."""
    built = []
    for task in tasks:
        for dataset in task.datasets:
            runs = [run for run in inputs.runs if run.entries(task.name, dataset)]
            if runs:
                title = f"{task.view.panel_titles[dataset]}: {task.metrics[0].label} by exemplar rate{inputs.beside_paper}"
                fig = exemplars_figure(task, dataset, runs, inputs, title=title)
                caption = runs_caption(runs) + paper_caption(inputs, [task.view.paper_tables.get(dataset)])
                built.append(ReportFigure(task.view.figure, title, fig, caption))
    return built
