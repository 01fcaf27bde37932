"""The async runner: sends generation requests to a backend with bounded concurrency, an optional rate
limit, retries with backoff, and a per-request timeout, persisting every answer as it arrives.

Resumption is by key: a request whose key is already in the run's ``samples.jsonl`` is not sent again, so
rerunning the same command after a crash (even ``kill -9``) sends only what is missing. Failures that
survive all retries are written to ``errors.jsonl`` and sent again on the next resume; they never abort
the run, and never count as an (empty) answer.

A dead endpoint ends the run early: when no request has succeeded for ``dead_after`` seconds and the latest
attempts all failed to connect, the run stops at once (what was answered is written, the rest is left for
the resume) instead of spending every pending request's retries on it.

The parts: :func:`run_requests` (the entry point) hands the requests not yet answered to a
:class:`RequestSender`, whose workers send them; what a failed attempt leads to (a retry, a recorded
failure, the run's end) is the pure :func:`after_failure`, and when the endpoint is dead the pure
:func:`dead_verdict` over the :class:`EndpointHealth` that :func:`observe` keeps; the answers are written by
:class:`~scrambled_bench.evaluation.committer.GroupCommitter`.
"""

from __future__ import annotations

import asyncio
import functools
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends._common import one_line
from scrambled_bench.evaluation.backends.base import (
    Backend,
    BackendError,
    ContextTooLongError,
    Generation,
    GenerationRequest,
)
from scrambled_bench.evaluation.committer import GroupCommitter
from scrambled_bench.evaluation.store import RunStore
from scrambled_bench.redaction import redact


@dataclass
class EngineSettings:
    """How requests are sent; each field is the ``run`` option of the same name (``--retries`` for
    ``max_retries``)."""

    concurrency: int = 8
    """Requests in flight at once (fewer where the backend serves fewer at a time)."""
    max_rps: float | None = None
    """At most this many requests per second, evenly spaced; None: no limit."""
    max_retries: int = 5
    """Retries of a request after its first attempt, for a failure that a retry can fix (:func:`after_failure`)."""
    request_timeout: float = 120.0
    """Seconds before one attempt is abandoned (a timeout: retried)."""
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    """The longest wait before a retry is ``backoff_base`` doubled at each retry, up to ``backoff_max``
    (:func:`backoff_delay`)."""
    max_retry_after: float = 300.0
    """The longest Retry-After honoured; a server asking for more (a spent daily quota, say) would hold a
    slot for that long, so the request is recorded as failed instead and sent again on the next resume."""
    dead_after: float = 60.0
    """Seconds without a single success, the latest attempts all failing to connect, after which the
    endpoint is taken for dead and the run stops (0: never); timeouts and HTTP errors never count."""

    def __post_init__(self) -> None:
        for name, flag, valid, rule in (
            ("concurrency", "--concurrency", lambda value: value >= 1, "must be at least 1"),
            ("max_rps", "--max-rps", lambda value: value is None or value > 0, "must be positive"),
            ("max_retries", "--max-retries", lambda value: value >= 0, "must be 0 or more"),
            ("request_timeout", "--request-timeout", lambda value: value > 0, "must be positive"),
            ("max_retry_after", "--max-retry-after", lambda value: value >= 0, "must be 0 or more"),
            ("dead_after", "--dead-after", lambda value: value >= 0, "must be 0 or more"),
        ):
            value = getattr(self, name)
            if not valid(value):
                raise ScrambledBenchError(f"{flag} {rule}, got {value}")


@dataclass
class EngineStats:
    """What one call of :func:`run_requests` did. Token totals cover this call's successes only, and
    only what the backend reported."""

    total: int = 0
    """Distinct requests given (identical ones are sent once)."""
    skipped_existing: int = 0
    """Of those, the ones the run folder already held answers to: not sent."""
    succeeded: int = 0
    """Answered, and the answer written to ``samples.jsonl``."""
    failed: int = 0
    """Given up (``errors.jsonl``): sent again on the next resume."""
    retries: int = 0
    """Attempts sent again after a failure that a retry can fix."""
    fingerprints: list[str] = field(default_factory=list)
    """Distinct backend fingerprints seen in replies (e.g. OpenAI ``system_fingerprint``), for config.json."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    """Tokens in the prompts and in the answers, as the backend reported them."""
    wall_seconds: float = 0.0
    """How long the call took."""
    stopped: str | None = None
    """Why the run stopped before every request was tried (the endpoint went away); None when it did not."""
    interrupted: bool = False
    """The run was cancelled (Ctrl-C) before every request was tried."""


def backoff_delay(
    attempt: int, *, base: float, cap: float, retry_after: float | None, rng: random.Random
) -> float:
    """Seconds to wait before retry number ``attempt`` (0-based): "full jitter" exponential backoff,
    uniform in ``[0, min(cap, base * 2**attempt)]``, but never less than the server's Retry-After.

    >>> rng = random.Random(0)
    >>> 0 <= backoff_delay(3, base=0.5, cap=30, retry_after=None, rng=rng) <= 4.0
    True
    >>> backoff_delay(0, base=0.5, cap=30, retry_after=7.0, rng=rng) >= 7.0
    True
    """
    jittered = rng.uniform(0.0, min(cap, base * (2**attempt)))
    if retry_after is not None:
        return max(float(retry_after), jittered)
    return jittered


class RateLimiter:
    """At most ``rate`` acquisitions per second, evenly spaced (requests are admitted, not bunched)."""

    def __init__(self, rate: float):
        self._interval = 1.0 / rate
        self._next_slot = 0.0
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        async with self._lock:
            now = time.monotonic()
            slot = max(now, self._next_slot)
            self._next_slot = slot + self._interval
        delay = slot - now
        if delay > 0:
            await asyncio.sleep(delay)


#: descriptors a run needs besides one socket per request in flight: its own files, the interpreter's, logs
OPEN_FILES_HEADROOM = 64


def raise_open_files_limit(in_flight: int) -> int:
    """Make room for ``in_flight`` sockets: raise this process's soft limit of open files (``ulimit -n``,
    often 1,024) up to its hard limit where it is lower than ``in_flight`` plus a headroom; return the soft
    limit now. A hard limit too low is a one-line error before anything is sent, not "Too many open files"
    on request 1,000.

    >>> import resource
    >>> soft = raise_open_files_limit(8)
    >>> soft == resource.RLIM_INFINITY or soft >= 8 + OPEN_FILES_HEADROOM
    True
    """
    try:
        import resource
    except ImportError:  # not a POSIX system: nothing to raise
        return in_flight + OPEN_FILES_HEADROOM
    needed = in_flight + OPEN_FILES_HEADROOM
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return soft
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise ScrambledBenchError(
            f"--concurrency {in_flight} needs about {needed} open files, but this process may open at most "
            f"{hard} (ulimit -Hn); lower --concurrency to {max(1, hard - OPEN_FILES_HEADROOM)} or raise the limit"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    return needed


def unique_requests(requests: Sequence[GenerationRequest], model: str) -> dict[str, GenerationRequest]:
    """Key -> request, keeping the first of identical requests (same model, prompt, chat, settings).

    >>> reqs = [GenerationRequest("a", chat=True), GenerationRequest("a", chat=True), GenerationRequest("b", chat=True)]
    >>> len(unique_requests(reqs, "m"))
    2
    """
    unique: dict[str, GenerationRequest] = {}
    for request in requests:
        unique.setdefault(request.key(model), request)
    return unique


def sample_record(
    key: str,
    model: str,
    request: GenerationRequest,
    generation: Generation,
    endpoint: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``samples.jsonl`` record of one answer, before the task's own fields (prediction, score...): with
    the ``endpoint`` that gave it where one is given, and the reply's ``system_fingerprint`` where it had one.

    >>> request = GenerationRequest("Recover: Teh cat", chat=True, meta={"id": 7, "config": "rs50"})
    >>> record = sample_record("k1", "m", request, Generation("The cat", 5, 2, "stop"), {"backend": "b"})
    >>> [record[f] for f in ("key", "id", "config", "output", "prompt_tokens", "finish_reason", "endpoint")]
    ['k1', 7, 'rs50', 'The cat', 5, 'stop', {'backend': 'b'}]
    """
    record = {
        "key": key,
        "model": model,
        **request.meta,
        "prompt": request.prompt,
        "chat": request.chat,
        "settings": request.settings.as_dict(),
        "output": generation.text,
        "prompt_tokens": generation.prompt_tokens,
        "completion_tokens": generation.completion_tokens,
        "finish_reason": generation.finish_reason,
    }
    if endpoint is not None:
        record["endpoint"] = dict(endpoint)
    if generation.fingerprint:
        record["system_fingerprint"] = generation.fingerprint
    return record


@dataclass(frozen=True)
class Retry:
    """Send the request again after a backoff (:func:`backoff_delay`), never sooner than the server's
    ``retry_after`` where it gave one."""

    retry_after: float | None = None


@dataclass(frozen=True)
class GiveUp:
    """Record the request as failed (``errors.jsonl``, sent again on the next resume) and go on."""

    error_type: str
    message: str


@dataclass(frozen=True)
class Stop:
    """Stop the run with the error: it cannot go on (the model failed to load, say)."""


def after_failure(error: BaseException, attempt: int, settings: EngineSettings) -> Retry | GiveUp | Stop:
    """What the engine does with a request whose attempt number ``attempt`` (0 for the first) failed with
    ``error``: retry it, give it up for this run, or stop the run.

    Only a retryable :class:`BackendError` (429, 5xx, a timeout, a dropped connection) is retried, at most
    ``settings.max_retries`` times, and not where the server asks for a wait longer than
    ``settings.max_retry_after``; a prompt too long for the context window, a rejected request and an
    unexpected exception (a backend bug) cost one sample, not the run; a :class:`ScrambledBenchError` that
    is not a backend's stops the run with its one line for the user.

    >>> settings = EngineSettings(max_retries=1)
    >>> after_failure(BackendError("HTTP 503", retryable=True, retry_after=2.0), 0, settings)
    Retry(retry_after=2.0)
    >>> after_failure(BackendError("HTTP 503", retryable=True), 1, settings)
    GiveUp(error_type='retries_exhausted', message='HTTP 503')
    >>> after_failure(KeyError("choices"), 0, settings)
    GiveUp(error_type='unexpected_error', message="KeyError: 'choices'")
    >>> after_failure(ScrambledBenchError("the model failed to load"), 0, settings)
    Stop()
    """
    if isinstance(error, ContextTooLongError):
        return GiveUp("context_too_long", str(error))
    if isinstance(error, BackendError):
        if error.retryable and error.retry_after is not None and error.retry_after > settings.max_retry_after:
            return GiveUp(
                "retry_after_too_long",
                f"the server asked to retry after {error.retry_after:g} s, more than the "
                f"{settings.max_retry_after:g} s allowed; left for the next resume ({error})",
            )
        if error.retryable and attempt < settings.max_retries:
            return Retry(error.retry_after)
        return GiveUp("retries_exhausted" if error.retryable else "request_rejected", str(error))
    if isinstance(error, ScrambledBenchError):
        return Stop()
    return GiveUp("unexpected_error", redact(one_line(f"{error.__class__.__name__}: {error}")))


@dataclass(frozen=True)
class EndpointHealth:
    """What the engine knows of the endpoint's life: when a request last succeeded (on the clock of the run,
    from its start where none has yet), how many of the latest attempts in a row failed to connect, and the
    last of those errors."""

    last_success: float
    streak: int = 0
    last_error: str = ""


def observe(health: EndpointHealth, failure: BaseException | None, now: float) -> EndpointHealth:
    """``health`` after an attempt that ended at ``now``: a success (``failure`` None) or a failure.

    Only a failure to connect (:attr:`BackendError.connection`) lengthens the streak; an answer of any kind
    (an HTTP error too) or a timeout ends it: a server that answers, however badly, or that is slow, is not
    dead, and its faults go to the retries.

    >>> refused = BackendError("connection refused", retryable=True, connection=True)
    >>> observe(observe(EndpointHealth(0.0), refused, 1.0), refused, 2.0).streak
    2
    >>> observe(observe(EndpointHealth(0.0), refused, 1.0), BackendError("HTTP 503", retryable=True), 2.0).streak
    0
    """
    if failure is None:
        return EndpointHealth(now)
    if isinstance(failure, BackendError) and failure.connection:
        return replace(health, streak=health.streak + 1, last_error=str(failure))
    return replace(health, streak=0)


def dead_verdict(health: EndpointHealth, now: float, *, dead_after: float, needed: int) -> str | None:
    """Why the endpoint is taken for dead at ``now``, or None while it is not: dead once no request has
    succeeded for ``dead_after`` seconds (0: never) and the latest ``needed`` attempts all failed to
    connect.

    >>> health = EndpointHealth(0.0, streak=2, last_error="connection refused")
    >>> dead_verdict(health, 59.0, dead_after=60.0, needed=2) is None
    True
    >>> dead_verdict(health, 61.0, dead_after=60.0, needed=2)
    'no request has succeeded for 61 s and the last 2 attempts could not connect (connection refused)'
    """
    if not dead_after or health.streak < needed:
        return None
    silent = now - health.last_success
    if silent < dead_after:
        return None
    return (
        f"no request has succeeded for {silent:.0f} s and the last {health.streak} attempts could not "
        f"connect ({health.last_error})"
    )


class EndpointWatch:
    """Tells a dead endpoint from a faulty one as a run goes (:func:`observe`, :func:`dead_verdict`): dead
    when no request has succeeded for ``dead_after`` seconds and the latest attempts (at least as many as
    are in flight, and two) all failed to connect.

    >>> clock = iter([0.0, 1.0, 2.0, 5.0, 61.0]).__next__
    >>> watch = EndpointWatch(60.0, in_flight=1, clock=clock)
    >>> for _ in range(2): watch.failed(BackendError("connection failed (refused)", retryable=True, connection=True))
    >>> watch.verdict() is None, watch.verdict()
    (True, 'no request has succeeded for 61 s and the last 2 attempts could not connect (connection failed (refused))')
    """

    def __init__(self, dead_after: float, *, in_flight: int, clock: Callable[[], float] = time.monotonic):
        self.dead_after = dead_after
        self.needed = max(2, in_flight)
        self._clock = clock
        self.health = EndpointHealth(clock())

    def succeeded(self) -> None:
        self.health = observe(self.health, None, self._clock())

    def failed(self, error: BaseException) -> None:
        self.health = observe(self.health, error, self._clock())

    def verdict(self) -> str | None:
        """Why the endpoint is taken for dead, or None while it is not."""
        return dead_verdict(self.health, self._clock(), dead_after=self.dead_after, needed=self.needed)

    async def wait_dead(self) -> str:
        """Return the verdict once there is one (looked at every second, or sooner for a short time)."""
        step = min(1.0, self.dead_after / 4)
        while True:
            await asyncio.sleep(step)
            verdict = self.verdict()
            if verdict is not None:
                return verdict


#: ``asyncio.timeout`` (Python 3.11+), which times a request out in its own task; None before 3.11
_TIMEOUT_SCOPE = getattr(asyncio, "timeout", None)


class _Progress:
    """A rich progress bar with rate, ETA, retries, failures and tokens; silent when disabled."""

    def __init__(self, enabled: bool, total: int, description: str):
        self.enabled = enabled and total > 0
        if not self.enabled:
            return
        # rich is imported when a bar is drawn: `scrambled-bench --help` and a library caller without one skip it
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.text import Text

        class RateColumn(ProgressColumn):
            def render(self, task: Any) -> Text:
                speed = task.finished_speed or task.speed
                return Text(
                    "  -.-- req/s" if speed is None else f"{speed:6.2f} req/s", style="progress.data.speed"
                )

        from rich.console import Console

        console = Console(stderr=True)
        if not console.is_terminal:
            console.width = 200  # a log file gets the whole line, not the first 80 columns of it
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=24),
            MofNCompleteColumn(),
            RateColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[status]}"),
            transient=False,
            console=console,
        )
        self._task = self._progress.add_task(description, total=total, status="")
        self._progress.start()

    def update(self, stats: EngineStats, advance: int = 0) -> None:
        if not self.enabled:
            return
        status = f"retries {stats.retries}  failed {stats.failed}"
        if stats.prompt_tokens or stats.completion_tokens:
            status += f"  tokens {stats.prompt_tokens:,} in / {stats.completion_tokens:,} out"
        self._progress.update(self._task, advance=advance, status=status)

    def close(self) -> None:
        if self.enabled:
            self._progress.stop()


class RequestSender:
    """One call of :func:`run_requests` as a step (in the manner of datatrove's ``PipelineStep``): its
    inputs and its state (the queue of pending requests, the endpoint's health, the progress bar, the
    committer that writes answers) are on ``self``; :meth:`run` sends the pending requests with
    ``in_flight`` workers and returns once all are answered or given up, the endpoint is dead, or the run
    is cancelled.

    Made inside the running event loop (its committer starts there). What each failure leads to is
    :func:`after_failure`'s decision; when the endpoint is dead, :func:`dead_verdict`'s."""

    name = "send requests"

    def __init__(
        self,
        backend: Backend,
        pending: Sequence[tuple[str, GenerationRequest]],
        store: RunStore,
        settings: EngineSettings,
        stats: EngineStats,
        *,
        on_result: Callable[[GenerationRequest, Generation], dict[str, Any]] | None = None,
        progress: bool = True,
        endpoint: Mapping[str, Any] | None = None,
    ):
        self.backend, self.store, self.settings, self.stats = backend, store, settings, stats
        self.on_result, self.endpoint = on_result, endpoint
        # a backend that serves one request at a time (in-process llama.cpp) gets no more in flight: requests
        # queued inside it would spend their per-request timeout waiting for the others, and time out unsent
        self.in_flight = min(
            settings.concurrency, backend.max_concurrency or settings.concurrency, len(pending)
        )
        raise_open_files_limit(self.in_flight)  # before anything starts: a limit too low is a one-line error
        self.queue: asyncio.Queue[tuple[str, GenerationRequest]] = asyncio.Queue()
        for item in pending:
            self.queue.put_nowait(item)
        self.limiter = RateLimiter(settings.max_rps) if settings.max_rps else None
        self.rng = random.Random()
        self.fingerprints: set[str] = set()
        self.watch = EndpointWatch(settings.dead_after, in_flight=self.in_flight)
        self.bar = _Progress(progress, len(pending), f"{backend.kind or 'backend'}:{backend.model}")
        self.bar.update(stats)
        self.committer = GroupCommitter(store, self._build_record)

    async def run(self) -> EngineStats:
        """Send every pending request; write every answer that arrived, whichever way the run ends.

        The first worker to raise (a :class:`ScrambledBenchError`, or the committer's failure: a full disk, a
        bug in ``on_result``) stops the others, and so does a cancellation (Ctrl-C): the error goes on. A dead
        endpoint stops them too, without an error: ``stats.stopped`` says why, and the run is incomplete."""
        workers = [asyncio.create_task(self._worker()) for _ in range(self.in_flight)]
        all_sent = asyncio.gather(*workers)
        dead = asyncio.create_task(self.watch.wait_dead()) if self.settings.dead_after else None
        try:
            await asyncio.wait([all_sent, *([dead] if dead else [])], return_when=asyncio.FIRST_COMPLETED)
            if all_sent.done():
                all_sent.result()
            elif dead is not None:
                self.stats.stopped = dead.result()
                await _cancel(workers, all_sent)
        except BaseException as exc:
            self.stats.interrupted = isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt))
            await _cancel(workers, all_sent)
            raise
        finally:
            if dead is not None:
                await _cancel([dead])
            try:
                await self.committer.close()
            finally:
                self.bar.close()
                self.stats.fingerprints = sorted(self.fingerprints)
        return self.stats

    async def _worker(self) -> None:
        """Send requests from the queue, one at a time, until it is empty."""
        while True:
            try:
                key, request = self.queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            await self._send(key, request)

    async def _send(self, key: str, request: GenerationRequest) -> None:
        """Send one request until it is answered (handed to the committer) or given up (recorded)."""
        attempt = 0
        while True:
            try:
                generation = await self._attempt(request)
            except Exception as exc:  # after_failure decides: retried, recorded, or raised
                decision = after_failure(exc, attempt, self.settings)
                if isinstance(decision, Stop):
                    raise  # the run cannot go on (e.g. the model failed to load): one line for the user
                self.watch.failed(exc)
                if isinstance(decision, GiveUp):
                    await self._record_failure(key, request, decision, attempt + 1)
                    return
                delay = backoff_delay(
                    attempt,
                    base=self.settings.backoff_base,
                    cap=self.settings.backoff_max,
                    retry_after=decision.retry_after,
                    rng=self.rng,
                )
                attempt += 1
                self.stats.retries += 1
                self.bar.update(self.stats)
                await asyncio.sleep(delay)
                continue
            self.watch.succeeded()
            self.committer.submit(key, request, generation, functools.partial(self._written, generation))
            return

    async def _attempt(self, request: GenerationRequest) -> Generation:
        """One attempt at ``request``, within the rate limit and the per-request timeout (a timeout is a
        retryable :class:`BackendError`)."""
        if self.limiter is not None:
            await self.limiter.acquire()
        timeout = self.settings.request_timeout
        try:
            if _TIMEOUT_SCOPE is not None:
                # in this task: wait_for would start a task per request, a loop turn and its CPU each time
                async with _TIMEOUT_SCOPE(timeout):
                    return await self.backend.generate(request)
            generation = await asyncio.wait_for(self.backend.generate(request), timeout=timeout)
        except asyncio.TimeoutError:
            raise BackendError(f"no answer within {timeout:g} s", retryable=True) from None
        # Python 3.10's wait_for hands back an answer that finished as this task was being cancelled
        # (Ctrl-C) and the cancellation is lost: keep it, so that the run stops as asked
        current = asyncio.current_task()
        if current is not None and getattr(current, "cancelling", lambda: 0)():
            raise asyncio.CancelledError
        return generation

    async def _record_failure(
        self, key: str, request: GenerationRequest, failure: GiveUp, attempts: int
    ) -> None:
        """Write the request's failure to ``errors.jsonl`` (it is sent again on the next resume)."""
        await asyncio.to_thread(
            self.store.record_error,
            key,
            error_type=failure.error_type,
            message=failure.message,
            attempts=attempts,
            **_error_context(request),
        )
        self.stats.failed += 1
        self.bar.update(self.stats, advance=1)

    def _build_record(self, key: str, request: GenerationRequest, generation: Generation) -> dict[str, Any]:
        """The ``samples.jsonl`` record of an answer, with the task's fields (run by the committer)."""
        record = sample_record(key, self.backend.model, request, generation, self.endpoint)
        if self.on_result is not None:
            record.update(self.on_result(request, generation))
        return record

    def _written(self, generation: Generation) -> None:
        """Count an answer once its record is on disk."""
        self.stats.succeeded += 1
        self.stats.prompt_tokens += generation.prompt_tokens or 0
        self.stats.completion_tokens += generation.completion_tokens or 0
        if generation.fingerprint:
            self.fingerprints.add(generation.fingerprint)
        self.bar.update(self.stats, advance=1)


async def _cancel(tasks: Sequence[asyncio.Future[Any]], *also: asyncio.Future[Any]) -> None:
    """Cancel ``tasks`` and wait for them; the outcome of ``also`` (a future gathering them) is retrieved
    too, so that asyncio does not log it."""
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, *also, return_exceptions=True)


async def run_requests(
    backend: Backend,
    requests: Sequence[GenerationRequest],
    store: RunStore,
    settings: EngineSettings,
    *,
    on_result: Callable[[GenerationRequest, Generation], dict[str, Any]] | None = None,
    progress: bool = True,
    endpoint: Mapping[str, Any] | None = None,
    stats: EngineStats | None = None,
) -> EngineStats:
    """Send every request not yet in ``store`` to ``backend`` and persist each answer as it arrives.

    Identical requests are sent once. Retryable :class:`BackendError`\\ s and timeouts are retried with
    exponential backoff and full jitter (honouring Retry-After) up to ``settings.max_retries`` times; a
    request that still fails, or fails in a way retrying cannot fix, goes to ``errors.jsonl`` and the run
    goes on (:func:`after_failure`). ``on_result(request, generation)`` adds the task's fields (parsed prediction, score) to the
    record before it is written, and each record names the ``endpoint`` that answered (where given).

    An endpoint that stays unreachable (:class:`EndpointWatch`, ``settings.dead_after``) stops the run: the
    requests still pending are left unsent, ``stats.stopped`` says why, and every answer that arrived is
    written before this returns. A cancellation (Ctrl-C) stops it too: the requests in flight are
    abandoned, every answer that arrived is written, and the cancellation goes on; ``stats``, where given,
    is filled in as the run goes, so a caller so interrupted still has the counts.

    >>> import asyncio, tempfile
    >>> from scrambled_bench.evaluation.backends.base import Backend, Generation, GenerationRequest
    >>> class Echo(Backend):
    ...     async def health_check(self): return {}
    ...     async def generate(self, request): return Generation(request.prompt.upper(), 1, 1, "stop")
    >>> store = RunStore(tempfile.mkdtemp())
    >>> reqs = [GenerationRequest(p, chat=True, meta={"id": i}) for i, p in enumerate(["a", "b", "a"])]
    >>> stats = asyncio.run(run_requests(Echo("echo"), reqs, store, EngineSettings(), progress=False))
    >>> (stats.total, stats.succeeded), sorted(r["output"] for r in store.completed().values())
    ((2, 2), ['A', 'B'])
    >>> asyncio.run(run_requests(Echo("echo"), reqs, store, EngineSettings(), progress=False)).skipped_existing
    2
    >>> store.close()
    """
    started = time.perf_counter()
    unique = unique_requests(requests, backend.model)
    done = store.completed()
    pending = [(key, request) for key, request in unique.items() if key not in done]
    stats = stats if stats is not None else EngineStats()
    stats.total, stats.skipped_existing = len(unique), len(unique) - len(pending)
    try:
        if pending:
            sender = RequestSender(
                backend, pending, store, settings, stats, on_result=on_result, progress=progress, endpoint=endpoint
            )  # fmt: skip
            await sender.run()
    finally:
        stats.wall_seconds = time.perf_counter() - started
    return stats


def _error_context(request: GenerationRequest) -> dict[str, Any]:
    """What an ``errors.jsonl`` line carries besides the error, so a report can place it by config."""
    return {"meta": request.meta, "chat": request.chat, "settings": request.settings.as_dict()}
