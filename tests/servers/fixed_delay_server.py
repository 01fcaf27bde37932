"""A local OpenAI-shaped server that answers every request after a fixed delay, for benchmarks and engine
tests where the model's speed must not matter.

The answer is deterministic: the prompt's words reversed (so a test can check which prompt an answer
belongs to). It serves ``GET /v1/models``, ``POST /v1/chat/completions``, ``POST /v1/completions`` and
``GET /health``, and TGI's native routes too (``GET /info``, ``POST /generate`` with ``details``), so the
``tgi`` backend's transport can be measured the same way. ``GET /_stats`` says what it answered: requests,
the TCP connections they came on, peak in flight, and the ``time.monotonic()`` of the first arrival and
the last answer (the clock every process on the machine shares), so a benchmark can time a client's
requests without its start-up. The model ``strict-chat`` rejects ``max_tokens`` on chat requests as OpenAI's newer
models do (it wants ``max_completion_tokens``). With ``--api-key`` the ``/v1`` routes answer 401 to any other key, echoing the key they got
(as careless servers do).

    python fixed_delay_server.py --port 8123 --delay 0.25 --model fixed-delay
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import time

from aiohttp import web

#: a second served model that, like OpenAI's newer chat models, rejects ``max_tokens`` on chat requests
STRICT_MODEL = "strict-chat"


def reply_text(prompt: str) -> str:
    """The server's deterministic answer.

    >>> reply_text("one two three")
    'three two one'
    """
    return " ".join(reversed(prompt.split()))


def build_app(delay: float, model: str, api_key: str | None = None) -> web.Application:
    stats = {
        "requests": 0,
        "answered": 0,
        "in_flight": 0,
        "peak_in_flight": 0,
        "first_arrival": None,
        "last_answer": None,
    }
    #: the client ends (address, port) POSTs came from: one per TCP connection a client opened
    peers: set[object] = set()

    @web.middleware
    async def count(request: web.Request, handler):  # type: ignore[no-untyped-def]
        if request.method != "POST":
            return await handler(request)
        if stats["first_arrival"] is None:
            stats["first_arrival"] = time.monotonic()
        stats["requests"] += 1
        peers.add(request.transport.get_extra_info("peername") if request.transport else None)
        stats["in_flight"] += 1
        stats["peak_in_flight"] = max(stats["peak_in_flight"], stats["in_flight"])
        try:
            response = await handler(request)
        finally:
            stats["in_flight"] -= 1
        stats["answered"] += 1
        stats["last_answer"] = time.monotonic()
        return response

    @web.middleware
    async def check_key(request: web.Request, handler):  # type: ignore[no-untyped-def]
        given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if api_key is not None and given != api_key and request.path not in ("/health", "/_stats"):
            # like a careless server, echo the whole key back: clients must keep it out of their messages
            return web.json_response(
                {
                    "error": {
                        "message": f"Incorrect API key provided: {given}",
                        "type": "invalid_request_error",
                        "code": "invalid_api_key",
                    }
                },
                status=401,
            )
        return await handler(request)

    async def models(_: web.Request) -> web.Response:
        return web.json_response(
            {
                "object": "list",
                "data": [
                    {"id": name, "object": "model", "owned_by": "tests"} for name in (model, STRICT_MODEL)
                ],
            }
        )

    async def completion(request: web.Request) -> web.Response:
        body = await request.json()
        chat = request.path.endswith("/chat/completions")
        if chat and body.get("model") == STRICT_MODEL and "max_tokens" in body:
            # what OpenAI answers for its newer chat models
            return web.json_response(
                {
                    "error": {
                        "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                        "Use 'max_completion_tokens' instead.",
                        "type": "invalid_request_error",
                        "param": "max_tokens",
                        "code": "unsupported_parameter",
                    }
                },
                status=400,
            )
        prompt = body["messages"][-1]["content"] if chat else body["prompt"]
        await asyncio.sleep(delay)
        text = reply_text(prompt)
        choice = (
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            if chat
            else {"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}
        )
        return web.json_response(
            {
                "id": "cmpl-" + hashlib.sha1(prompt.encode()).hexdigest()[:12],
                "object": "chat.completion" if chat else "text_completion",
                "created": int(time.time()),
                "model": body.get("model", model),
                "system_fingerprint": "fixed-delay-v1",
                "choices": [choice],
                "usage": {
                    "prompt_tokens": len(prompt.split()),
                    "completion_tokens": len(text.split()),
                    "total_tokens": len(prompt.split()) + len(text.split()),
                },
            }
        )

    async def info(_: web.Request) -> web.Response:
        return web.json_response(
            {"model_id": model, "model_sha": None, "max_total_tokens": 4096, "version": "fixed-delay"}
        )

    async def generate(request: web.Request) -> web.Response:
        body = await request.json()
        prompt, parameters = body["inputs"], body.get("parameters") or {}
        await asyncio.sleep(delay)
        text = reply_text(prompt)
        output: dict = {"generated_text": text}
        if parameters.get("details"):
            output["details"] = {
                "finish_reason": "eos_token",
                "generated_tokens": len(text.split()),
                "seed": parameters.get("seed"),
                "prefill": [
                    {"id": index, "text": word, "logprob": None} for index, word in enumerate(prompt.split())
                ]
                if parameters.get("decoder_input_details")
                else [],
                "tokens": [],
            }
        return web.json_response(output)

    app = web.Application(middlewares=[count, check_key])
    app.router.add_get("/_stats", lambda _: web.json_response({**stats, "connections": len(peers)}))
    app.router.add_get("/info", info)
    app.router.add_post("/generate", generate)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/health", lambda _: web.Response(text="ok"))
    app.router.add_post("/v1/chat/completions", completion)
    app.router.add_post("/v1/completions", completion)
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay", type=float, default=0.25, help="seconds before each answer")
    parser.add_argument("--model", default="fixed-delay")
    parser.add_argument("--api-key", default=None, help="require this bearer key (401 otherwise)")
    args = parser.parse_args()
    web.run_app(
        build_app(args.delay, args.model, args.api_key),
        host=args.host,
        port=args.port,
        print=None,
        access_log=None,
        backlog=1024,
    )


if __name__ == "__main__":
    main()
