"""The tests' own letter-choice log-likelihood task (``tests/fixtures/letter_quiz``: six questions, the answer
scored by the log-likelihood of its letter, `` A`` to `` D``, one token each), scrambled by ``scramble
lm-eval:letter_quiz`` and run by ``lm_eval``: what the session fixtures of ``conftest.py`` build once and
the log-likelihood tests share.

Everything runs as its own process, offline, from a copy of the fixture folder (the task's YAML reads its
data file relative to where ``lm_eval`` and ``scramble`` run).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lm_eval_command import LM_EVAL

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "letter_quiz"
TASK = "letter_quiz"
TYPES = ("kfl", "sub")
DOCUMENTS = 6
CHOICES = 4


@dataclass(frozen=True)
class LetterQuiz:
    """The task copied into ``folder / "tasks"``, scrambled into ``folder / "scrambled"``; ``env`` is the
    offline environment every command of the tests runs in."""

    folder: Path
    env: dict[str, str]

    @property
    def tasks(self) -> Path:
        return self.folder / "tasks"

    @property
    def include(self) -> Path:
        """lm_eval's ``--include_path`` of the canonical task and its variants."""
        return self.folder / "scrambled" / "lm_eval"


def run_cli(
    arguments: list[str], cwd: Path, env: dict[str, str], timeout: float = 900
) -> subprocess.CompletedProcess:
    """``scrambled-bench ARGUMENTS`` as its own process."""
    return subprocess.run(
        [sys.executable, "-m", "scrambled_bench.evaluate_cli.main", *arguments],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def scrambled_quiz(folder: Path, env: dict[str, str]) -> LetterQuiz:
    """The fixture copied into ``folder`` and scrambled (``question`` and ``choices``, kfl and sub)."""
    quiz = LetterQuiz(folder, env)
    shutil.copytree(FIXTURE, quiz.tasks)
    done = run_cli(
        ["scramble", f"lm-eval:{TASK}", "--include-path", ".", "--columns", "question,choices",
         "--types", ",".join(TYPES), "--out", str(folder / "scrambled")],
        quiz.tasks, env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return quiz


def run_lm_eval(quiz: LetterQuiz, model: str, model_args: str, tasks: str, out: Path, *extra: str) -> Path:
    """One ``lm_eval run`` of ``tasks`` (from the quiz's include path) with ``--log_samples`` into ``out``."""
    done = subprocess.run(
        [*LM_EVAL, "run", "--model", model, "--model_args", model_args,
         "--include_path", str(quiz.include), "--tasks", tasks, "--log_samples", "--output_path", str(out), *extra],
        cwd=quiz.tasks, env=quiz.env, capture_output=True, text=True, timeout=1500, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def logged(out: Path) -> dict[str, list[dict[str, Any]]]:
    """Task -> its logged samples, in document order."""
    found = {}
    for path in out.rglob("samples_*.jsonl"):
        task = re.match(r"samples_(.+)_\d{4}-\d{2}-\d{2}T", path.name)[1]
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        found[task] = sorted(rows, key=lambda row: row["doc_id"])
    return found


def native_results(out: Path) -> dict[str, dict[str, float]]:
    """lm-eval's own aggregated metrics per task, over every results file in ``out``."""
    found: dict[str, dict[str, float]] = {}
    for path in out.rglob("results_*.json"):
        found.update(json.loads(path.read_text())["results"])
    return found


def requests_of(row: dict[str, Any]) -> list[tuple[str, str, float]]:
    """A logged multiple-choice row's requests: (context, continuation, the logged log-likelihood)."""
    arguments = [
        row["arguments"][key] for key in sorted(row["arguments"], key=lambda k: int(k.rsplit("_", 1)[1]))
    ]
    return [
        (request["arg_0"], request["arg_1"], float(response[0][0]))
        for request, response in zip(arguments, row["resps"], strict=True)
    ]
