"""The endpoint of an Inspect run, however it was given, and pairing that refuses runs whose logs do not
tell it (issue 43).

Inspect's log records the model's base URL only when it was given as ``--model-base-url``
(``eval.model_base_url``); given through the provider's environment variable (``LLAMA_BASE_URL``, the
docs/harnesses/inspect.md's recipe), the log holds none. The task file of ``scramble inspect:`` (and the bench's tasks, and
``scrambled_bench/scrambled``) record the base URL the model's API resolved in the task's metadata when the
eval creates them, so ``score --from inspect`` tells two endpoints apart; a log with no endpoint at all (a
plain task, an older file) is refused unless ``--allow-unknown-endpoint``.

Without a server: mockllm, with and without ``--model-base-url``. Against the real llama.cpp server: the
docs/harnesses/inspect.md's recipe (``LLAMA_BASE_URL``), the same server reached as ``127.0.0.1`` and as ``localhost``, and the
command ``scramble`` prints, run as printed, for an absolute and a relative ``--out``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

if importlib.util.find_spec("inspect_ai") is None:
    pytest.skip("needs inspect_ai: pip install -e '.[harness]'", allow_module_level=True)

from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.integrations.inspect.scrambled import ENDPOINT_KEY

INSPECT = Path(sys.executable).parent / "inspect"
SCRAMBLED_BENCH = Path(sys.executable).parent / "scrambled-bench"
TASK = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match


@task
def capitals():
    return Task(
        dataset=[Sample(id=i, input=f"What is the capital of {country}? Answer in one word.", target=city)
                 for i, (country, city) in enumerate([("France", "Paris"), ("Italy", "Rome"),
                                                      ("Japan", "Tokyo")], start=1)],
        scorer=match(),
    )
"""


def _task_file(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "capitals.py").write_text(TASK)
    return folder / "capitals.py"


def _scramble(task: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """``scramble inspect:FILE.py`` (one task, no ``@TASK``): the written task file."""
    capsys.readouterr()
    assert (
        main(["scramble", f"inspect:{task}", "--columns", "input", "--types", "kfl", "--out", str(out)]) == 0
    )
    capsys.readouterr()
    return out / "inspect" / "scrambled_tasks.py"


def _mock_eval(specs: list[str], logs: Path, **options: object) -> None:
    from inspect_ai import eval as inspect_eval

    for log in inspect_eval(specs, model="mockllm/model", log_dir=str(logs), display="none", **options):
        assert log.status == "success"


def _score(logs: Path, capsys: pytest.CaptureFixture[str], *options: str) -> tuple[int, dict | None, str]:
    capsys.readouterr()
    code = main(["score", "--from", "inspect", str(logs), "--n-resamples", "50", *options])
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if code == 0 else None), captured.err


# ------------------------------------------------------------------------------------------- no server


def test_the_task_file_records_the_endpoint_when_the_eval_creates_it(tmp_path: Path, capsys):
    task_file = _scramble(_task_file(tmp_path / "task"), tmp_path / "out", capsys)
    base_url = "http://127.0.0.1:9/v1"
    _mock_eval(
        [f"{task_file}@capitals", f"{task_file}@capitals_kfl"], tmp_path / "given", model_base_url=base_url
    )
    _mock_eval([f"{task_file}@capitals", f"{task_file}@capitals_kfl"], tmp_path / "none")
    from inspect_ai.log import list_eval_logs, read_eval_log

    for folder, recorded in (("given", base_url), ("none", None)):
        logs = [read_eval_log(info, header_only=True) for info in list_eval_logs(str(tmp_path / folder))]
        assert {log.eval.task: log.eval.metadata[ENDPOINT_KEY] for log in logs} == {
            "capitals": recorded,
            "capitals_kfl": recorded,
        }
        code, document, _ = _score(tmp_path / folder, capsys)
        assert code == 0
        assert document["runs"][0]["endpoint"] == recorded and "endpoint_unknown" not in document["runs"][0]
        assert document["scrambled_tasks"]["capitals"]["types"]["kfl"]["metrics"]["match"]["n_paired"] == 3


def test_two_base_urls_given_as_model_base_url_are_refused(tmp_path: Path, capsys):
    task_file = _scramble(_task_file(tmp_path / "task"), tmp_path / "out", capsys)
    logs = tmp_path / "logs"
    _mock_eval([f"{task_file}@capitals"], logs, model_base_url="http://127.0.0.1:9/v1")
    _mock_eval([f"{task_file}@capitals_kfl"], logs, model_base_url="http://localhost:9/v1")
    code, _, err = _score(logs, capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: ")
    assert "endpoint http://127.0.0.1:9/v1 vs http://localhost:9/v1" in err


def test_a_canonical_run_of_a_plain_task_has_no_endpoint_and_is_refused_unless_accepted(
    tmp_path: Path, capsys
):
    """The canonical task run from the user's own file (not the task file): Inspect logs no base URL and
    the task recorded none, so the pair is refused in one line naming the option that accepts it; with
    the option it is paired, said on stderr, recorded in the document and shown on the report's page."""
    task = _task_file(tmp_path / "task")
    task_file = _scramble(task, tmp_path / "out", capsys)
    logs = tmp_path / "logs"
    _mock_eval([f"{task}@capitals"], logs)  # the plain task: what `inspect eval capitals.py` logs
    _mock_eval([f"{task_file}@capitals_kfl"], logs)
    code, _, err = _score(logs, capsys)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("error: ") and "capitals (run " in err and "records no endpoint" in err
    assert "--allow-unknown-endpoint" in err

    code, document, err = _score(logs, capsys, "--allow-unknown-endpoint")
    assert code == 0 and document["unknown_endpoints"] == ["capitals"]
    assert "endpoint_unknown" in document["scrambled_tasks"]["capitals"]["run"]
    assert "note: capitals paired without a known endpoint" in err

    assert main(["report", "--from", "inspect", str(logs), "--n-resamples", "50"]) == 2
    page = tmp_path / "page.html"
    capsys.readouterr()
    assert main(["report", "--from", "inspect", str(logs), "--n-resamples", "50", "--allow-unknown-endpoint",
                 "--format", "html", "-o", str(page)]) == 0  # fmt: skip
    assert "note: capitals paired without a known endpoint" in capsys.readouterr().err
    assert (
        "<tr><th>endpoint</th><td>unknown: Inspect logs the base URL only when given as --model-base-url"
        in (page.read_text(encoding="utf-8"))
    )


def test_the_option_applies_to_harness_folders_only(tmp_path: Path, capsys):
    (tmp_path / "preds.jsonl").write_text('{"prediction": "x", "original": "x", "scrambled": "y"}\n')
    run = tmp_path / "run"
    run.mkdir()
    for arguments in (
        ["score", str(tmp_path / "preds.jsonl"), "--task", "recovery", "--allow-unknown-endpoint"],
        ["report", str(run), "--allow-unknown-endpoint"],
    ):
        capsys.readouterr()
        assert main(arguments) == 2
        err = capsys.readouterr().err
        assert err == "error: --allow-unknown-endpoint applies to --from HARNESS DIR, " + (
            "not to prediction FILES\n" if arguments[0] == "score" else "not to run folders\n"
        )


# ------------------------------------------------------------------------- against the llama.cpp server


def _run_printed(
    hint: str, *, cwd: Path, env: dict[str, str], model: str, logs: Path, task: str = ""
) -> None:
    """The command ``scramble`` printed after ``run:``, run as printed from the folder ``scramble`` ran in,
    with MODEL and LOGS filled in (and, with ``task``, the task file's path followed by ``@task``)."""
    words = shlex.split(hint)
    assert words[:2] == ["inspect", "eval"] and words[3:] == ["--model", "MODEL", "--log-dir", "LOGS"], words
    target = words[2] + (f"@{task}" if task else "")
    command = [str(INSPECT), "eval", target, "--model", model, "--log-dir", str(logs), "--limit", "2",
               "--max-tokens", "8", "--temperature", "0", "--max-connections", "1", "--display", "plain"]  # fmt: skip
    completed = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert completed.returncode == 0, completed.stderr[-3000:]


def _printed_hint(task: Path, out: str, cwd: Path) -> str:
    completed = subprocess.run(
        [str(SCRAMBLED_BENCH), "scramble", f"inspect:{task}", "--columns", "input", "--types", "kfl", "--out", out],
        cwd=cwd, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.strip().splitlines()[0].split("; run: ", 1)[1]


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.timeout(1800)  # four `inspect eval` runs and two `scramble`s, each some seconds on 2 busy cores
def test_the_environment_variable_recipe_pairs_one_endpoint_and_refuses_two(
    llama_server, tmp_path: Path, capsys
):
    served = llama_server.get_json("/v1/models")["data"][0]["id"]
    model = f"openai-api/llama/{served}"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LLAMA_API_KEY": "sk-no-key-required"}
    env.pop("LLAMA_BASE_URL", None)
    numeric = llama_server.base_url  # http://127.0.0.1:PORT/v1
    named = numeric.replace("127.0.0.1", "localhost")
    task = _task_file(tmp_path / "task")
    work = tmp_path / "work"
    work.mkdir()

    # --out absolute: the printed command runs as printed, the canonical task and its variant at one URL
    absolute = _printed_hint(task, str(tmp_path / "absolute-out"), work)
    one = tmp_path / "one"
    _run_printed(absolute, cwd=work, env={**env, "LLAMA_BASE_URL": numeric}, model=model, logs=one)
    code, document, _ = _score(one, capsys)
    assert code == 0, _
    assert [run["endpoint"] for run in document["runs"]] == [numeric]
    assert document["scrambled_tasks"]["capitals"]["types"]["kfl"]["metrics"]["match"]["n_paired"] == 2
    page = tmp_path / "one.html"
    assert main(["report", "--from", "inspect", str(one), "--n-resamples", "50", "--format", "html",
                 "-o", str(page)]) == 0  # fmt: skip
    assert f"<tr><th>endpoint</th><td>{numeric}</td></tr>" in page.read_text(encoding="utf-8")

    # --out relative: the printed command runs as printed; then the variant again, at the other URL
    relative = _printed_hint(task, "relative-out", work)
    assert not shlex.split(relative)[2].startswith("/")
    two = tmp_path / "two"
    _run_printed(relative, cwd=work, env={**env, "LLAMA_BASE_URL": numeric}, model=model, logs=two)
    _run_printed(
        relative, cwd=work, env={**env, "LLAMA_BASE_URL": named}, model=model, logs=two, task="capitals_kfl"
    )
    code, _, err = _score(two, capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: ")
    assert f"endpoint {numeric} vs {named}" in err
