"""Incomplete is not success: `scrambled-bench run` against the real llama.cpp server, killed mid-run, exits 3;
its results.json marks each config's completeness with the counts; `report --push` refuses it before any
network call (and `--model-card-results` too); the same command, once the server is back, completes the run
and exits 0. Interrupted with SIGINT (Ctrl-C), a run writes its results the same way, marked incomplete, and
`report runs/*` reports it marked, leaving out in one line a folder with no results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

pytestmark = [pytest.mark.server, pytest.mark.slow]

TINY_BUILD = Path(__file__).parents[1] / "fixtures" / "tiny_build"
EXECUTABLE = Path(sys.executable).parent / "scrambled-bench"


def samples(run_dir: Path) -> int:
    path = run_dir / "samples.jsonl"
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_run_with_the_server_killed_midway_exits_3_and_is_not_published(
    own_llama_server, closed_port_url: str, tmp_path: Path
) -> None:
    server = own_llama_server()
    run_dir = tmp_path / "run"
    command = [str(EXECUTABLE), "run", "--backend", "openai", "--base-url", server.base_url, "--model", "smollm2",
               "--data", str(TINY_BUILD), "--tasks", "scrqa", "--datasets", "dream", "--types", "original,rs50,sub",
               "--limit", "4", "--max-new-tokens", "8", "--concurrency", "1", "--retries", "1",
               "--request-timeout", "30", "--n-resamples", "50", "--no-progress", "--run-dir", str(run_dir)]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 180
    while samples(run_dir) < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)
    assert process.poll() is None, "the run finished before the server could be killed"
    os.kill(server.process.pid, signal.SIGKILL)  # the server goes away mid-run
    server.process.wait(timeout=10)
    stdout, stderr = process.communicate(timeout=300)

    assert process.returncode == 3, stderr
    assert stderr.strip().splitlines()[-1].startswith("error: the run is incomplete"), stderr
    assert "(incomplete)" in stdout  # the terminal table marks the rows
    results = json.loads((run_dir / "results.json").read_text())
    configs = results["configs"]
    for entry in configs.values():  # every config says whether it is complete, with the counts
        assert entry["complete"] == (entry["n_failed"] == 0 and entry["n_missing"] == 0)
        assert (
            entry["n_scored"] + entry["n_failed"] + entry["n_context_too_long"] + entry["n_missing"]
            == (entry["n_requests"])
        )
    incomplete = [name for name, entry in configs.items() if not entry["complete"]]
    assert incomplete and results["totals"]["complete"] is False
    assert results["totals"]["incomplete_configs"] == incomplete
    assert results["totals"]["n_failed"] == sum(entry["n_failed"] for entry in configs.values()) > 0

    # publishing is refused before any network call: the Hub endpoint is a closed port, so a call would fail
    # with another message
    hub_env = {**os.environ, "HF_ENDPOINT": closed_port_url, "HF_TOKEN": "hf_test_never_sent"}
    for publish in (
        ["--push", "org/results"],
        ["--model-card-results", "org/model", "--benchmark", "org/bench"],
    ):
        refused = subprocess.run([str(EXECUTABLE), "report", str(run_dir), *publish], capture_output=True,
                                 text=True, env=hub_env, timeout=120)  # fmt: skip
        assert refused.returncode == 2, refused.stderr
        [line] = refused.stderr.strip().splitlines()
        assert line.startswith(f"error: {publish[0]}: {run_dir} is incomplete ("), line
        assert "--allow-incomplete" in line
    # report itself shows the run, with the incomplete cells marked and a caption
    shown = subprocess.run(
        [str(EXECUTABLE), "report", str(run_dir)], capture_output=True, text=True, timeout=120
    )
    assert shown.returncode == 0, shown.stderr
    assert "Incomplete: " in shown.stdout and "incomplete: " in shown.stdout

    # the server is back (same address): the same command sends what failed, completes the run, exits 0
    own_llama_server(port=urlparse(server.root_url).port)
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    results = json.loads((run_dir / "results.json").read_text())
    assert results["totals"]["complete"] is True and results["totals"]["incomplete_configs"] == []
    assert all(entry["complete"] and entry["n_failed"] == 0 for entry in results["configs"].values())
    assert results["engine"]["reused"] >= 2


def _as_from_a_shell() -> None:
    """SIGINT delivered and handled in the child as in a command an interactive shell starts (see
    test_run_command.py's function of this name: a child inherits an ignored SIGINT)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_run_interrupted_with_sigint_writes_its_results_marked_incomplete(
    llama_server, tmp_path: Path
) -> None:
    """Ctrl-C against a server: results.json is written from every answer received, marked incomplete, as a
    dead-server stop writes it; `report runs/*` exits 0 and marks the run."""
    run_dir = tmp_path / "runs" / "interrupted"
    command = [str(EXECUTABLE), "run", "--backend", "openai", "--base-url", llama_server.base_url, "--model",
               "smollm2", "--data", str(TINY_BUILD), "--tasks", "scrqa", "--datasets", "dream", "--types",
               "original,rs50,sub", "--limit", "4", "--max-new-tokens", "8", "--concurrency", "2",
               "--n-resamples", "50", "--no-progress", "--run-dir", str(run_dir)]  # fmt: skip
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_from_a_shell,  # noqa: PLW1509 - it only resets SIGINT in the child, before exec
    )
    deadline = time.monotonic() + 180
    while samples(run_dir) < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)
    assert process.poll() is None, "the run finished before it could be interrupted"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)

    assert process.returncode == 130, stderr
    [line] = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert line.startswith("error: interrupted: ") and "marked incomplete); resume with: " in line, line
    results = json.loads((run_dir / "results.json").read_text())
    saved = [json.loads(record)["key"] for record in (run_dir / "samples.jsonl").read_text().splitlines()]
    scored = [json.loads(row)["key"] for row in (run_dir / "scores.jsonl").read_text().splitlines()]
    assert set(scored) == set(saved) and len(saved) >= 2  # every answer received, and only those
    totals = results["totals"]
    assert results["engine"]["interrupted"] is True and totals["complete"] is False
    assert (totals["n_scored"], totals["n_missing"]) == (len(saved), totals["n_requests"] - len(saved))
    assert totals["n_failed"] == 0  # the requests in flight were abandoned, not failed

    (tmp_path / "runs" / "killed").mkdir()  # a run stopped before it wrote any results
    shown = subprocess.run([str(EXECUTABLE), "report", *sorted(map(str, (tmp_path / "runs").iterdir()))],
                           capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "Incomplete: " in shown.stdout and "incomplete: " in shown.stdout
    assert shown.stderr.splitlines() == [
        (
            f"left out {tmp_path / 'runs' / 'killed'}: no results.json (a run still going, or stopped before "
            "it wrote any: killed, or interrupted before it sent a request); rerun the same `run` command"
        )
    ]
