"""The openai backend against real servers: llama-cpp-python's OpenAI-compatible server running SmolLM2
(chat and completions, determinism, health check) and the fixed-delay server (keys never leak)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends import create_backend
from scrambled_bench.evaluation.backends.base import (
    BackendError,
    ContextTooLongError,
    GenerationRequest,
    GenerationSettings,
)
from scrambled_bench.evaluation.engine import EngineSettings, run_requests
from scrambled_bench.evaluation.store import RunStore

pytestmark = pytest.mark.server

SETTINGS = GenerationSettings(max_new_tokens=16, temperature=0.0, seed=0)
PROMPTS = [
    "The following sentence contains words with scrambled letters. Please recover the original sentence from it.\n"
    "Scrambled sentence: Teh qiuck bwron fox jmups oevr teh lazy dog.\nRecovered sentence:",
    "The capital of France is",
    "List three colours of the rainbow.",
]


def test_chat_and_completions_are_real_and_deterministic(llama_server, tmp_path: Path) -> None:
    requests = [
        GenerationRequest(p, chat=chat, settings=SETTINGS, meta={"n": i, "chat": chat})
        for i, p in enumerate(PROMPTS)
        for chat in (True, False)
    ]

    async def evaluate(run_dir: Path) -> dict:
        backend = create_backend("openai", model="smollm2", base_url=llama_server.base_url)
        fingerprint = await backend.health_check()
        assert fingerprint["served_models"] == ["smollm2"]
        with RunStore(run_dir) as store:
            stats = await run_requests(
                backend, requests, store, EngineSettings(concurrency=3), progress=False
            )
            done = store.completed()
        await backend.aclose()
        assert (stats.succeeded, stats.failed) == (6, 0)
        assert stats.prompt_tokens > 0 and stats.completion_tokens > 0
        return done

    first = asyncio.run(evaluate(tmp_path / "a"))
    second = asyncio.run(evaluate(tmp_path / "b"))
    assert first == second  # greedy + seed: same outputs, same records
    outputs = {(r["n"], r["chat"]): r for r in first.values()}
    for record in first.values():
        assert record["output"].strip(), record
        assert record["finish_reason"] in ("stop", "length")
        assert 0 < record["completion_tokens"] <= 16
    # chat requests go through the model's chat template, so the prompt costs more tokens than raw
    assert outputs[(0, True)]["prompt_tokens"] > outputs[(0, False)]["prompt_tokens"]


def test_prompt_over_the_server_window_is_a_context_error(llama_server) -> None:
    async def go() -> None:
        backend = create_backend("openai", model="smollm2", base_url=llama_server.base_url)
        try:
            with pytest.raises(
                ContextTooLongError, match=r"^HTTP 400: This model's maximum context length is 2048 tokens"
            ):
                await backend.generate(GenerationRequest("word " * 2100, chat=False, settings=SETTINGS))
        finally:
            await backend.aclose()

    asyncio.run(go())


def test_health_check_names_unknown_model_and_what_is_served(llama_server) -> None:
    backend = create_backend("openai", model="gpt-17", base_url=llama_server.base_url)
    with pytest.raises(ScrambledBenchError) as caught:
        asyncio.run(backend.health_check())
    message = str(caught.value)
    assert message == f"model 'gpt-17' is not served at {llama_server.base_url}; served: smollm2"


def test_health_check_fails_fast_on_a_closed_port(closed_port_url: str) -> None:
    backend = create_backend("openai", model="m", base_url=closed_port_url + "/v1")
    with pytest.raises(
        ScrambledBenchError,
        match=r"^cannot reach http://127\.0\.0\.1:\d+/v1 \(.*\); is the server running\?$",
    ):
        asyncio.run(asyncio.wait_for(backend.health_check(), timeout=15))


def test_a_wrong_key_is_rejected_without_being_repeated(fixed_delay_server) -> None:
    fake_key = "sk-fake-wrong-key-abcdef0123456789"

    async def attempt() -> tuple[str, BackendError]:
        backend = create_backend(
            "openai", model="fixed-delay", base_url=fixed_delay_server.base_url, api_key=fake_key
        )
        try:
            with pytest.raises(ScrambledBenchError) as health:
                await backend.health_check()
            with pytest.raises(BackendError) as failed:
                await backend.generate(GenerationRequest("hello there", chat=True, settings=SETTINGS))
            return str(health.value), failed.value
        finally:
            await backend.aclose()

    health_message, error = asyncio.run(attempt())
    assert "refused the API key (HTTP 401)" in health_message
    assert str(error) == "HTTP 401: authentication failed, check the API key"
    assert not error.retryable


def test_key_never_reaches_any_output(fixed_delay_server, tmp_path: Path) -> None:
    """A full run with the right key and one with a wrong key (every request fails): the key is in no
    file of the run folder and in none of the captured output."""
    driver = Path(__file__).parents[1] / "servers" / "engine_driver.py"
    outputs = []
    for key in (fixed_delay_server.api_key, "sk-another-secret-key-9876543210"):
        run_dir = tmp_path / key[-6:]
        result = subprocess.run(
            [
                sys.executable,
                str(driver),
                "--base-url",
                fixed_delay_server.base_url,
                "--model",
                "fixed-delay",
                "--api-key",
                key,
                "--run-dir",
                str(run_dir),
                "--count",
                "4",
                "--max-retries",
                "1",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        outputs.append((key, run_dir, result.stdout + result.stderr))
    good_key, good_dir, good_output = outputs[0]
    assert len((good_dir / "samples.jsonl").read_text().splitlines()) == 4
    bad_key, bad_dir, bad_output = outputs[1]
    assert "refused the API key" in bad_output
    for key, run_dir, output in outputs:
        assert key not in output
        for path in run_dir.rglob("*"):
            if path.is_file():
                assert key not in path.read_text(errors="replace"), path


def test_each_injected_fault_is_a_retryable_error(llama_server, fault_proxy) -> None:
    proxy = fault_proxy(llama_server.root_url, fault_rate=1.0, stall_seconds=12.0)

    async def go() -> list[BackendError]:
        # the timeout outlasts a busy machine's real answer and cuts the 12 s stall short
        backend = create_backend("openai", model="smollm2", base_url=proxy.base_url, request_timeout=5.0)
        errors = []
        try:
            # six distinct first attempts: the proxy gives them 500, 503, 429, stall, drop, malformed in turn
            for i in range(6):
                with pytest.raises(BackendError) as caught:
                    await backend.generate(GenerationRequest(f"Say {i}.", chat=i % 2 == 0, settings=SETTINGS))
                errors.append(caught.value)
        finally:
            await backend.aclose()
        return errors

    errors = asyncio.run(go())
    assert all(error.retryable for error in errors), [str(e) for e in errors]
    assert str(errors[0]).startswith("HTTP 500") and str(errors[1]).startswith("HTTP 503")
    assert str(errors[2]).startswith("HTTP 429") and errors[2].retry_after == 1.0
    assert str(errors[3]) == "request timed out"
    assert str(errors[4]).startswith("connection failed")
    assert str(errors[5]).startswith("malformed response")


def test_switches_to_max_completion_tokens_when_the_server_asks(fixed_delay_server) -> None:
    async def go() -> list[str]:
        backend = fixed_delay_server.openai_backend("strict-chat")
        try:
            await backend.health_check()
            return [
                (await backend.generate(GenerationRequest(f"one two {i}", chat=True, settings=SETTINGS))).text
                for i in range(2)
            ]
        finally:
            await backend.aclose()

    assert asyncio.run(go()) == ["0 two one", "1 two one"]
