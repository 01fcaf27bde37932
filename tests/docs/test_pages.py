"""Facts the documentation's pages must keep, checked against the code where the code holds them: the library
example and the suites on the Evaluate page (they used to be the README's), the one table of which server
serves which task type, the options ``report --from`` refuses, the test lanes on the Contributing page, and
the figures (real PNG files of modest size, each shown with how it was made, each remade by
``scripts/make_doc_figures.sh``). No page links the README's old place on the site, ``readme.md``."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FIGURE_LIMIT = 300 * 1024
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _pages() -> dict[str, str]:
    return {
        path.relative_to(DOCS).as_posix(): path.read_text(encoding="utf-8") for path in DOCS.rglob("*.md")
    }


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_evaluate_page_has_the_library_example() -> None:
    sessions = [
        block
        for block in re.findall(r"```python\n(.*?)```", _page("evaluate.md"), re.DOTALL)
        if ">>>" in block
    ]
    assert any("evaluate_model" in session and "RunSettings" in session for session in sessions)


def test_the_evaluate_page_lists_the_suites_as_run_help_does() -> None:
    """Help and page are made from the same definition (``SUITES``): each suite line appears in both."""
    from scrambled_bench.evaluation.suites import suites_help

    text = _flat(_page("evaluate.md"))
    for line in suites_help().splitlines():
        name, description = line.split(": ", 1)
        assert f"- {name}: {description}" in text, line


def test_no_page_links_the_readme_page() -> None:
    linking = [name for name, text in _pages().items() if re.search(r"\]\([./]*readme\.md", text)]
    assert not linking, f"pages linking readme.md, which the site no longer has: {linking}"


def test_one_table_says_which_server_serves_which_task_type() -> None:
    header = "| server | generation | log-likelihood | source |"
    holding = [name for name, text in _pages().items() if header in text]
    assert holding == ["harnesses/servers.md"], holding
    table = _page("harnesses/servers.md").split(header, 1)[1].split("\n\n", 1)[0]
    for server in (
        "llama-cpp-python",
        "llama-server",
        "vLLM",
        "SGLang",
        "TGI",
        "Ollama",
        "OpenAI",
        "Inference Providers",
    ):
        assert server in table, server


def test_the_harness_page_names_the_options_report_from_refuses() -> None:
    """The page lists exactly what ``report --from`` refuses (``--plot`` works there: it draws the charts)."""
    from scrambled_bench.report.build import RUN_ONLY_OPTIONS

    text = _flat(_page("harnesses/index.md"))
    sentence = text.split("The options about run folders", 1)[1].split("one line each", 1)[0]
    named = set(re.findall(r"`(--[a-z-]+)`", sentence))
    assert named == {*RUN_ONLY_OPTIONS.values(), "--params"}, named
    assert "--plot FIGDIR" in text


def test_the_contributing_page_holds_the_test_lanes() -> None:
    text = _page("contributing.md")
    assert (
        '`.venv/bin/pytest -m "not slow" -n 2`' in text and "`.venv/bin/pytest -n 2 --durations=25`" in text
    )
    assert "@pytest.mark.slow" in text


def _shown_figures() -> list[tuple[str, str, str]]:
    """Each image a page shows: its path under docs/, the page, and its caption (the first paragraph under it
    that is not an image: two views of one page share theirs)."""
    shown = []
    for name, text in _pages().items():
        for match in re.finditer(r"^!\[[^\]]*\]\(([^)\s]+)\)$", text, re.MULTILINE):
            path = (DOCS / name).parent.joinpath(match[1]).resolve().relative_to(DOCS.resolve()).as_posix()
            after = [part for part in text[match.end() :].split("\n\n") if part.strip()]
            caption = next((part for part in after if not part.lstrip().startswith("![")), "")
            shown.append((path, name, caption))
    return shown


def test_the_figures_are_real_pngs_of_modest_size_under_docs_figures() -> None:
    shown = {path for path, _, _ in _shown_figures()}
    assert {"figures/quickstart_scrqa.png", "figures/variants_page.png"} <= shown, sorted(shown)
    for path in shown:
        assert path.startswith("figures/") and path.endswith(".png"), path
        data = (DOCS / path).read_bytes()
        assert data.startswith(PNG_SIGNATURE), path
        assert len(data) < FIGURE_LIMIT, f"{path}: {len(data):,} bytes (at most {FIGURE_LIMIT:,})"
    committed = {path.relative_to(DOCS).as_posix() for path in (DOCS / "figures").iterdir()}
    assert not committed - shown, f"figures no page shows: {sorted(committed - shown)}"


def test_each_figure_says_how_it_was_made_and_the_script_remakes_it() -> None:
    script = (ROOT / "scripts" / "make_doc_figures.sh").read_text(encoding="utf-8")
    for path, page, caption in _shown_figures():
        assert "`scrambled-bench " in caption or "scrambled-bench run" in caption, (page, path, caption)
        # the probe's figure is a 24-minute run of its own, its command in its caption
        if path != "figures/probe_figure7.png":
            assert Path(path).name in script, f"scripts/make_doc_figures.sh does not remake {path}"
