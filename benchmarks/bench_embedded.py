"""Embedded model throughput and the README quickstart's wall time (target: under 3 minutes on 2 cores).

    python benchmarks/bench_embedded.py [--data DIR] [--samples N] [--skip-quickstart] [--smoke]

1. samples/s: the quick suite's requests (ScrRec and ScrQA prompts, greedy, 256 new tokens at most) sent
   through the engine to the in-process SmolLM2-135M-Instruct (llama.cpp), into a fresh run folder;
2. quickstart: ``scrambled-bench run`` with no arguments in an empty folder, as a user's first command
   (the dataset build included), timed end to end. Offline it needs SCRAMBLED_BENCH_SOURCE_DIR.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from support import add_smoke_flag, skip

QUICKSTART_TARGET_SECONDS = 180.0


def bench_samples_per_second(data: str, samples: int) -> None:
    from scrambled_bench.evaluation.backends import create_backend
    from scrambled_bench.evaluation.data import resolve_data
    from scrambled_bench.evaluation.engine import EngineSettings, run_requests
    from scrambled_bench.evaluation.evaluate import plan_requests
    from scrambled_bench.evaluation.store import RunStore
    from scrambled_bench.evaluation.suites import resolve_configs
    from scrambled_bench.evaluation.tasks import on_result

    configs = resolve_configs("quick")
    source = resolve_data(data, revision=None, types=sorted({c.scramble_type for c in configs}), announce=print)
    per_config = max(1, samples // len(configs))
    requests = plan_requests(configs, source, seed=0, max_new_tokens=256, chat=True, limit=per_config)
    flat = [r for rs in requests.values() for r in rs]

    async def go() -> tuple[float, object, float]:
        backend = create_backend("llama-cpp")
        loaded = time.perf_counter()
        await backend.health_check()  # loads the model
        load_seconds = time.perf_counter() - loaded
        with tempfile.TemporaryDirectory() as folder, RunStore(Path(folder)) as store:
            started = time.perf_counter()
            stats = await run_requests(backend, flat, store, EngineSettings(concurrency=2), on_result=on_result,
                                       progress=False)
            wall = time.perf_counter() - started
        await backend.aclose()
        return wall, stats, load_seconds

    wall, stats, load_seconds = asyncio.run(go())
    print(f"embedded SmolLM2-135M-Instruct (llama.cpp, {os.cpu_count()} CPUs): model load {load_seconds:.2f} s")
    print(f"  {stats.succeeded} samples in {wall:.1f} s = {stats.succeeded / wall:.2f} samples/s "
          f"({stats.completion_tokens / wall:.1f} generated tokens/s, {stats.prompt_tokens / wall:.1f} prompt tokens/s)")
    if stats.failed:
        print(f"  {stats.failed} request(s) failed")


def bench_quickstart() -> None:
    executable = Path(sys.executable).parent / "scrambled-bench"
    if not executable.exists():
        executable = Path(shutil.which("scrambled-bench") or "scrambled-bench")
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        process = subprocess.run([str(executable), "run", "--no-progress"], cwd=folder, capture_output=True, text=True)
        wall = time.perf_counter() - started
        if process.returncode != 0:
            print(f"quickstart FAILED (exit {process.returncode}): {process.stderr.strip()[-500:]}")
            return
        build = Path(folder) / "scrambled_bench"
        print(f"quickstart `scrambled-bench run` (build + quick suite): {wall:.1f} s "
              f"(target < {QUICKSTART_TARGET_SECONDS:.0f} s: {'met' if wall < QUICKSTART_TARGET_SECONDS else 'MISSED'}; "
              f"build made: {build.is_dir()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="./scrambled_bench", help="local build folder (built when missing)")
    parser.add_argument("--samples", type=int, default=32, help="samples for the throughput figure")
    parser.add_argument("--skip-quickstart", action="store_true")
    add_smoke_flag(parser)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.smoke:  # a few samples, and no quick-start build (minutes)
        args.samples, args.skip_quickstart = 2, True
        if not Path(args.data).is_dir() and not os.environ.get("SCRAMBLED_BENCH_SOURCE_DIR"):
            skip(f"{args.data} is not a build and SCRAMBLED_BENCH_SOURCE_DIR is unset: nothing to build it from offline")
    bench_samples_per_second(args.data, args.samples)
    if not args.skip_quickstart:
        bench_quickstart()


if __name__ == "__main__":
    main()
