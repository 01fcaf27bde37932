"""Run the real engine + openai backend on a fixed list of prompts into a run folder, for the kill -9
test: the test starts this script, kills it midway with SIGKILL, starts it again, and compares the run
folder with an uninterrupted one.

    python engine_driver.py --base-url http://127.0.0.1:8080/v1 --model smollm2 --run-dir out --count 16
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends import create_backend
from scrambled_bench.evaluation.backends.base import GenerationRequest, GenerationSettings
from scrambled_bench.evaluation.engine import EngineSettings, run_requests
from scrambled_bench.evaluation.store import RunStore

TOPICS = (
    "rivers",
    "bread",
    "clocks",
    "owls",
    "winter",
    "trains",
    "copper",
    "tea",
    "maps",
    "bees",
    "glass",
    "salt",
    "kites",
    "moss",
    "ink",
    "wool",
    "caves",
    "lamps",
    "ferns",
    "bells",
)


def driver_requests(count: int, max_new_tokens: int) -> list[GenerationRequest]:
    """``count`` distinct chat and raw prompts (alternating), greedy with seed 0."""
    settings = GenerationSettings(max_new_tokens=max_new_tokens, temperature=0.0, seed=0)
    return [
        GenerationRequest(
            prompt=f"Write one short sentence about {TOPICS[i % len(TOPICS)]} (item {i}).",
            chat=i % 2 == 0,
            settings=settings,
            meta={"id": i},
        )
        for i in range(count)
    ]


async def main_async(args: argparse.Namespace) -> int:
    backend = create_backend(
        "openai", model=args.model, base_url=args.base_url, api_key=args.api_key, request_timeout=args.timeout
    )
    store = RunStore(Path(args.run_dir))
    try:
        await backend.health_check()
        stats = await run_requests(
            backend,
            driver_requests(args.count, args.max_new_tokens),
            store,
            EngineSettings(
                concurrency=args.concurrency,
                request_timeout=args.timeout,
                max_retries=args.max_retries,
                backoff_base=0.2,
                backoff_max=2.0,
            ),
            on_result=lambda request, generation: {"output_words": len(generation.text.split())},
            progress=False,
        )
    finally:
        store.close()
        await backend.aclose()
    print(
        json.dumps(
            {
                "warnings": store.warnings,
                "succeeded": stats.succeeded,
                "skipped": stats.skipped_existing,
                "failed": stats.failed,
                "retries": stats.retries,
            }
        ),
        flush=True,
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--count", type=int, default=16)
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--max-retries", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=30.0)
    try:
        return asyncio.run(main_async(parser.parse_args()))
    except ScrambledBenchError as exc:  # as the CLI does: one line, no traceback
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
