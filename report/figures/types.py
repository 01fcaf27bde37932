"""A metric by scramble type, as the paper's Figures 2-3 (ScrRec's ED and RR) and ScrQA's Acc and RPG, and
the letter-position types alone (the paper's Figure 6).

A column per task and dataset, a row per metric: the y axis is shared along a row where the metric is the
same, the scramble types down a column. Scramble types are categories: they are points, and only the
ordered rates of one family (rs10..rs100) are joined by a line. A panel whose metric is undefined for every
run says so in place of an empty plot.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from scrambled_bench.builder.scrambler import FAMILIES, parse_type
from scrambled_bench.evaluation.tasks import TASKS, Metric, Task
from scrambled_bench.report.figures.common import (
    RUNS_NOTE,
    BandPoint,
    Drawn,
    FigureInputs,
    Mark,
    ReportFigure,
    Series,
    band_point,
    dodge,
    draw_band,
    draw_below_zero,
    finish,
    grid,
    label_outer,
    legend_entries,
    note_undefined,
    numbered,
    paper_notes,
    paper_range,
    point,
    series_look,
    shown,
    spare,
    undefined_reasons,
    visible,
    yerr,
)
from scrambled_bench.report.paper import (
    PaperModel,
    models_in,
    paper_cell,
    paper_keys,
    table_name,
)
from scrambled_bench.report.runs import Run
from scrambled_bench.report.tables import ordered_types

LETTER_FAMILIES = ("kf", "kfl", *(name for name, family in FAMILIES.items() if family.group == "letters"))
"""The paper's Figure 6: which letters of a word keep their place."""
PANEL = (4.4, 3.3)
"""Inches per panel."""
LINES_NOTE = "Lines join the rates of one family (rs10 to rs100); every other type is a point of its own."

Panel = tuple[Task, str]
"""A task on a dataset: a column of the figure."""


def type_series(run: Run, task: Task, dataset: str, metric: Metric) -> Series:
    """A run's values of ``metric`` per scramble type for a task on a dataset.

    >>> from scrambled_bench.report.figures.common import EXAMPLE_RUN
    >>> type_series(EXAMPLE_RUN, TASKS["scrqa"], "dream", TASKS["scrqa"].metrics[0]).points["rs100"]
    (60.0, [40.0, 70.0])
    """
    entries = run.by_type(task.name, dataset)
    scores = {t: entries[t].get(metric.key) for t in ordered_types(set(entries))}
    return Series(
        run.label,
        {t: point(score) for t, score in scores.items()},
        undefined=undefined_reasons(scores.values()),
    )


def paper_type_series(model: PaperModel, task: Task, dataset: str, metric: Metric) -> Series | None:
    """One of the paper's models, per scramble type, as its table prints it; None where the table lacks it.

    >>> from scrambled_bench.report.paper import select_paper_models
    >>> from scrambled_bench.evaluation.tasks.base import RR
    >>> llama = select_paper_models("llama-2-7b")[0]
    >>> series = paper_type_series(llama, TASKS["scrrec-zero-shot"], "realtimeqa", RR)
    >>> series.label, series.below_zero
    ('Llama-2-7b (paper)', ['rs20', 'rs50', 'rs100', 'kf', 'kfl'])
    """
    table = task.view.paper_tables.get(dataset)
    if not models_in(table, [model]):
        return None
    series = Series(model.label, model=model)
    for scramble_type in paper_keys(table, model, metric.label):
        cell = paper_cell(table, model, metric.label, scramble_type)
        if cell is None:
            continue
        if cell.below_zero:
            series.below_zero.append(scramble_type)
        else:
            series.points[scramble_type] = (cell.value, None)
    return series


def paper_type_band(
    models: Sequence[PaperModel], task: Task, dataset: str, metric: Metric
) -> dict[str, BandPoint]:
    """The range and median of the paper's ``models`` per scramble type (those its table holds).

    >>> from scrambled_bench.report.paper import paper_models
    >>> paper_type_band(paper_models(), TASKS["scrqa"], "dream", TASKS["scrqa"].metrics[0])["original"].count
    19
    """
    table = task.view.paper_tables.get(dataset)
    held = models_in(table, models)
    types = ordered_types({t for model in held for t in paper_keys(table, model, metric.label)})
    band = {}
    for scramble_type in types:
        one = band_point(paper_cell(table, model, metric.label, scramble_type) for model in held)
        if one is not None:
            band[scramble_type] = one
    return band


def all_types(series: Sequence[Series]) -> list[str]:
    return ordered_types({t for one in series for t in [*one.points, *one.below_zero]})


def letter_types(series: Sequence[Series]) -> list[str]:
    return [t for t in all_types(series) if parse_type(t).family in LETTER_FAMILIES]


def _family_lines(points: Sequence[tuple[str, float]]) -> list[list[tuple[str, float]]]:
    """The points of each rate family (rs10..rs100) that has two or more of them, in order."""
    by_family: dict[str, list[tuple[str, float]]] = {}
    for scramble_type, value in points:
        family = FAMILIES[parse_type(scramble_type).family]
        if family.takes_rate:
            by_family.setdefault(family.name, []).append((scramble_type, value))
    return [line for line in by_family.values() if len(line) > 1]


def draw_types_panel(
    ax: Any, series: Sequence[Series], types: Sequence[str], band: Mapping[str, BandPoint]
) -> tuple[bool, bool, list[Mark]]:
    """The ``band`` of the paper's models, then each series' points with error bars, dodged around each
    type; the rates of one family joined. Returns (anything drawn, any "< 0" drawn, the runs' points for
    :func:`clip_outliers`)."""
    positions = {t: i for i, t in enumerate(types)}
    banded = [t for t in types if t in band]
    marks = [
        Mark(positions[t], shown(value), None, "", reference=True)
        for t in banded
        for value in (band[t].low, band[t].high)
    ]
    if banded:
        draw_band(ax, [positions[t] for t in banded], [band[t] for t in banded], width=0.7)
    drawable = [
        (one, number)
        for one, number in numbered(series)
        if any(v is not None and t in positions for t, (v, _) in one.points.items())
        or any(t in positions for t in one.below_zero)
    ]
    below_drawn = any(band[t].low == float("-inf") for t in banded)
    for (one, number), offset in zip(drawable, dodge(len(drawable))):
        look = series_look(one, number)
        line = {"linestyle": look.pop("linestyle"), "linewidth": look.pop("linewidth")}
        values = [(t, v, ci) for t, (v, ci) in one.points.items() if v is not None and t in positions]
        for family_line in _family_lines([(t, v) for t, v, _ in values]):
            ax.plot(
                [positions[t] + offset for t, _ in family_line],
                [v for _, v in family_line],
                color=look["color"],
                alpha=0.7,
                zorder=look["zorder"] - 1,
                **line,
            )
        label: str | None = one.label
        for t, v, ci in values:
            ax.errorbar(
                positions[t] + offset, v, yerr=yerr(v, ci), linestyle="none", capsize=3, label=label, **look
            )
            label = None
            marks.append(Mark(positions[t] + offset, v, ci, look["color"], reference=one.reference))
        below = [positions[t] + offset for t in one.below_zero if t in positions]
        marks += [Mark(x, 0.0, None, look["color"], reference=one.reference) for x in below]
        if below:
            ax.plot(below, [0.0] * len(below), linestyle="none", label=label, **look)
            draw_below_zero(ax, below, look["color"])
            below_drawn = True
    ax.set_xticks(range(len(types)), types, rotation=30, ha="right", rotation_mode="anchor")
    ax.set_xlim(-0.5, len(types) - 0.5)
    ax.grid(alpha=0.3)
    return bool(drawable or banded), below_drawn, marks


def types_figure(
    panels: Sequence[Panel],
    inputs: FigureInputs,
    *,
    types_of: Callable[[Sequence[Series]], list[str]] = all_types,
    title: str = "",
) -> Any:
    """A column per (task, dataset) of ``panels``, a row per metric; each run and each of the paper's
    models a series, or the paper's models as a band.

    >>> from scrambled_bench.report.figures.common import EXAMPLE_RUN
    >>> fig = types_figure([(TASKS["scrqa"], "dream")], FigureInputs([EXAMPLE_RUN]))
    >>> [(ax.get_title(), ax.get_ylabel()) for ax in fig.axes if ax.get_visible()]
    [('ScrQA, DREAM', 'Acc (%)'), ('ScrQA, DREAM', 'RPG (%)')]
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    fig, axes, share_x, share_y = _types_grid(panels)
    drawn = Drawn()
    for column, (task, dataset) in enumerate(panels):
        per_row = [_metric_series(task, dataset, metric, inputs) for metric in task.metrics]
        banded = Series("the paper's band", {t: (None, None) for _, _, band in per_row for t in band})
        types = types_of([*(one for _, series, _ in per_row for one in series), banded])
        panel_title = task.view.panel_titles[dataset]
        for row, (metric, series, band) in enumerate(per_row):
            ax = axes[row][column]
            anything, below, drawn.marks[ax] = draw_types_panel(ax, series, types, band)
            drawn.ranges[ax] = paper_range(task.view.paper_tables.get(dataset), metric.label)
            drawn.below_zero |= below
            ax.set_ylabel(metric.axis_label)
            ax.set_xlabel("scramble type")
            if row == 0 or len(panels) == 1:
                ax.set_title(panel_title, fontsize="medium")
            if anything:
                drawn.notes += _no_point_notes(series, metric, panel_title)
            else:
                note_undefined(ax, metric.label, [r for one in series for r in one.undefined])
    if len(panels) > 1:  # side by side metrics share no axis to label once
        label_outer(axes, share_x, share_y)
    drawn.clip_outliers()
    notes = [RUNS_NOTE, LINES_NOTE, *paper_notes(inputs.named, band=inputs.band, below_zero=drawn.below_zero)]
    finish(
        fig,
        visible(axes),
        legend_entries(axes, inputs.runs),
        [*notes, *drawn.notes],
        title=title,
        cells=spare(axes),
    )
    return fig


def _types_grid(panels: Sequence[Panel]) -> tuple[Any, list[list[Any]], list[list[Any]], list[list[Any]]]:
    """The figure and its panels, a column per (task, dataset) and a row per metric, sharing y along a row
    of one metric; one task and dataset has its metrics side by side, not in a narrow column. Returns the
    figure, the panels (``[row][column]``) and the keys of their shared x and y axes."""
    rows = max(len(task.metrics) for task, _ in panels)
    share_y = [
        [task.metrics[r].key if r < len(task.metrics) else None for task, _ in panels] for r in range(rows)
    ]
    share_x = [list(range(len(panels))) for _ in range(rows)]
    if len(panels) == 1:
        share_y, share_x = [[row[0] for row in share_y]], [[row[0] for row in share_x]]
    fig, axes = grid(len(share_y), len(share_y[0]), panel=PANEL, share_x=share_x, share_y=share_y)
    if len(panels) == 1:
        axes = [[ax] for ax in axes[0]]
    return fig, axes, share_x, share_y


def _metric_series(
    task: Task, dataset: str, metric: Metric, inputs: FigureInputs
) -> tuple[Metric, list[Series], dict[str, BandPoint]]:
    """What one panel draws: each run's series with data there, each named paper model's, and the band of
    the paper's models (empty unless they are drawn as one)."""
    series = [
        type_series(run, task, dataset, metric) for run in inputs.runs if run.by_type(task.name, dataset)
    ]
    series += [
        one for one in (paper_type_series(m, task, dataset, metric) for m in inputs.named) if one is not None
    ]
    band = paper_type_band(inputs.paper, task, dataset, metric) if inputs.band else {}
    return metric, series, band


def _no_point_notes(series: Sequence[Series], metric: Metric, panel_title: str) -> list[str]:
    """A run with no point in a panel beside the paper's says why, or its absence reads as a missing run."""
    return [
        f"{one.label}: {metric.label} undefined on {panel_title} ({one.undefined[0]})."
        for one in series
        if not one.reference and one.undefined and all(v is None for v, _ in one.points.values())
    ]


def paper_caption(inputs: FigureInputs, tables: Sequence[str | None]) -> str:
    """Which of the paper's models a figure draws, how, and from which of its tables."""
    if not inputs.paper:
        return ""
    names = ", ".join(dict.fromkeys(table_name(t) for t in tables if t))
    if inputs.band:
        return f" The paper's {len(inputs.paper)} models as a band and median ({names})."
    return f" The paper's models ({names}): {', '.join(m.name for m in inputs.paper)}."


def runs_caption(runs: Sequence[Run]) -> str:
    labels = ", ".join(run.label for run in runs)
    return f"{len(runs)} run{'s' if len(runs) != 1 else ''}: {labels}."


def figures(tasks: Sequence[Task], inputs: FigureInputs) -> list[ReportFigure]:
    """A figure per ``view.figure`` of the tasks laid out by scramble type, where the runs have data."""
    by_figure: dict[str, list[Panel]] = {}
    for task in tasks:
        for dataset in task.datasets:
            if any(run.by_type(task.name, dataset) for run in inputs.runs):
                by_figure.setdefault(task.view.figure, []).append((task, dataset))
    built = []
    for name, panels in by_figure.items():
        metrics = " and ".join(dict.fromkeys(m.label for task, _ in panels for m in task.metrics))
        title = f"{metrics} by scramble type{inputs.beside_paper}"
        caption = runs_caption(inputs.runs) + paper_caption(
            inputs, [task.view.paper_tables.get(dataset) for task, dataset in panels]
        )
        built.append(ReportFigure(name, title, types_figure(panels, inputs, title=title), caption))
    return built


def letters_figures(inputs: FigureInputs) -> list[ReportFigure]:
    """The letter-position types (the paper's Figure 6) of every task and dataset where a run has them."""
    panels = [
        (task, dataset)
        for task in TASKS.values()
        if task.view.layout == "types"
        for dataset in task.datasets
        if any(
            FAMILIES[parse_type(t).family].group == "letters"
            for run in inputs.runs
            for t in run.by_type(task.name, dataset)
        )
    ]
    if not panels:
        return []
    title = f"Which letters keep their place (letter-position types){inputs.beside_paper}"
    caption = runs_caption(inputs.runs) + paper_caption(
        inputs, [task.view.paper_tables.get(dataset) for task, dataset in panels]
    )
    return [
        ReportFigure(
            "letters", title, types_figure(panels, inputs, types_of=letter_types, title=title), caption
        )
    ]
