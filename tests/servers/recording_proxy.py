"""A local HTTP proxy that forwards every request to a real server unchanged and records what was asked.

The harness-equality test puts it in front of the llama.cpp server, so it can compare the requests each
harness actually sent (messages and decoding parameters), not what their configurations say they send.
``GET /_requests`` returns the recorded POSTs in arrival order: ``{"path", "body"}`` with the body as JSON
(or as text where it is not JSON). Other requests are forwarded without being recorded.

    python recording_proxy.py --upstream http://127.0.0.1:8080 --port 8125
"""

from __future__ import annotations

import argparse
import json

import aiohttp
from aiohttp import web
from upstream_session import open_upstream_session


def build_app(upstream: str) -> web.Application:
    recorded: list[dict] = []
    session_holder: dict[str, aiohttp.ClientSession] = {}

    async def on_startup(_: web.Application) -> None:
        session_holder["session"] = open_upstream_session()

    async def on_cleanup(_: web.Application) -> None:
        await session_holder["session"].close()

    async def requests(_: web.Request) -> web.Response:
        return web.json_response(recorded)

    async def handle(request: web.Request) -> web.Response:
        body = await request.read()
        if request.method == "POST":
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = body.decode("utf-8", errors="replace")
            recorded.append({"path": request.path, "body": parsed})
        headers = {"Content-Type": request.headers.get("Content-Type", "application/json")}
        if "Authorization" in request.headers:
            headers["Authorization"] = request.headers["Authorization"]
        async with session_holder["session"].request(
            request.method, upstream + request.path_qs, data=body or None, headers=headers
        ) as response:
            payload = await response.read()
            content_type = response.headers.get("Content-Type", "application/json").split(";")[0]
            return web.Response(status=response.status, body=payload, content_type=content_type)

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.on_startup.append(on_startup)
    app.on_cleanup.append(on_cleanup)
    app.router.add_get("/_requests", requests)
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="e.g. http://127.0.0.1:8080 (no trailing /v1)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    web.run_app(build_app(args.upstream), host=args.host, port=args.port, print=None)


if __name__ == "__main__":
    main()
