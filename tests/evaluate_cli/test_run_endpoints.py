"""Whose answers a run reuses, and a server that goes away, through `scrambled-bench run` against real
llama.cpp servers (llama-cpp-python's OpenAI-compatible server on SmolLM2):

- two servers on two ports under one model name: the second run reuses nothing of the first, in its folder
  or beside it; a run on the second server reuses only the second's answers; ``--replicas`` lets them share,
  and the run lists every endpoint that answered; a run folder of another endpoint is a one-line error;
- a server killed mid-run: the run stops within the dead time plus 10 s, exits 3 with the command that
  resumes (which then completes the run), and loses no answer; its table, written to a file, holds every
  number in full."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

from scrambled_bench.evaluate_cli.main import main

pytestmark = [pytest.mark.server, pytest.mark.slow]

TINY_BUILD = Path(__file__).resolve().parents[1] / "fixtures" / "tiny_build"
EXECUTABLE = Path(sys.executable).parent / "scrambled-bench"
DEAD_AFTER = 10  # seconds; the retries alone would take minutes (below), so 10 s shows the stop as well as more


def cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def run_args(base_url: str, limit: int, *extra: str) -> list[str]:
    return ["run", "--backend", "openai", "--base-url", base_url, "--model", "smollm2", "--data", str(TINY_BUILD),
            "--limit", str(limit), "--max-new-tokens", "8", "--concurrency", "2", "--n-resamples", "20",
            "--no-progress", *extra]  # fmt: skip


def results_of(folder: Path) -> dict:
    return json.loads((folder / "results.json").read_text())


def records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines()]


def new_folder(root: Path, before: set[Path]) -> Path:
    [folder] = set(root.iterdir()) - before
    return folder


def test_two_servers_under_one_model_name_never_share_answers_unless_told(
    own_llama_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    first, second = own_llama_server(), own_llama_server()
    runs = tmp_path / "runs"

    code, _, err = cli(run_args(first.base_url, 2))
    assert code == 0, err
    first_folder = new_folder(runs, set())

    # the same command on the second server: a folder of its own, and nothing taken from the first's
    code, out, err = cli(run_args(second.base_url, 2))
    assert code == 0, err
    second_folder = new_folder(runs, {first_folder})
    engine = results_of(second_folder)["engine"]
    assert (engine["sent"], engine["reused"], engine["adopted"]) == (8, 0, 0)
    assert "8 request(s) sent, 0 reused," in out
    assert {record["endpoint"]["base_url"] for record in records(second_folder)} == {second.base_url}
    assert [entry["endpoint"]["base_url"] for entry in engine["endpoints"]] == [second.base_url]
    assert f"answers from openai {second.base_url} model smollm2: 8" in out

    # a larger run on the second server takes the second's answers (from the folder beside it), none of the first's
    code, out, err = cli(run_args(second.base_url, 3))
    assert code == 0, err
    third_folder = new_folder(runs, {first_folder, second_folder})
    engine = results_of(third_folder)["engine"]
    assert (engine["sent"], engine["reused"], engine["adopted"]) == (4, 8, 8)
    assert engine["reused_from"] == {
        str(Path("runs") / third_folder.name): 0,
        str(Path("runs") / second_folder.name): 8,
    }
    assert "12 request(s) sent" not in out and f"8 reused (8 from runs/{second_folder.name})" in out

    # replicas of the same weights, said so: the first server's run takes answers of both
    code, out, err = cli(run_args(first.base_url, 4, "--replicas"))
    assert code == 0, err
    fourth_folder = new_folder(runs, {first_folder, second_folder, third_folder})
    engine = results_of(fourth_folder)["engine"]
    # (the tiny build has 3 RealtimeQA questions and 4 evidence texts: --limit 4 adds one ScrRec request)
    assert (engine["sent"], engine["reused"]) == (1, 12)
    answered = {entry["endpoint"]["base_url"]: entry["answers"] for entry in engine["endpoints"]}
    assert set(answered) == {first.base_url, second.base_url} and sum(answered.values()) == 13
    # the third sample of each config: only the second server's folder has it
    assert answered[second.base_url] >= 4
    config = json.loads((fourth_folder / "config.json").read_text())
    assert config["replicas"] is True and config["endpoint"]["base_url"] == first.base_url


def test_a_run_folder_of_another_endpoint_is_refused_unless_replicas(
    own_llama_server, tmp_path: Path
) -> None:
    first, second = own_llama_server(), own_llama_server()
    folder = tmp_path / "shared-folder"
    code, _, err = cli([*run_args(first.base_url, 1), "--run-dir", str(folder)])
    assert code == 0, err
    code, _, err = cli([*run_args(second.base_url, 1), "--run-dir", str(folder)])
    assert code == 2
    [line] = err.strip().splitlines()
    assert line.startswith(
        f"error: {folder} holds answers of another endpoint (4 from openai {first.base_url} model smollm2)"
    )
    assert line.endswith("give another --run-dir, or --replicas if both serve the same weights")
    code, out, err = cli([*run_args(second.base_url, 1), "--run-dir", str(folder), "--replicas"])
    assert code == 0, err
    assert "0 request(s) sent, 4 reused" in out


def samples(run_dir: Path) -> list[str]:
    path = run_dir / "samples.jsonl"
    return path.read_text().splitlines() if path.exists() else []


def test_a_server_killed_mid_run_stops_it_within_the_dead_time(own_llama_server, tmp_path: Path) -> None:
    server = own_llama_server()
    run_dir = tmp_path / "run"
    command = [str(EXECUTABLE), *run_args(server.base_url, 2, "--suite", "paper", "--datasets", "dream",
               "--retries", "8", "--dead-after", str(DEAD_AFTER), "--run-dir", str(run_dir))]  # fmt: skip
    stdout_file = tmp_path / "stdout.txt"
    with stdout_file.open("w") as stdout:
        process = subprocess.Popen(command, stdout=stdout, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 180
        while len(samples(run_dir)) < 3 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)
        assert process.poll() is None, "the run finished before the server could be killed"
        os.kill(server.process.pid, signal.SIGKILL)  # the server goes away mid-run, with 11 requests to go
        server.process.wait(timeout=10)
        killed = time.monotonic()
        written_before = samples(run_dir)
        _, stderr = process.communicate(timeout=300)
        took = time.monotonic() - killed

    assert process.returncode == 3, stderr
    # without the stop, every pending request would spend its 8 retries (46 s each on average) on a closed port
    assert took <= DEAD_AFTER + 10, (took, stderr)
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("error: the run is incomplete"), stderr
    assert "stopped early, the endpoint is unreachable: no request has succeeded for " in last
    assert "could not connect" in last
    resume = last.split("rerun the same command to complete it: ", 1)[1]
    assert shlex.split(resume) == ["scrambled-bench", *command[1:]]

    # no answer lost: what was on disk is still there, every answer is scored, the rest is marked missing
    after = samples(run_dir)
    assert set(written_before) <= set(after)
    results = results_of(run_dir)
    assert results["engine"]["stopped"] and results["totals"]["complete"] is False
    scored = {json.loads(line)["key"] for line in (run_dir / "scores.jsonl").read_text().splitlines()}
    assert scored == {json.loads(line)["key"] for line in after}
    assert sum(entry["n_missing"] for entry in results["configs"].values()) > 0

    # the table, redirected to a file, holds every number in full
    check_every_number_in_full(stdout_file.read_text(), results)

    # the server back at its address: the printed command completes the run
    own_llama_server(port=urlparse(server.root_url).port)
    resumed = subprocess.run(
        [str(EXECUTABLE), *shlex.split(resume)[1:]], check=False, capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    assert results_of(run_dir)["totals"]["complete"] is True


def check_every_number_in_full(text: str, results: dict) -> None:
    """Every config's row shows its counts and scores whole, as results.json has them (in percent)."""
    assert "…" not in text, text
    for name, entry in results["configs"].items():
        [row] = [line for line in text.splitlines() if re.search(rf"\b{re.escape(name)}\b", line)]
        expected = [
            f"{entry['n_scored']} of {entry['n_requests']}"
            if not entry["complete"]
            else str(entry["n_scored"])
        ]
        for key, digits in (
            ("edit_distance", 2),
            ("recovery_rate", 1),
            ("accuracy", 1),
            ("relative_performance_gain", 1),
        ):
            value = (entry.get(key) or {}).get("value")
            if value is not None:
                expected.append(f"{value * (1 if key == 'edit_distance' else 100):.{digits}f}")
        mean = entry["prompt_tokens"]["mean"]
        if mean is not None:
            expected.append(f"{mean:.0f}")
        cells = [cell.strip() for cell in row.split("│")]
        for number in expected:
            assert any(cell == number or cell.startswith(number + " ") for cell in cells), (name, number, row)
