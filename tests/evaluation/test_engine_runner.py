"""The engine's own logic (resume, dedupe, retries, backoff, timeouts, rate limit, concurrency bound),
driven by an in-test Backend whose failures follow a script. The same engine against real servers is in
test_engine_faults.py and test_engine_sigkill.py."""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrambled_bench.evaluation.backends.base import (
    Backend,
    BackendError,
    ContextTooLongError,
    Generation,
    GenerationRequest,
    GenerationSettings,
)
from scrambled_bench.evaluation.engine import (
    EngineSettings,
    RateLimiter,
    backoff_delay,
    run_requests,
    unique_requests,
)
from scrambled_bench.evaluation.store import RunStore

FAST = dict(backoff_base=0.01, backoff_max=0.05)


class ScriptedBackend(Backend):
    """Answers ``prompt[::-1]`` after ``delay``; ``script[prompt]`` lists exceptions (or "stall") to raise
    on the first attempts of that prompt."""

    kind = "scripted"

    def __init__(self, script: dict[str, list[Any]] | None = None, delay: float = 0.0):
        super().__init__("scripted-model")
        self.script = {prompt: list(steps) for prompt, steps in (script or {}).items()}
        self.delay = delay
        self.calls: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0

    async def health_check(self) -> dict[str, Any]:
        return {"backend": self.kind}

    async def generate(self, request: GenerationRequest) -> Generation:
        self.calls.append(request.prompt)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            steps = self.script.get(request.prompt)
            if steps:
                step = steps.pop(0)
                if step == "stall":
                    await asyncio.sleep(60)
                raise step
            await asyncio.sleep(self.delay)
            return Generation(
                request.prompt[::-1],
                prompt_tokens=len(request.prompt),
                completion_tokens=3,
                finish_reason="stop",
                fingerprint="fp-1",
            )
        finally:
            self.in_flight -= 1


def requests_for(prompts: list[str]) -> list[GenerationRequest]:
    return [
        GenerationRequest(p, chat=True, settings=GenerationSettings(max_new_tokens=8), meta={"i": i})
        for i, p in enumerate(prompts)
    ]


def run(
    backend: Backend, reqs: list[GenerationRequest], run_dir: Path, **engine: Any
) -> tuple[Any, dict, dict]:
    with RunStore(run_dir) as store:
        stats = asyncio.run(
            run_requests(
                backend,
                reqs,
                store,
                EngineSettings(**{**FAST, **engine}),
                progress=False,
                on_result=lambda r, g: {"prediction": g.text.upper()},
            )
        )
        return stats, store.completed(), store.errors()


def test_records_carry_request_generation_and_task_fields(tmp_path: Path) -> None:
    stats, done, errors = run(ScriptedBackend(), requests_for(["abc", "xyz"]), tmp_path)
    assert (stats.total, stats.succeeded, stats.failed, stats.prompt_tokens, stats.completion_tokens) == (
        2,
        2,
        0,
        6,
        6,
    )
    assert stats.fingerprints == ["fp-1"]
    record = next(r for r in done.values() if r["prompt"] == "abc")
    assert record == {
        "key": GenerationRequest("abc", chat=True, settings=GenerationSettings(max_new_tokens=8)).key(
            "scripted-model"
        ),
        "model": "scripted-model",
        "i": 0,
        "prompt": "abc",
        "chat": True,
        "settings": {"max_new_tokens": 8, "temperature": 0.0, "stop": [], "seed": 0},
        "output": "cba",
        "prompt_tokens": 3,
        "completion_tokens": 3,
        "finish_reason": "stop",
        "system_fingerprint": "fp-1",  # the reply's: which configuration of the endpoint answered
        "prediction": "CBA",
    }
    assert errors == {}


def test_identical_requests_are_sent_once_and_resume_sends_only_what_is_missing(tmp_path: Path) -> None:
    backend = ScriptedBackend()
    stats, done, _ = run(backend, requests_for(["a", "b", "a", "c"]), tmp_path)
    assert (stats.total, stats.succeeded) == (3, 3)
    assert sorted(backend.calls) == ["a", "b", "c"]
    backend2 = ScriptedBackend()
    stats2, done2, _ = run(backend2, requests_for(["a", "b", "c", "d"]), tmp_path)
    assert (stats2.total, stats2.skipped_existing, stats2.succeeded) == (4, 3, 1)
    assert backend2.calls == ["d"]
    assert len(done2) == 4


def test_retryable_errors_are_retried_and_counted(tmp_path: Path) -> None:
    script = {
        "a": [
            BackendError("HTTP 503", retryable=True),
            BackendError("HTTP 429", retryable=True, retry_after=0.05),
        ],
        "b": ["stall"],
    }
    backend = ScriptedBackend(script)
    started = time.monotonic()
    stats, done, errors = run(backend, requests_for(["a", "b", "c"]), tmp_path, request_timeout=0.3)
    assert (stats.succeeded, stats.failed, stats.retries) == (3, 0, 3)
    assert backend.calls.count("a") == 3 and backend.calls.count("b") == 2
    assert {r["output"] for r in done.values()} == {"a", "b", "c"}
    assert errors == {}
    assert time.monotonic() - started >= 0.3  # the stall was waited out to the timeout


def test_final_failures_go_to_errors_and_are_resent_on_resume(tmp_path: Path) -> None:
    script = {
        "down": [BackendError("HTTP 500", retryable=True)] * 3,
        "bad": [BackendError("HTTP 401: authentication failed", retryable=False)],
        "long": [ContextTooLongError("prompt of 5000 tokens does not fit 2048")],
    }
    stats, done, errors = run(
        ScriptedBackend(script), requests_for(["down", "bad", "long", "fine"]), tmp_path, max_retries=2
    )
    assert (stats.succeeded, stats.failed, stats.retries) == (1, 3, 2)
    assert {r["meta"]["i"]: r["error_type"] for r in errors.values()} == {
        0: "retries_exhausted",
        1: "request_rejected",
        2: "context_too_long",
    }
    assert next(r for r in errors.values() if r["meta"]["i"] == 0)["attempts"] == 3
    # next resume: the backend has recovered; only the three failed keys are sent
    backend = ScriptedBackend()
    stats2, done2, errors2 = run(backend, requests_for(["down", "bad", "long", "fine"]), tmp_path)
    assert sorted(backend.calls) == ["bad", "down", "long"]
    assert (stats2.skipped_existing, stats2.succeeded) == (1, 3)
    assert errors2 == {} and len(done2) == 4


def test_a_retry_after_beyond_the_cap_is_recorded_not_waited_for(tmp_path: Path) -> None:
    # a spent quota answering "retry in a day" must not hold a slot for a day
    script = {"quota": [BackendError("HTTP 429: quota exceeded", retryable=True, retry_after=86400.0)]}
    started = time.monotonic()
    stats, done, errors = run(
        ScriptedBackend(script), requests_for(["quota", "fine"]), tmp_path, max_retry_after=60.0
    )
    assert time.monotonic() - started < 5
    assert (stats.succeeded, stats.failed, stats.retries) == (1, 1, 0)
    (error,) = errors.values()
    assert error["error_type"] == "retry_after_too_long"
    assert "86400 s" in error["message"] and "60 s allowed" in error["message"]
    # it is sent again on the next resume
    backend = ScriptedBackend()
    run(backend, requests_for(["quota", "fine"]), tmp_path)
    assert backend.calls == ["quota"]


def test_concurrency_is_bounded(tmp_path: Path) -> None:
    backend = ScriptedBackend(delay=0.02)
    run(backend, requests_for([f"p{i}" for i in range(40)]), tmp_path, concurrency=5)
    assert backend.max_in_flight == 5


def test_a_backend_serving_fewer_at_once_caps_the_requests_in_flight(tmp_path: Path) -> None:
    """In-process backends say how many requests they serve at once (llama.cpp 1, transformers a batch);
    more in flight would only queue inside them, spending their timeouts on the wait."""
    backend = ScriptedBackend(delay=0.02)
    backend.max_concurrency = 2
    stats, _, _ = run(backend, requests_for([f"p{i}" for i in range(12)]), tmp_path, concurrency=8)
    assert backend.max_in_flight == 2 and stats.succeeded == 12


def test_transformers_backend_keeps_one_batch_in_flight() -> None:
    pytest.importorskip("transformers")
    from scrambled_bench.evaluation.backends import create_backend

    backend = create_backend("transformers", model="any/model")  # nothing loads before the first request
    assert backend.max_concurrency == backend.batch_size == 8


def test_max_rps_spaces_requests(tmp_path: Path) -> None:
    backend = ScriptedBackend()
    stats, _, _ = run(
        backend, requests_for([f"p{i}" for i in range(11)]), tmp_path, concurrency=8, max_rps=20
    )
    # 11 admissions at 20/s: the last one no earlier than 10 intervals after the first
    assert stats.wall_seconds >= 0.45


def test_rate_limiter_slots_are_evenly_spaced() -> None:
    async def admit(n: int) -> list[float]:
        limiter = RateLimiter(50)
        times = []
        for _ in range(n):
            await limiter.acquire()
            times.append(time.monotonic())
        return times

    times = asyncio.run(admit(6))
    # admission k is never earlier than k intervals after the first (a late wake-up may shorten one gap,
    # never the schedule)
    assert all(t - times[0] >= k * 0.02 - 0.002 for k, t in enumerate(times))


@settings(max_examples=200, deadline=None)
@given(
    attempt=st.integers(0, 12),
    base=st.floats(0.01, 2),
    cap=st.floats(0.1, 60),
    retry_after=st.one_of(st.none(), st.floats(0, 100)),
    seed=st.integers(0, 2**16),
)
def test_backoff_is_within_full_jitter_bounds_and_honours_retry_after(
    attempt, base, cap, retry_after, seed
) -> None:
    delay = backoff_delay(attempt, base=base, cap=cap, retry_after=retry_after, rng=random.Random(seed))
    ceiling = min(cap, base * 2**attempt)
    if retry_after is None:
        assert 0 <= delay <= ceiling
    else:
        assert retry_after <= delay <= max(retry_after, ceiling)


@settings(max_examples=100, deadline=None)
@given(prompts=st.lists(st.text(max_size=5), max_size=30))
def test_unique_requests_keeps_one_per_key_in_first_seen_order(prompts: list[str]) -> None:
    unique = unique_requests(requests_for(prompts), "m")
    assert [r.prompt for r in unique.values()] == list(dict.fromkeys(prompts))


def test_a_bug_in_on_result_stops_the_run_without_losing_what_was_stored(tmp_path: Path) -> None:
    calls = {"n": 0}

    def flaky(request: GenerationRequest, generation: Generation) -> dict:
        calls["n"] += 1
        if request.prompt == "boom":
            raise RuntimeError("scoring bug")
        return {}

    with RunStore(tmp_path) as store:
        with pytest.raises(RuntimeError, match="scoring bug"):
            asyncio.run(
                run_requests(
                    ScriptedBackend(),
                    requests_for(["ok", "boom"]),
                    store,
                    EngineSettings(concurrency=1),
                    on_result=flaky,
                    progress=False,
                )
            )
        assert [r["prompt"] for r in store.completed().values()] == ["ok"]


def test_invalid_settings_are_one_line_errors() -> None:
    from scrambled_bench.errors import ScrambledBenchError

    with pytest.raises(ScrambledBenchError, match="--concurrency must be at least 1, got 0"):
        EngineSettings(concurrency=0)
    with pytest.raises(ScrambledBenchError, match="--max-rps must be positive"):
        EngineSettings(max_rps=0)


def test_an_unexpected_backend_exception_costs_one_sample_not_the_run(tmp_path: Path) -> None:
    script = {"odd": [KeyError("choices")]}
    stats, done, errors = run(ScriptedBackend(script), requests_for(["odd", "fine"]), tmp_path)
    assert (stats.succeeded, stats.failed) == (1, 1)
    assert [r["output"] for r in done.values()] == ["enif"]
    (error,) = errors.values()
    assert (error["error_type"], error["message"]) == ("unexpected_error", "KeyError: 'choices'")


def test_progress_bar_reports_rate_retries_failures_and_tokens(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Written to a file, the progress line is whole: its end ("tokens 2 in / 6 out") used to be cut at 80."""
    script = {
        "a": [BackendError("HTTP 503", retryable=True)],
        "b": [BackendError("HTTP 400", retryable=False)],
    }
    with RunStore(tmp_path) as store:
        asyncio.run(
            run_requests(
                ScriptedBackend(script),
                requests_for(["a", "b", "c"]),
                store,
                EngineSettings(**FAST),
                progress=True,
            )
        )
    shown = capsys.readouterr().err  # progress goes to stderr, whole lines when it is not a terminal
    assert "scripted:scripted-model" in shown and "3/3" in shown and "req/s" in shown
    assert "retries 1" in shown and "failed 1" in shown and "tokens 2 in / 6 out" in shown


class _GatedStore(RunStore):
    """A store whose first write waits until ``release`` is set: a disk slower than the server."""

    def __init__(self, root: Path, release: Any):
        super().__init__(root)
        self.release = release

    def append_many(self, records: list[dict[str, Any]]) -> list[bool]:
        assert self.release.wait(timeout=10), "the engine waited for a write before sending on"
        return super().append_many(records)


def test_a_slot_sends_its_next_request_without_waiting_for_the_write(tmp_path: Path) -> None:
    import threading

    release = threading.Event()

    class ReleasesAtTheLast(ScriptedBackend):
        async def generate(self, request: GenerationRequest) -> Generation:
            generation = await super().generate(request)
            if len(self.calls) == 5:
                release.set()
            return generation

    backend = ReleasesAtTheLast()
    with _GatedStore(tmp_path, release) as store:
        stats = asyncio.run(
            run_requests(
                backend, requests_for([f"p{i}" for i in range(5)]), store, EngineSettings(concurrency=1),
                progress=False,
            )
        )  # fmt: skip
        # one slot sent all five while the first write was still waiting: and all five are on disk
        assert stats.succeeded == 5 and len(store.completed()) == 5


def test_a_failed_write_stops_the_run_with_its_error_and_keeps_what_was_written(tmp_path: Path) -> None:
    from scrambled_bench.errors import ScrambledBenchError

    class FullDisk(RunStore):
        writes = 0

        def append_many(self, records: list[dict[str, Any]]) -> list[bool]:
            self.writes += 1
            if self.writes > 1:
                raise ScrambledBenchError(f"cannot write {self.samples_path}: No space left on device")
            return super().append_many(records)

    backend = ScriptedBackend(delay=0.01)
    with FullDisk(tmp_path) as store:
        with pytest.raises(ScrambledBenchError, match="No space left"):
            asyncio.run(
                run_requests(
                    backend, requests_for([f"p{i}" for i in range(20)]), store,
                    EngineSettings(concurrency=1), progress=False,
                )
            )  # fmt: skip
        kept = store.completed()
    assert 1 <= len(kept) < 20
    assert len(backend.calls) < 20  # the run stopped, it did not go on answering into a full disk
    with RunStore(tmp_path) as reopened:
        assert reopened.completed().keys() == kept.keys()


def test_answers_that_arrived_before_a_cancel_are_written(tmp_path: Path) -> None:
    arrived: list[str] = []

    class Records(ScriptedBackend):
        async def generate(self, request: GenerationRequest) -> Generation:
            generation = await super().generate(request)
            arrived.append(request.prompt)
            return generation

    async def cancel_after_some() -> None:
        store = RunStore(tmp_path)
        task = asyncio.create_task(
            run_requests(
                Records(delay=0.01), requests_for([f"p{i}" for i in range(200)]), store,
                EngineSettings(concurrency=8), progress=False,
            )
        )  # fmt: skip
        while len(arrived) < 20:
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        store.close()

    asyncio.run(cancel_after_some())
    with RunStore(tmp_path) as reopened:
        written = {record["prompt"] for record in reopened.completed().values()}
    # every answer the backend returned before the cancel is on disk; none is lost
    assert written == set(arrived) and len(written) < 200


def test_the_committer_gives_the_loop_a_turn_between_records(tmp_path: Path) -> None:
    """A batch's reader runs one record at a time, so answers arriving meanwhile are turned around after at
    most one record's build, not after the whole batch's."""
    build_seconds = 0.05
    turns: list[float] = []

    def slow_reader(request: GenerationRequest, generation: Generation) -> dict[str, Any]:
        time.sleep(build_seconds)  # holds the event loop's thread, as a reader's CPU does
        return {}

    async def run_with_heartbeat() -> None:
        async def heartbeat() -> None:
            while True:
                turns.append(time.perf_counter())
                await asyncio.sleep(0)

        beating = asyncio.create_task(heartbeat())
        with RunStore(tmp_path) as store:
            # four answers at once: one batch of four records
            await run_requests(
                ScriptedBackend(), requests_for([f"p{i}" for i in range(4)]), store,
                EngineSettings(concurrency=4), progress=False, on_result=slow_reader,
            )  # fmt: skip
            assert len(store.completed()) == 4
        beating.cancel()

    asyncio.run(run_with_heartbeat())
    longest_hold = max(later - earlier for earlier, later in itertools.pairwise(turns))
    # one record's build, with room for a busy machine; the whole batch at once would be four of them
    assert build_seconds <= longest_hold < 2.5 * build_seconds
