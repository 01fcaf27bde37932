"""kill -9 midway: the engine runs in a subprocess (servers/engine_driver.py) against the real llama.cpp
server; it is killed with SIGKILL after some samples are on disk, restarted, and must end with the same
samples.jsonl content (order aside) as an uninterrupted run, with no key twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.server, pytest.mark.slow]

DRIVER = Path(__file__).parents[1] / "servers" / "engine_driver.py"
COUNT = 12


def driver_command(server_url: str, run_dir: Path) -> list[str]:
    return [
        sys.executable,
        str(DRIVER),
        "--base-url",
        server_url,
        "--model",
        "smollm2",
        "--run-dir",
        str(run_dir),
        "--count",
        str(COUNT),
        "--max-new-tokens",
        "16",
        "--concurrency",
        "2",
    ]


def sample_lines(run_dir: Path) -> list[str]:
    path = run_dir / "samples.jsonl"
    return path.read_text().splitlines() if path.exists() else []


def canonical(lines: list[str]) -> list[str]:
    return sorted(json.dumps(json.loads(line), sort_keys=True) for line in lines)


def test_sigkill_midway_then_resume_equals_uninterrupted_run(llama_server, tmp_path: Path) -> None:
    reference_dir = tmp_path / "uninterrupted"
    subprocess.run(
        driver_command(llama_server.base_url, reference_dir), check=True, timeout=300, capture_output=True
    )
    reference = sample_lines(reference_dir)
    assert len(reference) == COUNT

    run_dir = tmp_path / "killed"
    process = subprocess.Popen(
        driver_command(llama_server.base_url, run_dir), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    while len(sample_lines(run_dir)) < 4 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.01)
    assert process.poll() is None, "the driver finished before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    process.stdout.close()
    process.stderr.close()
    assert process.returncode == -signal.SIGKILL
    kept = sample_lines(run_dir)
    assert 4 <= len(kept) < COUNT

    resumed = subprocess.run(
        driver_command(llama_server.base_url, run_dir),
        check=True,
        timeout=300,
        capture_output=True,
        text=True,
    )
    summary = json.loads(resumed.stdout.strip().splitlines()[-1])
    # only what was missing was sent again
    assert summary["skipped"] + summary["succeeded"] == COUNT
    assert summary["skipped"] >= len(kept) - 1  # at most a cut-off last line is set aside

    final = sample_lines(run_dir)
    keys = [json.loads(line)["key"] for line in final]
    assert len(keys) == len(set(keys)) == COUNT
    assert canonical(final) == canonical(reference)


def test_cli_run_killed_then_rerun_equals_uninterrupted_run(llama_server, tmp_path: Path) -> None:
    """The same through the real command: `scrambled-bench run` killed with SIGKILL midway; the same command
    again sends only what is missing and ends with the uninterrupted run's samples and scores."""
    tiny_build = Path(__file__).parents[1] / "fixtures" / "tiny_build"
    executable = Path(sys.executable).parent / "scrambled-bench"
    served_model = llama_server.get_json("/v1/models")["data"][0]["id"]

    def command(run_dir: Path) -> list[str]:
        return [str(executable), "run", "--backend", "openai", "--base-url", llama_server.base_url, "--model",
                served_model, "--data", str(tiny_build), "--suite", "paper", "--datasets", "dream", "--limit", "2",
                "--max-new-tokens", "16", "--concurrency", "2", "--n-resamples", "20", "--no-progress",
                "--run-dir", str(run_dir)]

    subprocess.run(command(tmp_path / "uninterrupted"), check=True, timeout=300, capture_output=True)
    reference = sample_lines(tmp_path / "uninterrupted")
    total = len(reference)

    run_dir = tmp_path / "killed"
    process = subprocess.Popen(command(run_dir), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(sample_lines(run_dir)) < 5 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.01)
    assert process.poll() is None, "the run finished before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    kept = len(sample_lines(run_dir))
    assert 5 <= kept < total

    subprocess.run(command(run_dir), check=True, timeout=300, capture_output=True)
    results = json.loads((run_dir / "results.json").read_text())
    assert results["engine"]["reused"] >= kept - 1 and results["engine"]["sent"] + results["engine"]["reused"] == total
    assert canonical(sample_lines(run_dir)) == canonical(reference)
    scores = {name: entry.get("accuracy") for name, entry in results["configs"].items()}
    reference_results = json.loads((tmp_path / "uninterrupted" / "results.json").read_text())
    assert scores == {name: entry.get("accuracy") for name, entry in reference_results["configs"].items()}
