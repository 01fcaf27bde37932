"""Rendering the report's tables: markdown, CSV and a standalone HTML page (pure functions of the tables)."""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Sequence

from scrambled_bench.report.instances import InstancePair, render_instances
from scrambled_bench.tables import ReportTable


def render_markdown(tables: Sequence[ReportTable]) -> str:
    """Pipe tables with a heading each, the caption below the heading and the footnotes below the table.

    >>> table = ReportTable("t", "Title", ["a", "b"], [["1", "x|y"]], notes=["[1] why"], caption="Read me.")
    >>> print(render_markdown([table]))
    ### Title
    <BLANKLINE>
    *Read me.*
    <BLANKLINE>
    | a | b |
    | --- | --- |
    | 1 | x\\|y |
    <BLANKLINE>
    - [1] why
    <BLANKLINE>
    """
    out = []
    for table in tables:
        out.append(f"### {table.title}\n")
        if table.caption:
            out.append(f"*{table.caption}*\n")
        out.append("| " + " | ".join(table.columns) + " |")
        out.append("| " + " | ".join("---" for _ in table.columns) + " |")
        for row in table.rows:
            out.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
        out.append("")
        if table.notes:
            out.extend(f"- {note}" for note in table.notes)
            out.append("")
    return "\n".join(out)


def render_csv(tables: Sequence[ReportTable]) -> str:
    """One long CSV: ``table, <columns>`` per block, a header row before each table's rows; a table's caption
    and footnotes follow its rows as ``<key>, caption|note, <text>``.

    >>> print(render_csv([ReportTable("t", "T", ["a"], [["1"]], notes=["[1] why"])]), end="")
    table,a
    t,1
    t,note,[1] why
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for table in tables:
        writer.writerow(["table", *table.columns])
        for row in table.rows:
            writer.writerow([table.key, *row])
        if table.caption:
            writer.writerow([table.key, "caption", table.caption])
        for note in table.notes:
            writer.writerow([table.key, "note", note])
    return buffer.getvalue()


STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1400px;padding:0 1em;
color:#222}
nav a{margin-right:1em}
table{border-collapse:collapse;margin:0.5em 0 0.5em}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;font-variant-numeric:tabular-nums}
td:first-child,th:first-child,td:nth-child(2){text-align:left}
tr.paper td{color:#555;font-style:italic;background:#f6f6f6}
p.caption{font-style:italic;max-width:100em}
ul.notes{font-size:0.9em;color:#444}
figure.plot{margin:1em 0}
figure.plot svg{max-width:100%;height:auto}
table.settings td{text-align:left;font-family:ui-monospace,monospace;font-size:0.85em}
td.prompt,td.choices,td.output{text-align:left;white-space:pre-wrap;font-family:ui-monospace,monospace;
font-size:0.8em;vertical-align:top;max-width:40em}
td.choices ol{margin:0;padding-left:1.5em;white-space:normal}
mark{background:#ffe08a}
"""
"""The page's one stylesheet: inline, so the file needs nothing beside it."""

PAPER_ROW_SUFFIX = " (paper)"


def _html_table(table: ReportTable) -> str:
    parts = [f"<section class='report-table' id='table-{html.escape(table.key)}'>"]
    parts.append(f"<h3>{html.escape(table.title)}</h3>")
    if table.caption:
        parts.append(f"<p class='caption'>{html.escape(table.caption)}</p>")
    parts.append(f"<table data-key='{html.escape(table.key)}'><thead><tr>")
    parts.extend(f"<th>{html.escape(column)}</th>" for column in table.columns)
    parts.append("</tr></thead><tbody>")
    for row in table.rows:
        marked = " class='paper'" if row and row[0].endswith(PAPER_ROW_SUFFIX) else ""
        parts.append(f"<tr{marked}>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>")
    parts.append("</tbody></table>")
    if table.notes:
        parts.append(
            "<ul class='notes'>" + "".join(f"<li>{html.escape(n)}</li>" for n in table.notes) + "</ul>"
        )
    parts.append("</section>")
    return "".join(parts)


def render_html(
    tables: Sequence[ReportTable],
    *,
    figures: Sequence[tuple[str, str, str]] = (),
    comparison: Sequence[ReportTable] = (),
    runs: Sequence[tuple[str, Sequence[tuple[str, str]]]] = (),
    instances: Sequence[InstancePair] = (),
    title: str = "Scrambled Bench report",
) -> str:
    """One self-contained HTML page, every text escaped: the tables (captions and footnotes with them), the
    ``figures`` as inline SVG (name, title, SVG text), the ``comparison`` tables, per run its settings
    and fingerprints (label, (name, value) pairs), and logged ``instances`` of scrambled variants beside the
    originals (``report --from HARNESS DIR``). No script, no file or address outside the page.

    >>> page = render_html([ReportTable("t", "T", ["model"], [["a<b"], ["GPT-4 (paper)"]])])
    >>> page.startswith("<!doctype html>"), "<td>a&lt;b</td>" in page, "<tr class='paper'>" in page
    (True, True, True)
    """
    sections = [("tables", "Tables", "".join(_html_table(table) for table in tables))]
    if figures:
        body = "".join(
            f"<figure class='plot' id='figure-{html.escape(name)}' data-name='{html.escape(name)}'>{svg}"
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
            for name, caption, svg in figures
        )
        sections.append(("figures", "Figures", body))
    if comparison:
        sections.append(("comparison", "Paired comparison", "".join(_html_table(t) for t in comparison)))
    if runs:
        body = ""
        for label, details in runs:
            rows = "".join(
                f"<tr><th>{html.escape(name)}</th><td>{html.escape(value)}</td></tr>"
                for name, value in details
            )
            body += f"<section class='run'><h3>{html.escape(label)}</h3><table class='settings'>{rows}</table></section>"
        sections.append(("runs", "Runs: settings and fingerprints", body))
    if instances:
        sections.append(
            ("instances", "Logged instances: canonical and scrambled", render_instances(instances))
        )
    nav = "".join(f"<a href='#{key}'>{html.escape(name)}</a>" for key, name, _ in sections)
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<header><h1>{html.escape(title)}</h1><nav>{nav}</nav></header>",
    ]
    parts += [
        f"<section id='{key}'><h2>{html.escape(name)}</h2>{body}</section>" for key, name, body in sections
    ]
    parts.append("</body></html>\n")
    return "".join(parts)


RENDERERS = {"markdown": render_markdown, "csv": render_csv, "html": render_html}
