"""The HTTP session the test proxies (``recording_proxy.py``, ``fault_proxy.py``) forward through.

It opens a new connection for every forwarded request instead of keeping idle ones. uvicorn, which serves
llama-cpp-python, closes a connection after 5 s idle, while aiohttp keeps one for 15 s. A request that
arrives just as uvicorn closes the connection it would reuse is written to a closed socket: aiohttp raises
``ServerDisconnectedError`` and does not resend a POST, so the proxy answers 500 and the client retries.
The proxy then records one prompt twice, and an exact comparison of what a harness sent fails. On 2 busy
cores that happened to the first request after an idle gap (one in 150 requests sent about 1 s apart to a
uvicorn closing at 1 s; once in a CI run of the Inspect variants test). A fresh connection to a loopback
server costs well under a millisecond.
"""

from __future__ import annotations

import aiohttp


def open_upstream_session() -> aiohttp.ClientSession:
    """A session that never reuses a connection the upstream may have closed (call it in a running loop)."""
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(force_close=True), timeout=aiohttp.ClientTimeout(total=600)
    )
