"""Bad input at the harness boundary (``scramble HARNESS:SPEC``, ``score --from``, ``report --from``): one
line ``error: ...`` on stderr and exit 2, with the closest names where there are names (issue 43), never a
traceback and never a harness's task name read as a file path.

Through the command line (``main``), as a user meets them; no harness is run and no server is started.
Also what ``scramble`` says of demonstrations drawn from the scrambled split (a zero-shot task shows none).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from scrambled_bench.evaluate_cli.main import main

needs_inspect = pytest.mark.skipif(importlib.util.find_spec("inspect_ai") is None, reason="needs inspect_ai")

TWO_TASKS = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample


@task
def rivers():
    return Task(dataset=[Sample(id=1, input="Name a river.", target="Nile")])


@task
def lakes():
    return Task(dataset=[Sample(id=1, input="Name a lake.", target="Erie")])
"""
ONE_TASK = TWO_TASKS.split("@task\ndef lakes")[0]
RAISES_AT_IMPORT = "raise RuntimeError('the task file broke at import')\n" + ONE_TASK
NEEDS_A_THING = """
from inspect_ai import task
from inspect_ai._util.error import PrerequisiteError


@task
def rivers():
    raise PrerequisiteError("rivers needs a thing it does not have")
"""


def _files(folder: Path) -> Path:
    """A folder of task files, good and bad, and the folders ``score --from`` is given."""
    for name, text in {
        "two.py": TWO_TASKS,
        "one.py": ONE_TASK,
        "raises.py": RAISES_AT_IMPORT,
        "needs.py": NEEDS_A_THING,
        "syntax.py": "def rivers(:\n",
        "none.py": "RIVERS = ['Nile']\n",
        "data.jsonl": '{"input": "Name a river."}\n',
    }.items():
        (folder / name).write_text(text)
    (folder / "empty").mkdir()
    (folder / "a-file").write_text("not a folder")
    (folder / "broken-inspect").mkdir()
    (folder / "broken-inspect" / "2026-01-01T00-00-00_rivers_abc.eval").write_bytes(b"not a zip")
    (folder / "broken-lm-eval").mkdir()
    (folder / "broken-lm-eval" / "results_2026-01-01T00-00-00.json").write_text("[1, 2]")
    (folder / "broken-lm-eval" / "samples_t_2026-01-01T00-00-00.jsonl").write_text(
        '{"doc_id": 0, "metrics": []}\n'
    )
    (folder / "broken-lighteval").mkdir()
    (folder / "broken-lighteval" / "results_2026-01-01T00-00-00.json").write_text("{}")
    (folder / "broken-lighteval" / "details_t|0_2026-01-01T00-00-00.parquet").write_text("not parquet")
    return folder


def _scramble(spec: str) -> list[str]:
    return ["scramble", spec, "--columns", "input", "--types", "kfl", "--out", "out"]


CASES: list[tuple[str, Callable[[Path], list[str]], str]] = [
    # an Inspect task file: a typo of the task's name, several tasks, and what is not a task file
    ("task typo", lambda d: _scramble(f"inspect:{d}/two.py@rivrs"),
     "two.py has no task 'rivrs'; its tasks, closest first: rivers, lakes"),
    ("several tasks", lambda d: _scramble(f"inspect:{d}/two.py"),
     "two.py defines 2 tasks (rivers, lakes); name one, as two.py@TASK"),
    ("no task after @", lambda d: _scramble(f"inspect:{d}/two.py@"), "names no task after '@'; two.py defines rivers, lakes"),
    ("no file before @", lambda d: _scramble("inspect:@rivers"), "inspect:@rivers: names no task file before '@'"),
    ("missing file", lambda d: _scramble(f"inspect:{d}/missing.py"), "no such file"),
    ("missing file @", lambda d: _scramble(f"inspect:{d}/missing.py@rivers"), "no such file"),
    ("not a task file", lambda d: _scramble(f"inspect:{d}/data.jsonl"),
     "data.jsonl is not an Inspect task file (a .py or .ipynb file of @task functions)"),
    ("not Python", lambda d: _scramble(f"inspect:{d}/syntax.py"), "the file is not valid Python (line 1: "),
    ("raises on import", lambda d: _scramble(f"inspect:{d}/raises.py"),
     "cannot load it (RuntimeError: the task file broke at import)"),
    ("no @task", lambda d: _scramble(f"inspect:{d}/none.py"), "none.py defines no @task function"),
    ("a folder", lambda d: _scramble(f"inspect:{d}"), "is a folder; name one task file in it"),
    ("prerequisite", lambda d: _scramble(f"inspect:{d}/needs.py"), "rivers needs a thing it does not have"),
    ("registry typo", lambda d: _scramble("inspect:scrambled_bench/scrqa_dream_kfll"),
     "no such Inspect task (a registry name such as inspect_evals/arc_easy, or file.py@task); closest: "),
    # the harness's name
    ("harness typo", lambda d: _scramble("lmeval:kitchen_quiz"),
     "lmeval:kitchen_quiz: no harness called 'lmeval' (closest: lm-eval); registered: "),
    ("harness typo 2", lambda d: _scramble("lm_eval:kitchen_quiz"), "no harness called 'lm_eval' (closest: lm-eval)"),
    ("unknown harness", lambda d: _scramble("nosuch:kitchen_quiz"),
     "nosuch:kitchen_quiz: no harness called 'nosuch'; registered: "),
    ("empty spec", lambda d: _scramble("lm-eval:"), "lm-eval: names no task (lm-eval:TASK or lm-eval:GROUP)"),
    ("blank spec", lambda d: _scramble("inspect: "), "inspect: names no task (inspect:TASK or inspect:FILE.py[@TASK])"),
    ("empty source", lambda d: _scramble(""), "SOURCE is empty"),
    # score --from and report --from: the harness, the folder, a log of another shape
    ("score harness typo", lambda d: ["score", "--from", "lmeval", str(d / "empty")],
     "no harness called 'lmeval' (closest: lm-eval); registered: "),
    ("report harness typo", lambda d: ["report", "--from", "inpsect", str(d / "empty")],
     "no harness called 'inpsect' (closest: inspect)"),
    ("missing folder", lambda d: ["score", "--from", "inspect", str(d / "missing")], "no such folder (give inspect eval's --log-dir)"),
    ("a file", lambda d: ["report", "--from", "lm-eval", str(d / "a-file")], "a file, not a folder (give lm_eval's --output_path)"),
    ("no logs", lambda d: ["score", "--from", "lighteval", str(d / "empty")], "no details of lighteval; run lighteval with --save-details"),
    ("broken Inspect log", lambda d: ["score", "--from", "inspect", str(d / "broken-inspect")],
     "not a readable Inspect log (ValueError: "),
    ("broken lm-eval results", lambda d: ["report", "--from", "lm-eval", str(d / "broken-lm-eval")],
     "results_2026-01-01T00-00-00.json: not a results file of lm-eval (not a JSON object)"),
    ("broken lighteval details", lambda d: ["score", "--from", "lighteval", str(d / "broken-lighteval")],
     "unreadable lighteval details file"),
]  # fmt: skip


@needs_inspect
@pytest.mark.parametrize(("case", "arguments", "message"), CASES, ids=[case for case, _, _ in CASES])
def test_bad_input_is_one_line_and_exit_2(
    case: str, arguments: Callable[[Path], list[str]], message: str, tmp_path: Path, capsys, monkeypatch
):
    folder = _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(arguments(folder)) == 2, case
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert message in err, err
    assert not (tmp_path / "out").exists()  # nothing written


@needs_inspect
def test_a_task_file_of_one_task_needs_no_task_name(tmp_path: Path, capsys, monkeypatch):
    """``inspect eval FILE.py`` takes a file of one task; so does ``scramble inspect:FILE.py``, and the task
    file it writes names the file's task with its path made absolute."""
    folder = _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(_scramble("inspect:one.py")) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"scrambled inspect:one.py (rivers) into {tmp_path / 'out'}; run: inspect eval ")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["inspect"]["spec"] == f"{(folder / 'one.py').resolve()}@rivers"


def test_an_existing_path_with_a_colon_is_a_dataset_not_a_harness(tmp_path: Path, capsys, monkeypatch):
    """The rule for ``NAME:SPEC`` that no harness is registered under: a file or folder of that name (or a
    glob matching one) is a dataset, as before."""
    monkeypatch.chdir(tmp_path)
    Path("my:data.jsonl").write_text('{"text": "hello there world"}\n{"text": "another line of text"}\n')
    capsys.readouterr()
    assert main(["scramble", "my:data.jsonl", "--columns", "text", "--types", "kfl", "--out", "out"]) == 0
    assert "scrambled my:data.jsonl into out" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("config", "note"),
    [
        ({"test_split": "test"}, ("quiz is zero-shot as configured: it shows no demonstrations (run with some, "
                                  "it would draw them from its evaluation split 'test', scrambled with it)")),
        ({"test_split": "test", "num_fewshot": 3}, ("quiz draws its demonstrations from its evaluation split "
                                                    "'test': they are scrambled with it")),
        ({"test_split": "test", "training_split": "train", "num_fewshot": 3}, None),
    ],
)  # fmt: skip
def test_what_scramble_says_of_demonstrations_drawn_from_the_evaluation_split(config, note):
    """An lm-eval task without another split draws its demonstrations from the one scrambled: a zero-shot task
    shows none (issue 43: the note said they would be scrambled), a few-shot one's are scrambled with it."""
    from scrambled_bench.integrations.datasets import demonstrations_note
    from scrambled_bench.integrations.lm_eval.tasks_source import LmEvalCanonicalTask

    task = LmEvalCanonicalTask("quiz", Path("quiz.yaml"), config)
    assert demonstrations_note(task, "original") == note
    assert demonstrations_note(task, "scrambled") is None
