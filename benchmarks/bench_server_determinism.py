"""Which servers give the same greedy outputs run after run: the same requests (zero-shot ScrRec and ScrQA prompts of
the tiny test build, temperature 0, seed 0) sent again and again to llama-cpp-python's OpenAI-compatible
server on SmolLM2, counting the outputs that differ from the first run at concurrency 1.

Two servers, each in its own process, started afresh for each run (as a user's server would be):

- ``stock``: ``python -m llama_cpp.server``. It keeps the previous prompt in its context and evaluates only
  what a new prompt does not share with it, so a prompt's logits, and a small model's greedy branch, can
  depend on the prompt served before it. The server has no setting that turns this off (its ``--cache``
  is another cache, of saved states, off by default);
- ``no prefix reuse``: the same server, with every prompt evaluated from an empty context
  (tests/servers/llama_server.py: the test suite's server).

Each server gets these runs, each from a fresh server (as two runs on two days would; ``--smoke`` starts one
server for them all):

- concurrency 1, twice: the same order each time;
- concurrency 4, twice: the order in which the server takes the requests varies;
- concurrency 1 in another order (shuffled, fixed seed): what a run resumed or retried sends.

Beside them, the embedded ``llama-cpp`` backend (in-process, one request at a time, context reset before
each prompt) in the two orders.

    .venv/bin/python benchmarks/bench_server_determinism.py                 # 40 requests, 32 new tokens
    .venv/bin/python benchmarks/bench_server_determinism.py --requests 72 --max-new-tokens 64
    .venv/bin/python benchmarks/bench_server_determinism.py --smoke
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from collections.abc import Sequence

from _local_servers import free_port, start_server, stop
from support import add_smoke_flag, repo_file

from scrambled_bench.evaluation.backends import create_backend
from scrambled_bench.evaluation.backends.base import Backend, GenerationRequest
from scrambled_bench.evaluation.engine import EngineSettings, run_requests
from scrambled_bench.evaluation.store import RunStore

TINY_BUILD = repo_file("tests/fixtures/tiny_build")
RESET_SERVER = repo_file("tests/servers/llama_server.py")
MODEL = "smollm2"


def plan(count: int, max_new_tokens: int) -> list[GenerationRequest]:
    """``count`` distinct requests as ``run`` builds them from the tiny build: ScrRec and ScrQA prompts."""
    from scrambled_bench.evaluation.evaluate import plan_run
    from scrambled_bench.evaluation.settings import RunSettings

    settings = RunSettings(
        suite="paper",
        tasks=["scrrec-zero-shot", "scrqa"],
        data=str(TINY_BUILD),
        max_new_tokens=max_new_tokens,
    )
    unique = {request.key(MODEL): request for request in plan_run(settings).all_requests}
    return list(unique.values())[:count]


def start(kind: str) -> tuple[object, str]:
    """A fresh llama.cpp server of ``kind``; it and its ``/v1`` URL."""
    from scrambled_bench.evaluation.backends.llama_cpp import find_smollm2_gguf

    port = free_port()
    entry = ["-m", "llama_cpp.server"] if kind == "stock" else [str(RESET_SERVER)]
    command = [
        sys.executable, *entry, "--model", str(find_smollm2_gguf()), "--model_alias", MODEL, "--host", "127.0.0.1",
        "--port", str(port), "--n_ctx", "2048", "--seed", "0", "--n_threads", "2",
    ]  # fmt: skip
    root = f"http://127.0.0.1:{port}"
    return start_server(
        command, root, "/v1/models", timeout=120, what=f"{kind} llama.cpp server"
    ), root + "/v1"


async def send(backend: Backend, requests: Sequence[GenerationRequest], concurrency: int) -> dict[str, str]:
    """Every request's output, by key, sent with the engine at ``concurrency``."""
    with tempfile.TemporaryDirectory() as folder, RunStore(folder) as store:
        engine = EngineSettings(concurrency=concurrency, request_timeout=600)
        await run_requests(backend, requests, store, engine, progress=False)
        return {key: record["output"] for key, record in store.completed().items()}


def served_runs(
    kind: str, runs: Sequence[tuple[Sequence[GenerationRequest], int]], *, fresh: bool
) -> list[tuple[dict[str, str], float]]:
    """Each run's outputs (and seconds) from a server of ``kind``: a fresh server for each run, or (not
    ``fresh``, for ``--smoke``) one server for all."""
    results = []
    process, base_url = None, ""
    try:
        for requests, concurrency in runs:
            if process is None or fresh:
                if process is not None:
                    stop(process)  # type: ignore[arg-type]
                process, base_url = start(kind)
            started = time.perf_counter()

            async def go(url: str = base_url, sent=requests, at: int = concurrency) -> dict[str, str]:
                backend = create_backend("openai", model=MODEL, base_url=url, request_timeout=600)
                try:
                    return await send(backend, sent, at)
                finally:
                    await backend.aclose()

            results.append((asyncio.run(go()), time.perf_counter() - started))
    finally:
        if process is not None:
            stop(process)  # type: ignore[arg-type]
    return results


def embedded_run(requests: Sequence[GenerationRequest]) -> tuple[dict[str, str], float]:
    started = time.perf_counter()

    async def go() -> dict[str, str]:
        backend = create_backend("llama-cpp")
        try:
            return await send(backend, requests, 1)
        finally:
            await backend.aclose()

    outputs = asyncio.run(go())
    return outputs, time.perf_counter() - started


def differing(reference: dict[str, str], other: dict[str, str]) -> int:
    return sum(1 for key, output in reference.items() if other.get(key) != output)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=4, help="the concurrent runs' concurrency")
    add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.requests, args.max_new_tokens, args.concurrency = 2, 4, 2
    requests = plan(args.requests, args.max_new_tokens)
    shuffled = list(requests)
    random.Random(0).shuffle(shuffled)
    runs = [
        ("concurrency 1, again", requests, 1),
        (f"concurrency {args.concurrency}", requests, args.concurrency),
        (f"concurrency {args.concurrency}, again", requests, args.concurrency),
        ("concurrency 1, another order", shuffled, 1),
    ]
    print(
        f"{len(requests)} requests (ScrRec and ScrQA prompts of the tiny build), at most {args.max_new_tokens} "
        "new tokens, greedy; outputs that differ from the first run at concurrency 1:"
    )
    fresh = not args.smoke
    for kind in ("stock", "no prefix reuse"):
        [(reference, took), *others] = served_runs(
            kind, [(requests, 1), *((sent, concurrency) for _, sent, concurrency in runs)], fresh=fresh
        )
        started = "each run a fresh server" if fresh else "one server for every run (--smoke)"
        print(f"{kind} llama-cpp-python server ({started}; a run took {took:.0f} s)")
        for (label, _, _), (outputs, _) in zip(runs, others):
            print(f"  {label:<28} {differing(reference, outputs):3d} of {len(reference)} differ")
    reference, took = embedded_run(requests)
    outputs, _ = embedded_run(shuffled)
    print(f"embedded llama-cpp backend (in-process, one at a time; {took:.0f} s)")
    print(f"  {'another order':<28} {differing(reference, outputs):3d} of {len(reference)} differ")


if __name__ == "__main__":
    main()
