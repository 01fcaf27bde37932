"""A local HTTP proxy that injects faults in front of a real server, for the engine's retry tests.

Every POST is forwarded to ``--upstream`` (same path and body), except that a seeded share of distinct
requests first get one or two faults, cycling through all kinds so that a short test sees every one:

- ``500`` / ``503``: an error status with a JSON error body;
- ``429``: Too Many Requests with ``Retry-After: 1``;
- ``stall``: no answer for ``--stall-seconds`` (past the client's timeout), then 504;
- ``drop``: the connection is closed without any response;
- ``malformed``: a 200 whose JSON body is cut off mid-way.

After its faults a request is forwarded normally, so a client that retries enough always completes.
Which requests fault, and how many times, depends only on ``--seed`` and the request body.
``GET /_stats`` returns the injected faults by kind and the number of requests forwarded; other GETs
are forwarded.

    python fault_proxy.py --upstream http://127.0.0.1:8080 --port 8124 --seed 0 --fault-rate 0.5
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import random
from collections import Counter

import aiohttp
from aiohttp import web
from upstream_session import open_upstream_session

FAULT_KINDS = ("500", "503", "429", "stall", "drop", "malformed")
#: a 200 answer cut off mid-way: the start of a valid chat completion, then nothing
MALFORMED_BODY = b'{"id": "chatcmpl-injected", "object": "chat.completion", "choices": [{"index": 0, "mess'


def fault_plan(body: bytes, *, seed: int, rate: float) -> int:
    """How many faults the request with this body gets before it is forwarded (0, 1 or 2).

    >>> fault_plan(b"x", seed=0, rate=0.0), fault_plan(b"x", seed=0, rate=1.0) in (1, 2)
    (0, True)
    """
    rng = random.Random(f"{seed}:{hashlib.sha256(body).hexdigest()}")
    if rng.random() >= rate:
        return 0
    return rng.choice((1, 2))


def build_app(upstream: str, *, seed: int, rate: float, stall_seconds: float) -> web.Application:
    attempts: Counter[str] = Counter()
    injected: Counter[str] = Counter()
    state = {"next_kind": 0, "forwarded": 0}
    session_holder: dict[str, aiohttp.ClientSession] = {}

    async def on_startup(_: web.Application) -> None:
        session_holder["session"] = open_upstream_session()

    async def on_cleanup(_: web.Application) -> None:
        await session_holder["session"].close()

    async def forward(request: web.Request, body: bytes) -> tuple[int, bytes, str]:
        headers = {"Content-Type": request.headers.get("Content-Type", "application/json")}
        if "Authorization" in request.headers:
            headers["Authorization"] = request.headers["Authorization"]
        async with session_holder["session"].request(
            request.method, upstream + request.path_qs, data=body or None, headers=headers
        ) as response:
            state["forwarded"] += 1
            return (
                response.status,
                await response.read(),
                response.headers.get("Content-Type", "application/json"),
            )

    async def stats(_: web.Request) -> web.Response:
        return web.json_response({"injected": dict(injected), "forwarded": state["forwarded"]})

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.read()
        if request.method != "POST":
            status, payload, content_type = await forward(request, body)
            return web.Response(status=status, body=payload, content_type=content_type.split(";")[0])
        request_id = request.path + ":" + hashlib.sha256(body).hexdigest()
        attempt = attempts[request_id]
        attempts[request_id] += 1
        if attempt < fault_plan(request.path.encode() + body, seed=seed, rate=rate):
            kind = FAULT_KINDS[state["next_kind"] % len(FAULT_KINDS)]
            state["next_kind"] += 1
            injected[kind] += 1
            if kind in ("500", "503"):
                return web.json_response(
                    {"error": {"message": f"injected {kind}", "type": "server_error"}}, status=int(kind)
                )
            if kind == "429":
                return web.json_response(
                    {"error": {"message": "injected rate limit", "type": "rate_limit"}},
                    status=429,
                    headers={"Retry-After": "1"},
                )
            if kind == "stall":
                await asyncio.sleep(stall_seconds)
                return web.json_response({"error": {"message": "injected stall"}}, status=504)
            if kind == "drop":
                assert request.transport is not None
                request.transport.close()
                # the client has already lost the connection; aiohttp discards this response
                return web.Response(status=204)
            # made up here, not cut from an upstream answer, so that it arrives at once however busy the
            # upstream is (a test of it must not depend on the model's speed)
            return web.Response(status=200, body=MALFORMED_BODY, content_type="application/json")
        status, payload, content_type = await forward(request, body)
        return web.Response(status=status, body=payload, content_type=content_type.split(";")[0])

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.on_startup.append(on_startup)
    app.on_cleanup.append(on_cleanup)
    app.router.add_get("/_stats", stats)
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="e.g. http://127.0.0.1:8080 (no trailing /v1)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fault-rate", type=float, default=0.5, help="share of distinct requests that fault")
    parser.add_argument("--stall-seconds", type=float, default=5.0)
    args = parser.parse_args()
    app = build_app(
        args.upstream.rstrip("/"), seed=args.seed, rate=args.fault_rate, stall_seconds=args.stall_seconds
    )
    web.run_app(app, host=args.host, port=args.port, print=None, access_log=None, shutdown_timeout=0.5)


if __name__ == "__main__":
    main()
