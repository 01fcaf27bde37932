"""The HTTP transports the network backends send with, and a loud fallback when the fast one is missing.

At hundreds of requests in flight the client, not the server, can limit a run: httpx's connection pool
(httpcore) scans every pooled connection for each request, so its CPU per request grows with the
concurrency (about 17 ms at 64 in flight, a 4x slowdown at 0.25 s per answer). aiohttp's connector does
not. Both the ``openai`` client and huggingface_hub's ``AsyncInferenceClient`` take an httpx client, and
``httpx-aiohttp`` (the ``openai[aiohttp]`` extra) gives them one whose transport is aiohttp. Without it
the backends still work, on httpx's pool, and say so: once on stderr and in the run's ``config.json``
(``"transport"``).
"""

from __future__ import annotations

import sys
from typing import Any

#: the fast transport, as config.json names it
AIOHTTP = "aiohttp"
#: httpx's own connection pool, the slow fallback
HTTPX_POOL = "httpx"
#: what to install to get the fast transport back
INSTALL_HINT = "pip install 'openai[aiohttp]'"
#: seconds an idle connection is kept for reuse: under the 5 s after which uvicorn-based servers (vLLM,
#: SGLang, llama-cpp-python...) close it. aiohttp's own 15 s lets a request be written to a connection the
#: server is closing; a POST is then not resent by aiohttp, and the run spends a retry on it.
IDLE_CONNECTION_SECONDS = 4.0

_warned: set[str] = set()


def warn_once(message: str) -> None:
    """Print ``warning: message`` on stderr, once per process per message.

    >>> import contextlib, io
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     warn_once("slow path"); warn_once("slow path")
    >>> err.getvalue()
    'warning: slow path\\n'
    """
    if message in _warned:
        return
    _warned.add(message)
    print(f"warning: {message}", file=sys.stderr, flush=True)


def fallback_message(client: str, reason: str) -> str:
    """The one line a backend prints when it falls back to httpx's pool.

    >>> fallback_message("openai", "no aiohttp")
    "openai client on httpx's connection pool (no aiohttp): several times slower at high concurrency; pip install 'openai[aiohttp]'"
    """
    return (
        f"{client} client on httpx's connection pool ({reason}): several times slower at high "
        f"concurrency; {INSTALL_HINT}"
    )


def openai_http_client(timeout: float) -> tuple[Any, str]:
    """The ``http_client`` for ``openai.AsyncOpenAI`` and the transport's name: ``openai.DefaultAioHttpClient``
    (aiohttp) where it can be had, else ``None`` (the client's default httpx pool) after a warning.

    Connections are not capped: the engine bounds the requests in flight, and a cap below ``--concurrency``
    (openai's default is 1,000) would queue the rest inside the client, where their timeout runs.

    >>> client, transport = openai_http_client(5.0)
    >>> transport
    'aiohttp'
    """
    import openai

    try:
        import httpx2

        limits = httpx2.Limits(max_connections=0, max_keepalive_connections=None)  # aiohttp: 0 is no cap
        return openai.DefaultAioHttpClient(timeout=timeout, limits=limits), AIOHTTP
    except (ImportError, RuntimeError) as exc:  # openai installed without its aiohttp extra
        warn_once(fallback_message("openai", f"{exc.__class__.__name__}: {exc}"))
        return None, HTTPX_POOL


def transport_of(http_client: Any) -> str:
    """The name of an httpx(2) client's transport: :data:`AIOHTTP` for an aiohttp one, :data:`HTTPX_POOL`
    for httpx's own pool (``AsyncHTTPTransport``), else the transport's class name.

    >>> import httpx
    >>> transport_of(httpx.AsyncClient())
    'httpx'
    """
    transport = getattr(http_client, "_transport", None)
    name = type(transport).__name__
    module = type(transport).__module__
    if name == "AiohttpTransport" or "aiohttp" in module:
        return AIOHTTP
    if name == "AsyncHTTPTransport":
        return HTTPX_POOL
    return name
