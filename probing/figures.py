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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, out_dir: Path, name: str) -> list[Path]:
    from scrambled_bench.harness.report.figures import save_png_and_svg

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
    """Figure 7: accuracy per layer, one line per setting; returns the PNG and SVG written."""
    plt = _pyplot()
    layers = [layer.layer for layer in result.layers]
    fig, ax = plt.subplots(figsize=(8.5, 4.6))
    for scramble_type in result.types:
        scores = [layer.scores[scramble_type] for layer in result.layers]
        (line,) = ax.plot(
            layers,
            [s.accuracy * 100 for s in scores],
            marker="o",
            markersize=3,
            label=type_label(scramble_type),
        )
        ax.fill_between(
            layers,
            [s.low * 100 for s in scores],
            [s.high * 100 for s in scores],
            color=line.get_color(),
            alpha=0.1,
        )
    ax.axhline(
        result.chance * 100, color="grey", linestyle="--", linewidth=1, label=f"chance ({result.chance:.0%})"
    )
    ax.set_title(f"DREAM answer probe accuracy by layer (Figure 7)\n{_subtitle(result)}", fontsize=10)
    ax.set_xlabel("layer (0 = embeddings)")
    ax.set_ylabel("probe accuracy on dev + test (%)")
    ax.grid(alpha=0.3)
    level, method = interval_label(result.info)
    ax.legend(
        title=f"setting\n(bands: {level:.0%}\n{method} CI)",
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize="small",
    )
    return _save(fig, out_dir, FIGURE7)


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
