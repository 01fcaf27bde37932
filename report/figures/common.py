"""What every figure of the report shares: how a run and each of the paper's models look, the paper's
models as a band, the grid of panels with shared axes, the legend and the notes under the panels, and
saving as PNG and SVG.

- **Your runs**: filled circles, solid lines, one color each (``C0``, ``C1``, ...); runs at the same x are
  dodged, so that no error bar hides another. Error bars are the interval results.json stores, drawn even
  where it has no width.
- **The paper's models**, named (``--paper m1,m2``): hollow markers, dashed lines; color by model family,
  marker by size, so that no two share both (:func:`paper_look`).
- **The paper's models**, all nineteen (a bare ``--paper``): a grey band from the lowest to the highest of
  them, with their median as a dark line (:func:`band_point`).
- A value the paper prints only as "< 0" is drawn at 0, with a small down-pointing triangle under it.
- A run's value far beyond the paper's range (more than half that range past it: an RR of -1,400%) does not
  stretch the axis: the axis keeps the paper's range and the other values, and the value sits at the
  panel's edge as an arrow with the number written beside it (:func:`clip_outliers`).
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# the figures' layout lives in the core (the probe's figures share it); re-exported for the figure modules
from scrambled_bench.plots import (
    FIGURE_RC,
    NOTE_SIZE,
    finish,
    grid,
    handles,
    label_outer,
    places,
    save_options,
    save_png_and_svg,
    shared_keys,
    spare,
    visible,
    wrap,
)
from scrambled_bench.report.paper import (
    PAPER_CITATION,
    PaperCell,
    PaperModel,
    paper_cell,
    paper_keys,
    paper_models,
)
from scrambled_bench.report.params import ParameterCount, format_parameters
from scrambled_bench.report.runs import Run

Point = tuple[float | None, Sequence[float] | None]
"""A value and its interval (either may be missing)."""

RUN_MARKER = "o"
"""Every run's marker: runs differ by color, and no paper model is drawn with it."""
FAMILY_COLOURS = (
    "#332288",
    "#CC6677",
    "#117733",
    "#88CCEE",
    "#882255",
    "#44AA99",
    "#999933",
    "#AA4499",
    "#DDCC77",
    "#661100",
    "#6699CC",
    "#888888",
)
"""The paper's model families, in the order ``metrics/paper_models.json`` first names them (Paul Tol's
muted scheme and its extension: apart from the runs' ``C0``-``C9``)."""
SIZE_MARKERS = {7e9: "^", 11e9: "<", 13e9: ">", 20e9: "D", 30e9: "p", 40e9: "h", 70e9: "s", 180e9: "*"}
"""The marker of each size the paper's models have; a size not listed takes a spare one."""
SPARE_MARKERS = ("X", "P", "d", "H", "8", "v")
"""Markers for undisclosed sizes and for two models of one family and size (the first free one)."""
MARKER_NAMES = {
    "^": "triangle",
    "<": "left-pointing triangle",
    ">": "right-pointing triangle",
    "D": "diamond",
    "p": "pentagon",
    "h": "hexagon",
    "s": "square",
    "*": "star",
    "X": "cross",
    "P": "plus",
    "d": "thin diamond",
    "H": "flat hexagon",
    "8": "octagon",
    "v": "down-pointing triangle",
}
BELOW_ZERO_NOTE = 'A small triangle under a point at 0: the paper prints only "< 0".'
BAND_COLOUR = "0.82"
MEDIAN_COLOUR = "0.3"
BAND_LABEL = f"paper ({PAPER_CITATION}): range"
MEDIAN_LABEL = "paper: median"
BAND_NOTE = "Grey band: the range of the paper's models (lowest to highest); dark line: their median."
RUNS_NOTE = (
    "Filled circles: your runs, one color each; error bars: the interval results.json stores; runs that "
    "share an x are drawn side by side."
)
OUTLIER_REACH = 0.5
"""How far past the paper's range (in spans of that range) a run's value may stretch an axis; a value
further out is clipped (:func:`clip_outliers`)."""
CLIPPED_NOTE = (
    "An arrow at a panel's edge: a run's value far beyond the paper's range, off the axis so as not to squash "
    "the rest; the value is written beside it."
)
EXAMPLE_RUN = Run(
    Path("runs/example"),
    {
        "model": "example",
        "configs": {
            f"scrqa/dream/{t}": {
                "task": "scrqa",
                "dataset": "dream",
                "scramble_type": t,
                "accuracy": {"value": v, "ci": [v - 20.0, v + 10.0]},
                # RPG = (Acc - Acc_sub) / (Acc_original - Acc_sub), where it is defined
                **(
                    {"relative_performance_gain": {"value": 40.0, "ci": [10.0, 70.0]}} if t == "rs100" else {}
                ),
            }
            for t, v in (("original", 90.0), ("rs100", 60.0), ("sub", 40.0))
        },
    },
    {},
    label="example",
)
"""A run of three ScrQA configs, for the examples in the docstrings of the figures."""


@dataclass
class ReportFigure:
    """A figure of the report: the file stem it is saved under, its title (drawn over its panels), the
    matplotlib figure, and a caption for the HTML page that says what the title does not. A figure with
    nothing of the user's to show is not drawn: ``figure`` is None and ``not_drawn`` says why."""

    name: str
    title: str
    figure: Any
    caption: str = ""
    not_drawn: str = ""


@dataclass
class Series:
    """One line (or set of points) in a panel: a run, or one of the paper's models (``model``)."""

    label: str
    points: dict[Any, Point] = field(default_factory=dict)
    undefined: list[str] = field(default_factory=list)
    """Why some points are missing (shown as a note when nothing at all is drawn)."""
    model: PaperModel | None = None
    below_zero: list[Any] = field(default_factory=list)
    """Where the paper prints only "< 0": drawn at 0, a small triangle under it."""

    @property
    def reference(self) -> bool:
        return self.model is not None


@dataclass(frozen=True)
class FigureInputs:
    """What every figure is drawn from: the runs, the paper's models selected, the runs' sizes."""

    runs: Sequence[Run]
    paper: Sequence[PaperModel] = ()
    sizes: Mapping[str, ParameterCount] = field(default_factory=dict)

    @property
    def band(self) -> bool:
        """All of the paper's models (a bare ``--paper``): drawn as a band with a median, not one by one.

        >>> FigureInputs([], paper_models()).band, FigureInputs([], paper_models()[:2]).band
        (True, False)
        """
        return bool(self.paper) and set(self.paper) == set(paper_models())

    @property
    def named(self) -> Sequence[PaperModel]:
        """The paper's models drawn one by one (none where they are a band)."""
        return () if self.band else self.paper

    @property
    def beside_paper(self) -> str:
        return " beside the paper's models" if self.paper else ""


def run_look(number: int) -> dict[str, Any]:
    """The ``number``-th run's color and marker (filled), solid line."""
    return {"color": f"C{number % 10}", "marker": RUN_MARKER, "linestyle": "-", "linewidth": 1.8, "zorder": 4}


@functools.cache
def _paper_looks() -> dict[str, tuple[str, str]]:
    colours: dict[str, str] = {}
    looks: dict[str, tuple[str, str]] = {}
    for model in paper_models():
        colour = colours.setdefault(model.family, FAMILY_COLOURS[len(colours) % len(FAMILY_COLOURS)])
        taken = {marker for c, marker in looks.values() if c == colour}
        wanted = SIZE_MARKERS.get(model.parameters) if model.parameters is not None else None
        candidates = ([wanted] if wanted else []) + list(SPARE_MARKERS)
        looks[model.name] = (colour, next(m for m in candidates if m not in taken))
    return looks


def paper_look(model: PaperModel) -> dict[str, Any]:
    """One of the paper's models: its family's color, its size's marker (hollow), a dashed line.

    No two of the nineteen share both color and marker; a model keeps its look in every figure.

    >>> from scrambled_bench.report.paper import select_paper_models
    >>> [(paper_look(m)["color"], paper_look(m)["marker"]) for m in select_paper_models("gpt-4,mpt-30b")]
    [('#332288', 'X'), ('#44AA99', 'p')]
    """
    colour, marker = _paper_looks()[model.name]
    return {
        "color": colour,
        "marker": marker,
        "markerfacecolor": "none",
        "markeredgewidth": 1.3,
        "linestyle": "--",
        "linewidth": 1.0,
        "zorder": 3,
    }


def paper_marker_note(models: Iterable[PaperModel]) -> str:
    """What the paper's models' markers mean, in words, for the ``models`` drawn.

    >>> from scrambled_bench.report.paper import select_paper_models
    >>> paper_marker_note(select_paper_models("gpt-4,gpt-3.5-turbo,llama-2-7b,llama-2-7b-chat"))
    "Hollow markers, dashed lines: the paper's models; color: model family; shape: size (triangle: 7B; cross, plus: undisclosed)."
    """
    shapes: dict[str, list[str]] = {}
    for model in sorted(models, key=lambda m: m.parameters or math.inf):
        size = "undisclosed" if model.parameters is None else format_parameters(model.parameters)
        shape = MARKER_NAMES[_paper_looks()[model.name][1]]
        if shape not in shapes.setdefault(size, []):
            shapes[size].append(shape)
    sizes = "; ".join(f"{', '.join(names)}: {size}" for size, names in shapes.items())
    return f"Hollow markers, dashed lines: the paper's models; color: model family; shape: size ({sizes})."


def paper_notes(named: Sequence[PaperModel], *, band: bool, below_zero: bool) -> list[str]:
    """The notes on how a figure draws the paper's models: the ``named`` ones' markers, the ``band``, and
    the triangle of a "< 0".

    >>> paper_notes([], band=True, below_zero=False) == [BAND_NOTE]
    True
    """
    notes = [paper_marker_note(named)] if named else []
    if band:
        notes.append(BAND_NOTE)
    if below_zero:
        notes.append(BELOW_ZERO_NOTE)
    return notes


def series_look(series: Series, number: int) -> dict[str, Any]:
    """A series' look: the paper's model's, or the ``number``-th run's."""
    return paper_look(series.model) if series.model is not None else run_look(number)


def numbered(series: Sequence[Series]) -> list[tuple[Series, int]]:
    """Each series with its number among the runs (runs are colored in order; the paper's models by
    family)."""
    runs = 0
    out = []
    for one in series:
        out.append((one, runs))
        runs += not one.reference
    return out


def dodge(count: int, spread: float = 0.5) -> list[float]:
    """Offsets that spread ``count`` series around their x: at most ``spread`` apart in all, and at most
    0.4 of it between neighbours.

    >>> dodge(1), dodge(2), dodge(4, 0.4)
    ([0.0], [-0.1, 0.1], [-0.15, -0.05, 0.05, 0.15])
    """
    if count <= 1:
        return [0.0] * count
    step = min(spread / count, 0.4 * spread)
    return [round((index - (count - 1) / 2) * step, 4) for index in range(count)]


def point(score: Mapping[str, Any] | None) -> Point:
    """A stored score's value and interval."""
    if not score:
        return None, None
    return score.get("value"), score.get("ci")


def undefined_reasons(scores: Iterable[Mapping[str, Any] | None]) -> list[str]:
    """Why the ``scores`` that have no value are undefined, each reason once."""
    return sorted({score["undefined"] for score in scores if score and score.get("undefined")})


def yerr(value: float, interval: Sequence[float] | None) -> list[list[float]] | None:
    """An interval as matplotlib's error (below, above); a zero-width one stays (drawn as its caps)."""
    if not interval:
        return None
    low, high = interval
    return [[max(0.0, value - low)], [max(0.0, high - value)]]


def draw_below_zero(ax: Any, xs: Sequence[float], colour: str) -> None:
    """The small triangle under a point drawn at 0 where the paper prints only "< 0"."""
    from matplotlib.path import Path as MarkerPath  # deferred: matplotlib is heavy

    # a marker path is scaled to its largest coordinate: the triangle sits 0.28-0.5 markersizes below
    triangle = MarkerPath([(-0.75, -1.1), (0.75, -1.1), (0.0, -2.0), (-0.75, -1.1)], closed=True)
    ax.plot(
        xs,
        [0.0] * len(xs),
        linestyle="none",
        marker=triangle,
        markersize=16,
        color=colour,
        clip_on=False,
        zorder=5,
    )


@dataclass(frozen=True)
class Mark:
    """A value drawn in a panel, for :func:`clip_outliers`: its x (data), value, interval, color, and
    whether it is the paper's (``reference``: kept in view, never clipped) or a run's."""

    x: float
    value: float
    ci: Sequence[float] | None
    colour: str
    reference: bool = False


def paper_range(table: str | None, label: str | None = None) -> tuple[float, float] | None:
    """The lowest and highest value the paper's ``table`` prints for all its models, in the rows ``label``
    (a metric: "RR"; None: every row but "all", e.g. the question categories); "< 0" counts as 0. None
    where the table has no value.

    >>> paper_range("table4_scrrec_realtimeqa_zeroshot", "RR")
    (0.0, 96.66)
    """
    values = []
    for model in paper_models():
        labels = [label] if label else [k for k in paper_keys(table, model) if k != "all"]
        for row in labels:
            for key in paper_keys(table, model, row):
                cell = paper_cell(table, model, row, key)
                if cell is not None:
                    values.append(0.0 if cell.below_zero else cell.value)
    return (min(values), max(values)) if values else None


def clip_outliers(
    marks: Mapping[Any, Sequence[Mark]], ranges: Mapping[Any, tuple[float, float] | None]
) -> bool:
    """Keep each y axis to what it shows where a run's value lies far beyond the paper's range.

    ``marks``: per axes, the values drawn there (the paper's and the runs'); ``ranges``: per axes, the
    paper's range of its metric (:func:`paper_range`; None: none, nothing is clipped). A run's value more
    than :data:`OUTLIER_REACH` of that range's span past it is an outlier: the axes (with those sharing
    their y axis) are set to the other values (the paper's drawn there, the runs' with their intervals), and
    each outlier is drawn at the panel's edge as an arrow in its run's color, the value written beside it.
    Where nothing else is drawn (every value an outlier, no paper), the axis shows the values as they are.
    Returns whether any value was clipped.
    """
    clipped = False
    done: set[int] = set()
    for ax in marks:
        if id(ax) in done:
            continue
        group = [other for other in ax.get_shared_y_axes().get_siblings(ax) if other in marks] or [ax]
        done.update(id(other) for other in group)
        known = [ranges.get(other) for other in group if ranges.get(other) is not None]
        if not known:
            continue
        low, high = min(r[0] for r in known), max(r[1] for r in known)
        reach = OUTLIER_REACH * max(high - low, 1.0)
        floor, ceiling = low - reach, high + reach
        drawn = [(other, m) for other in group for m in marks[other]]
        outliers = [(other, m) for other, m in drawn if not m.reference and not floor <= m.value <= ceiling]
        kept = [m for _, m in drawn if m.reference or floor <= m.value <= ceiling]
        if not outliers or not kept:
            continue
        shown_values = []
        for m in kept:
            shown_values += [m.value, *(min(max(v, floor), ceiling) for v in (m.ci or ()))]
        bottom, top = min(shown_values), max(shown_values)
        pad = 0.08 * (top - bottom or 1.0)
        ax.set_ylim(bottom - pad, top + pad)
        for other, m in outliers:
            _draw_clipped(other, m, above=m.value > ceiling)
        clipped = True
    return clipped


def _draw_clipped(ax: Any, mark: Mark, *, above: bool) -> None:
    """An arrow to the panel's edge at ``mark.x``, pointing the way the value lies, with the value beside."""
    from matplotlib.transforms import blended_transform_factory  # deferred: matplotlib is heavy

    edge = blended_transform_factory(ax.transData, ax.transAxes)
    ax.annotate(
        f"{mark.value:,.1f}",
        xy=(mark.x, 1.0 if above else 0.0),
        xycoords=edge,
        xytext=(0, -24 if above else 24),
        textcoords="offset points",
        ha="center",
        va="top" if above else "bottom",
        fontsize=7,
        color=mark.colour,
        bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.85},
        arrowprops={"arrowstyle": "-|>", "color": mark.colour, "linewidth": 1.2, "shrinkA": 0, "shrinkB": 0},
        annotation_clip=False,
        zorder=6,
    )


@dataclass
class Drawn:
    """What a figure's panels drew, gathered panel by panel: the notes under the figure, whether a "< 0"
    was drawn, and per panel the values drawn and the paper's range there (for :func:`clip_outliers`)."""

    notes: list[str] = field(default_factory=list)
    below_zero: bool = False
    marks: dict[Any, list[Mark]] = field(default_factory=dict)
    ranges: dict[Any, tuple[float, float] | None] = field(default_factory=dict)

    def clip_outliers(self) -> None:
        """:func:`clip_outliers` on every panel, and its note where a value was clipped."""
        if clip_outliers(self.marks, self.ranges):
            self.notes.append(CLIPPED_NOTE)


@dataclass(frozen=True)
class BandPoint:
    """The paper's models at one x: lowest, median and highest; -inf stands for "< 0"."""

    low: float
    median: float
    high: float
    count: int


def band_point(cells: Iterable[PaperCell | None]) -> BandPoint | None:
    """The range and median of the paper's cells at one x ("< 0" counts as lowest); None without any.

    >>> band_point([PaperCell(10.0), PaperCell(None), PaperCell(40.0)])
    BandPoint(low=-inf, median=10.0, high=40.0, count=3)
    """
    values = [-math.inf if cell.below_zero else cell.value for cell in cells if cell is not None]
    if not values:
        return None
    values.sort()
    middle = len(values) // 2
    median = values[middle] if len(values) % 2 else statistics.fmean(values[middle - 1 : middle + 1])
    return BandPoint(values[0], median, values[-1], len(values))


def shown(value: float) -> float:
    """Where a band's value is drawn: "< 0" at 0."""
    return 0.0 if value == -math.inf else value


def draw_band(ax: Any, xs: Sequence[float], points: Sequence[BandPoint], *, width: float | None) -> None:
    """The paper's models as a band: a bar per category (``width``) or one band along an ordered x (None),
    with the median as a dark line; a low end or median of "< 0" drawn at 0 with its triangle."""
    lows = [shown(p.low) for p in points]
    highs = [shown(p.high) for p in points]
    medians = [shown(p.median) for p in points]
    if width is None:
        ax.fill_between(xs, lows, highs, color=BAND_COLOUR, linewidth=0, label=BAND_LABEL, zorder=1)
        ax.plot(xs, medians, color=MEDIAN_COLOUR, linewidth=2.0, label=MEDIAN_LABEL, zorder=2)
    else:
        heights = [high - low for low, high in zip(lows, highs)]
        bars = ax.bar(xs, heights, width, bottom=lows, color=BAND_COLOUR, label=BAND_LABEL, zorder=1)
        for bar in bars:  # a band is no bar chart: the axis keeps its margin below the lowest value
            bar.sticky_edges.y.clear()
        ax.hlines(
            medians,
            [x - width / 2 for x in xs],
            [x + width / 2 for x in xs],
            color=MEDIAN_COLOUR,
            linewidth=2.0,
            label=MEDIAN_LABEL,
            zorder=2,
        )
    below = [x for x, p in zip(xs, points) if p.low == -math.inf]
    if below:
        draw_below_zero(ax, below, MEDIAN_COLOUR)


def note_undefined(ax: Any, metric_label: str, reasons: Sequence[str]) -> None:
    """Write, in place of an empty panel, that the metric is undefined and why."""
    reason = reasons[0] if reasons else "no run has a value here"
    ax.text(
        0.5,
        0.5,
        f"{metric_label} undefined for every run:\n{wrap(reason, 40)}",
        transform=ax.transAxes,
        ha="center",
        va="center",
        fontsize="small",
        color="0.3",
        bbox={"boxstyle": "round", "facecolor": "0.95", "edgecolor": "0.7"},
    )


def legend_entries(axes: Sequence[Sequence[Any]], runs: Sequence[Run]) -> dict[str, Any]:
    """Every labelled series of the panels for the legend: the runs first, in order, then the paper's
    models, then their band and median."""
    found = handles(visible(axes))
    first = [run.label for run in runs if run.label in found]
    last = [label for label in (BAND_LABEL, MEDIAN_LABEL) if label in found]
    middle = [label for label in found if label not in first and label not in last]
    return {label: found[label] for label in [*first, *middle, *last]}


__all__ = [
    "BAND_COLOUR",
    "BAND_LABEL",
    "BAND_NOTE",
    "BELOW_ZERO_NOTE",
    "CLIPPED_NOTE",
    "EXAMPLE_RUN",
    "FAMILY_COLOURS",
    "FIGURE_RC",
    "MARKER_NAMES",
    "MEDIAN_COLOUR",
    "MEDIAN_LABEL",
    "NOTE_SIZE",
    "OUTLIER_REACH",
    "RUNS_NOTE",
    "RUN_MARKER",
    "SIZE_MARKERS",
    "SPARE_MARKERS",
    "BandPoint",
    "Drawn",
    "FigureInputs",
    "Mark",
    "ReportFigure",
    "Series",
    "band_point",
    "clip_outliers",
    "dodge",
    "draw_band",
    "draw_below_zero",
    "finish",
    "grid",
    "handles",
    "label_outer",
    "legend_entries",
    "note_undefined",
    "numbered",
    "paper_look",
    "paper_marker_note",
    "paper_notes",
    "paper_range",
    "places",
    "point",
    "run_look",
    "save_options",
    "save_png_and_svg",
    "series_look",
    "shared_keys",
    "shown",
    "spare",
    "undefined_reasons",
    "visible",
    "wrap",
    "yerr",
]
