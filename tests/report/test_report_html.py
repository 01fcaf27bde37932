"""`report --format html`: one self-contained page, rendered in real headless Chromium: its tables hold the
report's numbers, its SVG figures are drawn with a size, it logs no console error and asks for nothing
outside the file. Skips with a reason where no Chromium is installed (CI installs Debian's, .ci/run)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from chromium import require_browser
from report_runs import skilled_run

from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.report import build_tables, label_runs, load_run, select_paper_models

INSPECT = """JSON.stringify({
  title: document.title,
  tables: [...document.querySelectorAll('table[data-key]')].map(t => ({
    key: t.dataset.key,
    columns: [...t.querySelectorAll('thead th')].map(c => c.textContent),
    rows: [...t.querySelectorAll('tbody tr')].map(r => [...r.cells].map(c => c.textContent)),
    paperRows: t.querySelectorAll('tbody tr.paper').length,
    visible: t.getBoundingClientRect().width > 0 && t.getBoundingClientRect().height > 0,
  })),
  figures: [...document.querySelectorAll('figure.plot')].map(f => {
    const svg = f.querySelector('svg'), box = svg.getBoundingClientRect();
    return {name: f.dataset.name, width: box.width, height: box.height, texts: svg.querySelectorAll('text').length,
            caption: f.querySelector('figcaption').textContent};
  }),
  comparisonRows: document.querySelectorAll('#comparison tbody tr').length,
  runs: [...document.querySelectorAll('section.run')].map(s => Object.fromEntries(
    [...s.querySelectorAll('tr')].map(r => [r.querySelector('th').textContent, r.querySelector('td').textContent]))),
  scripts: document.querySelectorAll('script').length,
})"""


@pytest.fixture(scope="module")
def report_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    root = tmp_path_factory.mktemp("html")
    runs = [
        skilled_run(root / "big", "big-model", 0.9),
        skilled_run(root / "small", "small-model", 0.5, seed=1),
    ]
    page = root / "report.html"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(
            [
                "report",
                *map(str, runs),
                "--paper",
                "gpt-4,llama-2-7b",
                "--compare",
                "--params",
                "big-model=7B",
                "--params",
                "small-model=1B",
                "--format",
                "html",
                "-o",
                str(page),
            ]
        )
    assert code == 0, err.getvalue()
    return page, runs


def test_html_report_renders_in_chromium(
    report_page: tuple[Path, list[Path]], chromium_browser, tmp_path: Path
) -> None:
    page, run_paths = report_page
    rendered = require_browser(chromium_browser).render(page, INSPECT)
    assert rendered.console_errors == []
    assert rendered.requests == [page.resolve().as_uri()]  # self-contained: nothing else is fetched
    seen = json.loads(rendered.value)
    assert seen["title"] == "Scrambled Bench report" and seen["scripts"] == 0

    # the tables hold the report's numbers, cell for cell, the paper's rows marked
    runs = label_runs([load_run(p) for p in run_paths])
    expected = {t.key: t for t in build_tables(runs, paper=select_paper_models("gpt-4,llama-2-7b"))}
    tables = {t["key"]: t for t in seen["tables"]}
    assert set(expected) <= set(tables)
    for key, table in expected.items():
        assert tables[key]["columns"] == table.columns and tables[key]["rows"] == table.rows, key
        assert tables[key]["visible"]
    gpt4 = next(r for r in tables["scrqa-dream"]["rows"] if r[:2] == ["GPT-4 (paper)", "Acc"])
    assert gpt4[2] == "96.68" and tables["scrqa-dream"]["paperRows"] == 4

    # the figures are drawn, with a size and their text
    figures = {f["name"]: f for f in seen["figures"]}
    assert set(figures) == {"scrrec", "scrqa", "dream_categories", "aqua", "scale", "letters"}
    for name, figure in figures.items():
        assert figure["width"] > 100 and figure["height"] > 100 and figure["texts"] > 5, name
    # the caption says what the title over the figure does not: which runs and which of the paper's models
    caption = figures["scale"]["caption"]
    assert "by parameter count" not in caption and "big-model" in caption and "GPT-4" in caption

    # the comparison and each run's settings and fingerprints
    assert seen["comparisonRows"] > 10
    assert [r["model"] for r in seen["runs"]] == ["big-model", "small-model"]
    assert all(
        len(r["run fingerprint"]) == 16 and r["build"].startswith("version 1.0.0") for r in seen["runs"]
    )
    assert seen["runs"][0]["settings.api_key_given"] == "true"

    # the screenshot is a picture of something
    import matplotlib.image

    shot = tmp_path / "report.png"
    shot.write_bytes(rendered.screenshot)
    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (1000, 1400) and pixels.std() > 0.05


def test_html_report_is_one_file_without_scripts(report_page: tuple[Path, list[Path]]) -> None:
    import re

    page, _ = report_page
    text = page.read_text()
    assert text.startswith("<!doctype html>") and not re.search(r"<script|<link|<img|<iframe", text)
    assert not re.search(r"""(?:src|href)\s*=\s*["'](?:https?:|//|file:)""", text)  # nothing to fetch
    assert "<svg" in text and "sk-" not in text
