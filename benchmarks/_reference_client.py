"""The reference client of bench_harness_throughput: the same chat requests as ``run`` sends, and nothing
else. Each slot keeps one HTTP/1.1 connection and writes a prebuilt request on it as soon as the previous
answer's bytes are in; no answer is parsed, scored or stored. It is the most any client can get from the
fixed-delay server on this machine, so a harness level with it is at the endpoint's limit.

    .venv/bin/python benchmarks/_reference_client.py --base-url http://127.0.0.1:8123/v1 --model fixed-delay \\
        --concurrency 64 --data BUILD --tasks scrqa --datasets dream --types original,sub --limit 1000 \\
        --max-new-tokens 16
"""

from __future__ import annotations

import argparse
import asyncio
import json
from urllib.parse import urlsplit

from scrambled_bench.evaluation.backends.openai_compatible import chat_body
from scrambled_bench.evaluation.evaluate import plan_run
from scrambled_bench.evaluation.settings import RunSettings


def request_bodies(settings: RunSettings) -> list[bytes]:
    """The JSON bodies of the chat requests ``run`` sends for ``settings``: planned by ``run``'s own
    :func:`plan_run`, each body made by the openai backend's :func:`chat_body`."""
    plan = plan_run(settings)
    return [
        json.dumps(chat_body(settings.model, request)).encode()
        for requests in plan.requests.values()
        for request in requests
    ]


def http_request(host: str, path: str, body: bytes) -> bytes:
    """One HTTP/1.1 POST of a JSON body, as bytes ready for the socket.

    >>> http_request("h", "/v1/x", b"{}").splitlines()[0]
    b'POST /v1/x HTTP/1.1'
    """
    head = f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


async def send_all(url: str, requests: list[bytes], concurrency: int) -> int:
    """Send ``requests`` over ``concurrency`` kept-alive connections; return how many were answered 200."""
    parts = urlsplit(url)
    pending = list(reversed(requests))
    answered = 0

    async def slot() -> None:
        nonlocal answered
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        try:
            while pending:
                writer.write(pending.pop())
                head = await reader.readuntil(b"\r\n\r\n")
                status = int(head.split(b" ", 2)[1])
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                answered += status == 200
        finally:
            writer.close()

    await asyncio.gather(*(slot() for _ in range(min(concurrency, len(requests)))))
    return answered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True, help="the API root, ending in /v1, as run's")
    parser.add_argument("--model", required=True)
    parser.add_argument("--concurrency", type=int, required=True)
    # run's selection, under run's names
    parser.add_argument("--data", required=True)
    parser.add_argument("--tasks", required=True)
    parser.add_argument("--datasets", required=True)
    parser.add_argument("--types", required=True)
    parser.add_argument("--limit", type=int, required=True)
    parser.add_argument("--max-new-tokens", type=int, required=True)
    args = parser.parse_args()
    settings = RunSettings(
        backend="openai",
        model=args.model,
        backend_options={"base_url": args.base_url},
        tasks=[args.tasks],
        datasets=[args.datasets],
        types=[args.types],
        limit=args.limit,
        max_new_tokens=args.max_new_tokens,
        data=args.data,
    )
    url = args.base_url + "/chat/completions"
    parts = urlsplit(url)
    requests = [http_request(parts.netloc, parts.path, body) for body in request_bodies(settings)]
    answered = asyncio.run(send_all(url, requests, args.concurrency))
    if answered != len(requests):
        raise SystemExit(f"{len(requests) - answered} of {len(requests)} requests were not answered 200")


if __name__ == "__main__":
    main()
