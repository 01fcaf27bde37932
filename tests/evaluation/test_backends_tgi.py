"""The tgi backend: native /generate and /info against the TGI-schema server (real SmolLM2 outputs via
llama.cpp), the Messages API against the real llama.cpp server, and huggingface_hub's errors mapped to
retryable / not. Runs with HF_HUB_OFFLINE=1 as CI does: a user's own endpoint must still be reachable."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx2
import pytest
from huggingface_hub.errors import HfHubHTTPError, OverloadedError, ValidationError

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends import create_backend
from scrambled_bench.evaluation.backends.base import (
    ContextTooLongError,
    GenerationRequest,
    GenerationSettings,
)
from scrambled_bench.evaluation.backends.tgi import hf_error
from scrambled_bench.evaluation.engine import EngineSettings, run_requests
from scrambled_bench.evaluation.store import RunStore

pytestmark = pytest.mark.server

SETTINGS = GenerationSettings(max_new_tokens=16, temperature=0.0, seed=0)
PROMPT = (
    "The following sentence contains words with scrambled letters. Please recover the original sentence "
    "from it.\nScrambled sentence: Teh qiuck bwron fox jmups oevr teh lazy dog.\nRecovered sentence:"
)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)


def test_native_generate_matches_llama_cpp_completion_and_info_gives_fingerprint(
    tgi_schema_server, smollm2_gguf: Path, tmp_path: Path
) -> None:
    async def go() -> tuple[dict, dict]:
        backend = create_backend("tgi", base_url=tgi_schema_server.root_url)
        try:
            fingerprint = await backend.health_check()
            with RunStore(tmp_path) as store:
                stats = await run_requests(
                    backend,
                    [GenerationRequest(PROMPT, chat=False, settings=SETTINGS)],
                    store,
                    EngineSettings(),
                    progress=False,
                )
                assert stats.succeeded == 1
                return fingerprint, next(iter(store.completed().values()))
        finally:
            await backend.aclose()

    fingerprint, record = asyncio.run(go())
    import hashlib

    assert fingerprint["model"] == "HuggingFaceTB/SmolLM2-135M-Instruct"  # taken from /info when not given
    assert fingerprint["model_sha"] == hashlib.sha256(smollm2_gguf.read_bytes()).hexdigest()
    assert fingerprint["version"] == "tgi-schema-test-server"
    assert fingerprint["max_total_tokens"] == 2048

    # the same prompt through the embedded llama.cpp backend gives the same greedy text
    async def embedded() -> str:
        backend = create_backend("llama-cpp", model=str(smollm2_gguf), n_ctx=2048)
        try:
            return (await backend.generate(GenerationRequest(PROMPT, chat=False, settings=SETTINGS))).text
        finally:
            await backend.aclose()

    assert record["output"] == asyncio.run(embedded())
    assert record["output"].strip()
    assert record["completion_tokens"] <= 16 and record["finish_reason"] in ("stop", "length")
    # the prompt's length comes from the prefill details: the same count as llama.cpp's own tokenizer
    import llama_cpp

    vocab = llama_cpp.Llama(model_path=str(smollm2_gguf), vocab_only=True, verbose=False)
    assert record["prompt_tokens"] == len(vocab.tokenize(PROMPT.encode("utf-8"), add_bos=True, special=False))


def test_overlong_input_is_a_counted_context_error(tgi_schema_server) -> None:
    async def go() -> None:
        backend = create_backend("tgi", base_url=tgi_schema_server.root_url)
        try:
            with pytest.raises(ContextTooLongError, match="must be <= 2048"):
                await backend.generate(GenerationRequest("word " * 2100, chat=False, settings=SETTINGS))
        finally:
            await backend.aclose()

    asyncio.run(go())


def test_messages_api_against_the_llama_server(llama_server) -> None:
    async def go() -> tuple[str, str]:
        tgi = create_backend("tgi", base_url=llama_server.root_url, model="smollm2")
        openai = create_backend("openai", base_url=llama_server.base_url, model="smollm2")
        try:
            fingerprint = await tgi.health_check()  # llama.cpp has no /info: checked on the first request
            assert fingerprint["model_sha"] is None
            request = GenerationRequest(PROMPT, chat=True, settings=SETTINGS)
            return (await tgi.generate(request)).text, (await openai.generate(request)).text
        finally:
            await tgi.aclose()
            await openai.aclose()

    via_tgi, via_openai = asyncio.run(go())
    assert via_tgi.strip() and via_tgi == via_openai


def test_health_check_fails_fast_on_a_closed_port(closed_port_url: str) -> None:
    async def go() -> None:
        backend = create_backend("tgi", base_url=closed_port_url)
        try:
            await asyncio.wait_for(backend.health_check(), timeout=15)
        finally:
            await backend.aclose()

    with pytest.raises(
        ScrambledBenchError,
        match=r"^cannot reach http://127\.0\.0\.1:\d+ \(connection failed .*\); is the server running\?$",
    ):
        asyncio.run(go())


def test_health_check_names_unknown_model(tgi_schema_server) -> None:
    async def go() -> None:
        backend = create_backend("tgi", base_url=tgi_schema_server.root_url, model="meta-llama/Llama-2-70b")
        try:
            await backend.health_check()
        finally:
            await backend.aclose()

    with pytest.raises(ScrambledBenchError) as caught:
        asyncio.run(go())
    assert str(caught.value) == (
        f"model 'meta-llama/Llama-2-70b' is not served at {tgi_schema_server.root_url}; "
        "served: HuggingFaceTB/SmolLM2-135M-Instruct"
    )


def _http_error(status: int, body: bytes, headers: dict[str, str] | None = None) -> HfHubHTTPError:
    request = httpx2.Request("POST", "http://tgi.local/generate")
    response = httpx2.Response(status, content=body, headers=headers or {}, request=request)
    return HfHubHTTPError(f"{status} error", response=response)


@pytest.mark.parametrize(
    ("status", "headers", "retryable", "retry_after"),
    [
        (429, {"Retry-After": "3"}, True, 3.0),
        (500, {}, True, None),
        (503, {}, True, None),
        (404, {}, False, None),
        (401, {}, False, None),
        (400, {}, False, None),
    ],
)
def test_http_errors_are_classified(
    status: int, headers: dict, retryable: bool, retry_after: float | None
) -> None:
    error = hf_error(_http_error(status, b'{"error": "something"}', headers), ())
    assert (error.retryable, error.retry_after) == (retryable, retry_after)
    assert str(error).startswith(f"HTTP {status}")


def test_tgi_error_types_and_transport_failures_are_classified() -> None:
    overloaded = OverloadedError("Model is overloaded")
    overloaded.__cause__ = _http_error(429, b'{"error": "Model is overloaded", "error_type": "overloaded"}')
    assert hf_error(overloaded, ()).retryable
    too_long = ValidationError(
        "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048. Given: 3000"
    )
    too_long.__cause__ = _http_error(422, b"{}")
    assert isinstance(hf_error(too_long, ()), ContextTooLongError)
    assert hf_error(httpx2.ConnectError("refused"), ()).retryable
    assert hf_error(httpx2.ReadTimeout("slow"), ()).retryable
    assert hf_error(httpx2.RemoteProtocolError("peer closed"), ()).retryable
    import json

    assert hf_error(json.JSONDecodeError("Expecting value", "{", 1), ()).retryable
    secret = "hf_secretSECRETsecret123"
    assert secret not in str(
        hf_error(_http_error(401, f'{{"error": "bad token {secret}"}}'.encode()), (secret,))
    )
    assert secret not in str(hf_error(httpx2.ConnectError(f"proxy said {secret}"), (secret,)))
