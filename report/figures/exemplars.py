"""AQuA's accuracy by the exemplars' scramble rate (the paper's Table 1 as a figure): a panel per question
scramble type, the exemplar rate an ordered x axis shared by every panel, as is the accuracy. Each run is a
line of its own color, dodged where runs share a rate; the paper's models are lines of their own, or a band
with a median.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from scrambled_bench.evaluation.tasks import Task
from scrambled_bench.plots import finish, grid, label_outer, places, shared_keys, spare, visible
from scrambled_bench.report.figures.common import (
    RUNS_NOTE,
    FigureInputs,
    ReportFigure,
    band_point,
    dodge,
    draw_band,
    draw_below_zero,
    legend_entries,
    note_undefined,
    paper_look,
    paper_notes,
    point,
    run_look,
)
from scrambled_bench.report.figures.types import paper_caption, runs_caption
from scrambled_bench.report.paper import PaperCell, PaperModel, exemplar_cells, models_in
from scrambled_bench.report.runs import Run
from scrambled_bench.report.tables import ordered_types

PANEL = (4.6, 4.0)
DODGE = 12.0
"""Exemplar-rate points: how wide the runs at one rate are spread."""

Cells = dict[tuple[str, int], PaperCell]
"""One of the paper's models: its cell per (question type, exemplar rate)."""


@dataclass
class _Drawn:
    """What the panels drew: the exemplar rates (every panel's ticks) and whether a "< 0" was."""

    rates: set[int] = field(default_factory=set)
    below_zero: bool = False


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
    keys = shared_keys(rows, columns, where)
    fig, axes = grid(rows, columns, panel=PANEL, share_x=keys, share_y=keys)
    drawn = _Drawn()
    named = [model for model in held if model in inputs.named]
    for index, scramble_type in enumerate(types):
        ax = axes[where[index][0]][where[index][1]]
        if inputs.band and held:
            _draw_rate_band(ax, [cells[model] for model in held], scramble_type, drawn)
        offsets = dodge(len(runs) + len(named), DODGE)
        points = [
            (run.label, number, _run_points(run, task, dataset, scramble_type))
            for number, run in enumerate(runs)
        ]
        anything = _draw_runs(ax, points, offsets, drawn)
        anything |= _draw_models(ax, {m: cells[m] for m in named}, scramble_type, offsets[len(runs) :], drawn)
        if not anything:
            note_undefined(ax, metric.label, [])
        ax.set_title(f"questions {scramble_type}", fontsize="medium")
        ax.set_xlabel("exemplar questions scrambled (%)")
        ax.set_ylabel(metric.axis_label)
        ax.grid(alpha=0.3)
    for ax in visible(axes):
        ax.set_xticks(sorted(drawn.rates))
    label_outer(axes, keys, keys)
    notes = [RUNS_NOTE, *paper_notes(named, band=inputs.band and bool(held), below_zero=drawn.below_zero)]
    finish(fig, visible(axes), legend_entries(axes, runs), notes, title=title, cells=spare(axes))
    return fig


def _draw_rate_band(ax: Any, models: Sequence[Cells], scramble_type: str, drawn: _Drawn) -> None:
    """The paper's models at each exemplar rate of ``scramble_type`` as a band with their median."""
    rates = sorted({rate for cells in models for t, rate in cells if t == scramble_type})
    by_rate = {rate: band_point(cells.get((scramble_type, rate)) for cells in models) for rate in rates}
    band = {rate: one for rate, one in by_rate.items() if one is not None}
    if band:
        draw_band(ax, list(band), list(band.values()), width=None)
        drawn.rates.update(band)
        drawn.below_zero |= any(one.low == -math.inf for one in band.values())


def _draw_runs(
    ax: Any,
    runs: Sequence[tuple[str, int, list[tuple[int, Any, Any]]]],
    offsets: Sequence[float],
    drawn: _Drawn,
) -> bool:
    """Each run (label, number, points by rate) as a line with error bars, dodged by its offset; whether
    any point was drawn."""
    anything = False
    for label, number, found in runs:
        points = [(rate, value, ci) for rate, value, ci in found if value is not None]
        if not points:
            continue
        anything = True
        drawn.rates.update(rate for rate, _, _ in points)
        ax.errorbar(
            [rate + offsets[number] for rate, _, _ in points],
            [value for _, value, _ in points],
            yerr=[
                [value - ci[0] if ci else math.nan for _, value, ci in points],
                [ci[1] - value if ci else math.nan for _, value, ci in points],
            ],
            capsize=3,
            label=label,
            **run_look(number),
        )
    return anything


def _draw_models(
    ax: Any, models: dict[PaperModel, Cells], scramble_type: str, offsets: Sequence[float], drawn: _Drawn
) -> bool:
    """Each named paper model as a dashed line over its rates of ``scramble_type``, a "< 0" at 0 with its
    triangle; whether any was drawn."""
    anything = False
    for offset, (model, cells) in zip(offsets, models.items()):
        found = sorted((rate, cell) for (t, rate), cell in cells.items() if t == scramble_type)
        if not found:
            continue
        anything = True
        drawn.rates.update(rate for rate, _ in found)
        xs = [rate + offset for rate, _ in found]
        look = paper_look(model)
        ax.plot(xs, [0.0 if c.below_zero else c.value for _, c in found], label=model.label, **look)
        below = [x for x, (_, c) in zip(xs, found) if c.below_zero]
        if below:
            draw_below_zero(ax, below, look["color"])
            drawn.below_zero = True
    return anything


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
