"""The HTTP transport the network backends send with: the fast one (aiohttp) on a real request to a real
server, recorded in config.json; and, where aiohttp cannot be had, a loud fallback (one warning, the
transport named in config.json), never a silent one."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.evaluation.backends import create_backend
from scrambled_bench.evaluation.backends.base import GenerationRequest, GenerationSettings
from scrambled_bench.evaluation.backends.transport import (
    AIOHTTP,
    HTTPX_POOL,
    IDLE_CONNECTION_SECONDS,
    transport_of,
)

pytestmark = pytest.mark.server

TINY_BUILD = Path(__file__).parents[1] / "fixtures" / "tiny_build"
SETTINGS = GenerationSettings(max_new_tokens=8)


def test_openai_backend_sends_through_aiohttp_not_the_httpx_pool(fixed_delay_server) -> None:
    """Fails when the openai backend's requests, or its openai client (the health check), run on httpx's
    connection pool (the 4x slower path of issue 20)."""
    import aiohttp

    async def go() -> tuple[object, str | None, str]:
        backend = fixed_delay_server.openai_backend("fixed-delay")
        try:
            await backend.health_check()
            reply = await backend.generate(GenerationRequest("one two three", chat=True, settings=SETTINGS))
            assert reply.text == "three two one"
            # the request went through an aiohttp session, which holds the connection for the next one
            session = backend._session
            assert isinstance(session, aiohttp.ClientSession), type(session)
            assert session.connector.limit == 0  # no cap below --concurrency inside the client
            return session, backend.transport, transport_of(backend._client._client)
        finally:
            await backend.aclose()

    _, recorded, health_transport = asyncio.run(go())
    assert recorded == AIOHTTP
    assert health_transport == AIOHTTP


def test_openai_requests_take_no_thread_hop(fixed_delay_server, monkeypatch) -> None:
    """A request runs on the event loop alone: aiohttp's ``trust_env`` would read the proxy environment
    and ``~/.netrc`` in worker threads for every request (a fifth of the client's CPU per request), so
    the backend reads the proxy once per session instead. An ``HTTP_PROXY`` set for other hosts is still
    honoured by its own rules: ``NO_PROXY`` keeps loopback direct here."""
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    hops: list[object] = []

    async def go() -> None:
        loop = asyncio.get_running_loop()
        run_in_executor = loop.run_in_executor

        def counted(executor, func, *args):  # type: ignore[no-untyped-def]
            hops.append(func)
            return run_in_executor(executor, func, *args)

        loop.run_in_executor = counted  # type: ignore[method-assign]
        backend = fixed_delay_server.openai_backend("fixed-delay")
        try:
            await backend.generate(GenerationRequest("warm up", chat=True, settings=SETTINGS))
            hops.clear()  # the first request opens the session and its connection
            replies = await asyncio.gather(
                *(
                    backend.generate(GenerationRequest(f"request {i}", chat=True, settings=SETTINGS))
                    for i in range(20)
                )
            )
            assert [reply.text for reply in replies] == [f"{i} request" for i in range(20)]
        finally:
            await backend.aclose()

    asyncio.run(go())
    assert hops == [], (
        f"{len(hops)} thread hops for 20 requests: {sorted({getattr(f, '__qualname__', repr(f)) for f in hops})}"
    )


def test_run_records_its_transport_in_config_json(fixed_delay_server, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", fixed_delay_server.api_key)
    run_dir = tmp_path / "run"
    code = main(
        ["run", "--backend", "openai", "--base-url", fixed_delay_server.base_url, "--model", "fixed-delay",
         "--data", str(TINY_BUILD), "--tasks", "scrqa", "--datasets", "dream", "--types", "original",
         "--max-new-tokens", "8", "--no-progress", "--run-dir", str(run_dir)]
    )  # fmt: skip
    assert code == 0
    config = json.loads((run_dir / "config.json").read_text())
    assert config["transport"] == AIOHTTP


FALLBACK_SCRIPT = """
import sys
sys.modules["aiohttp"] = None  # as if openai had been installed without its aiohttp extra
from scrambled_bench.evaluation.backends import create_backend
first = create_backend("openai", model="m", base_url=sys.argv[1])
second = create_backend("openai", model="m", base_url=sys.argv[1])
print(first.client_transport, second.client_transport, type(first._client._client._transport).__name__)
"""


def test_without_aiohttp_the_fallback_is_loud(fixed_delay_server) -> None:
    result = subprocess.run(
        [sys.executable, "-c", FALLBACK_SCRIPT, fixed_delay_server.base_url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [HTTPX_POOL, HTTPX_POOL, "AsyncHTTPTransport"]
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, result.stderr  # once per process, however many backends
    assert "httpx's connection pool" in warnings[0] and "openai[aiohttp]" in warnings[0]


def test_tgi_backend_sends_through_aiohttp_on_both_routes(fixed_delay_server) -> None:
    """huggingface_hub's InferenceClient (the tgi and hf backends) would use httpx's pool by default."""

    async def go() -> tuple[list[str], str | None, list[str]]:
        backend = create_backend(
            "tgi", base_url=fixed_delay_server.root_url, api_key=fixed_delay_server.api_key
        )
        try:
            fingerprint = await backend.health_check()
            assert fingerprint["model"] == "fixed-delay"
            texts = [
                (
                    await backend.generate(GenerationRequest("one two three", chat=chat, settings=SETTINGS))
                ).text
                for chat in (True, False)  # Messages API, then the native /generate
            ]
            clients = [backend._client._async_client, backend._generate_client._async_client]
            return texts, backend.transport, [transport_of(client) for client in clients]
        finally:
            await backend.aclose()

    texts, recorded, used = asyncio.run(go())
    assert texts == ["three two one", "three two one"]
    assert recorded == AIOHTTP
    assert used == [AIOHTTP, AIOHTTP]


@pytest.mark.parametrize("backend_name", ["openai", "tgi"])
def test_an_idle_connection_is_not_reused_past_the_idle_limit(
    fixed_delay_server, monkeypatch, backend_name
) -> None:
    """uvicorn-based servers close a connection idle for 5 s; a client keeping it longer (aiohttp's default
    is 15 s) can write a POST into a connection the server is closing, which aiohttp does not resend, and
    the run spends a retry on it. Both aiohttp sessions (the openai backend's, and the tgi and hf backends'
    transport) keep idle connections for :data:`IDLE_CONNECTION_SECONDS` at most, under those 5 s: reused
    sooner, replaced later. The limit is shortened here so that the test need not wait 4 s."""
    from scrambled_bench.evaluation.backends import hf_transport, openai_compatible

    assert IDLE_CONNECTION_SECONDS < 5
    for module in (hf_transport, openai_compatible):
        monkeypatch.setattr(module, "IDLE_CONNECTION_SECONDS", 0.3)

    def connections() -> int:
        return fixed_delay_server.get_json("/_stats")["connections"]

    async def go() -> list[int]:
        if backend_name == "openai":
            backend = fixed_delay_server.openai_backend("fixed-delay")
        else:
            backend = create_backend(
                "tgi", base_url=fixed_delay_server.root_url, api_key=fixed_delay_server.api_key
            )
        opened = []
        try:
            before = connections()
            for pause in (0.0, 0.0, 0.6):
                await asyncio.sleep(pause)
                reply = await backend.generate(GenerationRequest("one two", chat=True, settings=SETTINGS))
                assert reply.text == "two one"
                opened.append(connections() - before)
        finally:
            await backend.aclose()
        return opened

    # the first request opens a connection, the second reuses it, the third comes after the idle limit
    assert asyncio.run(go()) == [1, 1, 2]
