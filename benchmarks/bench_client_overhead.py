"""Client overhead of the evaluation engine: how close it gets to the ideal throughput of a server that
answers every request after a fixed delay, and how much client CPU each request costs.

A local aiohttp server (tests/servers/fixed_delay_server.py, run in its own process) answers OpenAI- or
TGI-shaped responses after ``--delay`` seconds. The real engine, run store and backend (``--backend openai``
or ``tgi``) send ``--requests`` chat requests at ``--concurrency``; with zero client overhead the throughput
would be concurrency / delay requests per second (the target is at least 90% of that). Each pair of
concurrency and delay is one row; the server runs on the same cores as the client.

    .venv/bin/python benchmarks/bench_client_overhead.py                      # 1,000 requests; 64 and 256 in flight
    .venv/bin/python benchmarks/bench_client_overhead.py --concurrency 1024 --delay 1 --requests 4096
    .venv/bin/python benchmarks/bench_client_overhead.py --backend tgi --concurrency 64 --delay 0.25
    .venv/bin/python benchmarks/bench_client_overhead.py --smoke
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import tempfile
import time
from pathlib import Path

from _local_servers import start_fixed_delay_server, stop

from scrambled_bench.evaluation.backends import create_backend
from scrambled_bench.evaluation.backends.base import GenerationRequest, GenerationSettings
from scrambled_bench.evaluation.engine import EngineSettings, run_requests
from scrambled_bench.evaluation.store import RunStore

#: where each backend kind finds the fixed-delay server's routes, from its root URL
BASE_URLS = {"openai": "{root}/v1", "tgi": "{root}"}


def bench_requests(count: int, tag: str) -> list[GenerationRequest]:
    settings = GenerationSettings(max_new_tokens=16)
    return [
        GenerationRequest(
            f"benchmark {tag} request number {i} with a few words", chat=True, settings=settings
        )
        for i in range(count)
    ]


async def run_engine(
    base_url: str,
    requests: list[GenerationRequest],
    concurrency: int,
    run_dir: Path,
    *,
    model: str = "fixed-delay",
    kind: str = "openai",
) -> tuple[float, str | None]:
    """Send ``requests`` through the real engine and backend; return the engine's wall seconds and the
    backend's HTTP transport."""
    backend = create_backend(kind, model=model, base_url=base_url)
    try:
        await backend.health_check()
        with RunStore(run_dir) as store:
            stats = await run_requests(
                backend, requests, store, EngineSettings(concurrency=concurrency), progress=False
            )
        assert stats.succeeded == len(requests), stats
        return stats.wall_seconds, backend.transport
    finally:
        await backend.aclose()


def measure(
    kind: str, requests: int, concurrency: int, delay: float, profile: Path | None = None
) -> tuple[float, float, str | None]:
    """Wall seconds, client CPU seconds and transport of ``requests`` requests against a server answering
    after ``delay``."""
    process, root = start_fixed_delay_server(delay)
    base_url = BASE_URLS[kind].format(root=root)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            # warm-up: imports, first-request costs are not what we measure
            asyncio.run(
                run_engine(base_url, bench_requests(min(concurrency, requests), "warmup"), concurrency,
                           Path(tmp) / "warmup", kind=kind)
            )  # fmt: skip
            profiler = cProfile.Profile() if profile else None
            cpu_before = time.process_time()
            if profiler:
                profiler.enable()
            wall, transport = asyncio.run(
                run_engine(
                    base_url, bench_requests(requests, "measured"), concurrency, Path(tmp) / "run", kind=kind
                )
            )
            cpu = time.process_time() - cpu_before
            if profiler:
                profiler.disable()
                profiler.dump_stats(profile)
            return wall, cpu, transport
    finally:
        stop(process)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument(
        "--concurrency", type=int, action="append", help="requests in flight; repeat (default: 64 and 256)"
    )
    parser.add_argument(
        "--delay", type=float, action="append",
        help="server delay in seconds; repeat (default: 0.25 and 1.0)",
    )  # fmt: skip
    parser.add_argument("--backend", choices=sorted(BASE_URLS), default="openai")
    parser.add_argument("--profile", type=Path, help="write a cProfile of the (last) measured run here")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: 64 requests, 16 in flight, 0.05 s")
    args = parser.parse_args()
    if args.smoke:
        settings = [(16, 0.05)]
        args.requests = 64
    else:
        settings = [(c, d) for c in args.concurrency or [64, 256] for d in args.delay or [0.25, 1.0]]

    print(
        f"{args.requests} requests through the engine and the {args.backend} backend; target >= 90% of concurrency / delay"
    )
    print(
        f"{'in flight':>9} {'delay':>6} {'wall s':>7} {'ideal s':>7} {'req/s':>7} {'ideal':>7} {'share':>6} "
        f"{'CPU ms/req':>10}  transport"
    )
    for concurrency, delay in settings:
        wall, cpu, transport = measure(args.backend, args.requests, concurrency, delay, args.profile)
        ideal = concurrency / delay
        achieved = args.requests / wall
        print(
            f"{concurrency:>9} {delay:>5g}s {wall:>7.2f} {args.requests / ideal:>7.2f} {achieved:>7.1f} "
            f"{ideal:>7.1f} {achieved / ideal:>6.1%} {cpu / args.requests * 1000:>10.2f}  {transport}"
        )
    # why the share grows with the delay: all requests of a wave answer together, and the client handles
    # their responses one after another, so the last of a wave waits about concurrency x CPU per request
    print(
        "share = req/s over concurrency / delay; CPU per request is the client's (engine, backend, JSON, and the "
        "group-committed writes of samples.jsonl); the server runs on the same cores."
    )


if __name__ == "__main__":
    main()
