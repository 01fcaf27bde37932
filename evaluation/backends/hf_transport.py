"""huggingface_hub's ``AsyncInferenceClient`` (the ``tgi`` and ``hf`` backends) on aiohttp.

huggingface_hub sends with ``httpx`` and its default pool (100 connections, 20 kept alive): at 64 requests in
flight its CPU per request is several times the openai backend's, and past 100 requests wait for a
connection inside the client. The aiohttp transport that ``openai[aiohttp]`` brings is written for
``httpx2``, not ``httpx``, so this module gives ``httpx`` one of its own: a small transport over one aiohttp
session. Imported only when such a backend is created.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import aiohttp
import httpx

from scrambled_bench.evaluation.backends.transport import IDLE_CONNECTION_SECONDS


def hf_async_client(offline_exempt: Callable[[str], bool] | None = None) -> Any:
    """An ``httpx.AsyncClient`` for huggingface_hub's ``AsyncInferenceClient`` that sends through aiohttp
    (:class:`AiohttpTransport`), with huggingface_hub's own request and response hooks. A request whose URL
    ``offline_exempt`` accepts skips the request hook (the user's own endpoint under ``HF_HUB_OFFLINE=1``).

    >>> from scrambled_bench.evaluation.backends.transport import transport_of
    >>> transport_of(hf_async_client())
    'aiohttp'
    """
    from huggingface_hub.utils import _http

    request_hooks = [_http.async_hf_request_event_hook]
    if offline_exempt is not None:
        hook = _http.async_hf_request_event_hook

        async def skip_for_user_endpoints(request: Any) -> Any:
            return None if offline_exempt(str(request.url)) else await hook(request)

        request_hooks = [skip_for_user_endpoints]
    return httpx.AsyncClient(
        event_hooks={"request": request_hooks, "response": [_http.async_hf_response_event_hook]},
        follow_redirects=True,
        timeout=None,
        transport=AiohttpTransport(),
    )


class AiohttpTransport(httpx.AsyncBaseTransport):
    """An ``httpx`` transport that sends through one aiohttp session (no cap on connections: the engine
    bounds the requests in flight). Bodies are read whole: inference replies are small and not streamed
    here. aiohttp's failures become httpx's (timeouts, connect and read errors), which the backends'
    error classification already knows."""

    def __init__(self) -> None:
        self._session: Any = None

    async def handle_async_request(self, request: Any) -> Any:
        if self._session is None:
            # no decompression here: httpx decodes the body by its Content-Encoding, as with its own pool
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0, keepalive_timeout=IDLE_CONNECTION_SECONDS),
                auto_decompress=False,
            )
        timeout = request.extensions.get("timeout", {})
        try:
            async with self._session.request(
                request.method,
                str(request.url),
                headers=list(request.headers.multi_items()),
                data=await request.aread() or None,
                allow_redirects=False,
                timeout=aiohttp.ClientTimeout(
                    sock_connect=timeout.get("connect"), sock_read=timeout.get("read")
                ),
            ) as response:
                content = await response.read()
        except (asyncio.TimeoutError, aiohttp.ServerTimeoutError) as exc:
            raise httpx.ReadTimeout(str(exc) or "timed out", request=request) from exc
        except aiohttp.ClientConnectorError as exc:
            raise httpx.ConnectError(str(exc), request=request) from exc
        except aiohttp.ClientError as exc:
            raise httpx.ReadError(f"{exc.__class__.__name__}: {exc}", request=request) from exc
        return httpx.Response(
            status_code=response.status,
            headers=list(response.raw_headers),
            content=content,
            request=request,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": (response.reason or "").encode()},
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
