"""The reference client of bench_harness_throughput: the same chat requests as ``run`` sends, and nothing
else. Each slot keeps one HTTP/1.1 connection and writes a prebuilt request on it as soon as the previous
answer's bytes are in; no answer is parsed, scored or stored. It is the most any client can get from the
fixed-delay server on this machine, so a harness level with it is at the endpoint's limit.

    .venv/bin/python benchmarks/_reference_client.py --url http://127.0.0.1:8123/v1/chat/completions \\
        --build BUILD --model fixed-delay --max-new-tokens 16 --concurrency 64
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from scrambled_bench.harness.backends.decoding import openai_parameters
from scrambled_bench.harness.tasks import TaskConfig, build_requests


def request_bodies(
    build: Path, configs: Sequence[TaskConfig], model: str, max_new_tokens: int
) -> list[bytes]:
    """The JSON bodies of the chat requests ``run`` sends for ``configs`` of ``build`` (one per row)."""
    bodies = []
    for config in configs:
        data = build / f"{config.dataset}_{config.scramble_type}" / "test.jsonl"
        rows = [json.loads(line) for line in data.read_text().splitlines() if line.strip()]
        for request in build_requests(config, rows, max_new_tokens=max_new_tokens):
            body = {
                "messages": [{"role": "user", "content": request.prompt}],
                "model": model,
                **openai_parameters(request.settings),
                "max_tokens": max_new_tokens,
            }
            bodies.append(json.dumps(body).encode())
    return bodies


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
    parser.add_argument("--url", required=True, help="the server's chat completions URL")
    parser.add_argument("--build", type=Path, required=True)
    parser.add_argument("--config", action="append", required=True, help="task/dataset/type; repeat")
    parser.add_argument("--model", required=True)
    parser.add_argument("--max-new-tokens", type=int, required=True)
    parser.add_argument("--concurrency", type=int, required=True)
    args = parser.parse_args()
    configs = [TaskConfig(*name.split("/")) for name in args.config]
    parts = urlsplit(args.url)
    requests = [
        http_request(parts.netloc, parts.path, body)
        for body in request_bodies(args.build, configs, args.model, args.max_new_tokens)
    ]
    answered = asyncio.run(send_all(args.url, requests, args.concurrency))
    if answered != len(requests):
        raise SystemExit(f"{len(requests) - answered} of {len(requests)} requests were not answered 200")


if __name__ == "__main__":
    main()
