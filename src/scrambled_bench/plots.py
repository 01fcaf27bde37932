"""Figures' layout, shared by the report's figures and the probe's: a grid of panels with shared axes
labelled once, the legend in a spare cell or beside or below the panels, the notes under it all, and
saving as PNG and SVG (byte-stable). matplotlib is imported where a figure is drawn."""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

FIGURE_RC = {"svg.fonttype": "none", "svg.hashsalt": "scrambled-bench"}
"""SVG text stays text (searchable in the HTML report, and each legend label can be checked in the file);
a fixed hash salt keeps the files byte-stable across runs."""
NOTE_SIZE = 7.5
"""Points: the notes under a figure."""


def wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width))


def handles(axes: Iterable[Any]) -> dict[str, Any]:
    """Every labelled handle in the panels (label -> handle), the first one per label, in drawing order."""
    found: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            found.setdefault(label, handle)
    return found


def places(count: int, columns: int | None = None) -> tuple[int, int, list[tuple[int, int]]]:
    """Rows, columns and each panel's (row, column) for ``count`` panels: up to three side by side, more
    in a grid near square (or in ``columns``). The unused cells are the last of the top row, so that every
    column's lowest panel is on the bottom row (its x axis labelled once) and the legend can take the top
    right.

    >>> places(3)
    (1, 3, [(0, 0), (0, 1), (0, 2)])
    >>> places(5)
    (2, 3, [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2)])
    """
    columns = columns or (count if count <= 3 else math.ceil(math.sqrt(count)))
    rows = math.ceil(count / columns)
    unused = rows * columns - count
    cells = [(r, c) for r in range(rows) for c in range(columns)]
    return rows, columns, [cell for cell in cells if not (cell[0] == 0 and cell[1] >= columns - unused)]


def shared_keys(rows: int, columns: int, cells: Sequence[tuple[int, int]]) -> list[list[int | None]]:
    """:func:`grid`'s ``share_x``/``share_y`` where every panel shares the axis: a key (0) in each of
    ``cells``, None in the cells left empty.

    >>> shared_keys(*places(2))
    [[0, 0]]
    >>> shared_keys(*places(5))
    [[0, 0, None], [0, 0, 0]]
    """
    return [[0 if (r, c) in cells else None for c in range(columns)] for r in range(rows)]


def grid(
    rows: int,
    columns: int,
    *,
    panel: tuple[float, float],
    share_x: Sequence[Sequence[Any]] | None = None,
    share_y: Sequence[Sequence[Any]] | None = None,
) -> tuple[Any, list[list[Any]]]:
    """A figure of ``rows`` x ``columns`` panels of ``panel`` inches each (its size follows the count).

    ``share_x``/``share_y`` give each panel a key (None: no panel there, hidden): panels with equal keys
    share that axis, and a shared axis is labelled once, on the bottom row or the left column of its run
    of neighbours.
    """
    import matplotlib.pyplot as plt  # deferred: matplotlib is heavy; only a drawn figure needs it

    fig, axes = plt.subplots(
        rows,
        columns,
        figsize=(panel[0] * columns, panel[1] * rows),
        squeeze=False,
        layout="constrained",
    )
    keys_x = share_x or [[0] * columns for _ in range(rows)]
    keys_y = share_y or [[(r, c) for c in range(columns)] for r in range(rows)]
    first_x: dict[Any, Any] = {}
    first_y: dict[Any, Any] = {}
    for r in range(rows):
        for c in range(columns):
            ax = axes[r][c]
            if keys_x[r][c] is None or keys_y[r][c] is None:
                ax.set_visible(False)
                continue
            if keys_x[r][c] in first_x:
                ax.sharex(first_x[keys_x[r][c]])
            first_x.setdefault(keys_x[r][c], ax)
            if keys_y[r][c] in first_y:
                ax.sharey(first_y[keys_y[r][c]])
            first_y.setdefault(keys_y[r][c], ax)
    return fig, [list(row) for row in axes]


def label_outer(
    axes: Sequence[Sequence[Any]], share_x: Sequence[Sequence[Any]], share_y: Sequence[Sequence[Any]]
):
    """Hide tick labels and axis labels that a neighbour sharing the axis already shows: x on all but
    the lowest panel of a column's run, y on all but the leftmost of a row's run."""
    rows, columns = len(axes), len(axes[0])
    for r in range(rows):
        for c in range(columns):
            ax = axes[r][c]
            if not ax.get_visible():
                continue
            below = next((rr for rr in range(r + 1, rows) if axes[rr][c].get_visible()), None)
            if below is not None and share_x[below][c] == share_x[r][c]:
                ax.tick_params(labelbottom=False)
                ax.set_xlabel("")
            if c > 0 and axes[r][c - 1].get_visible() and share_y[r][c - 1] == share_y[r][c]:
                ax.tick_params(labelleft=False)
                ax.set_ylabel("")


def visible(axes: Sequence[Sequence[Any]]) -> list[Any]:
    return [ax for row in axes for ax in row if ax.get_visible()]


def spare(axes: Sequence[Sequence[Any]]) -> list[Any]:
    """The grid's unused cells (hidden panels), where a legend may go."""
    return [ax for row in axes for ax in row if not ax.get_visible()]


def finish(
    fig: Any,
    axes: Sequence[Any],
    entries: Mapping[str, Any],
    notes: Sequence[str],
    *,
    title: str = "",
    legend_title: str | None = None,
    beside: bool = False,
    cells: Sequence[Any] = (),
) -> None:
    """Lay the panels out (constrained), then put the legend in an unused cell of the grid (``cells``)
    where it fits, else below the panels (or ``beside``, right of them), and the notes under it all as one
    paragraph: outside every data area, and cut to size on saving."""
    if title:
        fig.suptitle(wrap(title, max(40, int(fig.get_figwidth() * 11))), x=0.01, ha="left", fontsize=12)
    fig.draw_without_rendering()
    fig.set_layout_engine("none")
    renderer = fig.canvas.get_renderer()
    to_figure = fig.transFigure.inverted()
    boxes = [ax.get_tightbbox(renderer) for ax in axes]
    (left, bottom), (right, top) = to_figure.transform(
        [
            (min(b.x0 for b in boxes), min(b.y0 for b in boxes)),
            (max(b.x1 for b in boxes), max(b.y1 for b in boxes)),
        ]
    )
    gap = 0.08 / fig.get_figheight()
    lowest = bottom
    # one column of panels: the legend beside them, where a row below would be as narrow as they are
    beside = beside or len({round(ax.get_position().x0, 3) for ax in axes}) == 1
    if entries:
        legend = _legend_in_cell(fig, entries, legend_title, cells, renderer) or _place_legend(
            fig, entries, legend_title, beside, (left, bottom, right, top), gap, renderer
        )
        (_, legend_bottom), (legend_right, _) = to_figure.transform(legend.get_window_extent(renderer))
        lowest = min(lowest, legend_bottom)
        right = max(right, legend_right)
    if notes:
        chars = max(40, int((right - left) * fig.get_figwidth() * 72 / (NOTE_SIZE * 0.52)))
        fig.text(
            left,
            lowest - gap,
            wrap(" ".join(dict.fromkeys(notes)), chars),
            va="top",
            ha="left",
            fontsize=NOTE_SIZE,
            color="0.25",
        )


LEGEND_OPTIONS = {"fontsize": "small", "title_fontsize": "small", "frameon": True}


def _legend_in_cell(
    fig: Any, entries: Mapping[str, Any], title: str | None, cells: Sequence[Any], renderer: Any
) -> Any | None:
    """The legend centred in the first unused cell of the grid, in as many columns as fit; None where it
    does not fit there."""
    if not cells:
        return None
    cell = cells[0].get_position()
    room = cell.transformed(fig.transFigure)
    for columns in range(min(len(entries), 3), 0, -1):
        legend = fig.legend(
            list(entries.values()),
            list(entries),
            loc="center",
            bbox_to_anchor=(cell.x0, cell.y0, cell.width, cell.height),
            ncols=columns,
            title=title,
            **LEGEND_OPTIONS,
        )
        extent = legend.get_window_extent(renderer)
        if extent.width <= room.width and extent.height <= room.height:
            return legend
        legend.remove()
    return None


def _place_legend(
    fig: Any,
    entries: Mapping[str, Any],
    title: str | None,
    beside: bool,
    panels: tuple[float, float, float, float],
    gap: float,
    renderer: Any,
) -> Any:
    """The legend right of the panels' top (``beside``), else centred below them in as many columns as
    fit their width."""
    left, bottom, right, top = panels
    options = {"title": title, **LEGEND_OPTIONS}
    if beside:
        return fig.legend(
            list(entries.values()),
            list(entries),
            loc="upper left",
            bbox_to_anchor=(right + gap * fig.get_figheight() / fig.get_figwidth(), top),
            **options,
        )
    width = (right - left) * fig.bbox.width
    for columns in range(min(len(entries), 8), 0, -1):
        legend = fig.legend(
            list(entries.values()),
            list(entries),
            loc="upper center",
            bbox_to_anchor=((left + right) / 2, bottom - gap),
            ncols=columns,
            **options,
        )
        if columns == 1 or legend.get_window_extent(renderer).width <= width:
            return legend
        legend.remove()
    raise AssertionError("unreachable")  # pragma: no cover


def save_options(suffix: str) -> dict[str, Any]:
    options: dict[str, Any] = {"format": suffix, "bbox_inches": "tight", "pad_inches": 0.08}
    if suffix == "png":
        options["dpi"] = 150
    else:
        options["metadata"] = {"Date": None}  # byte-stable files
    return options


def save_png_and_svg(figure: Any, out_dir: Path, name: str) -> list[Path]:
    """``name.png`` (150 dpi) and ``name.svg`` (no date, so byte-stable) of a matplotlib figure in
    ``out_dir``, cut to what is drawn (legends and notes outside the axes included); the files, in that
    order.

    >>> import tempfile, matplotlib.pyplot as plt
    >>> figure = plt.figure()
    >>> [path.name for path in save_png_and_svg(figure, Path(tempfile.mkdtemp()), "empty")]
    ['empty.png', 'empty.svg']
    >>> plt.close(figure)
    """
    import matplotlib  # deferred: matplotlib is heavy; only a drawn figure needs it

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with matplotlib.rc_context(FIGURE_RC):
        for suffix in ("png", "svg"):
            path = out_dir / f"{name}.{suffix}"
            figure.savefig(path, **save_options(suffix))
            written.append(path)
    return written


def svg_text(figure: Any, salt: str) -> str:
    """A figure as SVG text to inline in an HTML page (no XML prolog); ``salt`` makes its ids unique within
    the page (SVG ids derive from the hash salt) and the text byte-stable.

    >>> import matplotlib.pyplot as plt
    >>> svg_text(plt.figure(), "empty")[:4]
    '<svg'
    """
    import matplotlib  # deferred: matplotlib is heavy; only a drawn figure needs it

    buffer = io.StringIO()
    with matplotlib.rc_context({**FIGURE_RC, "svg.hashsalt": f"scrambled-bench-{salt}"}):
        figure.savefig(buffer, **save_options("svg"))
    text = buffer.getvalue()
    return text[text.index("<svg") :]
