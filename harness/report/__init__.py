"""Reports from run folders: the table model (``tables``), its renderers (``render``), the figures
(``figures``) and the Hub upload (``hub``)."""

from __future__ import annotations

from scrambled_bench.harness.report.figures import plot_figures
from scrambled_bench.harness.report.hub import push_to_hub
from scrambled_bench.harness.report.render import RENDERERS, render_csv, render_html, render_markdown
from scrambled_bench.harness.report.tables import ReportTable, Run, build_tables, label_runs, load_run

__all__ = [
    "RENDERERS",
    "ReportTable",
    "Run",
    "build_tables",
    "label_runs",
    "load_run",
    "plot_figures",
    "push_to_hub",
    "render_csv",
    "render_html",
    "render_markdown",
]
