"""The report's figures, like the paper's: a metric by scramble type per task and dataset (Figures 2-3 for
ScrRec, ScrQA's Acc and RPG), DREAM's RPG by question category (Figure 4) and AQuA's accuracy by exemplar
rate (Table 1), each as PNG and SVG.

Every figure names its task, dataset and metric in its titles, labels its axes with units, keeps its
legend outside the data area and draws bootstrap intervals as error bars. Scramble types are categories:
they are points, and only the ordered rates of one family (rs10..rs100) are joined by a line. A panel
whose metric is undefined for every run says so in place of an empty plot.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrambled_bench.builder.scrambler import FAMILIES, parse_type
from scrambled_bench.harness.report.tables import Run, ordered_types
from scrambled_bench.harness.tasks import TASKS, Metric, Task

Point = tuple[float | None, Sequence[float] | None]
"""A value and its interval (either may be missing)."""


@dataclass
class Series:
    """One line (or set of points) in a panel: a run, or a reference such as one of the paper's models."""

    label: str
    points: dict[Any, Point] = field(default_factory=dict)
    undefined: list[str] = field(default_factory=list)
    """Why some points are missing (shown as a note when nothing at all is drawn)."""
    reference: bool = False


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


def _style(index: int, series: Series) -> dict[str, Any]:
    if series.reference:
        return {"color": "0.45", "marker": "s", "markerfacecolor": "none", "linestyle": "--", "alpha": 0.8}
    return {"color": f"C{index % 10}", "marker": "o"}


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
    for index, one in enumerate(series):
        style = _style(index, one)
        shown = [(t, v, ci) for t, (v, ci) in one.points.items() if v is not None and t in positions]
        if not shown:
            continue
        drawn = True
        line_style = style.pop("linestyle", "-")
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
                    color=style["color"],
                    alpha=0.6,
                )
        for number, (t, v, ci) in enumerate(shown):
            ax.errorbar(
                positions[t],
                v,
                yerr=_yerr(v, ci),
                linestyle="none",
                capsize=3,
                label=one.label if number == 0 else None,
                **style,
            )
    ax.set_title(title, fontsize="medium")
    ax.set_xticks(range(len(types)), types, rotation=30)
    ax.set_xlim(-0.5, len(types) - 0.5)
    ax.set_xlabel("scramble type")
    ax.set_ylabel(metric.axis_label)
    ax.grid(alpha=0.3)
    if not drawn:
        note_undefined(ax, metric, [reason for one in series for reason in one.undefined])
    return drawn


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


def _save(fig: Any, out_dir: Path, name: str, written: list[Path]) -> None:
    import matplotlib.pyplot as plt

    for suffix in ("png", "svg"):
        path = out_dir / f"{name}.{suffix}"
        fig.savefig(path, dpi=150 if suffix == "png" else None, bbox_inches="tight")
        written.append(path)
    plt.close(fig)


def _legend(fig: Any, axes: Sequence[Any]) -> None:
    """One legend for the figure, outside every data area (right of the panels)."""
    handles, labels = [], []
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    if handles:
        fig.legend(handles, labels, loc="outside right upper", fontsize="small", title="model")


def types_figure(
    panels: Sequence[tuple[Task, str]],
    series_of: Callable[[Task, str, Metric], list[Series]],
) -> Any:
    """A grid: a column per (task, dataset) panel, a row per metric of the tasks."""
    import matplotlib.pyplot as plt

    metrics = list(dict.fromkeys(metric for task, _ in panels for metric in task.metrics))
    fig, axes = plt.subplots(
        len(metrics),
        len(panels),
        figsize=(4.8 * len(panels) + 2.2, 3.4 * len(metrics)),
        squeeze=False,
        layout="constrained",
    )
    for column, (task, dataset) in enumerate(panels):
        for row, metric in enumerate(metrics):
            ax = axes[row][column]
            series = series_of(task, dataset, metric) if metric in task.metrics else []
            types = ordered_types({t for one in series for t in one.points})
            draw_types_panel(ax, series, types, metric, f"{task.view.panel_titles[dataset]}: {metric.label}")
    _legend(fig, [ax for row in axes for ax in row])
    return fig


def plot_figures(runs: Sequence[Run], out_dir: Path) -> list[Path]:
    """Every figure the runs have data for, each as PNG and SVG; returns the files written."""
    import matplotlib

    matplotlib.use("Agg")

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def runs_series(task: Task, dataset: str, metric: Metric) -> list[Series]:
        return [type_series(run, task, dataset, metric) for run in runs if run.by_type(task.name, dataset)]

    figures: dict[str, list[tuple[Task, str]]] = {}
    for task in TASKS.values():
        for dataset in task.datasets:
            if task.view.layout == "types" and any(run.by_type(task.name, dataset) for run in runs):
                figures.setdefault(task.view.figure, []).append((task, dataset))
    for name, panels in figures.items():
        _save(types_figure(panels, runs_series), out_dir, name, written)

    for task in TASKS.values():
        for dataset in task.view.categories:
            with_categories = [
                run
                for run in runs
                if any(e.get("categories") for e in run.entries(task.name, dataset).values())
            ]
            if with_categories:
                _save(
                    category_figure(task, dataset, with_categories), out_dir, f"{dataset}_categories", written
                )
        if task.view.layout == "exemplars":
            for dataset in task.datasets:
                with_rates = [run for run in runs if run.entries(task.name, dataset)]
                if with_rates:
                    _save(exemplars_figure(task, dataset, with_rates), out_dir, task.view.figure, written)
    return written


def category_figure(task: Task, dataset: str, runs: Sequence[Run]) -> Any:
    """RPG by question category (the paper's Figure 4): grouped bars per scramble type, a panel per run;
    an undefined RPG is a gap (never a bar of height 0, which would read as "no gain"), noted below."""
    import matplotlib.pyplot as plt

    from scrambled_bench.harness.tasks.base import RPG

    anchors = set(getattr(task, "anchors", ()))
    fig, axes = plt.subplots(
        1, len(runs), figsize=(6 * len(runs) + 1.5, 4.2), squeeze=False, layout="constrained"
    )
    for ax, run in zip(axes[0], runs):
        entries = run.by_type(task.name, dataset)
        types = [t for t in ordered_types(set(entries)) if t not in anchors]
        categories = sorted({c for e in entries.values() for c in (e.get("categories") or {})})
        width = 0.8 / max(1, len(types))
        reasons: list[str] = []
        for index, scramble_type in enumerate(types):
            by_category = entries[scramble_type].get("categories") or {}
            scores = [(by_category.get(c) or {}).get(RPG.key) for c in categories]
            reasons += _undefined_reasons(scores)
            heights = [
                float("nan") if score is None or score.get("value") is None else score["value"]
                for score in scores
            ]
            errors = [
                None if math.isnan(h) else _yerr(h, (s or {}).get("ci")) for h, s in zip(heights, scores)
            ]
            lower = [e[0][0] if e else 0.0 for e in errors]
            upper = [e[1][0] if e else 0.0 for e in errors]
            ax.bar(
                [i + index * width for i in range(len(categories))],
                heights,
                width,
                yerr=[lower, upper],
                capsize=2,
                label=scramble_type,
                color=f"C{index % 10}",
            )
        ax.set_xticks(
            [i + width * (len(types) - 1) / 2 for i in range(len(categories))], categories, rotation=20
        )
        ax.set_xlabel("question category")
        ax.set_ylabel(RPG.axis_label)
        ax.axhline(0, color="0.5", linewidth=0.8)
        ax.set_title(
            f"{task.view.panel_titles[dataset]} by category, {RPG.label}: {run.label}", fontsize="medium"
        )
        if reasons:
            ax.annotate(
                f"gaps: {RPG.label} undefined ({_wrap(reasons[0], 60)})",
                (0, -0.3),
                xycoords="axes fraction",
                fontsize="x-small",
                color="0.3",
            )
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside right upper", fontsize="small", title="scramble type")
    return fig


def exemplars_figure(task: Task, dataset: str, runs: Sequence[Run]) -> Any:
    """AQuA's accuracy by the exemplars' scramble rate (an ordered axis: lines), a line per question type,
    a panel per run."""
    import matplotlib.pyplot as plt

    metric = task.metrics[0]
    fig, axes = plt.subplots(
        1, len(runs), figsize=(5.2 * len(runs) + 1.8, 3.8), squeeze=False, layout="constrained"
    )
    for ax, run in zip(axes[0], runs):
        entries = list(run.entries(task.name, dataset).values())
        drawn = False
        for index, scramble_type in enumerate(ordered_types({e["scramble_type"] for e in entries})):
            points = sorted(
                (e["exemplar_rate"], _point(e.get(metric.key)))
                for e in entries
                if e["scramble_type"] == scramble_type
            )
            points = [(rate, value, ci) for rate, (value, ci) in points if value is not None]
            if not points:
                continue
            drawn = True
            ax.errorbar(
                [p[0] for p in points],
                [p[1] for p in points],
                yerr=[
                    [max(0.0, v - ci[0]) if ci else 0.0 for _, v, ci in points],
                    [max(0.0, ci[1] - v) if ci else 0.0 for _, v, ci in points],
                ],
                marker="o",
                capsize=3,
                color=f"C{index % 10}",
                label=f"question {scramble_type}",
            )
        ax.set_xlabel("exemplar questions scrambled (%)")
        ax.set_ylabel(metric.axis_label)
        ax.set_title(f"{task.view.panel_titles[dataset]}, {metric.label}: {run.label}", fontsize="medium")
        ax.grid(alpha=0.3)
        if not drawn:
            note_undefined(ax, metric, [])
    _legend(fig, list(axes[0]))
    return fig
