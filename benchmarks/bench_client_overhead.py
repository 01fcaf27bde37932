"""Client overhead of the evaluation engine: how close it gets to the ideal throughput of a server that
answers every request after a fixed delay, and how much client CPU each request costs.

A local aiohttp server (tests/evaluate_cli/servers/fixed_delay_server.py, run in its own process)
answers OpenAI-shaped responses after ``--delay`` seconds. The real engine + openai backend send
``--requests`` chat requests at ``--concurrency``; with zero client overhead the throughput would be
concurrency / delay requests per second (the target is at least 90% of that).

    .venv/bin/python benchmarks/bench_client_overhead.py --requests 2000 --concurrency 64 --delay 0.25 --delay 1
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from scrambled_bench.harness.backends import create_backend
from scrambled_bench.harness.backends.base import GenerationRequest, GenerationSettings
from scrambled_bench.harness.engine import EngineSettings, run_requests
from scrambled_bench.harness.store import RunStore

SERVER = Path(__file__).resolve().parents[1] / "tests" / "evaluate_cli" / "servers" / "fixed_delay_server.py"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(command: list[str], root: str, ready_path: str, *, timeout: float, what: str) -> subprocess.Popen[bytes]:
    """Start a local server process; return it once ``GET root + ready_path`` answers."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(root + ready_path, timeout=1):
                return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit(f"the {what} did not start")


def start_fixed_delay_server(delay: float) -> tuple[subprocess.Popen[bytes], str]:
    """Start the fixed-delay server in its own process; return it and its ``/v1`` URL once it answers."""
    port = free_port()
    root = f"http://127.0.0.1:{port}"
    command = [sys.executable, str(SERVER), "--port", str(port), "--delay", str(delay)]
    return start_server(command, root, "/health", timeout=10, what="fixed-delay server"), root + "/v1"


def bench_requests(count: int, tag: str) -> list[GenerationRequest]:
    settings = GenerationSettings(max_new_tokens=16)
    return [
        GenerationRequest(
            f"benchmark {tag} request number {i} with a few words", chat=True, settings=settings
        )
        for i in range(count)
    ]


async def run_engine(
    base_url: str, requests: list[GenerationRequest], concurrency: int, run_dir: Path, *, model: str = "fixed-delay"
) -> float:
    """Send ``requests`` through the real engine and openai backend; return the engine's wall seconds."""
    backend = create_backend("openai", model=model, base_url=base_url)
    try:
        await backend.health_check()
        with RunStore(run_dir) as store:
            stats = await run_requests(
                backend, requests, store, EngineSettings(concurrency=concurrency), progress=False
            )
        assert stats.succeeded == len(requests), stats
        return stats.wall_seconds
    finally:
        await backend.aclose()


def measure(requests: int, concurrency: int, delay: float) -> tuple[float, float]:
    """Wall seconds and client CPU seconds of ``requests`` requests against a server answering after ``delay``."""
    process, base_url = start_fixed_delay_server(delay)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            # warm-up: imports, connection pool, first-request costs are not what we measure
            asyncio.run(run_engine(base_url, bench_requests(concurrency, "warmup"), concurrency, Path(tmp) / "warmup"))
            cpu_before = time.process_time()
            wall = asyncio.run(
                run_engine(base_url, bench_requests(requests, "measured"), concurrency, Path(tmp) / "run")
            )
            return wall, time.process_time() - cpu_before
    finally:
        process.terminate()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument(
        "--delay", type=float, action="append",
        help="server delay in seconds; repeat for a sweep (default: 0.25 and 1.0)",
    )
    args = parser.parse_args()
    delays = args.delay or [0.25, 1.0]

    print(f"requests {args.requests} at concurrency {args.concurrency}; target >= 90% of concurrency / delay")
    print(f"{'delay':>7} {'wall s':>8} {'ideal s':>8} {'req/s':>8} {'ideal':>8} {'share':>7} {'CPU ms/req':>11}")
    for delay in delays:
        wall, cpu = measure(args.requests, args.concurrency, delay)
        ideal = args.concurrency / delay
        achieved = args.requests / wall
        print(
            f"{delay:>6g}s {wall:>8.2f} {args.requests / ideal:>8.2f} {achieved:>8.1f} {ideal:>8.1f} "
            f"{achieved / ideal:>6.1%} {cpu / args.requests * 1000:>11.2f}"
        )
    # why the share grows with the delay: all requests of a wave answer together, and the client handles
    # their responses one after another, so the last of a wave waits about concurrency x CPU per request
    print("CPU per request includes the fsync of every sample; the server runs on the same cores.")


if __name__ == "__main__":
    main()
