"""The README keeps its library example and lists the suites as ``run --help`` does. Its examples themselves
(the ``>>>`` sessions as doctests, and every other block) run in tests/docs/test_code_blocks.py."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_sessions(text: str) -> list[str]:
    """The ```python blocks of a markdown text that are interactive sessions (they hold ``>>>``)."""
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    return [block for block in blocks if ">>>" in block]


def test_the_readme_has_a_library_example() -> None:
    sessions = python_sessions(README.read_text(encoding="utf-8"))
    assert any("evaluate_model" in session for session in sessions)


def test_the_readme_lists_the_suites_as_run_help_does() -> None:
    """Help and README are made from the same definition (``SUITES``): each suite line appears in both."""
    from scrambled_bench.evaluation.suites import suites_help

    text = " ".join(README.read_text(encoding="utf-8").split())
    for line in suites_help().splitlines():
        name, description = line.split(": ", 1)
        assert f"- {name}: {description}" in text, line
