"""Fault injection: the same requests through a proxy that injects 500, 503, 429 + Retry-After, stalls
past the timeout, dropped connections and malformed JSON complete with every request recorded once and
outputs equal to a clean run against the same real llama.cpp server."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from pathlib import Path

import pytest
from fault_runs import clean_beside_faulty

from scrambled_bench.evaluation.backends import create_backend
from scrambled_bench.evaluation.backends.base import GenerationRequest, GenerationSettings
from scrambled_bench.evaluation.engine import EngineSettings, EngineStats, run_requests
from scrambled_bench.evaluation.store import RunStore

pytestmark = [pytest.mark.server, pytest.mark.slow]

SETTINGS = GenerationSettings(max_new_tokens=12, temperature=0.0, seed=0)
WORDS = (
    "apple",
    "river",
    "stone",
    "cloud",
    "tiger",
    "piano",
    "lemon",
    "candle",
    "forest",
    "harbor",
    "violet",
    "engine",
)


def fault_requests(chat_only: bool) -> list[GenerationRequest]:
    """Chat and raw prompts alternating (chat only for the tgi backend: the llama server has no /generate)."""
    return [
        GenerationRequest(
            f"Write a short sentence with the word '{word}'.",
            chat=chat_only or i % 2 == 0,
            settings=SETTINGS,
            meta={"id": i},
        )
        for i, word in enumerate(WORDS)
    ]


def evaluate(kind: str, model: str, base_url: str, run_dir: Path, timeout: float) -> tuple[EngineStats, dict]:
    async def go() -> tuple[EngineStats, dict]:
        backend = create_backend(kind, model=model, base_url=base_url, request_timeout=timeout)
        try:
            with RunStore(run_dir) as store:
                stats = await run_requests(
                    backend,
                    fault_requests(chat_only=kind == "tgi"),
                    store,
                    EngineSettings(
                        concurrency=2,
                        request_timeout=timeout,
                        max_retries=6,
                        backoff_base=0.1,
                        backoff_max=1.0,
                    ),
                    on_result=lambda request, generation: {"words": len(generation.text.split())},
                    progress=False,
                )
                return stats, store.completed()
        finally:
            await backend.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize(("kind", "api_suffix"), [("openai", "/v1"), ("tgi", "")])
def test_faulty_run_equals_clean_run(
    kind: str, api_suffix: str, llama_server, fault_proxy, tmp_path: Path
) -> None:
    proxy = fault_proxy(llama_server.root_url, seed=3, fault_rate=0.6, stall_seconds=25.0)
    # the timeout must cut the stalls short, yet leave a slow shared CI machine time for real answers
    (stats, faulty), (clean_stats, clean) = clean_beside_faulty(
        lambda: evaluate(kind, "smollm2", proxy.root_url + api_suffix, tmp_path / "faulty", timeout=10),
        lambda: evaluate(kind, "smollm2", llama_server.root_url + api_suffix, tmp_path / "clean", timeout=20),
    )
    assert (clean_stats.succeeded, clean_stats.retries) == (len(WORDS), 0)
    injected = json.loads(urllib.request.urlopen(proxy.root_url + "/_stats", timeout=5).read())["injected"]

    # every kind of fault was exercised, and each one cost a retry (a busy machine may add timeouts)
    assert set(injected) == {"500", "503", "429", "stall", "drop", "malformed"}, injected
    assert stats.retries >= sum(injected.values())
    assert (stats.succeeded, stats.failed) == (len(WORDS), 0)
    # every request recorded once, with the same content as the clean run
    lines = (tmp_path / "faulty" / "samples.jsonl").read_text().splitlines()
    assert len(lines) == len(WORDS)
    assert faulty == clean
