"""Reports from run folders: the ``report`` command's entry point (``build``: :func:`build_report`), the run
folders as read (``runs``), the table model (``tables``), the paper's models as reference (``paper``), its
renderers (``render``), the figures (``figures``), run sizes (``params``), paired comparison
(``compare``) and the Hub (``hub``: a leaderboard dataset; ``hub_eval``: eval.yaml and a model's
``.eval_results``)."""

from __future__ import annotations

from scrambled_bench.report.build import ReportOptions, build_report
from scrambled_bench.report.figures import build_figures, plot_figures, svg_figures
from scrambled_bench.report.hub import push_to_hub
from scrambled_bench.report.paper import PaperModel, paper_models, select_paper_models
from scrambled_bench.report.render import RENDERERS, render_csv, render_html, render_markdown
from scrambled_bench.report.runs import (
    Run,
    check_same_build,
    label_runs,
    load_run,
    run_details,
    run_fingerprint,
)
from scrambled_bench.report.tables import build_tables
from scrambled_bench.tables import ReportTable

__all__ = [
    "RENDERERS",
    "PaperModel",
    "ReportOptions",
    "ReportTable",
    "Run",
    "build_figures",
    "build_report",
    "build_tables",
    "check_same_build",
    "label_runs",
    "load_run",
    "paper_models",
    "plot_figures",
    "push_to_hub",
    "render_csv",
    "render_html",
    "render_markdown",
    "run_details",
    "run_fingerprint",
    "select_paper_models",
    "svg_figures",
]
