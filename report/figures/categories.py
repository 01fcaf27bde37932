"""RPG by question category (the paper's Figure 4): grouped bars per scramble type, a panel per run and
one for the paper's models (their median with the range as whiskers, or a panel per named model, hatched),
every panel on the same axes. An undefined RPG is a gap, never a bar of height 0 (which would read as "no
gain"), and a note says why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from scrambled_bench.evaluation.tasks import Task
from scrambled_bench.evaluation.tasks.base import RPG
from scrambled_bench.report.figures.common import (
    BELOW_ZERO_NOTE,
    MEDIAN_COLOUR,
    FigureInputs,
    ReportFigure,
    band_point,
    draw_below_zero,
    finish,
    grid,
    label_outer,
    places,
    shared_keys,
    shown,
    spare,
    undefined_reasons,
    visible,
)
from scrambled_bench.report.figures.types import paper_caption, runs_caption
from scrambled_bench.report.paper import PAPER_CITATION, models_in, paper_cell, paper_keys, table_name
from scrambled_bench.report.runs import Run
from scrambled_bench.report.tables import ordered_types

PANEL = (5.0, 4.2)

Bar = tuple[float | None, Sequence[float] | None, bool]
"""A bar's height (None: a gap), its interval (error bar or range), and whether it stands for "< 0"."""


def _run_bars(
    run: Run, task: Task, dataset: str, anchors: set[str]
) -> tuple[dict[str, dict[str, Bar]], list[str]]:
    """A run's RPG per scramble type and category, and why some are undefined."""
    entries = run.by_type(task.name, dataset)
    bars: dict[str, dict[str, Bar]] = {}
    reasons: list[str] = []
    for scramble_type in ordered_types(set(entries)):
        if scramble_type in anchors:
            continue
        categories = entries[scramble_type].get("categories") or {}
        scores = {c: (categories[c] or {}).get(RPG.key) for c in categories}
        reasons += undefined_reasons(scores.values())
        bars[scramble_type] = {
            c: ((score or {}).get("value"), (score or {}).get("ci"), False) for c, score in scores.items()
        }
    return bars, reasons


def _paper_bars(table: str, models: Sequence[Any], anchors: set[str]) -> dict[str, dict[str, Bar]]:
    """One model's RPG per type and category (``models`` of one), or the median and range of several."""
    cells: dict[tuple[str, str], list[Any]] = {}
    for model in models:
        for category in paper_keys(table, model):
            if category == "all":
                continue
            for scramble_type in paper_keys(table, model, category):
                if scramble_type not in anchors:
                    cells.setdefault((scramble_type, category), []).append(
                        paper_cell(table, model, category, scramble_type)
                    )
    bars: dict[str, dict[str, Bar]] = {}
    for scramble_type in ordered_types({t for t, _ in cells}):
        for (t, category), found in cells.items():
            if t != scramble_type:
                continue
            band = band_point(found)
            if band is None:
                continue
            interval = None if len(models) == 1 else [shown(band.low), shown(band.high)]
            bars.setdefault(scramble_type, {})[category] = (
                shown(band.median),
                interval,
                band.low == -math.inf,
            )
    return bars


Panel = tuple[str, dict[str, dict[str, Bar]], str]
"""A panel's title, its bars (per scramble type, per category) and whose they are: ``run``, ``model`` (one
of the paper's, hatched) or ``band`` (the paper's models' median and range, hatched)."""


def category_figure(
    task: Task, dataset: str, runs: Sequence[Run], inputs: FigureInputs, *, title: str = ""
) -> Any:
    """A panel per run with categories, then the paper's models' panel(s); one color per scramble type."""
    table = task.view.categories[dataset].gain_paper_table
    anchors = set(task.anchors)
    panels: list[Panel] = []
    reasons: list[str] = []
    for run in runs:
        bars, why = _run_bars(run, task, dataset, anchors)
        panels.append((run.label, bars, "run"))
        reasons += why
    held = models_in(table, inputs.paper)
    if inputs.band and held:
        panels.append(
            (f"the paper's {len(held)} models: median, range", _paper_bars(table, held, anchors), "band")
        )
    else:
        panels += [(model.label, _paper_bars(table, [model], anchors), "model") for model in held]

    categories = sorted({c for _, bars, _ in panels for per in bars.values() for c in per})
    types = ordered_types({t for _, bars, _ in panels for t in bars})
    colours = {t: f"C{i % 10}" for i, t in enumerate(types)}
    rows, columns, where = places(len(panels))
    keys = shared_keys(rows, columns, where)
    fig, axes = grid(rows, columns, panel=PANEL, share_x=keys, share_y=keys)
    below_zero = False
    for index, panel in enumerate(panels):
        below_zero |= _draw_category_panel(axes[where[index][0]][where[index][1]], panel, categories, colours)
    label_outer(axes, keys, keys)
    notes = _category_notes(banded=inputs.band and bool(held), reasons=reasons, below_zero=below_zero)
    finish(
        fig,
        visible(axes),
        _category_legend(colours, table if held else None),
        notes,
        title=title,
        cells=spare(axes),
    )
    return fig


def _draw_category_panel(ax: Any, panel: Panel, categories: Sequence[str], colours: dict[str, str]) -> bool:
    """A group of bars per category, a bar per scramble type (``colours``' order), with their intervals
    (none for one paper model); whether a "< 0" was drawn."""
    panel_title, bars, kind = panel
    width = 0.8 / max(1, len(colours))
    below_zero = False
    for number, (scramble_type, colour) in enumerate(colours.items()):
        per = bars.get(scramble_type, {})
        xs = [i + (number - (len(colours) - 1) / 2) * width for i in range(len(categories))]
        heights = [math.nan if per.get(c, (None,))[0] is None else per[c][0] for c in categories]
        ax.bar(
            xs,
            heights,
            width,
            yerr=None if kind == "model" else _bar_errors(per, categories),
            error_kw={"ecolor": MEDIAN_COLOUR if kind == "band" else "0.15", "capsize": 2, "linewidth": 1},
            color=colour,
            alpha=1.0 if kind == "run" else 0.55,
            hatch=None if kind == "run" else "//",
            edgecolor=colour,
        )
        below = [x for x, c in zip(xs, categories) if per.get(c, (None, None, False))[2]]
        if below:
            draw_below_zero(ax, below, colour)
            below_zero = True
    ax.set_xticks(range(len(categories)), categories, fontsize="small")
    ax.axhline(0, color="0.5", linewidth=0.8)
    ax.set_title(panel_title, fontsize="medium")
    ax.set_ylabel(RPG.axis_label)
    ax.set_xlabel("question category")
    ax.grid(alpha=0.3, axis="y")
    return below_zero


def _bar_errors(per: dict[str, Bar], categories: Sequence[str]) -> list[list[float]]:
    """matplotlib's (below, above) errors of one type's bars: NaN (no error bar) where a bar has no
    interval; a zero-width one is kept (drawn as its caps).

    >>> _bar_errors({"a": (10.0, [5.0, 12.0], False), "b": (3.0, None, False)}, ["a", "b", "c"])
    [[5.0, nan, nan], [2.0, nan, nan]]
    """
    errors = [[math.nan] * len(categories), [math.nan] * len(categories)]
    for i, c in enumerate(categories):
        value, interval, _ = per.get(c, (None, None, False))
        if value is not None and interval:
            errors[0][i], errors[1][i] = max(0.0, value - interval[0]), max(0.0, interval[1] - value)
    return errors


def _category_legend(colours: dict[str, str], paper_table: str | None) -> dict[str, Any]:
    """A color patch per scramble type, and the hatching of the paper's bars where they are drawn."""
    from matplotlib.patches import Patch  # deferred: matplotlib is heavy; only a drawn figure needs it

    entries: dict[str, Any] = {t: Patch(color=c) for t, c in colours.items()}
    if paper_table is not None:
        entries[f"hatched: the paper's ({table_name(paper_table)})"] = Patch(
            facecolor="0.85", edgecolor="0.3", hatch="//"
        )
    return entries


def _category_notes(*, banded: bool, reasons: Sequence[str], below_zero: bool) -> list[str]:
    """What the bars, the hatched bars of the paper's band, the gaps and the "< 0" triangles mean."""
    notes = [
        (
            f"{RPG.label} per question category; bar color: scramble type (key above). Your runs' error "
            "bars: the interval results.json stores."
        )
    ]
    if banded:
        notes.append(
            f"The paper's models ({PAPER_CITATION}), hatched: the bar is their median, the whiskers their range "
            "(lowest to highest)."
        )
    if reasons:
        notes.append(f"Gaps: {RPG.label} undefined ({reasons[0]}).")
    if below_zero:
        notes.append(BELOW_ZERO_NOTE)
    return notes


def figures(tasks: Sequence[Task], inputs: FigureInputs) -> list[ReportFigure]:
    """A figure per task and dataset with question categories, where runs have per-category scores."""
    built = []
    for task in tasks:
        for dataset in task.view.categories:
            runs = [
                run
                for run in inputs.runs
                if any(e.get("categories") for e in run.entries(task.name, dataset).values())
            ]
            if runs:
                title = f"{task.view.panel_titles[dataset]}: RPG by question category{inputs.beside_paper}"
                fig = category_figure(task, dataset, runs, inputs, title=title)
                caption = runs_caption(runs) + paper_caption(
                    inputs, [task.view.categories[dataset].gain_paper_table]
                )
                built.append(ReportFigure(f"{dataset}_categories", title, fig, caption))
    return built
