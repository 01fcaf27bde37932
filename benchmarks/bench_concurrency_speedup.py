"""Speed-up of the engine over sending the same requests one at a time, as the paper's code does,
measured side by side in one run.

Against the fixed-delay server (tests/servers/fixed_delay_server.py, its own process), where
a server's parallelism is unlimited, and optionally (``--llama``) against llama-cpp-python's own
OpenAI-compatible server on the SmolLM2 GGUF, which decodes one request at a time: there the engine can
only hide the client/network round trips, and the figure shows it honestly.

    .venv/bin/python benchmarks/bench_concurrency_speedup.py --requests 200 --delay 0.25 --concurrency 32
    .venv/bin/python benchmarks/bench_concurrency_speedup.py --llama --requests 24
    .venv/bin/python benchmarks/bench_concurrency_speedup.py --smoke
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from _local_servers import start_fixed_delay_server, start_llama_server, stop
from bench_client_overhead import bench_requests, run_engine

from scrambled_bench.evaluation.backends import create_backend
from scrambled_bench.evaluation.backends.base import GenerationRequest, GenerationSettings


async def one_at_a_time(base_url: str, model: str, requests: list[GenerationRequest]) -> float:
    """The paper's loop: for each sample, send, wait for the answer, then the next."""
    backend = create_backend("openai", model=model, base_url=base_url)
    started = time.perf_counter()
    try:
        for request in requests:
            await backend.generate(request)
    finally:
        await backend.aclose()
    return time.perf_counter() - started


def compare(
    label: str, base_url: str, model: str, requests: list[GenerationRequest], concurrency: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sequential = asyncio.run(one_at_a_time(base_url, model, requests))
        concurrent, _ = asyncio.run(
            run_engine(base_url, requests, concurrency, Path(tmp) / "run", model=model)
        )
    print(f"{label}")
    print(f"  one at a time       {sequential:8.2f} s  ({len(requests) / sequential:7.2f} req/s)")
    print(f"  engine, conc. {concurrency:<4}  {concurrent:8.2f} s  ({len(requests) / concurrent:7.2f} req/s)")
    print(f"  speed-up            {sequential / concurrent:8.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--delay", type=float, default=0.25)
    parser.add_argument("--llama", action="store_true", help="also compare against the real llama.cpp server")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: 16 requests, 8 in flight, 0.05 s")
    args = parser.parse_args()
    if args.smoke:
        args.requests, args.concurrency, args.delay = 16, 8, 0.05

    process, root = start_fixed_delay_server(args.delay)
    base_url = root + "/v1"
    try:
        compare(
            f"fixed-delay server ({args.delay:g} s per answer), {args.requests} requests",
            base_url,
            "fixed-delay",
            bench_requests(args.requests, "speedup"),
            args.concurrency,
        )
    finally:
        stop(process)
    if args.llama:
        count = min(args.requests, 24)
        settings = GenerationSettings(max_new_tokens=16)
        requests = [
            GenerationRequest(f"Write one sentence about the number {i}.", chat=True, settings=settings)
            for i in range(count)
        ]
        process, root = start_llama_server()
        base_url = root + "/v1"
        try:
            compare(
                f"llama-cpp-python server, SmolLM2-135M, {count} chat requests of 16 new tokens",
                base_url,
                "smollm2",
                requests,
                min(args.concurrency, 4),
            )
        finally:
            stop(process)


if __name__ == "__main__":
    main()
