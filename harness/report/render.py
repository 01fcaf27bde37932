"""Rendering the report's tables: markdown, CSV and a standalone HTML page (pure functions of the tables)."""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Sequence

from scrambled_bench.harness.report.tables import ReportTable


def render_markdown(tables: Sequence[ReportTable]) -> str:
    """Pipe tables with a heading each.

    >>> print(render_markdown([ReportTable("t", "Title", ["a", "b"], [["1", "x|y"]])]))
    ### Title
    <BLANKLINE>
    | a | b |
    | --- | --- |
    | 1 | x\\|y |
    <BLANKLINE>
    """
    out = []
    for table in tables:
        out.append(f"### {table.title}\n")
        out.append("| " + " | ".join(table.columns) + " |")
        out.append("| " + " | ".join("---" for _ in table.columns) + " |")
        for row in table.rows:
            out.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
        out.append("")
    return "\n".join(out)


def render_csv(tables: Sequence[ReportTable]) -> str:
    """One long CSV: ``table, <columns>`` per block, a header row before each table's rows."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for table in tables:
        writer.writerow(["table", *table.columns])
        for row in table.rows:
            writer.writerow([table.key, *row])
    return buffer.getvalue()


def render_html(tables: Sequence[ReportTable]) -> str:
    """A standalone HTML page, every cell escaped."""
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>Scrambled Bench report</title>",
        (
            "<style>table{border-collapse:collapse;margin-bottom:2em}td,th{border:1px solid #ccc;padding:4px 8px;"
            "text-align:right}td:first-child,th:first-child{text-align:left}</style></head><body>"
        ),
    ]
    for table in tables:
        parts.append(f"<h3>{html.escape(table.title)}</h3><table><thead><tr>")
        parts.extend(f"<th>{html.escape(column)}</th>" for column in table.columns)
        parts.append("</tr></thead><tbody>")
        for row in table.rows:
            parts.append("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>")
        parts.append("</tbody></table>")
    parts.append("</body></html>\n")
    return "".join(parts)


RENDERERS = {"markdown": render_markdown, "csv": render_csv, "html": render_html}
