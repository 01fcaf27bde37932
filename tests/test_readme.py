"""The README's Python examples run as doctests, so the documented library calls keep working."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def python_sessions(text: str) -> list[str]:
    """The ```python blocks of a markdown text that are interactive sessions (they hold ``>>>``)."""
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    return [block for block in blocks if ">>>" in block]


def test_the_readme_has_a_library_example() -> None:
    sessions = python_sessions(README.read_text(encoding="utf-8"))
    assert any("evaluate_model" in session for session in sessions)


@pytest.mark.slow
def test_readme_sessions_run(source_mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs the embedded model on a few samples, in a fresh folder, building the data from the mirror."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCRAMBLED_BENCH_SOURCE_DIR", str(source_mirror))
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for index, session in enumerate(python_sessions(README.read_text(encoding="utf-8"))):
        test = parser.get_doctest(session, {}, f"README session {index}", str(README), 0)
        runner.run(test)
    assert runner.failures == 0 and runner.tries > 0


def test_the_readme_lists_the_suites_as_run_help_does() -> None:
    """Help and README are made from the same definition (``SUITES``): each suite line appears in both."""
    from scrambled_bench.evaluation.suites import suites_help

    text = " ".join(README.read_text(encoding="utf-8").split())
    for line in suites_help().splitlines():
        name, description = line.split(": ", 1)
        assert f"- {name}: {description}" in text, line
