"""The README is the repository's front door: at most 150 lines, its two set-up commands the very commands
``.ci/run`` runs (the quick start, and the test environment with the whole suite), and links to the
documentation's pages that resolve in a clone. Its examples themselves run in tests/docs/test_code_blocks.py;
what the README used to assert about the library example and the suites is checked on the page that now
holds them (tests/docs/test_pages.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CI = ROOT / ".ci" / "run"
MAX_LINES = 150
#: how both set-up commands make their virtual environment: with the pip and setuptools of today, not
#: those bundled with the Python that runs it (docs/contributing.md, "The installer")
VENV = "python3 -m venv --upgrade-deps .venv"


def shell_blocks(text: str) -> list[str]:
    """The ```bash blocks of a markdown text, each as one line (continuations joined).

    >>> shell_blocks("x\\n```bash\\na \\\\\\n  b\\n```\\n```toml\\nc\\n```\\n")
    ['a b']
    """
    blocks = re.findall(r"```(?:bash|sh)\n(.*?)```", text, flags=re.DOTALL)
    return [" ".join(re.sub(r"\\\n\s*", " ", block).split()) for block in blocks]


def ci_commands() -> tuple[str, list[str]]:
    """What ``.ci/run`` runs from the README: the quick start (one line, its output kept for a later test)
    and the test environment's commands up to the test command, in order.

    >>> quick, tests = ci_commands()
    >>> quick.endswith("scrambled-bench run"), tests[-1].startswith(".venv/bin/pytest")
    (True, True)
    """
    lines = [line.strip() for line in CI.read_text(encoding="utf-8").splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    [quick] = [line for line in lines if "scrambled-bench run" in line]
    after = lines[lines.index(quick) + 1 :]
    tests = [
        line
        for line in after
        if line == VENV or line.startswith((".venv/bin/pip install", ".venv/bin/pytest"))
    ]
    return quick, tests


def set_up_commands() -> dict[str, str]:
    """The README's two set-up commands as the shell blocks give them, by what each is: the quick start, and
    the test environment's commands joined into the one line of the test command."""
    quick, tests = ci_commands()
    return {"quick start": quick, "test command": " && ".join(tests)}


def test_the_readme_is_at_most_150_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, (
        f"README.md has {len(lines)} lines; the front door holds at most {MAX_LINES}"
    )


def test_the_readme_holds_the_two_set_up_commands_ci_runs() -> None:
    """The quick start and the test command of the README are what .ci/run runs, command for command."""
    quick, tests = ci_commands()
    assert len(tests) == 4 and tests[0] == VENV, tests
    assert quick.startswith(f"{VENV} && "), quick
    blocks = shell_blocks(README.read_text(encoding="utf-8"))
    for which, command in set_up_commands().items():
        assert command in blocks, f"the README's {which} is not .ci/run's: {command}"
    first = next(block for block in blocks if "scrambled-bench run" in block)
    assert first == quick, "the README's first command is the quick start"


@pytest.mark.parametrize(
    ("page", "which"), [("docs/index.md", "quick start"), ("docs/contributing.md", "test command")]
)
def test_the_documentation_repeats_the_readmes_set_up_commands_word_for_word(page: str, which: str) -> None:
    """The site's home page repeats the quick start and the contributors' page the test environment's
    command; a copy that drifted from the README (and so from what .ci/run runs) would send a reader off
    with a command nothing checks."""
    command = set_up_commands()[which]
    assert command in shell_blocks((ROOT / page).read_text(encoding="utf-8")), (
        f"{page} does not give the {which}"
    )


def test_the_readme_links_to_pages_that_exist() -> None:
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\((docs/[^)#\s]+)(?:#[^)]*)?\)", text)
    pages = {path.relative_to(ROOT).as_posix() for path in (ROOT / "docs").rglob("*.md")}
    assert {"docs/index.md", "docs/evaluate.md", "docs/harnesses/index.md", "docs/contributing.md"} <= set(
        targets
    )
    missing = sorted(set(targets) - pages)
    assert not missing, f"the README links to pages that do not exist: {missing}"
    assert "mkdocs serve" in text, "the README says how to build the site locally"


def test_the_readme_says_where_its_commands_run() -> None:
    """After the first command, the README's commands say which environment they run in."""
    text = README.read_text(encoding="utf-8")
    after = text.split("## What it does", 1)[1]
    assert "quick start's environment" in after.split("```", 1)[0]
    assert re.search(
        r"in the test environment[^\n]*:\n\n<!--[^\n]*-->\n```bash\n\.venv/bin/mkdocs serve", text
    )
