"""The check every harness's end-to-end test makes of ``report --from HARNESS DIR``: the tables give the
``score`` section's numbers, and the HTML page, rendered in real headless Chromium, names the model and the
harness in its title, draws the chart of the score per type, and shows each variant's logged documents in
numeric order with exactly the changed words marked, the choices and the model's outputs beside the
canonical task's."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from chromium import require_browser

PROMPT_CELL = re.compile(r"<td class='prompt'>(.*?)</td><td class='prompt'>(.*?)</td>", re.DOTALL)
SHOWN = """JSON.stringify({
  title: document.title,
  heading: document.querySelector('h1').textContent,
  charts: [...document.querySelectorAll('figure.plot svg')].map(s => s.getBoundingClientRect().width),
  marks: document.querySelectorAll('section.instances mark').length,
  outputs: document.querySelectorAll('section.instances td.output').length,
  documents: [...document.querySelectorAll('section.instances')].map(s =>
    [...new Set([...s.querySelectorAll('tr th:first-child')].map(c => c.textContent).filter(t => t !== 'document'))]),
  columns: [...document.querySelectorAll('table[data-key] thead th')].map(c => c.textContent),
})"""


def check_variants_report(
    main: Callable[[list[str]], int],
    capsys: pytest.CaptureFixture[str],
    harness: str,
    folder: Path,
    section: Mapping[str, Any],
    tmp_path: Path,
    *,
    model: str,
    title: str,
    label: Callable[[str], str],
    browser: Any,
) -> None:
    """``report --from harness folder`` in CSV and HTML against ``section`` (``score``'s entry of one
    canonical task); ``label`` is the harness's readable name of a metric key; ``browser`` is the session's
    ``chromium_browser``."""
    capsys.readouterr()
    assert main(["report", "--from", harness, str(folder), "--n-resamples", "200", "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    values = {(row[1], row[2]): row[3] for row in rows if len(row) > 3 and row[0] != "table"}
    for key, metric in section["metrics"].items():
        assert values[("canonical", label(key))] == f"{100 * metric['value']:.2f}"
    for scramble_type, variant in section["types"].items():
        for key, metric in variant["metrics"].items():
            assert values[(scramble_type, label(key))] == f"{100 * metric['value']:.2f}"

    page = tmp_path / f"{harness}-variants.html"
    assert (
        main(
            [
                "report",
                "--from",
                harness,
                str(folder),
                "--n-resamples",
                "200",
                "--format",
                "html",
                "-o",
                str(page),
            ]
        )
        == 0
    )
    text = page.read_text(encoding="utf-8")
    assert f"<title>Scrambled variants: {html.escape(model)} ({html.escape(title)})</title>" in text
    pairs = PROMPT_CELL.findall(text)
    assert len(pairs) == 3 * len(section["types"])  # three logged documents per type
    for original, marked in pairs:
        scrambled = html.unescape(re.sub(r"</?mark>", "", marked))
        original = html.unescape(original)
        assert len(scrambled.split()) == len(original.split())  # scrambling permutes letters, not words
        changed = {html.unescape(word) for word in re.findall(r"<mark>(.*?)</mark>", marked)}
        differing = {after for before, after in zip(original.split(), scrambled.split()) if before != after}
        assert set(" ".join(changed).split()) == differing

    rendered = require_browser(browser).render(page, SHOWN)
    assert rendered.console_errors == [] and rendered.requests == [page.resolve().as_uri()]
    seen = json.loads(rendered.value)
    assert model in seen["title"] and model in seen["heading"]
    assert len(seen["charts"]) == 1 and seen["charts"][0] > 200  # the chart of the score per type, drawn
    assert seen["marks"] > 0 and seen["outputs"] == 2 * len(pairs)
    for shown in seen["documents"]:
        assert shown == sorted(shown, key=lambda doc: (0, int(doc), "") if doc.isdigit() else (1, 0, doc))
    assert "difference (percentage points)" in seen["columns"]

    assert main(["report", "--from", harness, str(folder), "--paper"]) == 2  # run-folder options are refused
