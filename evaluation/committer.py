"""Durable writes of a run's answers without stalling it: :class:`GroupCommitter` turns the answers the engine
(:mod:`~scrambled_bench.evaluation.engine`) hands over into ``samples.jsonl`` records and writes them from a
worker thread, all that are waiting with one ``fsync``, once the answers pause.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from scrambled_bench.evaluation.backends.base import Generation, GenerationRequest
from scrambled_bench.evaluation.store import RunStore

#: the committer reads and writes answers once none has arrived for this long (the wave of answers a fast
#: server sends together has passed, and every slot waits on the server again) ...
COMMIT_QUIET = 0.005
#: ... or once the first of them has waited this long (answers that never pause still get written)
COMMIT_MAX_DELAY = 0.2


class GroupCommitter:
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
