"""The hf (Inference Providers) backend. The Hugging Face router cannot be reached here (no internet), so
these tests point the client's conversational auto-router at local servers: the request the real
``AsyncInferenceClient`` builds (URL path, payload, Authorization header) is served by the real llama.cpp
server, and failures by the fault proxy. What is NOT tested live: the router itself, provider selection,
and the Hub's provider mapping (health_check is tested for its offline / no-token messages only)."""

from __future__ import annotations

import asyncio

import pytest

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends import create_backend
from scrambled_bench.evaluation.backends.base import BackendError, GenerationRequest, GenerationSettings

pytestmark = pytest.mark.server

SETTINGS = GenerationSettings(max_new_tokens=12, temperature=0.0, seed=0)
FAKE_TOKEN = "hf_fakeTokenForLocalTests0123456789"
MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"


@pytest.fixture
def router_at(monkeypatch: pytest.MonkeyPatch):
    """Point the conversational auto-router (``https://router.huggingface.co``) at a local server."""
    from huggingface_hub import constants
    from huggingface_hub.inference._providers import CONVERSATIONAL_AUTO_ROUTER

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # the only request goes to 127.0.0.1

    def point(root_url: str) -> None:
        monkeypatch.setattr(CONVERSATIONAL_AUTO_ROUTER, "base_url", root_url)

    return point


def test_chat_request_reaches_a_router_shaped_endpoint(router_at, llama_server) -> None:
    router_at(llama_server.root_url)
    request = GenerationRequest("Name a fruit.", chat=True, settings=SETTINGS)

    async def go() -> tuple[str, str]:
        hf = create_backend("hf", model=MODEL, api_key=FAKE_TOKEN)
        openai = create_backend("openai", model="smollm2", base_url=llama_server.base_url)
        try:
            via_hf = await hf.generate(request)
            assert via_hf.prompt_tokens and via_hf.completion_tokens
            return via_hf.text, (await openai.generate(request)).text
        finally:
            await hf.aclose()
            await openai.aclose()

    via_hf, via_openai = asyncio.run(go())
    assert via_hf.strip() and via_hf == via_openai


def test_router_failures_are_classified(router_at, llama_server, fault_proxy) -> None:
    proxy = fault_proxy(llama_server.root_url, fault_rate=1.0, stall_seconds=12.0)
    router_at(proxy.root_url)

    async def go() -> list[BackendError]:
        # the timeout outlasts a busy machine's real answer and cuts the 12 s stall short
        backend = create_backend("hf", model=MODEL, api_key=FAKE_TOKEN, request_timeout=5.0)
        errors = []
        try:
            # six distinct first attempts: the proxy gives them 500, 503, 429, stall, drop, malformed in turn
            for i in range(6):
                with pytest.raises(BackendError) as caught:
                    await backend.generate(GenerationRequest(f"Say {i}.", chat=True, settings=SETTINGS))
                errors.append(caught.value)
        finally:
            await backend.aclose()
        return errors

    errors = asyncio.run(go())
    assert all(error.retryable for error in errors), [str(e) for e in errors]
    assert str(errors[0]).startswith("HTTP 500") and str(errors[1]).startswith("HTTP 503")
    assert str(errors[2]).startswith("HTTP 429") and errors[2].retry_after == 1.0
    assert "timed out" in str(errors[3])
    assert "connection failed" in str(errors[4])
    assert "malformed response" in str(errors[5])
    assert all(FAKE_TOKEN not in str(error) for error in errors)


def test_health_check_needs_a_token_and_the_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)

    async def check(api_key: str | None) -> None:
        backend = create_backend("hf", model=MODEL, api_key=api_key, provider="together")
        try:
            await backend.health_check()
        finally:
            await backend.aclose()

    with pytest.raises(
        ScrambledBenchError,
        match="^Inference Providers need a Hugging Face token: set HF_TOKEN or pass --api-key$",
    ):
        asyncio.run(check(None))
    with pytest.raises(ScrambledBenchError) as caught:
        asyncio.run(check(FAKE_TOKEN))
    assert str(caught.value) == f"cannot look up '{MODEL}' on the Hugging Face Hub: HF_HUB_OFFLINE=1 is set"


def test_hf_takes_no_base_url() -> None:
    with pytest.raises(ScrambledBenchError, match="--base-url does not apply to the hf backend; --base-url applies to --backend openai or tgi"):
        create_backend("hf", model=MODEL, base_url="http://127.0.0.1:8080")
