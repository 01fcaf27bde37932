"""The fenced code blocks of the documentation (``docs/**/*.md``) and of ``README.md``, the markers that say
how each runs, and the runners that run them (``test_code_blocks.py``; the markers are documented on the
Contributing page).

A marker is an HTML comment on the line just above a block's opening fence, ``<!-- test: ITEM; ITEM -->``.
The items: ``slow``, ``server``, ``data``, ``exit N``, and, last in a comment since each takes the rest of it,
``setup: COMMAND`` and ``skip KIND[: why]``. A ``<!-- test:`` comment attached to no block, or an item or
skip kind not listed here, is an error: a typo never skips a block silently.
"""

from __future__ import annotations

import contextlib
import doctest
import json
import os
import re
import select
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

LANGUAGES = {"bash": "shell", "sh": "shell", "console": "console", "python": "python", "pycon": "python"}
"""The fence languages that run, and how: a shell script, a console session, Python."""

SKIP_KINDS = {
    "network": "needs the network (a dataset or a model from the Hub, a download)",
    "gpu": "needs a GPU",
    "token": "writes to the Hugging Face Hub (needs an account and a token)",
    "cluster": "needs a Slurm or Ray cluster",
    "install": "changes the Python environment the tests run in",
    "daemon": "starts a server that runs until stopped",
    "synopsis": "a command's synopsis, with placeholders, not a command",
    "placeholder": "stands for your own files, model, server or organisation",
    "checkout": "runs in a clone of the repository, not in a scratch folder",
    "ci": ".ci/run runs it",
}
"""The kinds of ``<!-- test: skip KIND -->``, each with the reason the test report gives."""

#: the address the pages give the local OpenAI-compatible server; a ``server`` block runs against the test's
LOCAL_SERVER = "http://127.0.0.1:8080"
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
DATA_VARIABLES = ("SCRAMBLED_BENCH_SOURCE_DIR", "SCRAMBLED_BENCH_SHARED")


class MarkerError(ValueError):
    """A marker the runner does not know, or one attached to no block."""


@dataclass(frozen=True)
class Marker:
    """How a block runs (the defaults: in the fast lane, exit status 0, nothing before it)."""

    slow: bool = False
    server: bool = False
    data: bool = False
    exit: int = 0
    setup: str = ""
    skip: str | None = None
    """Why the block is not run (None: it runs)."""

    @property
    def in_slow_lane(self) -> bool:
        return self.slow or self.server


def parse_marker(text: str) -> Marker:
    """The marker of a comment's text (what follows ``test:``).

    >>> parse_marker(" slow; data ")
    Marker(slow=True, server=False, data=True, exit=0, setup='', skip=None)
    >>> parse_marker("server; exit 4").exit, parse_marker("data; setup: a; b").setup
    (4, 'a; b')
    >>> parse_marker("skip network: cais/mmlu comes from the Hub").skip
    'needs the network (a dataset or a model from the Hub, a download): cais/mmlu comes from the Hub'
    >>> parse_marker("slwo")
    Traceback (most recent call last):
    ...
    code_blocks.MarkerError: unknown marker item 'slwo' (known: slow, server, data, exit N, setup: COMMAND, skip KIND)
    """
    fields: dict[str, object] = {}
    rest = text.strip()
    while rest:
        if rest.startswith("setup:"):
            fields["setup"] = rest[len("setup:") :].strip()
            break
        if rest.startswith("skip"):
            kind, _, why = rest[len("skip") :].strip().partition(":")
            kind = kind.strip()
            if kind not in SKIP_KINDS:
                raise MarkerError(f"unknown skip kind {kind!r} (known: {', '.join(SKIP_KINDS)})")
            fields["skip"] = SKIP_KINDS[kind] + (f": {why.strip()}" if why.strip() else "")
            break
        item, _, rest = rest.partition(";")
        item, rest = item.strip(), rest.strip()
        if item in ("slow", "server", "data"):
            fields[item] = True
        elif re.fullmatch(r"exit \d+", item):
            fields["exit"] = int(item.split()[1])
        else:
            raise MarkerError(
                f"unknown marker item {item!r} (known: slow, server, data, exit N, setup: COMMAND, skip KIND)"
            )
    return Marker(**fields)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Block:
    """One fenced block that runs: its page (relative to the repository), the line of its opening fence, how
    it runs (``shell``, ``console``, ``python``), its code and its marker."""

    page: str
    line: int
    language: str
    code: str
    marker: Marker

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def is_doctest(self) -> bool:
        return self.language == "python" and any(
            line.lstrip().startswith(">>>") for line in self.code.splitlines()
        )


FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)")
COMMENT_START = "<!--"


def page_blocks(text: str, page: str) -> list[Block]:
    """The blocks of a markdown page that run (the languages of :data:`LANGUAGES`), in order, each with the
    marker of the comment just above its fence.

    >>> page = "Text\\n\\n<!-- test: slow -->\\n```bash\\necho hi\\n```\\n\\n```toml\\nx = 1\\n```\\n"
    >>> [(b.where, b.language, b.code, b.marker.slow) for b in page_blocks(page, "p.md")]
    [('p.md:4', 'shell', 'echo hi\\n', True)]
    >>> page_blocks("<!-- test: slow -->\\n\\n```bash\\necho\\n```\\n", "p.md")
    Traceback (most recent call last):
    ...
    code_blocks.MarkerError: p.md:1: a test marker must be on the line just above a code block's fence
    """
    lines = text.splitlines()
    blocks: list[Block] = []
    attached: set[int] = set()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, fence, info = opening.group("indent"), opening.group("fence"), opening.group("info").lower()
        end = index + 1
        while end < len(lines) and not (
            lines[end].strip().startswith(fence[0] * len(fence)) and lines[end].strip().strip(fence[0]) == ""
        ):
            end += 1
        body = [
            line[len(indent) :] if line.startswith(indent) else line.lstrip()
            for line in lines[index + 1 : end]
        ]
        if info in LANGUAGES:
            marker, comment_lines = _marker_above(lines, index, page)
            attached.update(comment_lines)
            blocks.append(Block(page, index + 1, LANGUAGES[info], "\n".join(body) + "\n", marker))
        index = end + 1
    stray = [
        number
        for number, line in enumerate(lines)
        if line.strip().startswith(f"{COMMENT_START} test:")
        and number not in attached
        and not _in_fence(lines, number)
    ]
    if stray:
        raise MarkerError(
            f"{page}:{stray[0] + 1}: a test marker must be on the line just above a code block's fence"
        )
    return blocks


def _in_fence(lines: list[str], number: int) -> bool:
    inside, fence = False, ""
    for line in lines[:number]:
        opening = FENCE.match(line)
        if opening is None:
            continue
        if not inside:
            inside, fence = True, opening.group("fence")
        elif line.strip().startswith(fence) and line.strip().strip(fence[0]) == "":
            inside = False
    return inside


def _marker_above(lines: list[str], fence_index: int, page: str) -> tuple[Marker, list[int]]:
    """The marker of the HTML comment ending on the line above ``fence_index`` (none: the default), and the
    lines that comment spans."""
    end = fence_index - 1
    if end < 0 or not lines[end].rstrip().endswith("-->"):
        return Marker(), []
    start = end
    while start >= 0 and COMMENT_START not in lines[start]:
        start -= 1
    comment = "\n".join(lines[start : end + 1]).strip()
    match = re.fullmatch(r"<!--\s*test:(.*?)-->", comment, flags=re.DOTALL)
    if match is None:
        return Marker(), []
    try:
        return parse_marker(match.group(1)), list(range(start, end + 1))
    except MarkerError as exc:
        raise MarkerError(f"{page}:{start + 1}: {exc}") from None


def console_steps(code: str) -> list[tuple[str, str]]:
    """A console session as (command, expected output) pairs: a ``$ `` line and its ``\\`` continuations,
    then the lines up to the next ``$ ``.

    >>> console_steps("$ echo a \\\\\\n  b\\na b\\n$ true\\n")
    [('echo a \\\\\\n  b', 'a b\\n'), ('true', '')]
    """
    steps: list[tuple[str, list[str]]] = []
    lines = code.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("$ "):
            command = [line[2:]]
            while command[-1].endswith("\\") and index + 1 < len(lines):
                index += 1
                command.append(lines[index])
            steps.append(("\n".join(command), []))
        elif steps:
            steps[-1][1].append(line)
        index += 1
    return [(command, "".join(f"{line}\n" for line in output)) for command, output in steps]


class BlockFailed(AssertionError):
    """A block that did not run as its page says."""


def block_environment(
    folder: Path, *, data: Mapping[str, str] | None, server: object | None
) -> dict[str, str]:
    """The environment a page's blocks run in: the test environment's executables first on ``PATH``, no
    network for the Hub's clients, a Hugging Face home of the page's own, the data mirror only where
    ``data`` gives it, and for ``server`` its ``BASE_URL`` and ``MODEL``."""
    env = {key: value for key, value in os.environ.items() if key not in DATA_VARIABLES}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(OFFLINE)
    env.update(
        {"HF_HOME": str(folder / ".hf-home"), "MPLBACKEND": "Agg", "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
    )
    env.update(data or {})
    if server is not None:
        env.update({"BASE_URL": server.base_url, "MODEL": "smollm2"})  # type: ignore[attr-defined]
    return env


def _shell(
    script: str, folder: Path, env: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f"set -euo pipefail\n{script}"],
        cwd=folder, env=dict(env), capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def run_setup(block: Block, folder: Path, env: Mapping[str, str], timeout: float) -> None:
    """The shell command of a block's ``setup:`` marker, in the page's folder (nothing where it has none);
    :class:`BlockFailed` where it does not exit 0."""
    if block.marker.setup:
        done = _shell(block.marker.setup, folder, env, timeout)
        if done.returncode != 0:
            raise BlockFailed(
                f"{block.where}: its setup exited {done.returncode}:\n{done.stdout}{done.stderr}"
            )


def run_shell_block(
    block: Block, folder: Path, env: Mapping[str, str], timeout: float, server_url: str = ""
) -> None:
    """Run a ``shell`` or ``console`` block; :class:`BlockFailed` where it does not do what its page says:
    the exit status its marker gives (0 by default), and a console's shown output."""
    code = block.code.replace(LOCAL_SERVER, server_url) if server_url else block.code
    if block.language == "shell":
        done = _shell(code, folder, env, timeout)
        if done.returncode != block.marker.exit:
            raise BlockFailed(
                f"{block.where}: exited {done.returncode}, the page expects {block.marker.exit}:\n"
                f"{code}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
            )
        return
    steps = console_steps(code)
    checker = doctest.OutputChecker()
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    for number, (command, expected) in enumerate(steps):
        done = _shell(command, folder, env, timeout)
        status = block.marker.exit if number == len(steps) - 1 else 0
        if done.returncode != status:
            raise BlockFailed(
                f"{block.where}: `{command}` exited {done.returncode}, expected {status}:\n{done.stdout}{done.stderr}"
            )
        got = done.stdout + done.stderr
        if expected.strip() and not checker.check_output(expected, got, flags):
            raise BlockFailed(f"{block.where}: `{command}` printed\n{got}\nwhere the page shows\n{expected}")


DRIVER = Path(__file__).with_name("python_session.py")


class PythonSession:
    """One Python process per page, in the page's folder, running its Python blocks in one namespace
    (``python_session.py``): a plain block as a script, a block with ``>>>`` as a doctest."""

    def __init__(self, folder: Path, env: Mapping[str, str]) -> None:
        self.log = (folder / ".python-session.log").open("w+")
        read, write = os.pipe()
        self.replies = os.fdopen(read, "r")
        self.process = subprocess.Popen(
            [sys.executable, str(DRIVER), str(write)],
            cwd=folder, env=dict(env), stdin=subprocess.PIPE, stdout=self.log, stderr=subprocess.STDOUT,
            text=True, pass_fds=(write,),
        )  # fmt: skip
        os.close(write)

    def run(self, block: Block, timeout: float) -> None:
        request = {"code": block.code, "doctest": block.is_doctest, "name": block.page, "line": block.line}
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.replies], [], [], timeout)
        line = self.replies.readline() if ready else ""
        if not line:
            self.log.seek(0)
            state = f"did not answer within {timeout:.0f} s" if not ready else "exited"
            raise BlockFailed(f"{block.where}: the Python session {state}:\n{self.log.read()[-4000:]}")
        reply = json.loads(line)
        if not reply["ok"]:
            raise BlockFailed(
                f"{block.where}: {'the doctest failed' if block.is_doctest else 'raised'}:\n{reply['output']}"
            )

    def close(self) -> None:
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.replies.close()
        self.log.close()
