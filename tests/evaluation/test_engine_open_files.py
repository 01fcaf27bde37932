"""Open files at high concurrency: every request in flight holds a socket, and a soft limit of 1,024 (many
systems' default) would fail request 1,000 with "Too many open files". The engine raises the soft limit
toward the hard one, and a hard limit too low is a one-line error before anything is sent.

Each case runs in its own interpreter: a lowered hard limit cannot be raised again by the process."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("resource")

SCRIPT = """
import asyncio, resource, sys, tempfile
resource.setrlimit(resource.RLIMIT_NOFILE, (100, 300))
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends.base import Backend, Generation, GenerationRequest
from scrambled_bench.evaluation.engine import EngineSettings, run_requests
from scrambled_bench.evaluation.store import RunStore

class Echo(Backend):
    async def health_check(self): return {}
    async def generate(self, request):
        await asyncio.sleep(0.01)
        return Generation(request.prompt, 1, 1, "stop")

concurrency = int(sys.argv[1])
requests = [GenerationRequest(f"p{i}", chat=True) for i in range(concurrency)]
with RunStore(tempfile.mkdtemp()) as store:
    try:
        stats = asyncio.run(run_requests(Echo("echo"), requests, store, EngineSettings(concurrency=concurrency), progress=False))
    except ScrambledBenchError as exc:
        print("error:", exc, "| sent:", len(store.completed()))
    else:
        print("soft:", resource.getrlimit(resource.RLIMIT_NOFILE)[0], "| sent:", stats.succeeded)
"""


def run(concurrency: int) -> str:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(concurrency)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_soft_limit_is_raised_to_fit_the_requests_in_flight() -> None:
    from scrambled_bench.evaluation.engine import OPEN_FILES_HEADROOM

    concurrency = 200  # above the soft limit of 100, within the hard limit of 300 with the headroom
    assert run(concurrency) == f"soft: {concurrency + OPEN_FILES_HEADROOM} | sent: {concurrency}"


def test_a_hard_limit_too_low_is_a_one_line_error_before_anything_is_sent() -> None:
    from scrambled_bench.evaluation.engine import OPEN_FILES_HEADROOM

    output = run(280)
    assert output == (
        f"error: --concurrency 280 needs about {280 + OPEN_FILES_HEADROOM} open files, but this process may "
        f"open at most 300 (ulimit -Hn); lower --concurrency to {300 - OPEN_FILES_HEADROOM} or raise the limit"
        " | sent: 0"
    )
