"""The documentation site builds strictly (``mkdocs build --strict``, as CI builds it: a broken link, a missing
page or an API reference that does not resolve fails), and the built site has every page of the nav, the
generated type, command-line and API references (every command and option of ``scrambled-bench --help``,
every scramble type with its definition and example, every documented module) and a search index. A slow
test serves the built site on 127.0.0.1 and opens it in headless Chromium: the navigation links resolve and
search finds pages.

Needs the ``docs`` extra (``pip install -e ".[docs]" -c constraints/test.txt``); skips with that reason
without it.
"""

from __future__ import annotations

import functools
import html
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("mkdocs", reason='needs the docs extra: pip install -e ".[docs]" -c constraints/test.txt')
pytest.importorskip(
    "material", reason='needs the docs extra: pip install -e ".[docs]" -c constraints/test.txt'
)

from scrambled_bench.builder.type_reference import type_entries
from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.evaluate_cli.reference import API_PAGES, CLI_PAGE, TYPES_PAGE

ROOT = Path(__file__).resolve().parents[2]
MKDOCS = Path(sys.executable).with_name("mkdocs")
#: what a strict build took on a shared 2-core machine: about 8 s (the fast lane's bound is a few seconds a
#: test; the build is shared by every check below)
BUILD_TIMEOUT = 300


def _site_path(page: str) -> str:
    """Where ``mkdocs build`` puts the HTML of ``docs/<page>`` (directory URLs).

    >>> _site_path("index.md"), _site_path("reference/api/index.md"), _site_path("reference/cli.md")
    ('index.html', 'reference/api/index.html', 'reference/cli/index.html')
    """
    stem = page.removesuffix(".md")
    if stem == "index" or stem.endswith("/index"):
        return f"{stem}.html"
    return f"{stem}/index.html"


def _nav_pages(nav: Any) -> list[str]:
    """Every page a nav (mkdocs.yml's ``nav``) names, in order."""
    if isinstance(nav, str):
        return [nav] if nav.endswith(".md") else []
    if isinstance(nav, list):
        return [page for item in nav for page in _nav_pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return []


def _text(path: Path) -> str:
    """The visible text of a built page's article, tags dropped, entities decoded, whitespace collapsed."""
    page = path.read_text(encoding="utf-8")
    start, end = page.find("<article"), page.rfind("</article>")
    body = page[start:end] if start >= 0 else page
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", body, flags=re.DOTALL)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", body)).split())


@pytest.fixture(scope="module")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``mkdocs build --strict`` of the repository into a scratch folder, once for this module."""
    site = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    started = time.monotonic()
    result = subprocess.run(
        [str(MKDOCS), "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT, check=False,
    )  # fmt: skip
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    print(f"mkdocs build --strict took {time.monotonic() - started:.1f} s")
    return site


def test_every_page_of_the_nav_is_built(built_site: Path) -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = _nav_pages(config["nav"])
    assert {"index.md", TYPES_PAGE, CLI_PAGE} <= set(pages)
    assert "readme.md" not in pages, "the README is the repository's front door, not a page of the site"
    assert {page.path for page in API_PAGES} <= set(pages), "a page of API_PAGES is missing from the nav"
    for page in pages:
        assert (built_site / _site_path(page)).is_file(), f"{page} is in the nav but was not built"


def _help(*argv: str) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*argv, "--help"]) == 0
    return out.getvalue()


def _commands(help_text: str) -> list[str]:
    """The command names of a group's ``--help`` ("Commands:" section)."""
    section = help_text.split("\nCommands:\n", 1)[1] if "\nCommands:\n" in help_text else ""
    return [line.split()[0] for line in section.splitlines() if line.startswith("  ") and line.split()]


def _options(help_text: str) -> list[str]:
    """Every flag (``-x``, ``--long``, ``--no-long``) of a command's ``--help``: the first column of its
    "Options:" section (an option's help, which may name other options, left out)."""
    section = help_text.split("\nOptions:\n", 1)[1].split("\n\n", 1)[0]
    flags = []
    for line in section.splitlines():
        if re.match(r"^  -", line):
            syntax = re.split(r"\s{2,}", line.strip())[0]
            flags += re.findall(r"(?<![\w-])--?[A-Za-z][\w-]*", syntax)
    return flags


def test_the_cli_reference_has_every_command_and_option_of_help(built_site: Path) -> None:
    page = _text(built_site / _site_path(CLI_PAGE))
    paths = [[command] for command in _commands(_help())]
    assert ["list"] in paths and ["report"] in paths
    for group in [path for path in paths if _commands(_help(*path))]:
        paths += [[*group, sub] for sub in _commands(_help(*group))]
    assert ["list", "types"] in paths and ["list", "variants"] in paths
    for path in paths:
        name = " ".join(["scrambled-bench", *path])
        assert f"Usage: {name} " in page, f"no section for {name}"
        section = page.split(f"Usage: {name} ", 1)[1]
        for flag in _options(_help(*path)):
            assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", section), (
                f"{name}: {flag} not in the reference"
            )
    # a hidden (deprecated) option stays out, as in --help
    assert "--from-lm-eval" not in page and "--from-lm-eval" not in _help("report")


def test_the_type_reference_has_every_type_with_its_definition_and_example(built_site: Path) -> None:
    page = _text(built_site / _site_path(TYPES_PAGE))
    for entry in type_entries():
        assert entry.name in page and entry.definition in page, entry.name
        assert entry.examples, entry.name
        for name, example in entry.examples:
            assert f"{name} {' '.join(example.split())}" in page, f"{name}'s example is not on the page"


def test_every_documented_module_is_rendered(built_site: Path) -> None:
    for page in API_PAGES:
        text = (built_site / _site_path(page.path)).read_text(encoding="utf-8")
        for module in page.modules:
            assert f'id="{module}"' in text, f"{module} is not rendered on {page.path}"
    metrics = _text(built_site / _site_path("reference/api/metrics.md"))
    assert "Metric Card for Recovery Rate" in metrics and "recovery_rate([0, 1], [4, 4])" in metrics


def test_the_search_index_holds_every_page(built_site: Path) -> None:
    index = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    locations = {entry["location"].split("#")[0] for entry in index["docs"]}
    assert {"", "reference/scramble-types/", "reference/cli/", "reference/api/metrics/"} <= locations
    assert any(
        "kfl" in entry["text"] for entry in index["docs"] if entry["location"].startswith("reference/")
    )


def test_a_generated_page_under_docs_is_refused() -> None:
    """A file under docs/ where a generated page goes would hide it: the hook refuses it."""
    from mkdocs.config import load_config
    from mkdocs.exceptions import PluginError
    from mkdocs.structure.files import File, Files

    config = load_config(str(ROOT / "mkdocs.yml"))
    hooks = config["hooks"]["scripts/mkdocs_hooks.py"]
    stale = File(CLI_PAGE, str(ROOT / "docs"), config.site_dir, config.use_directory_urls)
    with pytest.raises(
        PluginError, match=r"docs/reference/cli\.md: generated when the site is built; remove the file"
    ):
        hooks.on_files(Files([stale]), config=config)


# ------------------------------------------------------------------------------------------- in a browser


@pytest.fixture(scope="module")
def served_site(built_site: Path) -> Iterator[str]:
    """The built site over HTTP on 127.0.0.1 (python's http.server in a thread); its root URL."""
    handler = functools.partial(_QuietHandler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


NAV_LINKS = """Array.from(document.querySelectorAll('nav.md-nav--primary a.md-nav__link[href]'))
  .map(a => a.href)"""

SEARCH = """(async () => {
  const input = document.querySelector('input.md-search__input');
  input.focus();
  input.value = 'scramble types';
  for (const kind of ['focus', 'input', 'keyup']) input.dispatchEvent(new Event(kind, {bubbles: true}));
  const deadline = Date.now() + 30000;
  while (Date.now() < deadline) {
    const items = document.querySelectorAll('.md-search-result__item a[href]');
    if (items.length) return Array.from(items).map(a => a.href);
    await new Promise(resolve => setTimeout(resolve, 200));
    input.dispatchEvent(new Event('keyup', {bubbles: true}));
  }
  return [];
})()"""


@pytest.mark.slow
def test_the_start_page_navigates_and_searches_in_a_browser(chromium_browser, served_site: str) -> None:
    from chromium import require_browser

    browser = require_browser(chromium_browser)
    rendered = browser.render(served_site, NAV_LINKS)
    links = sorted(set(rendered.value))
    assert len(links) >= 20, links
    assert not rendered.console_errors, rendered.console_errors
    outside = [
        url for url in rendered.requests if not url.startswith(served_site) and not url.startswith("data:")
    ]
    assert not outside, f"the page fetched from outside the site: {outside}"
    for link in links:
        assert link.startswith(served_site), link
        with urllib.request.urlopen(link, timeout=10) as response:
            assert response.status == 200 and b"<article" in response.read(), link
    found = browser.render(served_site, SEARCH).value
    assert found, "search returned nothing for 'scramble types'"
    paths = {urllib.parse.urlsplit(url).path for url in found}
    assert "/reference/scramble-types/" in paths, paths
