"""Each task's headline metric at rs100 against parameter count, log scale (the paper's Figure 5): a panel per
task and dataset, one parameter axis shared by every panel and the metric's axis by the panels of one
metric. Every model of the paper of disclosed size with a value is a point named beside it, the sizes of one
model family joined; one the paper prints only as "< 0" is drawn at 0 unnamed (its name under the figure:
fifteen names at one height would pile up). Each run is placed where its size is known (``--params`` or its
model files). What cannot be placed is listed under the figure; a figure with no run to place is not drawn,
and says why (:func:`figures`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from scrambled_bench.evaluation.tasks import TASKS, Metric, Task
from scrambled_bench.report.figures.common import (
    Drawn,
    FigureInputs,
    Mark,
    ReportFigure,
    dodge,
    draw_below_zero,
    finish,
    grid,
    handles,
    label_outer,
    note_undefined,
    paper_look,
    paper_notes,
    paper_range,
    point,
    run_look,
    visible,
    yerr,
)
from scrambled_bench.report.figures.types import runs_caption
from scrambled_bench.report.paper import PAPER_CITATION, PaperModel, models_in, paper_cell
from scrambled_bench.report.params import format_parameters

SCALE_TYPE = "rs100"
"""The type of the parameter-count figure (the paper's Figure 5 plots RS-100%)."""
PANEL = (4.8, 3.4)
COLUMNS = 2
NAME_SIZE = 6.5
"""Points: the models' names beside their points."""

Panel = tuple[Task, str]

SCALE_NOTE = (
    f"The paper's models ({PAPER_CITATION}) of disclosed size: each point named beside it, the sizes of one "
    "family joined by a dashed line of its color; your runs: filled circles with the interval results.json "
    "stores."
)
"""The lead note under the figure."""


def _headline(task: Task) -> Metric:
    """The metric the figure plots for a task."""
    return task.view.headline or task.metrics[-1]


def _place_names(ax: Any, named: Sequence[tuple[str, float, float, str]]) -> None:
    """Each (name, x, y, color) beside its point, right of it (left in the right third of the panel), moved
    up just enough that no two names overlap; a thin line ties a moved name to its point."""
    fig = ax.figure
    fig.draw_without_rendering()
    to_points = 72 / fig.dpi
    height = NAME_SIZE * 1.3
    box = ax.get_window_extent()
    placed: list[tuple[float, float, float]] = []  # x0, x1, y (points, display)
    for name, x, y, colour in sorted(named, key=lambda one: (one[2], one[1])):
        px, py = (v * to_points for v in ax.transData.transform((x, y)))
        width = len(name) * NAME_SIZE * 0.55
        left_side = px > (box.x0 + box.width * 2 / 3) * to_points
        x0, x1 = (px - 5 - width, px - 5) if left_side else (px + 5, px + 5 + width)
        ty = py
        moved = True
        while moved:
            moved = False
            for other_x0, other_x1, other_y in placed:
                if x0 < other_x1 and other_x0 < x1 and abs(ty - other_y) < height - 1e-6:
                    ty = max(ty, other_y + height)  # only ever up: the loop ends
                    moved = ty == other_y + height
        placed.append((x0, x1, ty))
        ax.annotate(
            name,
            (x, y),
            xytext=(-5 if left_side else 5, ty - py),
            textcoords="offset points",
            ha="right" if left_side else "left",
            va="center",
            fontsize=NAME_SIZE,
            color=colour,
            arrowprops={"arrowstyle": "-", "color": colour, "linewidth": 0.5, "shrinkA": 0, "shrinkB": 3}
            if ty - py > height / 2
            else None,
        )


def _placed_runs(
    task: Task, dataset: str, inputs: FigureInputs
) -> tuple[list[tuple[int, Any, Any, float, Any]], list[str]]:
    """The runs placeable in a panel (number, run, size, value, interval) and, for the others, why not."""
    metric = _headline(task)
    placed, notes = [], []
    for number, run in enumerate(inputs.runs):
        entries = run.by_type(task.name, dataset)
        if not entries:
            continue
        entry = entries.get(SCALE_TYPE)
        size = inputs.sizes.get(run.label)
        if entry is None:
            notes.append(f"{run.label}: no {SCALE_TYPE} config on {task.view.panel_titles[dataset]}.")
            continue
        value, ci = point(entry.get(metric.key))
        if value is None:
            reason = (entry.get(metric.key) or {}).get("undefined", "no value")
            notes.append(
                f"{run.label}: {metric.label} undefined on {task.view.panel_titles[dataset]} ({reason})."
            )
            continue
        if size is None:
            notes.append(f"{run.label}: size unknown, pass --params.")
            continue
        placed.append((number, run, size, value, ci))
    return placed, notes


Name = tuple[str, float, float, str]
"""A name to place beside its point: (name, x, y, color)."""


@dataclass
class _Panel:
    """What one panel drew: the names to place, the paper's models drawn (and those not drawn: no size; or
    not named: "< 0"), the values drawn (for :func:`clip_outliers`), and its notes."""

    names: list[Name] = field(default_factory=list)
    models: list[PaperModel] = field(default_factory=list)
    undisclosed: list[str] = field(default_factory=list)
    unnamed: list[str] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    below_zero: bool = False
    notes: list[str] = field(default_factory=list)


def _draw_panel(ax: Any, task: Task, dataset: str, inputs: FigureInputs, families: dict[str, str]) -> _Panel:
    """The paper's models of disclosed size and the placeable runs; what was drawn (``families``: the
    color of each model family drawn, for the legend)."""
    metric = _headline(task)
    panel = _Panel()
    _draw_paper_models(ax, task.view.paper_tables.get(dataset), metric, inputs.paper, families, panel)
    placed, panel.notes = _placed_runs(task, dataset, inputs)
    _draw_runs(ax, placed, panel)
    if panel.unnamed:
        panel.notes.append(
            f"{task.view.panel_titles[dataset]}: below 0 in the paper (drawn at 0, not named): {', '.join(panel.unnamed)}."
        )
    if panel.undisclosed:
        panel.notes.append(f"Size undisclosed, not drawn: {', '.join(panel.undisclosed)}.")
    ax.set_xscale("log")
    ax.set_xlabel("parameters (count, log scale)")
    ax.set_ylabel(f"{metric.axis_label} at {SCALE_TYPE}")
    ax.set_title(task.view.panel_titles[dataset], fontsize="medium")
    ax.grid(alpha=0.3, which="both")
    if not panel.names and not placed and not panel.unnamed:
        note_undefined(ax, metric.label, [])
    return panel


def _draw_paper_models(
    ax: Any,
    table: str | None,
    metric: Metric,
    models: Sequence[PaperModel],
    families: dict[str, str],
    panel: _Panel,
) -> None:
    """Each of the paper's ``models`` of disclosed size with a value at rs100 as a point (a "< 0" at 0 with
    its triangle), the sizes of one family joined by a dashed line."""
    lines: dict[str, list[tuple[int, float]]] = {}
    for model in models_in(table, models):
        cell = paper_cell(table, model, metric.label, SCALE_TYPE)
        if cell is None:
            continue
        if model.parameters is None:
            panel.undisclosed.append(model.name)
            continue
        look = paper_look(model)
        value = 0.0 if cell.below_zero else cell.value
        ax.plot(model.parameters, value, **{**look, "linestyle": "none"})
        panel.marks.append(Mark(model.parameters, value, None, look["color"], reference=True))
        families.setdefault(model.family, look["color"])
        if cell.below_zero:  # no value to name: the name goes under the figure
            draw_below_zero(ax, [model.parameters], look["color"])
            panel.below_zero = True
            panel.unnamed.append(model.name)
        else:  # a line through "< 0" drawn at 0 would state a value the paper does not
            lines.setdefault(model.family, []).append((model.parameters, value))
            panel.names.append((model.name, model.parameters, value, look["color"]))
        panel.models.append(model)
    for family, points in lines.items():
        if len(points) > 1:
            ax.plot(*zip(*sorted(points)), linestyle="--", color=families[family], linewidth=0.9, zorder=1)


def _draw_runs(ax: Any, placed: Sequence[tuple[int, Any, Any, float, Any]], panel: _Panel) -> None:
    """The placeable runs, at their size; runs of one size side by side (a log axis: offsets are
    factors)."""
    for (number, run, size, value, ci), offset in zip(placed, dodge(len(placed), 0.12)):
        look = {**run_look(number), "linestyle": "none"}
        ax.errorbar(
            size.count * 10**offset,
            value,
            yerr=yerr(value, ci),
            capsize=3,
            label=f"{run.label} ({format_parameters(size.count)})",
            **look,
        )
        panel.marks.append(Mark(size.count * 10**offset, value, ci, look["color"]))


def scale_figure(panels: Sequence[Panel], inputs: FigureInputs, *, title: str = "") -> Any:
    """A panel per (task, dataset): the headline metric at rs100 by parameter count.

    >>> from scrambled_bench.report.figures.common import EXAMPLE_RUN
    >>> from scrambled_bench.report.paper import paper_models
    >>> fig = scale_figure([(TASKS["scrqa"], "dream")], FigureInputs([EXAMPLE_RUN], paper_models()))
    >>> fig.axes[0].get_title(), fig.axes[0].get_xscale()
    ('ScrQA, DREAM', 'log')
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    columns = min(COLUMNS, len(panels))
    at = [[r * columns + c for c in range(columns)] for r in range(math.ceil(len(panels) / columns))]
    share_x = [[0 if i < len(panels) else None for i in row] for row in at]
    share_y = [[_headline(panels[i][0]).key if i < len(panels) else None for i in row] for row in at]
    fig, axes = grid(len(at), columns, panel=PANEL, share_x=share_x, share_y=share_y)
    families: dict[str, str] = {}
    drawn = Drawn()
    models: dict[PaperModel, None] = {}
    names: list[tuple[Any, list[Name]]] = []
    for index, (task, dataset) in enumerate(panels):
        ax = axes[index // columns][index % columns]
        panel = _draw_panel(ax, task, dataset, inputs, families)
        drawn.marks[ax] = panel.marks
        drawn.ranges[ax] = paper_range(task.view.paper_tables.get(dataset), _headline(task).label)
        drawn.notes += panel.notes
        drawn.below_zero |= panel.below_zero
        names.append((ax, panel.names))
        models.update(dict.fromkeys(panel.models))
    sizes = [m.parameters for m in models if m.parameters] + [s.count for s in inputs.sizes.values()]
    if sizes:  # one parameter range for every panel, with room for the names
        axes[0][0].set_xlim(min(sizes) / 2.5, max(sizes) * 2.5)
    label_outer(axes, share_x, share_y)
    drawn.clip_outliers()
    for ax, panel_names in names:
        _place_names(ax, panel_names)
    notes = [SCALE_NOTE, *paper_notes(list(models), band=False, below_zero=drawn.below_zero), *drawn.notes]
    finish(fig, visible(axes), _legend(axes, families), notes, title=title)
    return fig


def _legend(axes: Sequence[Sequence[Any]], families: dict[str, str]) -> dict[str, Any]:
    """Every labelled point of the panels (the runs), then a dashed line per model family drawn."""
    from matplotlib.lines import Line2D  # deferred: matplotlib is heavy; only a drawn figure needs it

    entries = dict(handles(visible(axes)))
    entries.update(
        {
            f"{family} (paper)": Line2D([], [], color=colour, linestyle="--", linewidth=1.2)
            for family, colour in families.items()
        }
    )
    return entries


def figures(inputs: FigureInputs) -> list[ReportFigure]:
    """The parameter-count figure, where a run can be placed in it (a value at rs100 and a known size);
    otherwise the figure is not drawn (a figure of the paper's models alone is the paper's), and
    :attr:`ReportFigure.not_drawn` says why in one line."""
    panels = [
        (task, dataset)
        for task in TASKS.values()
        if task.view.layout == "types"
        for dataset in task.datasets
        if any(run.by_type(task.name, dataset) for run in inputs.runs)
    ]
    if not panels:
        return []
    title = f"The headline metric at {SCALE_TYPE} by parameter count{inputs.beside_paper}"
    if not any(_placed_runs(task, dataset, inputs)[0] for task, dataset in panels):
        return [ReportFigure("scale", title, None, not_drawn=_why_no_run_placed(panels, inputs))]
    caption = runs_caption(inputs.runs)
    if inputs.paper:
        caption += f" The paper's models of disclosed size among: {', '.join(m.name for m in inputs.paper)}."
    return [ReportFigure("scale", title, scale_figure(panels, inputs, title=title), caption)]


def _why_no_run_placed(panels: Sequence[Panel], inputs: FigureInputs) -> str:
    """Why no run has a point in the parameter-count figure, in one line: the first thing every run lacks."""
    entries = [
        (task, run.by_type(task.name, dataset).get(SCALE_TYPE))
        for task, dataset in panels
        for run in inputs.runs
    ]
    entries = [(task, entry) for task, entry in entries if entry is not None]
    if not entries:
        return f"no run has an {SCALE_TYPE} config (the figure plots {SCALE_TYPE} against parameter count)"
    if all(point(entry.get(_headline(task).key))[0] is None for task, entry in entries):
        return f"no run has a value of the headline metric (RR, RPG) at {SCALE_TYPE}"
    return "no run's size is known (pass --params, e.g. --params 135M)"
