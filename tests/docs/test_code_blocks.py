"""Every example of the documentation is tested: the ``bash``, ``sh``, ``console`` and ``python`` blocks of
every page under ``docs/`` and of ``README.md`` run in order, page by page, in a scratch folder of the page's
own, as the Contributing page describes (``code_blocks.py``: the markers and the runners).

- ``test_page_examples[PAGE]`` (fast lane): the page's blocks that are not marked ``slow`` or ``server``;
- ``test_page_examples_slow[PAGE]`` (slow lane): all its blocks that run, in order, for a page with slow ones
  (a slow block may need what a fast one before it made);
- ``test_skipped_example[PAGE:LINE]``: one per block marked ``skip``, reported as skipped with its reason.

A page's example that stops working fails its page's test, naming the block's line.
"""

from __future__ import annotations

import doctest
from pathlib import Path

import code_blocks
import pytest
from code_blocks import (
    Block,
    MarkerError,
    PythonSession,
    block_environment,
    page_blocks,
    run_setup,
    run_shell_block,
)

ROOT = Path(__file__).resolve().parents[2]
FAST_TIMEOUT = 180.0
SLOW_TIMEOUT = 1200.0


def _pages() -> list[str]:
    pages = sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "docs").rglob("*.md"))
    return ["README.md", *pages]


def _collect() -> tuple[dict[str, list[Block]], list[str]]:
    blocks, errors = {}, []
    for page in _pages():
        try:
            blocks[page] = page_blocks((ROOT / page).read_text(encoding="utf-8"), page)
        except MarkerError as exc:
            errors.append(str(exc))
            blocks[page] = []
    return blocks, errors


BLOCKS, MARKER_ERRORS = _collect()
SKIPPED = [block for blocks in BLOCKS.values() for block in blocks if block.marker.skip is not None]
FAST_PAGES = [
    page
    for page, blocks in BLOCKS.items()
    if any(not b.marker.in_slow_lane and b.marker.skip is None for b in blocks)
]
SLOW_PAGES = [
    page
    for page, blocks in BLOCKS.items()
    if any(b.marker.in_slow_lane and b.marker.skip is None for b in blocks)
]


def test_every_marker_is_known_and_on_a_block() -> None:
    assert not MARKER_ERRORS, "\n".join(MARKER_ERRORS)


def test_the_marker_parser_and_page_reader() -> None:
    result = doctest.testmod(code_blocks, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 8


def test_the_pages_have_examples_that_run() -> None:
    running = [block for blocks in BLOCKS.values() for block in blocks if block.marker.skip is None]
    assert any(block.page == "README.md" for block in running)
    assert any(block.page.startswith("docs/") and not block.marker.in_slow_lane for block in running)


def _run_page(page: str, request: pytest.FixtureRequest, tmp_path: Path, *, slow: bool) -> int:
    """Run the page's blocks of this lane in order in ``tmp_path``; the number run."""
    chosen = [b for b in BLOCKS[page] if b.marker.skip is None and (slow or not b.marker.in_slow_lane)]
    data = None
    if any(block.marker.data for block in chosen):
        mirror = request.getfixturevalue("source_mirror")  # skips, with the reason, without the data mirror
        data = {"SCRAMBLED_BENCH_SOURCE_DIR": str(mirror)}
    server = request.getfixturevalue("llama_server") if any(b.marker.server for b in chosen) else None
    env = block_environment(tmp_path, data=data, server=server)
    timeout = SLOW_TIMEOUT if slow else FAST_TIMEOUT
    session: PythonSession | None = None
    try:
        for block in chosen:
            run_setup(block, tmp_path, env, timeout)
            if block.language == "python":
                session = session or PythonSession(tmp_path, env)
                session.run(block, timeout)
            else:
                url = server.root_url if (server is not None and block.marker.server) else ""
                run_shell_block(block, tmp_path, env, timeout, server_url=url)
    finally:
        if session is not None:
            session.close()
    return len(chosen)


@pytest.mark.parametrize("page", FAST_PAGES)
def test_page_examples(page: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    _run_page(page, request, tmp_path, slow=False)


@pytest.mark.slow
@pytest.mark.parametrize("page", SLOW_PAGES)
def test_page_examples_slow(page: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    _run_page(page, request, tmp_path, slow=True)


@pytest.mark.parametrize("block", SKIPPED, ids=[block.where for block in SKIPPED])
def test_skipped_example(block: Block) -> None:
    pytest.skip(f"{block.where}: {block.marker.skip}")


def _block(code: str, language: str = "shell", marker: str = "") -> Block:
    from code_blocks import parse_marker

    return Block("p.md", 3, language, code, parse_marker(marker))


def test_an_example_that_stops_working_fails_naming_its_line(tmp_path: Path) -> None:
    """The runners fail a block that does not do what its page says, and pass one that does."""
    from code_blocks import BlockFailed

    env = block_environment(tmp_path, data=None, server=None)
    run_shell_block(_block("echo made > made.txt\n"), tmp_path, env, FAST_TIMEOUT)
    run_shell_block(_block("test -f made.txt; exit 4\n", marker="exit 4"), tmp_path, env, FAST_TIMEOUT)
    with pytest.raises(BlockFailed, match=r"p\.md:3: exited 1, the page expects 0"):
        run_shell_block(_block("false\necho never\n"), tmp_path, env, FAST_TIMEOUT)  # set -e
    run_shell_block(_block("$ printf 'a\\nb\\n'\na\n...\n", "console"), tmp_path, env, FAST_TIMEOUT)
    with pytest.raises(BlockFailed, match="printed"):
        run_shell_block(_block("$ echo a\nb\n", "console"), tmp_path, env, FAST_TIMEOUT)
    session = PythonSession(tmp_path, env)
    try:
        session.run(_block("x = 41\nprint('not a reply')\n", "python"), FAST_TIMEOUT)
        session.run(_block(">>> x + 1\n42\n>>> y = x\n", "python"), FAST_TIMEOUT)
        session.run(_block("assert y == 41\n", "python"), FAST_TIMEOUT)  # one namespace per page
        with pytest.raises(BlockFailed, match=r"(?s)raised.*p\.md.*line 5.*ZeroDivisionError"):
            session.run(_block("a = 1\n1 / 0\n", "python"), FAST_TIMEOUT)  # the page's line numbers
        with pytest.raises(BlockFailed, match="the doctest failed"):
            session.run(_block(">>> x\n40\n", "python"), FAST_TIMEOUT)
    finally:
        session.close()


def test_the_examples_run_offline_with_the_test_environment(tmp_path: Path) -> None:
    env = block_environment(tmp_path, data=None, server=None)
    assert env["HF_HUB_OFFLINE"] == "1" and "SCRAMBLED_BENCH_SOURCE_DIR" not in env
    import sys

    bin_dir = Path(sys.executable).parent
    script = f'test "$(command -v scrambled-bench)" = "{bin_dir}/scrambled-bench"\ntest "$(command -v python)" = "{bin_dir}/python"\n'
    run_shell_block(_block(script), tmp_path, env, FAST_TIMEOUT)
