"""Ctrl-C is a stop, not a loss: a cancelled run (what asyncio does on SIGINT: it cancels the main task)
writes every answer that arrived, and ``execute_run`` writes results.json from them, marked incomplete
(``engine.interrupted``; the requests never answered count as missing), before the cancellation goes on.
Backends that answer as told, so the moment of the interruption is exact (fast); the real command under
SIGINT is tested in tests/evaluate_cli (test_run_command.py, test_run_incomplete.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from scrambled_bench.evaluation.backends.base import Backend, Generation, GenerationRequest
from scrambled_bench.evaluation.engine import EngineSettings, EngineStats, run_requests
from scrambled_bench.evaluation.store import RunStore

TINY_BUILD = Path(__file__).resolve().parents[1] / "fixtures" / "tiny_build"


class AnswersThenHangs(Backend):
    """Answers the first ``answers`` requests; the next one hangs until cancelled, and cancels ``target``
    (the run's main task, as SIGINT does) once it has started."""

    kind = "scripted"

    def __init__(self, answers: int):
        super().__init__("scripted-model")
        self.answers = answers
        self.target: asyncio.Task | None = None

    async def health_check(self) -> dict:
        return {"backend": self.kind, "model": self.model}

    async def generate(self, request: GenerationRequest) -> Generation:
        if self.answers > 0:
            self.answers -= 1
            return Generation(f"answer to {request.prompt[-20:]}", 3, 2, "stop")
        assert self.target is not None
        self.target.cancel()  # Ctrl-C while this request is in flight
        await asyncio.Event().wait()
        raise AssertionError("never answered")


def test_a_cancelled_run_writes_every_answer_that_arrived_and_says_it_was_interrupted(tmp_path: Path) -> None:
    requests = [GenerationRequest(f"prompt {i}", chat=True, meta={"id": i}) for i in range(10)]
    backend = AnswersThenHangs(answers=4)
    stats = EngineStats()

    async def go() -> None:
        backend.target = asyncio.current_task()
        with RunStore(tmp_path) as store:
            await run_requests(
                backend, requests, store, EngineSettings(concurrency=1), progress=False, stats=stats
            )

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(go())
    with RunStore(tmp_path) as store:
        assert len(store.completed()) == 4 and store.errors() == {}  # the one in flight is neither
    assert stats.interrupted and (stats.total, stats.succeeded, stats.failed) == (10, 4, 0)


@pytest.mark.slow  # loads the metric modules (evaluate imports torch)
def test_an_interrupted_run_writes_results_marked_incomplete(tmp_path: Path) -> None:
    """execute_run, cancelled mid-run, leaves results.json and scores.jsonl resting on every answer that
    arrived, marked incomplete; report reads it and marks it."""
    from scrambled_bench.evaluation.evaluate import execute_run, plan_run, results_status
    from scrambled_bench.evaluation.settings import RunSettings
    from scrambled_bench.report.runs import load_run

    plan = plan_run(RunSettings(data=str(TINY_BUILD), limit=2, n_resamples=20))
    backend = AnswersThenHangs(answers=5)
    run_dir = tmp_path / "run"

    async def go() -> None:
        backend.target = asyncio.current_task()
        await execute_run(plan, backend, run_dir, EngineSettings(concurrency=1), progress=False)

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(go())
    results = json.loads((run_dir / "results.json").read_text())
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    scores = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text().splitlines()]
    total = len(plan.all_requests)
    assert len(samples) == 5 and {row["key"] for row in scores} == {record["key"] for record in samples}
    assert results["engine"]["interrupted"] is True and results["engine"]["stopped"] is None
    totals = results["totals"]
    assert (totals["n_requests"], totals["n_scored"], totals["n_missing"], totals["n_failed"]) == (
        total,
        5,
        total - 5,
        0,
    )
    assert totals["complete"] is False and totals["incomplete_configs"]
    config = json.loads((run_dir / "config.json").read_text())
    assert config["run_id"] == results["run_id"]  # results of this run's settings: report reads them
    assert results_status(run_dir) == f"results.json: 5 of {total} requests scored, marked incomplete"
    run = load_run(run_dir)
    assert not run.results["totals"]["complete"]
    assert not (run_dir / ".lock").exists()
