"""Figures 7 and 8 of the paper from a :class:`~scrambled_bench.probing.probes.ProbeResult`.

Figure 7: probe accuracy per layer, one line per setting, with its interval band (Wilson in probe.json files
written since the bootstrap was replaced; the method is read from the file) and the chance level.
Figure 8: the layer-wise differential, each probed layer's accuracy minus the previous probed layer's, in
percentage points. Each is written as PNG and SVG; matplotlib runs headless (Agg).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

from scrambled_bench.plots import (
    finish,
    grid,
    handles,
    label_outer,
    places,
    save_png_and_svg,
    shared_keys,
    spare,
    visible,
)
from scrambled_bench.probing.probes import ProbeResult

FIGURE7 = "figure7"
FIGURE8 = "figure8"


def type_label(scramble_type: str) -> str:
    """The paper's name for a setting in Figures 7 and 8.

    >>> [type_label(t) for t in ("original", "rs20", "rs100", "kf", "kfl", "sub", "kr2")]
    ['Ori', 'RS-20%', 'RS-100%', 'KF', 'KFL', 'Sub', 'KR2']
    """
    fixed = {"original": "Ori", "kf": "KF", "kfl": "KFL", "sub": "Sub"}
    if scramble_type in fixed:
        return fixed[scramble_type]
    match = re.fullmatch(r"rs(\d+)", scramble_type)
    return f"RS-{match.group(1)}%" if match else scramble_type.upper()


def layer_differentials(values: list[float]) -> list[float]:
    """Each value minus the one before it (one fewer than given).

    >>> layer_differentials([0.3, 0.5, 0.45])
    [0.2, -0.05]
    """
    return [round(after - before, 10) for before, after in itertools.pairwise(values)]


def _pyplot() -> Any:
    """pyplot, headless; imported on first use: matplotlib is heavy, and reading a probe draws nothing."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, out_dir: Path, name: str) -> list[Path]:
    written = save_png_and_svg(fig, out_dir, name)
    _pyplot().close(fig)
    return written


def interval_label(info: dict[str, Any]) -> tuple[float, str]:
    """The level and method of a probe.json's accuracy intervals; files written before the Wilson interval
    say ``bootstrap`` (a percentile bootstrap), and are labelled so.

    >>> interval_label({"interval": {"method": "wilson", "confidence_level": 0.9}})
    (0.9, 'Wilson')
    >>> interval_label({"bootstrap": {"method": "percentile", "confidence_level": 0.95, "n_resamples": 1000}})
    (0.95, 'percentile bootstrap')
    """
    if "interval" in info:
        return float(info["interval"]["confidence_level"]), str(info["interval"]["method"]).capitalize()
    old = info.get("bootstrap", {})
    return float(old.get("confidence_level", 0.95)), f"{old.get('method', 'percentile')} bootstrap"


def _subtitle(result: ProbeResult) -> str:
    train = result.info.get("train", {})
    evaluation = result.info.get("eval", {})
    parts = [result.model]
    if train.get("questions_per_type") is not None:
        parts.append(f"train {train['questions_per_type']} x {len(result.types)} settings")
    if evaluation.get("questions_per_type") is not None:
        parts.append(f"eval {evaluation['questions_per_type']} per setting")
    return ", ".join(parts)


def plot_figure7(result: ProbeResult, out_dir: Path) -> list[Path]:
    """Figure 7: accuracy per layer with its interval band, one panel per scrambled setting, each beside
    the unscrambled one (Ori, grey, the same in every panel) and chance; returns the PNG and SVG written.

    Small multiples rather than the paper's one panel: seven bands drawn over each other hide one another,
    and a setting is read against Ori, which every panel repeats."""
    _pyplot()
    layers = [layer.layer for layer in result.layers]
    reference = "original" if "original" in result.types and len(result.types) > 1 else None
    panels = [scramble_type for scramble_type in result.types if scramble_type != reference]
    rows, columns, cells = places(len(panels))
    shared = shared_keys(rows, columns, cells)
    fig, axes = grid(rows, columns, panel=(3.3, 2.8), share_x=shared, share_y=shared)
    colours = {scramble_type: f"C{index}" for index, scramble_type in enumerate(result.types)}
    for scramble_type, (r, c) in zip(panels, cells):
        ax = axes[r][c]
        if reference is not None:
            _accuracy_line(ax, layers, result, reference, colour="0.5")
        _accuracy_line(ax, layers, result, scramble_type, colour=colours[scramble_type])
        ax.axhline(
            result.chance * 100,
            color="0.2",
            linestyle="--",
            linewidth=1,
            label=f"chance ({result.chance:.0%})",
        )
        ax.set_title(type_label(scramble_type), fontsize=10)
        ax.set_xlabel("layer (0 = embeddings)")
        ax.set_ylabel("accuracy on dev + test (%)")
        ax.grid(alpha=0.3)
    label_outer(axes, shared, shared)
    level, method = interval_label(result.info)
    against = " against Ori (grey, the unscrambled dialogue; the same in every panel)" if reference else ""
    note = (
        f"Each panel: one setting's probe accuracy per layer{against}; bands: {level:.0%} {method} "
        f"intervals over the evaluation questions; dashed: chance."
    )
    found = handles(visible(axes))
    chance = [label for label in found if label.startswith("chance")]
    entries = {label: found[label] for label in [*(label for label in found if label not in chance), *chance]}
    finish(
        fig,
        visible(axes),
        entries,
        [note],
        title=f"Figure 7, DREAM answer probe accuracy by layer: {_subtitle(result)}",
        legend_title="setting",
        cells=spare(axes),
    )
    return _save(fig, out_dir, FIGURE7)


def _accuracy_line(ax: Any, layers: list[int], result: ProbeResult, scramble_type: str, colour: str) -> None:
    scores = [layer.scores[scramble_type] for layer in result.layers]
    ax.plot(
        layers,
        [score.accuracy * 100 for score in scores],
        marker="o",
        markersize=2.5,
        linewidth=1.2,
        color=colour,
        label=type_label(scramble_type),
    )
    ax.fill_between(
        layers,
        [score.low * 100 for score in scores],
        [score.high * 100 for score in scores],
        color=colour,
        alpha=0.15,
        linewidth=0,
    )


def plot_figure8(result: ProbeResult, out_dir: Path) -> list[Path]:
    """Figure 8: each probed layer's accuracy minus the previous probed layer's; returns the files written."""
    plt = _pyplot()
    layers = [layer.layer for layer in result.layers]
    fig, ax = plt.subplots(figsize=(8.5, 4.6))
    for scramble_type in result.types:
        differences = layer_differentials(result.accuracy(scramble_type))
        ax.plot(
            layers[1:],
            [d * 100 for d in differences],
            marker="o",
            markersize=3,
            label=type_label(scramble_type),
        )
    ax.axhline(0, color="grey", linewidth=1)
    ax.set_title(
        f"Layer-wise accuracy differential of the DREAM probe (Figure 8)\n{_subtitle(result)}", fontsize=10
    )
    ax.set_xlabel("layer (compared with the previous probed layer)")
    ax.set_ylabel("accuracy change (percentage points)")
    ax.grid(alpha=0.3)
    ax.legend(title="setting", loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    return _save(fig, out_dir, FIGURE8)
