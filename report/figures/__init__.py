"""The report's figures, like the paper's, each as PNG and SVG, one module per kind:

- ``types``: a metric by scramble type per task and dataset (ScrRec's ED and RR, Figures 2-3; ScrQA's Acc
  and RPG), and the letter-position types alone (Figure 6, where runs have them);
- ``exemplars``: AQuA's accuracy by exemplar rate (Table 1);
- ``categories``: DREAM's RPG by question category (Figure 4);
- ``scale``: the headline metric at rs100 against parameter count (Figure 5);
- ``common``: the looks, the grid of panels, the legend and notes, saving.

A task's view picks its figure by its layout (:data:`LAYOUTS`, as ``tables.LAYOUTS`` picks its tables);
the figures drawn across tasks follow (:data:`ACROSS_TASKS`). Every figure names its task, dataset and
metric, labels its axes with units, keeps its legend and notes outside the data area and draws the stored
intervals as error bars.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from scrambled_bench.evaluation.tasks import TASKS, Task
from scrambled_bench.report.figures import categories, exemplars, scale, types
from scrambled_bench.report.figures.common import (
    EXAMPLE_RUN,
    FIGURE_RC,
    FigureInputs,
    ReportFigure,
    Series,
    save_options,
    save_png_and_svg,
)
from scrambled_bench.report.figures.scale import SCALE_TYPE, scale_figure
from scrambled_bench.report.figures.types import paper_type_series, type_series, types_figure
from scrambled_bench.report.paper import PaperModel
from scrambled_bench.report.params import ParameterCount
from scrambled_bench.report.runs import Run

__all__ = [
    "ACROSS_TASKS",
    "EXAMPLE_RUN",
    "FIGURE_RC",
    "LAYOUTS",
    "SCALE_TYPE",
    "FigureInputs",
    "ReportFigure",
    "Series",
    "build_figures",
    "paper_type_series",
    "plot_figures",
    "save_png_and_svg",
    "scale_figure",
    "svg_figures",
    "type_series",
    "types_figure",
]

LAYOUTS: dict[str, Callable[[Sequence[Task], FigureInputs], list[ReportFigure]]] = {
    "types": types.figures,
    "exemplars": exemplars.figures,
}
"""The figures of the tasks whose view has that layout."""
ACROSS_TASKS: dict[str, Callable[[FigureInputs], list[ReportFigure]]] = {
    "categories": lambda inputs: categories.figures(list(TASKS.values()), inputs),
    "scale": scale.figures,
    "letters": types.letters_figures,
}
"""The figures drawn from several tasks' results: per question category (the views that have categories),
by parameter count, the letter-position types."""


def build_figures(
    runs: Sequence[Run],
    *,
    paper: Sequence[PaperModel] = (),
    sizes: Mapping[str, ParameterCount] | None = None,
) -> list[ReportFigure]:
    """Every figure the runs have data for, with the ``paper``'s models where selected (all nineteen: as a
    band and median; fewer: one by one); ``sizes`` (run label -> parameter count) places the runs in the
    parameter-count figure. A figure with nothing of the runs' to show comes back not drawn (its
    ``figure`` None), with why (``not_drawn``).

    >>> import matplotlib.pyplot as plt
    >>> from scrambled_bench.report.params import ParameterCount
    >>> built = build_figures([EXAMPLE_RUN], sizes={"example": ParameterCount(135_000_000, "--params")})
    >>> [(f.name, f.figure is not None) for f in built]
    [('scrqa', True), ('scale', True)]
    >>> [plt.close(f.figure) for f in built if f.figure is not None] and None
    >>> [(f.name, f.not_drawn) for f in build_figures([EXAMPLE_RUN]) if f.figure is None]
    [('scale', "no run's size is known (pass --params, e.g. --params 135M)")]
    >>> plt.close("all")
    """
    import matplotlib  # deferred: matplotlib is heavy; only a drawn figure needs it

    matplotlib.use("Agg")
    inputs = FigureInputs(runs, tuple(paper), dict(sizes or {}))
    built: list[ReportFigure] = []
    with matplotlib.rc_context(FIGURE_RC):
        for layout, kind in LAYOUTS.items():
            built += kind([task for task in TASKS.values() if task.view.layout == layout], inputs)
        for kind in ACROSS_TASKS.values():
            built += kind(inputs)
    return built


def plot_figures(
    runs: Sequence[Run],
    out_dir: Path,
    *,
    paper: Sequence[PaperModel] = (),
    sizes: Mapping[str, ParameterCount] | None = None,
    notify: Callable[[str], None] | None = None,
) -> list[Path]:
    """Every figure the runs have data for, each as PNG and SVG; returns the files written. A figure not
    drawn is told to ``notify``, in one line with why.

    >>> import tempfile
    >>> [path.name for path in plot_figures([EXAMPLE_RUN], Path(tempfile.mkdtemp()), notify=print)]
    scale.png not drawn: no run's size is known (pass --params, e.g. --params 135M)
    ['scrqa.png', 'scrqa.svg']
    """
    import matplotlib.pyplot as plt  # deferred: matplotlib is heavy; only a drawn figure needs it

    written: list[Path] = []
    for one in build_figures(runs, paper=paper, sizes=sizes):
        if one.figure is None:
            _tell_not_drawn(one, notify, f"{one.name}.png")
            continue
        written += save_png_and_svg(one.figure, out_dir, one.name)
        plt.close(one.figure)
    return written


def _tell_not_drawn(one: ReportFigure, notify: Callable[[str], None] | None, what: str) -> None:
    if notify is not None:
        notify(f"{what} not drawn: {one.not_drawn}")


def svg_figures(
    runs: Sequence[Run],
    *,
    paper: Sequence[PaperModel] = (),
    sizes: Mapping[str, ParameterCount] | None = None,
    notify: Callable[[str], None] | None = None,
) -> list[tuple[ReportFigure, str]]:
    """Every figure as SVG text, for embedding in one HTML file (no XML prolog); a figure not drawn is told
    to ``notify``, in one line with why.

    >>> [(figure.name, svg[:4]) for figure, svg in svg_figures([EXAMPLE_RUN])]
    [('scrqa', '<svg')]
    """
    # deferred: matplotlib is heavy; only a drawn figure needs it
    import matplotlib
    import matplotlib.pyplot as plt

    rendered = []
    for one in build_figures(runs, paper=paper, sizes=sizes):
        if one.figure is None:
            _tell_not_drawn(one, notify, f"the {one.name} figure")
            continue
        buffer = io.StringIO()
        # ids in SVG derive from the salt: one salt per figure keeps them unique within one HTML page
        with matplotlib.rc_context({**FIGURE_RC, "svg.hashsalt": f"scrambled-bench-{one.name}"}):
            one.figure.savefig(buffer, **save_options("svg"))
        plt.close(one.figure)
        text = buffer.getvalue()
        rendered.append((one, text[text.index("<svg") :]))
    return rendered
