"""The async runner: sends generation requests to a backend with bounded concurrency, an optional rate
limit, retries with backoff, and a per-request timeout, persisting every answer as it arrives.

Resumption is by key: a request whose key is already in the run's ``samples.jsonl`` is not sent again, so
rerunning the same command after a crash (even ``kill -9``) sends only what is missing. Failures that
survive all retries are written to ``errors.jsonl`` and sent again on the next resume; they never abort
the run, and never count as an (empty) answer.

A dead endpoint ends the run early: when no request has succeeded for ``dead_after`` seconds and the latest
attempts all failed to connect, the run stops at once (what was answered is written, the rest is left for
the resume) instead of spending every pending request's retries on it.
"""

from __future__ import annotations

import asyncio
import functools
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
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
from scrambled_bench.evaluation.store import RunStore
from scrambled_bench.redaction import redact


@dataclass
class EngineSettings:
    """How requests are sent. ``max_retries`` counts retries after the first attempt."""

    concurrency: int = 8
    max_rps: float | None = None
    max_retries: int = 5
    request_timeout: float = 120.0
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    #: the longest Retry-After honoured; a server asking for more (a spent daily quota, say) would hold a
    #: slot for that long, so the request is recorded as failed instead and sent again on the next resume
    max_retry_after: float = 300.0
    #: seconds without a single success, the latest attempts all failing to connect, after which the
    #: endpoint is taken for dead and the run stops (0: never); timeouts and HTTP errors never count
    dead_after: float = 60.0

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ScrambledBenchError(f"--concurrency must be at least 1, got {self.concurrency}")
        if self.max_rps is not None and self.max_rps <= 0:
            raise ScrambledBenchError(f"--max-rps must be positive, got {self.max_rps}")
        if self.max_retries < 0:
            raise ScrambledBenchError(f"--max-retries must be 0 or more, got {self.max_retries}")
        if self.request_timeout <= 0:
            raise ScrambledBenchError(f"--request-timeout must be positive, got {self.request_timeout}")
        if self.max_retry_after < 0:
            raise ScrambledBenchError(f"--max-retry-after must be 0 or more, got {self.max_retry_after}")
        if self.dead_after < 0:
            raise ScrambledBenchError(f"--dead-after must be 0 or more, got {self.dead_after}")


@dataclass
class EngineStats:
    """What one call of :func:`run_requests` did. Token totals cover this call's successes only, and
    only what the backend reported."""

    total: int = 0
    skipped_existing: int = 0
    succeeded: int = 0
    failed: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_seconds: float = 0.0
    #: distinct backend fingerprints seen in replies (e.g. OpenAI ``system_fingerprint``), for config.json
    fingerprints: list[str] = field(default_factory=list)
    #: why the run stopped before every request was tried (the endpoint went away); None when it did not
    stopped: str | None = None
    #: the run was cancelled (Ctrl-C) before every request was tried
    interrupted: bool = False


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


class EndpointWatch:
    """Tells a dead endpoint from a faulty one: dead when no request has succeeded for ``dead_after``
    seconds and the latest ``streak`` attempts (at least as many as are in flight, and two) all failed to
    connect. An answer of any kind (an HTTP error too) or a timeout breaks the streak: a server that
    answers, however badly, or that is slow, is not dead, and its faults go to the retries.

    >>> clock = iter([0.0, 5.0, 61.0]).__next__
    >>> watch = EndpointWatch(60.0, in_flight=1, clock=clock)
    >>> for _ in range(2): watch.failed(BackendError("connection failed (refused)", retryable=True, connection=True))
    >>> watch.verdict() is None, watch.verdict()
    (True, 'no request has succeeded for 61 s and the last 2 attempts could not connect (connection failed (refused))')
    """

    def __init__(self, dead_after: float, *, in_flight: int, clock: Callable[[], float] = time.monotonic):
        self.dead_after = dead_after
        self.needed = max(2, in_flight)
        self._clock = clock
        self._last_success = clock()
        self._streak = 0
        self._last_error = ""

    def succeeded(self) -> None:
        self._last_success = self._clock()
        self._streak = 0

    def failed(self, error: BaseException) -> None:
        if isinstance(error, BackendError) and error.connection:
            self._streak += 1
            self._last_error = str(error)
        else:
            self._streak = 0

    def verdict(self) -> str | None:
        """Why the endpoint is taken for dead, or None while it is not."""
        if not self.dead_after or self._streak < self.needed:
            return None
        silent = self._clock() - self._last_success
        if silent < self.dead_after:
            return None
        return (
            f"no request has succeeded for {silent:.0f} s and the last {self._streak} attempts could not "
            f"connect ({self._last_error})"
        )

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
#: the committer reads and writes answers once none has arrived for this long (the wave of answers a fast
#: server sends together has passed, and every slot waits on the server again) ...
COMMIT_QUIET = 0.005
#: ... or once the first of them has waited this long (answers that never pause still get written)
COMMIT_MAX_DELAY = 0.2


class _GroupCommitter:
    """Turns answers into records and writes them from a worker thread, all that are waiting with one
    ``fsync``, so that durable writes neither stall the event loop nor cap throughput at one ``fsync`` per
    request.

    A worker hands its answer over and goes on to its next request. Waiting for the ``fsync`` would add a
    disk round trip to every request's cycle; reading and scoring the answer (``build``) before sending
    the next request would add the task's reader to it. An ideal server answers a whole wave of requests
    at once, and the last of the wave waits for the client to handle all the others, so whatever a slot
    does between an answer and its next request is paid once per request in flight, every cycle (the
    reader alone cost 4-9% of the server's throughput at 64-256 in flight and 0.25 s per answer). So the
    committer also waits for a lull in the answers (:meth:`_quiet`) before it reads and writes them.

    A request still counts as done only once its record is on disk: ``on_written`` runs then. A failure
    (a full disk, a bug in ``build``) stops the committer; :meth:`check` raises it in the workers and
    :meth:`close` at the end, so the run stops with that error and the unwritten answers are sent again on
    resume."""

    def __init__(
        self, store: RunStore, build: Callable[[str, GenerationRequest, Generation], dict[str, Any]]
    ):
        self._store = store
        self._build = build
        self._queue: asyncio.Queue[tuple[tuple[str, GenerationRequest, Generation], Callable[[], None]]] = (
            asyncio.Queue()
        )
        self._failure: BaseException | None = None
        self._last_answer = 0.0
        self._task = asyncio.create_task(self._run())

    def submit(
        self, key: str, request: GenerationRequest, generation: Generation, on_written: Callable[[], None]
    ) -> None:
        self.check()
        self._last_answer = asyncio.get_running_loop().time()
        self._queue.put_nowait(((key, request, generation), on_written))

    async def _quiet(self, deadline: float) -> None:
        """Wait until no answer has come for :data:`COMMIT_QUIET`, or until ``deadline`` (loop time): the
        reader's work then runs while every request is out, not between an answer and the next request."""
        loop = asyncio.get_running_loop()
        while True:
            wait = min(self._last_answer + COMMIT_QUIET, deadline) - loop.time()
            if wait <= 0:
                return
            await asyncio.sleep(wait)

    def check(self) -> None:
        """Raise the error that stopped the committer, if one did."""
        if self._failure is not None:
            raise self._failure

    async def _run(self) -> None:
        while self._failure is None:
            batch = [await self._queue.get()]
            deadline = asyncio.get_running_loop().time() + COMMIT_MAX_DELAY
            await self._quiet(deadline)
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            try:
                await self._commit(batch, deadline)
            finally:
                for _ in batch:
                    self._queue.task_done()
        while not self._queue.empty():  # not written: sent again on resume
            self._queue.get_nowait()
            self._queue.task_done()

    async def _commit(
        self,
        batch: list[tuple[tuple[str, GenerationRequest, Generation], Callable[[], None]]],
        deadline: float,
    ) -> None:
        """Build and write ``batch``'s records with one ``fsync``. A record whose build fails is left out and
        the others are written; either failure stops the committer.

        Records are built one at a time, and the loop gets a turn before each: a wave of answers that
        arrives meanwhile is turned around first (the build pauses until the answers are quiet again, or
        ``deadline`` has passed), instead of waiting for the whole batch's reader."""
        records, callbacks = [], []
        for answer, on_written in batch:
            await self._quiet(deadline)
            await asyncio.sleep(0)
            try:
                records.append(self._build(*answer))
            except Exception as exc:  # noqa: BLE001 - a bug in on_result: the run stops with it
                self._failure = self._failure or exc
                continue
            callbacks.append(on_written)
        if not records:
            return
        try:
            await asyncio.to_thread(self._store.append_many, records)
        except Exception as exc:  # noqa: BLE001 - a full disk, say: the run stops with it
            self._failure = self._failure or exc
            return
        for on_written in callbacks:
            on_written()

    async def close(self) -> None:
        """Write every answer handed over so far (those that arrived before a Ctrl-C too), then stop."""
        try:
            if self._failure is None and not self._task.done():
                await self._queue.join()
        finally:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        self.check()


class _Progress:
    """A rich progress bar with rate, ETA, retries, failures and tokens; silent when disabled."""

    def __init__(self, enabled: bool, total: int, description: str):
        self.enabled = enabled and total > 0
        if not self.enabled:
            return
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
    goes on. ``on_result(request, generation)`` adds the task's fields (parsed prediction, score) to the
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
    if not pending:
        stats.wall_seconds = time.perf_counter() - started
        return stats

    # a backend that serves one request at a time (in-process llama.cpp) gets no more in flight: requests
    # queued inside it would spend their per-request timeout waiting for the others, and time out unsent
    in_flight = min(settings.concurrency, backend.max_concurrency or settings.concurrency, len(pending))
    raise_open_files_limit(in_flight)
    limiter = RateLimiter(settings.max_rps) if settings.max_rps else None
    rng = random.Random()
    fingerprints: set[str] = set()
    queue: asyncio.Queue[tuple[str, GenerationRequest]] = asyncio.Queue()
    for item in pending:
        queue.put_nowait(item)
    bar = _Progress(progress, len(pending), f"{backend.kind or 'backend'}:{backend.model}")
    bar.update(stats)

    watch = EndpointWatch(settings.dead_after, in_flight=in_flight)

    def build_record(key: str, request: GenerationRequest, generation: Generation) -> dict[str, Any]:
        record = sample_record(key, backend.model, request, generation, endpoint)
        if on_result is not None:
            record.update(on_result(request, generation))
        return record

    committer = _GroupCommitter(store, build_record)

    async def record_failure(
        key: str, request: GenerationRequest, error_type: str, message: str, attempts: int
    ) -> None:
        await asyncio.to_thread(
            store.record_error,
            key,
            error_type=error_type,
            message=message,
            attempts=attempts,
            **_error_context(request),
        )
        stats.failed += 1
        bar.update(stats, advance=1)

    async def attempt_once(request: GenerationRequest) -> Generation:
        if limiter is not None:
            await limiter.acquire()
        try:
            if _TIMEOUT_SCOPE is not None:
                # in this task: wait_for would start a task per request, a loop turn and its CPU each time
                async with _TIMEOUT_SCOPE(settings.request_timeout):
                    return await backend.generate(request)
            generation = await asyncio.wait_for(backend.generate(request), timeout=settings.request_timeout)
        except asyncio.TimeoutError:
            raise BackendError(f"no answer within {settings.request_timeout:g} s", retryable=True) from None
        # Python 3.10's wait_for hands back an answer that finished as this task was being cancelled
        # (Ctrl-C) and the cancellation is lost: keep it, so that the run stops as asked
        current = asyncio.current_task()
        if current is not None and getattr(current, "cancelling", lambda: 0)():
            raise asyncio.CancelledError
        return generation

    async def send(key: str, request: GenerationRequest) -> None:
        attempt = 0
        while True:
            try:
                generation = await attempt_once(request)
            except ContextTooLongError as exc:
                watch.failed(exc)
                await record_failure(key, request, "context_too_long", str(exc), attempt + 1)
                return
            except BackendError as exc:
                watch.failed(exc)
                if (
                    exc.retryable
                    and exc.retry_after is not None
                    and exc.retry_after > settings.max_retry_after
                ):
                    message = (
                        f"the server asked to retry after {exc.retry_after:g} s, more than the "
                        f"{settings.max_retry_after:g} s allowed; left for the next resume ({exc})"
                    )
                    await record_failure(key, request, "retry_after_too_long", message, attempt + 1)
                    return
                if exc.retryable and attempt < settings.max_retries:
                    delay = backoff_delay(
                        attempt,
                        base=settings.backoff_base,
                        cap=settings.backoff_max,
                        retry_after=exc.retry_after,
                        rng=rng,
                    )
                    attempt += 1
                    stats.retries += 1
                    bar.update(stats)
                    await asyncio.sleep(delay)
                    continue
                error_type = "retries_exhausted" if exc.retryable else "request_rejected"
                await record_failure(key, request, error_type, str(exc), attempt + 1)
                return
            except ScrambledBenchError:
                raise  # the run cannot go on (e.g. the model failed to load): one line for the user
            except Exception as exc:  # noqa: BLE001 - a backend bug must cost one sample, not the whole run
                watch.failed(exc)
                message = redact(one_line(f"{exc.__class__.__name__}: {exc}"))
                await record_failure(key, request, "unexpected_error", message, attempt + 1)
                return
            watch.succeeded()
            committer.submit(key, request, generation, functools.partial(written, generation))
            return

    def written(generation: Generation) -> None:
        stats.succeeded += 1
        stats.prompt_tokens += generation.prompt_tokens or 0
        stats.completion_tokens += generation.completion_tokens or 0
        if generation.fingerprint:
            fingerprints.add(generation.fingerprint)
        bar.update(stats, advance=1)

    async def worker() -> None:
        while True:
            try:
                key, request = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            await send(key, request)

    workers = [asyncio.create_task(worker()) for _ in range(in_flight)]
    all_sent = asyncio.gather(*workers)

    async def stop() -> None:
        for task in workers:
            task.cancel()
        # the gathering future too: its outcome (the cancellation) is retrieved, so asyncio does not log it
        await asyncio.gather(*workers, all_sent, return_exceptions=True)

    dead = asyncio.create_task(watch.wait_dead()) if settings.dead_after else None
    try:
        # the first worker to raise (a ScrambledBenchError, or the committer's failure: a full disk, a bug in
        # on_result) stops the others; so does a dead endpoint, without an error: the run is incomplete
        await asyncio.wait([all_sent, *([dead] if dead else [])], return_when=asyncio.FIRST_COMPLETED)
        if all_sent.done():
            all_sent.result()
        elif dead is not None:
            stats.stopped = dead.result()
            await stop()
    except BaseException as exc:
        stats.interrupted = isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt))
        await stop()
        raise
    finally:
        if dead is not None:
            dead.cancel()
            await asyncio.gather(dead, return_exceptions=True)
        try:
            await committer.close()
        finally:
            bar.close()
        stats.fingerprints = sorted(fingerprints)
        stats.wall_seconds = time.perf_counter() - started
    return stats


def _error_context(request: GenerationRequest) -> dict[str, Any]:
    """What an ``errors.jsonl`` line carries besides the error, so a report can place it by config."""
    return {"meta": request.meta, "chat": request.chat, "settings": request.settings.as_dict()}
