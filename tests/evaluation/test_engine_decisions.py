"""The engine's decisions as pure functions: what a failed attempt leads to (:func:`after_failure`) and when an
endpoint is taken for dead (:func:`observe`, :func:`dead_verdict`), over any sequence of outcomes. The engine
that acts on them is driven in test_engine_runner.py and test_engine_dead_endpoint.py."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends.base import BackendError, ContextTooLongError
from scrambled_bench.evaluation.engine import (
    EndpointHealth,
    EngineSettings,
    GiveUp,
    Retry,
    Stop,
    after_failure,
    dead_verdict,
    observe,
)

#: the outcomes of an attempt, as the backends raise them (None: an answer)
OUTCOMES = {
    "answer": None,
    "refused": BackendError("connection failed (refused)", retryable=True, connection=True),
    "reset": BackendError("connection dropped (reset)", retryable=True, connection=True),
    "timeout": BackendError("no answer within 0.1 s", retryable=True),
    "http 503": BackendError("HTTP 503: overloaded", retryable=True),
    "http 400": BackendError("HTTP 400: bad request", retryable=False),
    "context": ContextTooLongError("prompt of 9000 tokens, context 8192"),
    "bug": KeyError("choices"),
}
CONNECTION = {"refused", "reset"}

retry_after = st.none() | st.floats(min_value=0, max_value=1000, allow_nan=False)
settings = st.builds(
    EngineSettings,
    max_retries=st.integers(min_value=0, max_value=8),
    max_retry_after=st.floats(min_value=0, max_value=600, allow_nan=False),
)


@given(settings, retry_after, st.booleans())
def test_a_failing_request_is_retried_exactly_max_retries_times_unless_the_wait_asked_is_too_long(
    engine: EngineSettings, wait: float | None, connection: bool
) -> None:
    error = BackendError("HTTP 503", retryable=True, retry_after=wait, connection=connection)
    decisions = [after_failure(error, attempt, engine) for attempt in range(engine.max_retries + 3)]
    if wait is not None and wait > engine.max_retry_after:
        # never waited for: recorded at once, and sent again on the next resume
        assert all(d == decisions[0] for d in decisions)
        assert decisions[0].error_type == "retry_after_too_long" and str(error) in decisions[0].message
        return
    retries = [d for d in decisions if isinstance(d, Retry)]
    assert decisions[: engine.max_retries] == retries and len(retries) == engine.max_retries
    assert all(r.retry_after == wait for r in retries)  # the server's wait is honoured
    assert set(decisions[engine.max_retries :]) == {GiveUp("retries_exhausted", "HTTP 503")}


@given(settings, st.integers(min_value=0, max_value=20), retry_after)
def test_what_retrying_cannot_fix_costs_one_sample_at_once(
    engine: EngineSettings, attempt: int, wait: float | None
) -> None:
    rejected = BackendError("HTTP 400: bad request", retryable=False, retry_after=wait)
    assert after_failure(rejected, attempt, engine) == GiveUp("request_rejected", "HTTP 400: bad request")
    too_long = ContextTooLongError("prompt of 9000 tokens")
    assert after_failure(too_long, attempt, engine) == GiveUp("context_too_long", "prompt of 9000 tokens")
    bug = after_failure(ValueError("bad\nJSON from the server"), attempt, engine)
    assert isinstance(bug, GiveUp) and bug.error_type == "unexpected_error"
    assert bug.message.startswith("ValueError: bad") and "\n" not in bug.message
    # an error the run cannot go past (the model failed to load) stops it, whatever the attempt
    assert after_failure(ScrambledBenchError("cannot load the model"), attempt, engine) == Stop()


events = st.lists(
    st.tuples(st.sampled_from(sorted(OUTCOMES)), st.floats(min_value=0, max_value=50)), max_size=30
)


@given(
    events,
    st.floats(min_value=0, max_value=100),
    st.floats(min_value=0, max_value=200),
    st.integers(min_value=2, max_value=8),
)
def test_a_dead_endpoint_is_declared_only_after_the_dead_time_with_the_latest_attempts_all_unconnected(
    outcomes: list[tuple[str, float]], dead_after: float, wait: float, needed: int
) -> None:
    health, now, last_answer, unconnected = EndpointHealth(0.0), 0.0, 0.0, 0
    for kind, elapsed in outcomes:
        now += elapsed
        health = observe(health, OUTCOMES[kind], now)
        if kind == "answer":
            last_answer = now
        # only a failure to connect counts; an answer, a timeout, an HTTP error or a bug ends the streak
        unconnected = unconnected + 1 if kind in CONNECTION else 0
        assert health.streak == unconnected and health.last_success == last_answer
        for at in (now, now + wait):
            verdict = dead_verdict(health, at, dead_after=dead_after, needed=needed)
            dead = bool(dead_after) and unconnected >= needed and at - last_answer >= dead_after
            assert (verdict is not None) == dead, (kind, at, verdict)
            if verdict is not None:
                assert str(OUTCOMES[kind]) in verdict and f"last {unconnected} attempts" in verdict


@given(
    st.sampled_from(sorted(set(OUTCOMES) - CONNECTION - {"answer"})), st.integers(min_value=2, max_value=100)
)
def test_a_timeout_or_an_http_error_never_counts_toward_a_dead_endpoint(kind: str, refusals: int) -> None:
    health = EndpointHealth(0.0)
    for second in range(refusals):
        health = observe(health, OUTCOMES["refused"], float(second))
    assert dead_verdict(health, 1e6, dead_after=60, needed=2) is not None
    # one answer of another kind after any number of refusals: the endpoint is alive, however long it stays silent
    health = observe(health, OUTCOMES[kind], float(refusals))
    assert dead_verdict(health, 1e6, dead_after=60, needed=2) is None
