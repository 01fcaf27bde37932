"""The report's figures, like the paper's: a metric by scramble type per task and dataset (ScrRec's ED and
RR, Figures 2-3; ScrQA's Acc and RPG), DREAM's RPG by question category (Figure 4), the headline metric at
rs100 against parameter count (Figure 5), the letter-position types (Figure 6, where runs have them) and
AQuA's accuracy by exemplar rate (Table 1), each as PNG and SVG.

Every figure names its task, dataset and metric in its titles, labels its axes with units, keeps its
legends outside the data area and draws bootstrap intervals as error bars. Scramble types are categories:
they are points, and only the ordered rates of one family (rs10..rs100) are joined by a line. A panel
whose metric is undefined for every run says so in place of an empty plot. The paper's models, where
selected, are drawn apart from the runs (grey, hollow, dashed) under a legend of their own; a value the
paper prints only as "< 0" is a down-pointing marker at 0.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrambled_bench.builder.scrambler import FAMILIES, parse_type
from scrambled_bench.harness.report.paper import (
    PAPER_CITATION,
    PaperModel,
    exemplar_cells,
    models_in,
    paper_cell,
    paper_keys,
    table_name,
)
from scrambled_bench.harness.report.params import ParameterCount, format_parameters
from scrambled_bench.harness.report.tables import Run, ordered_types
from scrambled_bench.harness.tasks import TASKS, Metric, Task

Point = tuple[float | None, Sequence[float] | None]
"""A value and its interval (either may be missing)."""

SCALE_TYPE = "rs100"
"""The type of the parameter-count figure (the paper's Figure 5 plots RS-100%)."""
LETTER_FAMILIES = ("kf", "kfl", *(name for name, family in FAMILIES.items() if family.group == "letters"))
"""The paper's Figure 6: which letters of a word keep their place."""
FIGURE_RC = {"svg.fonttype": "none", "svg.hashsalt": "scrambled-bench"}
"""SVG text stays text (searchable in the HTML report, and each legend label can be checked in the file);
a fixed hash salt keeps the files byte-stable across runs."""
RUNS_LEGEND = "your runs"
LEGEND_WIDTH = 3.2
"""Inches each figure keeps right of its panels for the legends."""
PAPER_LEGEND = f"paper ({PAPER_CITATION})"
_REFERENCE_GREYS = ("0.15", "0.4", "0.6")
EXAMPLE_RUN = Run(
    Path("runs/example"),
    {
        "model": "example",
        "configs": {
            f"scrqa/dream/{t}": {
                "task": "scrqa",
                "dataset": "dream",
                "scramble_type": t,
                "accuracy": {"value": v},
            }
            for t, v in (("original", 90.0), ("rs100", 60.0), ("sub", 40.0))
        },
    },
    {},
    label="example",
)
"""A run of three ScrQA configs, for the examples in this module's docstrings."""
_REFERENCE_MARKERS = "s^DPX*<>hpd8H"


@dataclass
class Series:
    """One line (or set of points) in a panel: a run, or a reference such as one of the paper's models."""

    label: str
    points: dict[Any, Point] = field(default_factory=dict)
    undefined: list[str] = field(default_factory=list)
    """Why some points are missing (shown as a note when nothing at all is drawn)."""
    reference: bool = False
    below_zero: list[Any] = field(default_factory=list)
    """Where the paper prints only "< 0": drawn as a down-pointing marker at 0."""


@dataclass
class ReportFigure:
    """A figure of the report: the file stem it is saved under, its title, the matplotlib figure."""

    name: str
    title: str
    figure: Any


def _point(score: Mapping[str, Any] | None) -> Point:
    if not score:
        return None, None
    return score.get("value"), score.get("ci")


def _undefined_reasons(scores: Sequence[Mapping[str, Any] | None]) -> list[str]:
    return sorted({score["undefined"] for score in scores if score and score.get("undefined")})


def type_series(run: Run, task: Task, dataset: str, metric: Metric) -> Series:
    """A run's values of ``metric`` per scramble type for a task on a dataset."""
    entries = run.by_type(task.name, dataset)
    scores = {t: entries[t].get(metric.key) for t in ordered_types(set(entries))}
    return Series(
        run.label,
        {t: _point(score) for t, score in scores.items()},
        undefined=_undefined_reasons(list(scores.values())),
    )


def paper_type_series(model: PaperModel, task: Task, dataset: str, metric: Metric) -> Series | None:
    """One of the paper's models, per scramble type, as its table prints it; None where the table lacks it.

    >>> from scrambled_bench.harness.report.paper import select_paper_models
    >>> from scrambled_bench.harness.tasks.base import RR
    >>> llama = select_paper_models("llama-2-7b")[0]
    >>> series = paper_type_series(llama, TASKS["scrrec-zero-shot"], "realtimeqa", RR)
    >>> series.label, series.below_zero
    ('Llama-2-7b (paper)', ['rs20', 'rs50', 'rs100', 'kf', 'kfl'])
    """
    table = task.view.paper_tables.get(dataset)
    if not models_in(table, [model]):
        return None
    series = Series(model.label, reference=True)
    for scramble_type in paper_keys(table, model, metric.label):
        cell = paper_cell(table, model, metric.label, scramble_type)
        if cell is None:
            continue
        series.points[scramble_type] = (cell.value, None)
        if cell.below_zero:
            series.below_zero.append(scramble_type)
    return series


def _style(series: Series, number: int) -> dict[str, Any]:
    """Runs: colour, filled circles, solid; the paper's models: grey shades and hollow shapes, dashed."""
    if series.reference:
        return {
            "color": _REFERENCE_GREYS[number % len(_REFERENCE_GREYS)],
            "marker": _REFERENCE_MARKERS[number % len(_REFERENCE_MARKERS)],
            "markerfacecolor": "none",
            "linestyle": "--",
            "linewidth": 1.0,
            "alpha": 0.9,
            "zorder": 2,
        }
    return {"color": f"C{number % 10}", "marker": "o", "linestyle": "-", "linewidth": 2.0, "zorder": 3}


def _numbered(series: Sequence[Series]) -> list[tuple[Series, int]]:
    """Each series with its number among its own kind (runs and references are styled apart)."""
    counts = {True: 0, False: 0}
    numbered = []
    for one in series:
        numbered.append((one, counts[one.reference]))
        counts[one.reference] += 1
    return numbered


def _yerr(value: float, interval: Sequence[float] | None) -> list[list[float]] | None:
    if not interval:
        return None
    low, high = interval
    return [[max(0.0, value - low)], [max(0.0, high - value)]]


def draw_types_panel(
    ax: Any, series: Sequence[Series], types: Sequence[str], metric: Metric, title: str
) -> bool:
    """Points with error bars per scramble type, one colour per series; the rates of one family joined.

    Returns whether anything was drawn; otherwise the panel shows why (an undefined metric)."""
    positions = {t: i for i, t in enumerate(types)}
    drawn = False
    for one, number in _numbered(series):
        style = _style(one, number)
        line_style = style.pop("linestyle")
        line_width = style.pop("linewidth")
        shown = [(t, v, ci) for t, (v, ci) in one.points.items() if v is not None and t in positions]
        below = [t for t in one.below_zero if t in positions]
        if not shown and not below:
            continue
        drawn = True
        # ordered rates of the same family (rs10 .. rs100) are a line; every other type is a point
        by_family: dict[str, list[tuple[str, float]]] = {}
        for t, v, _ in shown:
            family = FAMILIES[parse_type(t).family]
            if family.takes_rate:
                by_family.setdefault(family.name, []).append((t, v))
        for family_points in by_family.values():
            if len(family_points) > 1:
                ax.plot(
                    [positions[t] for t, _ in family_points],
                    [v for _, v in family_points],
                    linestyle=line_style,
                    linewidth=line_width,
                    color=style["color"],
                    alpha=0.6,
                    zorder=style["zorder"],
                )
        labelled = False
        for t, v, ci in shown:
            ax.errorbar(
                positions[t],
                v,
                yerr=_yerr(v, ci),
                linestyle="none",
                capsize=3,
                label=None if labelled else one.label,
                **style,
            )
            labelled = True
        for t in below:
            ax.plot(
                positions[t],
                0.0,
                linestyle="none",
                label=None if labelled else one.label,
                **{**style, "marker": "v", "markerfacecolor": style["color"]},
            )
            labelled = True
    ax.set_title(title, fontsize="medium")
    ax.set_xticks(range(len(types)), types, rotation=30)
    ax.set_xlim(-0.5, len(types) - 0.5)
    ax.set_xlabel("scramble type")
    ax.set_ylabel(metric.axis_label)
    ax.grid(alpha=0.3)
    notes = [
        # a run with no point beside the paper's points: say why, or its absence reads as a missing run
        f"{one.label}: {metric.label} undefined ({one.undefined[0]})"
        for one in series
        if drawn
        and not one.reference
        and one.undefined
        and not any(v is not None for v, _ in one.points.values())
    ]
    if any(one.below_zero for one in series):
        notes.append('v at 0: the paper prints only "< 0"')
    _footnotes(ax, notes)
    if not drawn:
        note_undefined(ax, metric, [reason for one in series for reason in one.undefined])
    return drawn


def _footnotes(ax: Any, notes: Sequence[str], width: int = 70) -> None:
    """Notes under a panel's x axis (outside the data area), one block so that lines never overlap."""
    if not notes:
        return
    ax.annotate(
        "\n".join(_wrap(note, width) for note in notes),
        (0.0, -0.3),
        xycoords="axes fraction",
        va="top",
        fontsize="x-small",
        color="0.3",
        annotation_clip=False,
    )


def note_undefined(ax: Any, metric: Metric, reasons: Sequence[str]) -> None:
    """Write, in place of an empty panel, that the metric is undefined and why."""
    reason = reasons[0] if reasons else "no run has a value here"
    ax.text(
        0.5,
        0.5,
        f"{metric.label} undefined for every run:\n{_wrap(reason, 48)}",
        transform=ax.transAxes,
        ha="center",
        va="center",
        fontsize="small",
        color="0.3",
        bbox={"boxstyle": "round", "facecolor": "0.95", "edgecolor": "0.7"},
    )
    ax.set_yticks([])


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width))


def _legend(fig: Any, axes: Sequence[Any], references: set[str] = frozenset()) -> None:
    """The figure's legends outside every data area, right of the panels: the runs, then the paper's models
    (their own legend, so which is which cannot be mistaken)."""
    handles = _handles(axes)
    runs = {label: handle for label, handle in handles.items() if label not in references}
    papers = {label: handle for label, handle in handles.items() if label in references}
    _legends(fig, (runs, RUNS_LEGEND), (papers, PAPER_LEGEND))


def _handles(axes: Sequence[Any]) -> dict[str, Any]:
    """Every labelled handle in the panels (label -> handle), the first one per label, in drawing order."""
    handles: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    return handles


def _legends(fig: Any, first: tuple[Mapping[str, Any], str], second: tuple[Mapping[str, Any], str]) -> None:
    """Up to two legends (label -> handle, title) outside the panels, right: the first at the top, the second
    at the bottom; constrained layout keeps room for both."""
    for (handles, title), where in ((first, "outside right upper"), (second, "outside right lower")):
        if handles:
            fig.legend(
                list(handles.values()),
                list(handles),
                loc=where,
                fontsize="small" if len(handles) <= 10 else "x-small",
                title=title,
                ncols=2 if len(handles) > 12 else 1,
            )


def _title(fig: Any, text: str) -> None:
    """The figure's title over its panels, wrapped so that it never runs into the legends on the right."""
    chars = max(30, int((fig.get_figwidth() - LEGEND_WIDTH) * 9))
    fig.suptitle(_wrap(text, chars), x=0.01, ha="left")


def _grid(count: int, width: float, height: float, columns: int = 3) -> tuple[Any, list[Any]]:
    """A figure with ``count`` panels in rows of at most ``columns``; the unused panels are hidden."""
    import matplotlib.pyplot as plt

    columns = max(1, min(columns, count))
    rows = math.ceil(count / columns)
    fig, axes = plt.subplots(
        rows,
        columns,
        figsize=(width * columns + LEGEND_WIDTH, height * rows + 0.4),
        squeeze=False,
        layout="constrained",
    )
    flat = [ax for row in axes for ax in row]
    for ax in flat[count:]:
        ax.set_visible(False)
    return fig, flat[:count]


def types_figure(
    panels: Sequence[tuple[Task, str]],
    series_of: Callable[[Task, str, Metric], list[Series]],
    *,
    types_of: Callable[[Sequence[Series]], list[str]] | None = None,
    title: str = "",
) -> Any:
    """A panel per (task, dataset) and metric: a column per (task, dataset) and a row per metric where the
    tasks share their metrics (ScrRec's ED over RR), else two columns of panels."""
    import matplotlib.pyplot as plt

    cells = [(task, dataset, metric) for task, dataset in panels for metric in task.metrics]
    if len({task.metrics for task, _ in panels}) == 1:
        metrics = len(panels[0][0].metrics)
        fig, grid = plt.subplots(
            metrics,
            len(panels),
            figsize=(4.8 * len(panels) + LEGEND_WIDTH, 3.6 * metrics + 0.4),
            squeeze=False,
            layout="constrained",
        )
        axes = [grid[row][column] for column in range(len(panels)) for row in range(metrics)]
    else:
        fig, axes = _grid(len(cells), 4.8, 3.8, columns=2)
    references: set[str] = set()
    for ax, (task, dataset, metric) in zip(axes, cells):
        series = series_of(task, dataset, metric)
        references.update(one.label for one in series if one.reference)
        types = (types_of or _all_types)(series)
        draw_types_panel(ax, series, types, metric, f"{task.view.panel_titles[dataset]}: {metric.label}")
    if title:
        _title(fig, title)
    _legend(fig, axes, references)
    return fig


def _all_types(series: Sequence[Series]) -> list[str]:
    return ordered_types({t for one in series for t in [*one.points, *one.below_zero]})


def _letter_types(series: Sequence[Series]) -> list[str]:
    return [t for t in _all_types(series) if parse_type(t).family in LETTER_FAMILIES]


def _has_letter_types(run: Run, task: Task, dataset: str) -> bool:
    return any(FAMILIES[parse_type(t).family].group == "letters" for t in run.by_type(task.name, dataset))


def build_figures(
    runs: Sequence[Run],
    *,
    paper: Sequence[PaperModel] = (),
    sizes: Mapping[str, ParameterCount] | None = None,
) -> list[ReportFigure]:
    """Every figure the runs have data for, with the ``paper``'s models where selected; ``sizes`` (run label
    -> parameter count) places the runs in the parameter-count figure.

    >>> from scrambled_bench.harness.report.paper import paper_models
    >>> [f.name for f in build_figures([EXAMPLE_RUN])], [f.name for f in build_figures([EXAMPLE_RUN], paper=paper_models()[:1])]
    (['scrqa'], ['scrqa', 'scale'])
    """
    import matplotlib

    matplotlib.use("Agg")
    sizes = dict(sizes or {})
    built: list[ReportFigure] = []

    def series_of(task: Task, dataset: str, metric: Metric) -> list[Series]:
        series = [type_series(run, task, dataset, metric) for run in runs if run.by_type(task.name, dataset)]
        for model in paper:
            reference = paper_type_series(model, task, dataset, metric)
            if reference is not None:
                series.append(reference)
        return series

    with matplotlib.rc_context(FIGURE_RC):
        figures: dict[str, list[tuple[Task, str]]] = {}
        letters: list[tuple[Task, str]] = []
        for task in TASKS.values():
            for dataset in task.datasets:
                if task.view.layout == "types" and any(run.by_type(task.name, dataset) for run in runs):
                    figures.setdefault(task.view.figure, []).append((task, dataset))
                    if any(_has_letter_types(run, task, dataset) for run in runs):
                        letters.append((task, dataset))
        with_paper = " beside the paper's models" if paper else ""
        for name, panels in figures.items():
            metrics = " and ".join(dict.fromkeys(m.label for task, _ in panels for m in task.metrics))
            title = f"{metrics} by scramble type{with_paper}"
            built.append(ReportFigure(name, title, types_figure(panels, series_of, title=title)))

        for task in TASKS.values():
            for dataset in task.view.categories:
                with_categories = [
                    run
                    for run in runs
                    if any(e.get("categories") for e in run.entries(task.name, dataset).values())
                ]
                if with_categories:
                    title = f"{task.view.panel_titles[dataset]}: RPG by question category{with_paper}"
                    fig = category_figure(task, dataset, with_categories, paper)
                    built.append(ReportFigure(f"{dataset}_categories", title, fig))
            if task.view.layout == "exemplars":
                for dataset in task.datasets:
                    with_rates = [run for run in runs if run.entries(task.name, dataset)]
                    if with_rates:
                        fig = exemplars_figure(task, dataset, with_rates, paper)
                        title = f"{task.view.panel_titles[dataset]}: {task.metrics[0].label} by exemplar rate"
                        built.append(ReportFigure(task.view.figure, title + with_paper, fig))

        scale_panels = [panel for panels in figures.values() for panel in panels]
        if scale_panels and (paper or sizes):
            title = f"The headline metric at {SCALE_TYPE} by parameter count{with_paper}"
            fig = scale_figure(scale_panels, runs, paper, sizes, title=title)
            built.append(ReportFigure("scale", title, fig))
        if letters:
            title = f"Which letters keep their place (letter-position types){with_paper}"
            fig = types_figure(letters, series_of, types_of=_letter_types, title=title)
            built.append(ReportFigure("letters", title, fig))
    return built


def plot_figures(
    runs: Sequence[Run],
    out_dir: Path,
    *,
    paper: Sequence[PaperModel] = (),
    sizes: Mapping[str, ParameterCount] | None = None,
) -> list[Path]:
    """Every figure the runs have data for, each as PNG and SVG; returns the files written.

    >>> import tempfile
    >>> [path.name for path in plot_figures([EXAMPLE_RUN], Path(tempfile.mkdtemp()))]
    ['scrqa.png', 'scrqa.svg']
    """
    import matplotlib
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with matplotlib.rc_context(FIGURE_RC):
        for one in build_figures(runs, paper=paper, sizes=sizes):
            written += save_png_and_svg(one.figure, out_dir, one.name)
            plt.close(one.figure)
    return written


def save_png_and_svg(figure: Any, out_dir: Path, name: str) -> list[Path]:
    """``name.png`` (150 dpi) and ``name.svg`` (no date, so byte-stable) of a matplotlib figure in
    ``out_dir``, cut to what is drawn (legends outside the axes included); the files, in that order."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix in ("png", "svg"):
        path = out_dir / f"{name}.{suffix}"
        figure.savefig(path, **_save_options(suffix))
        written.append(path)
    return written


def svg_figures(
    runs: Sequence[Run],
    *,
    paper: Sequence[PaperModel] = (),
    sizes: Mapping[str, ParameterCount] | None = None,
) -> list[tuple[ReportFigure, str]]:
    """Every figure as SVG text, for embedding in one HTML file (no XML prolog).

    >>> [(figure.name, svg[:4]) for figure, svg in svg_figures([EXAMPLE_RUN])]
    [('scrqa', '<svg')]
    """
    import matplotlib
    import matplotlib.pyplot as plt

    rendered = []
    with matplotlib.rc_context(FIGURE_RC):
        for one in build_figures(runs, paper=paper, sizes=sizes):
            buffer = io.StringIO()
            # ids in SVG derive from the salt: one salt per figure keeps them unique within one HTML page
            with matplotlib.rc_context({"svg.hashsalt": f"scrambled-bench-{one.name}"}):
                one.figure.savefig(buffer, **_save_options("svg"))
            plt.close(one.figure)
            text = buffer.getvalue()
            rendered.append((one, text[text.index("<svg") :]))
    return rendered


def _save_options(suffix: str) -> dict[str, Any]:
    options: dict[str, Any] = {"format": suffix, "bbox_inches": "tight"}
    if suffix == "png":
        options["dpi"] = 150
    else:
        options["metadata"] = {"Date": None}  # byte-stable files
    return options


def category_figure(task: Task, dataset: str, runs: Sequence[Run], paper: Sequence[PaperModel] = ()) -> Any:
    """RPG by question category (the paper's Figure 4): grouped bars per scramble type, a panel per run and
    one per paper model its gain table has (hatched); an undefined RPG is a gap (never a bar of height 0,
    which would read as "no gain"), noted below."""
    from matplotlib.patches import Patch

    from scrambled_bench.harness.tasks.base import RPG

    paper_table = task.view.categories[dataset].gain_paper_table
    references = models_in(paper_table, paper)
    anchors = set(task.anchors)
    fig, axes = _grid(len(runs) + len(references), 6.0, 4.4)
    type_colours: dict[str, str] = {}

    def colour(scramble_type: str) -> str:
        return type_colours.setdefault(scramble_type, f"C{len(type_colours) % 10}")

    panels: list[tuple[str, list[str], dict[str, list[Mapping[str, Any] | None]], bool]] = []
    for run in runs:
        entries = run.by_type(task.name, dataset)
        types = [t for t in ordered_types(set(entries)) if t not in anchors]
        categories = sorted({c for e in entries.values() for c in (e.get("categories") or {})})
        scores = {
            t: [((entries[t].get("categories") or {}).get(c) or {}).get(RPG.key) for c in categories]
            for t in types
        }
        panels.append((run.label, categories, scores, False))
    for model in references:
        categories = [c for c in paper_keys(paper_table, model) if c != "all"]
        types = [
            t
            for t in ordered_types({t for c in categories for t in paper_keys(paper_table, model, c)})
            if t not in anchors
        ]
        scores = {}
        for t in types:
            cells = [paper_cell(paper_table, model, c, t) for c in categories]
            scores[t] = [
                None if cell is None else {"value": cell.value, "below_zero": cell.below_zero}
                for cell in cells
            ]
        panels.append((model.label, categories, scores, True))

    # one colour per type across every panel, in the types' order
    for scramble_type in ordered_types({t for _, _, scores, _ in panels for t in scores}):
        colour(scramble_type)
    for ax, (label, categories, scores, reference) in zip(axes, panels):
        width = 0.8 / max(1, len(scores))
        reasons: list[str] = []
        for index, (scramble_type, per_category) in enumerate(scores.items()):
            reasons += _undefined_reasons(per_category)
            heights = [
                float("nan") if score is None or score.get("value") is None else score["value"]
                for score in per_category
            ]
            errors = [
                None if math.isnan(h) else _yerr(h, (s or {}).get("ci"))
                for h, s in zip(heights, per_category)
            ]
            positions = [i + index * width for i in range(len(categories))]
            ax.bar(
                positions,
                heights,
                width,
                yerr=None
                if reference
                else [[e[0][0] if e else 0.0 for e in errors], [e[1][0] if e else 0.0 for e in errors]],
                capsize=2,
                label=scramble_type,
                color=colour(scramble_type),
                alpha=0.45 if reference else 1.0,
                hatch="//" if reference else None,
                edgecolor=colour(scramble_type),
            )
            below = [p for p, s in zip(positions, per_category) if s and s.get("below_zero")]
            if below:
                ax.plot(below, [0.0] * len(below), "v", color=colour(scramble_type), markerfacecolor="none")
        ax.set_xticks(
            [i + width * (len(scores) - 1) / 2 for i in range(len(categories))], categories, rotation=20
        )
        ax.set_xlabel("question category")
        ax.set_ylabel(RPG.axis_label)
        ax.axhline(0, color="0.5", linewidth=0.8)
        ax.set_title(
            f"{task.view.panel_titles[dataset]} by category, {RPG.label}: {label}", fontsize="medium"
        )
        notes = [f"gaps: {RPG.label} undefined ({reasons[0]})"] if reasons else []
        if any(s and s.get("below_zero") for per in scores.values() for s in per):
            notes.append('v at 0: the paper prints only "< 0"')
        _footnotes(ax, notes)
    paper_key = {}
    if references:
        paper_key = {table_name(paper_table): Patch(facecolor="0.85", edgecolor="0.3", hatch="//")}
    _legends(
        fig,
        ({t: Patch(color=c) for t, c in type_colours.items()}, "scramble type"),
        (paper_key, f"hatched: {PAPER_LEGEND}"),
    )
    return fig


def exemplars_figure(task: Task, dataset: str, runs: Sequence[Run], paper: Sequence[PaperModel] = ()) -> Any:
    """AQuA's accuracy by the exemplars' scramble rate (an ordered axis: lines), a line per question type,
    a panel per run and one per paper model the dataset's table has (dashed, hollow)."""
    from matplotlib.lines import Line2D

    paper_table = task.view.paper_tables.get(dataset)
    references = models_in(paper_table, paper)
    metric = task.metrics[0]
    fig, axes = _grid(len(runs) + len(references), 5.2, 3.9)
    type_colours: dict[str, str] = {}
    panels: list[tuple[str, dict[str, list[tuple[int, float | None, Any, bool]]], bool]] = []
    for run in runs:
        entries = list(run.entries(task.name, dataset).values())
        lines = {}
        for scramble_type in ordered_types({e["scramble_type"] for e in entries}):
            points = sorted(
                (e["exemplar_rate"], _point(e.get(metric.key)))
                for e in entries
                if e["scramble_type"] == scramble_type
            )
            lines[scramble_type] = [(rate, value, ci, False) for rate, (value, ci) in points]
        panels.append((run.label, lines, False))
    for model in references:
        cells = exemplar_cells(paper_table, model)
        lines = {
            t: [
                (rate, cell.value, None, cell.below_zero)
                for (q, rate), cell in sorted(cells.items())
                if q == t
            ]
            for t in ordered_types({q for q, _ in cells})
        }
        panels.append((model.label, lines, True))

    for scramble_type in ordered_types({t for _, lines, _ in panels for t in lines}):
        type_colours[scramble_type] = f"C{len(type_colours) % 10}"
    for ax, (label, lines, reference) in zip(axes, panels):
        drawn = False
        for scramble_type, points in lines.items():
            colour = type_colours.setdefault(scramble_type, f"C{len(type_colours) % 10}")
            shown = [(rate, value, ci) for rate, value, ci, _ in points if value is not None]
            if not shown:
                continue
            drawn = True
            ax.errorbar(
                [p[0] for p in shown],
                [p[1] for p in shown],
                yerr=[
                    [max(0.0, v - ci[0]) if ci else 0.0 for _, v, ci in shown],
                    [max(0.0, ci[1] - v) if ci else 0.0 for _, v, ci in shown],
                ],
                marker="s" if reference else "o",
                markerfacecolor="none" if reference else colour,
                linestyle="--" if reference else "-",
                capsize=3,
                color=colour,
                label=f"question {scramble_type}",
            )
        ax.set_xlabel("exemplar questions scrambled (%)")
        ax.set_ylabel(metric.axis_label)
        ax.set_title(f"{task.view.panel_titles[dataset]}, {metric.label}: {label}", fontsize="medium")
        ax.grid(alpha=0.3)
        if not drawn:
            note_undefined(ax, metric, [])
    handles = _handles(axes)
    panel_key = {}
    if references:
        panel_key = {
            "your runs": Line2D([], [], color="0.3", marker="o", linestyle="-"),
            f"the paper's, {table_name(paper_table)}": Line2D(
                [], [], color="0.3", marker="s", markerfacecolor="none", linestyle="--"
            ),
        }
    _legends(fig, (handles, "question scramble type"), (panel_key, "panels"))
    return fig


def scale_figure(
    panels: Sequence[tuple[Task, str]],
    runs: Sequence[Run],
    paper: Sequence[PaperModel],
    sizes: Mapping[str, ParameterCount],
    *,
    title: str = "",
) -> Any:
    """Each task's headline metric at rs100 against parameter count, log scale (the paper's Figure 5): the
    paper's models of disclosed size as hollow grey points named beside them, the sizes of one model line
    joined; each run where its size is known (``--params`` or its model files). What cannot be placed is
    listed under the panel.

    >>> from scrambled_bench.harness.report.paper import paper_models
    >>> fig = scale_figure([(TASKS["scrqa"], "dream")], [EXAMPLE_RUN], paper_models(), {})
    >>> fig.axes[0].get_title(), fig.axes[0].get_xscale()
    ('ScrQA, DREAM: RPG at rs100', 'log')
    """
    from matplotlib.lines import Line2D

    fig, axes = _grid(len(panels), 5.4, 4.4, columns=2)
    for ax, (task, dataset) in zip(axes, panels):
        metric = task.view.headline or task.metrics[-1]
        table = task.view.paper_tables.get(dataset)
        notes: list[str] = []
        drawn = False
        families: dict[str, list[tuple[int, float]]] = {}
        undisclosed: list[str] = []
        below: list[str] = []
        for model in models_in(table, paper):
            cell = paper_cell(table, model, metric.label, SCALE_TYPE)
            if cell is None:
                continue
            if model.parameters is None:
                undisclosed.append(model.name)
                continue
            value = 0.0 if cell.below_zero else cell.value
            ax.plot(
                model.parameters,
                value,
                marker="v" if cell.below_zero else "s",
                markerfacecolor="none",
                color="0.35",
                linestyle="none",
                label=PAPER_LEGEND,
                zorder=2,
            )
            if cell.below_zero:
                below.append(model.name)
            else:
                ax.annotate(
                    model.name,
                    (model.parameters, value),
                    textcoords="offset points",
                    xytext=(4, 3),
                    fontsize=6,
                    color="0.35",
                )
            if not cell.below_zero:  # a line through "< 0" drawn at 0 would state a value the paper does not
                families.setdefault(model.family, []).append((model.parameters, value))
            drawn = True
        for points in families.values():
            if len(points) > 1:
                points.sort()
                ax.plot(*zip(*points), linestyle="--", color="0.6", linewidth=0.8, zorder=1)
        for number, run in enumerate(runs):
            entry = run.by_type(task.name, dataset).get(SCALE_TYPE)
            size = sizes.get(run.label)
            if not run.by_type(task.name, dataset):
                continue
            if entry is None:
                notes.append(f"{run.label}: no {SCALE_TYPE} config")
                continue
            value, ci = _point(entry.get(metric.key))
            if value is None:
                reason = (entry.get(metric.key) or {}).get("undefined", "no value")
                notes.append(f"{run.label}: {metric.label} undefined ({reason})")
                continue
            if size is None:
                notes.append(f"{run.label}: size unknown, pass --params")
                continue
            ax.errorbar(
                size.count,
                value,
                yerr=_yerr(value, ci),
                marker="o",
                color=f"C{number % 10}",
                linestyle="none",
                capsize=3,
                label=f"{run.label} ({format_parameters(size.count)})",
                zorder=3,
            )
            drawn = True
        if undisclosed:
            notes.append(f"size undisclosed, not drawn: {', '.join(undisclosed)}")
        if below:
            notes.append(f'v at 0, the paper prints only "< 0": {", ".join(below)}')
        ax.set_xscale("log")
        ax.set_xlabel("parameters (count, log scale)")
        ax.set_ylabel(metric.axis_label)
        ax.set_title(f"{task.view.panel_titles[dataset]}: {metric.label} at {SCALE_TYPE}", fontsize="medium")
        ax.grid(alpha=0.3, which="both")
        _footnotes(ax, notes, width=80)
        if not drawn:
            note_undefined(ax, metric, [])
    handles = _handles(axes)
    paper_key = {}
    if PAPER_LEGEND in handles:
        paper_key = {
            "named beside each point": Line2D(
                [], [], color="0.35", marker="s", markerfacecolor="none", ls="none"
            )
        }
    _legends(
        fig,
        ({name: handle for name, handle in handles.items() if name != PAPER_LEGEND}, RUNS_LEGEND),
        (paper_key, PAPER_LEGEND),
    )
    if title:
        _title(fig, title)
    return fig
