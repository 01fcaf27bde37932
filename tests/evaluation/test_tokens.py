"""The dry run's token counts (evaluation/tokens.py) against what real servers report: the order of the ways to
count, each fallback said once, and the per-type figures."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.evaluation.backends import create_backend
from scrambled_bench.evaluation.backends.base import GenerationRequest
from scrambled_bench.evaluation.evaluate import plan_run, requests_to_send
from scrambled_bench.evaluation.settings import RunSettings
from scrambled_bench.evaluation.tokens import (
    GGUFCounter,
    RoughCounter,
    ServerCounter,
    TokenCounter,
    TransformersCounter,
    choose_token_counter,
    load_tiktoken_encoding,
    tokens_by_type,
)

TINY_BUILD = Path(__file__).resolve().parents[1] / "fixtures" / "tiny_build"
#: the issue's goal: the dry run within 2% of the tokens the server reports, per type
GOAL = 0.02


def _plan(prompt_mode: str, limit: int = 2) -> object:
    settings = RunSettings(
        backend="openai", data=str(TINY_BUILD), limit=limit, max_new_tokens=1, prompt_mode=prompt_mode
    )
    return plan_run(settings)


async def _per_type(counter: TokenCounter, per_config: dict) -> dict[str, int]:
    by_type: dict[str, int] = defaultdict(int)
    for config, requests in per_config.items():
        by_type[config.scramble_type] += sum(await counter.count_all(requests))
    return dict(by_type)


@pytest.fixture(scope="module")
def tokenizer_folder(smollm2_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SmolLM2's tokenizer as a local transformers folder, converted from the GGUF (no download)."""
    pytest.importorskip("gguf")
    from transformers import AutoTokenizer

    folder = tmp_path_factory.mktemp("smollm2_tokenizer")
    AutoTokenizer.from_pretrained(str(smollm2_gguf.parent), gguf_file=smollm2_gguf.name).save_pretrained(
        folder
    )
    return folder


@pytest.mark.server
@pytest.mark.parametrize("prompt_mode", ["chat", "completion"])
def test_dry_run_counts_are_within_two_percent_of_the_servers_prompt_tokens_per_type(
    llama_server, smollm2_gguf: Path, prompt_mode: str
) -> None:
    """The Done-when of issue 19 on a few samples: each way the dry run counts with a tokenizer, per scramble
    type, against usage.prompt_tokens of the real llama.cpp server; the rough estimate is labelled as such."""
    plan = _plan(prompt_mode)
    chat = prompt_mode == "chat"

    async def go() -> tuple[dict[str, int], dict[str, dict[str, int]], dict[str, TokenCounter]]:
        backend = create_backend("openai", model="smollm2", base_url=llama_server.base_url)
        per_config = requests_to_send(plan, backend.model, set())
        reported: dict[str, int] = defaultdict(int)
        for config, requests in per_config.items():
            for request in requests:
                reported[config.scramble_type] += (await backend.generate(request)).prompt_tokens
        counters = {
            "tokenizer": await choose_token_counter(backend, tokenizer=str(smollm2_gguf), chat=chat),
            "server": await choose_token_counter(backend, chat=chat),
            "rough": RoughCounter(),
        }
        if chat:
            # the served model hidden behind an alias: the client applies the template of the model's file
            import httpx

            server = counters["server"]
            counters["server + GGUF template"] = ServerCounter(
                httpx.AsyncClient(trust_env=False),
                server.root,
                server.endpoint,
                server.model,
                GGUFCounter(smollm2_gguf),
            )
        estimates = {label: await _per_type(counter, per_config) for label, counter in counters.items()}
        for counter in counters.values():
            await counter.aclose()
        await backend.aclose()
        return dict(reported), estimates, counters

    reported, estimates, counters = asyncio.run(go())
    assert counters["tokenizer"].method == "tokenizer" and counters["tokenizer"].exact
    assert counters["server"].method == "server" and "/extras/tokenize" in counters["server"].source
    assert counters["rough"].method == "rough" and not counters["rough"].exact
    exact = [label for label in estimates if label != "rough"]
    if chat:
        exact.remove("server")  # checked below
    for label in exact:
        for scramble_type, tokens in reported.items():
            error = abs(estimates[label][scramble_type] - tokens) / tokens
            assert error <= GOAL, (label, scramble_type, estimates[label][scramble_type], tokens)
    if chat:
        # without the template the count is a lower bound, and the source says so
        assert "lower bound" in counters["server"].source
    else:
        assert counters["server"].exact


def test_a_named_tokenizer_folder_counts_as_the_models_gguf(
    tokenizer_folder: Path, smollm2_gguf: Path
) -> None:
    """--tokenizer with a transformers folder applies its chat template as the GGUF's counter does."""
    plan = _plan("chat", limit=1)
    folder, gguf = TransformersCounter(str(tokenizer_folder)), GGUFCounter(smollm2_gguf)
    per_config = requests_to_send(plan, "m", set())
    counted = asyncio.run(_per_type(folder, per_config))
    assert counted == asyncio.run(_per_type(gguf, per_config))
    asyncio.run(gguf.aclose())


def _dry_run(run_dir: Path, *extra: str) -> tuple[int, str, str]:
    """``scrambled-bench run --dry-run`` on the tiny build: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    args = ["run", "--data", str(TINY_BUILD), "--run-dir", str(run_dir), "--no-progress", "--dry-run", *extra]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def test_the_cli_counts_with_a_named_tokenizer_folder(tokenizer_folder: Path, tmp_path: Path) -> None:
    code, out, err = _dry_run(tmp_path / "dry", "--limit", "1", "--tokenizer", str(tokenizer_folder))
    assert code == 0, err
    text = " ".join(out.split())
    assert (
        f"counted by the tokenizer {tokenizer_folder}" in text and "prompt tokens per scramble type" in text
    )


def test_a_missing_tokenizer_is_a_one_line_error(tmp_path: Path) -> None:
    code, _out, err = _dry_run(tmp_path / "dry", "--tokenizer", str(tmp_path / "none.gguf"))
    assert code == 2 and err == f"error: tokenizer file not found: {tmp_path / 'none.gguf'}\n"


@pytest.mark.server
def test_a_server_without_tokenize_endpoint_falls_through_and_says_so(fixed_delay_server) -> None:
    """An OpenAI-shaped server with no tokenize route: tiktoken for an OpenAI model name (offline: from
    litellm's cached encodings), else the rough estimate; each step passed over is one note."""

    async def counter_for(model: str) -> TokenCounter:
        backend = fixed_delay_server.openai_backend(model)
        counter = await choose_token_counter(backend, chat=True)
        await backend.aclose()
        await counter.aclose()
        return counter

    rough = asyncio.run(counter_for("fixed-delay"))
    assert rough.method == "rough" and not rough.exact
    assert rough.notes[0].startswith(
        f"no tokenize endpoint at {fixed_delay_server.root_url} (/extras/tokenize"
    )
    assert rough.notes[1:] == [
        "'fixed-delay' is not a local model file or folder",
        "tiktoken does not know the model 'fixed-delay'",
    ]
    if load_tiktoken_encoding("gpt-4o-mini")[0] is None:
        pytest.skip(load_tiktoken_encoding("gpt-4o-mini")[1])
    counted = asyncio.run(counter_for("gpt-4o-mini"))
    assert counted.method == "tiktoken" and "o200k_base" in counted.source
    assert len(counted.notes) == 2  # the endpoint, the model name; tiktoken counts
    request = GenerationRequest("Hello world", chat=True)
    assert (
        asyncio.run(counted.count(request))
        == asyncio.run(counted.count(GenerationRequest("Hello world", chat=False))) + counted.framing
    )


summaries = st.lists(
    st.fixed_dictionaries(
        {
            "config": st.text(min_size=1, max_size=8),
            "scramble_type": st.sampled_from(["original", "rs50", "kfl", "sub"]),
            "to_send": st.integers(0, 50),
            "prompt_tokens": st.integers(0, 10_000),
        }
    ),
    max_size=12,
    unique_by=lambda item: item["config"],
)


@given(summaries)
def test_tokens_by_type_keeps_every_token_and_request(summary: list[dict]) -> None:
    for item in summary:
        item["original"] = None
    rows = tokens_by_type(summary)
    assert sum(row["prompt_tokens"] for row in rows) == sum(item["prompt_tokens"] for item in summary)
    assert sum(row["requests"] for row in rows) == sum(item["to_send"] for item in summary)
    assert len({row["type"] for row in rows}) == len(rows)


@given(st.text(max_size=400), st.text(min_size=1, max_size=50), st.booleans())
def test_the_rough_estimate_grows_with_the_prompt(prompt: str, more: str, chat: bool) -> None:
    counter = RoughCounter()
    shorter = asyncio.run(counter.count(GenerationRequest(prompt, chat=chat)))
    longer = asyncio.run(counter.count(GenerationRequest(prompt + more, chat=chat)))
    assert 1 <= shorter <= longer


@pytest.mark.server
@pytest.mark.parametrize("prompt_mode", ["chat", "completion"])
def test_a_tgi_server_counts_through_its_tokenize_and_chat_tokenize_routes(
    tgi_schema_server, prompt_mode: str
) -> None:
    """TGI's /tokenize for raw prompts and /chat_tokenize (its own chat template) for chat: the counts per
    type are the prompt tokens the same server then reports for the requests."""
    plan = _plan(prompt_mode, limit=1)

    async def go() -> tuple[TokenCounter, dict[str, int], dict[str, int]]:
        backend = create_backend("tgi", base_url=tgi_schema_server.root_url)
        await backend.health_check()
        per_config = requests_to_send(plan, backend.model, set())
        counter = await choose_token_counter(backend, chat=prompt_mode == "chat")
        counted = await _per_type(counter, per_config)
        reported: dict[str, int] = defaultdict(int)
        for config, requests in per_config.items():
            for request in requests:
                reported[config.scramble_type] += (await backend.generate(request)).prompt_tokens
        await counter.aclose()
        await backend.aclose()
        return counter, counted, dict(reported)

    counter, counted, reported = asyncio.run(go())
    assert counter.method == "server" and counter.source.startswith("TGI's /tokenize") and counter.exact
    assert counter.notes == []
    for scramble_type, tokens in reported.items():
        assert abs(counted[scramble_type] - tokens) <= GOAL * tokens, (scramble_type, counted, reported)


def test_the_cli_says_each_fallback_once_and_labels_the_rough_estimate(
    closed_port_url: str, tmp_path: Path
) -> None:
    code, out, err = _dry_run(
        tmp_path / "dry",
        "--backend",
        "openai",
        "--base-url",
        closed_port_url,
        "--model",
        "my-model",
        "--limit",
        "1",
    )
    assert code == 0, err
    notes = [line for line in err.splitlines() if line.startswith("token count: ")]
    assert len(notes) == 3 and notes[0].startswith(
        f"token count: no tokenize endpoint at {closed_port_url} (cannot reach"
    )
    assert "rough estimate: characters / 4, blind to the scramble type" in " ".join(out.split())


def test_a_served_hub_model_is_counted_by_its_cached_tokenizer(
    tokenizer_folder: Path, smollm2_gguf: Path, closed_port_url: str, tmp_path: Path, monkeypatch, hub_offline
) -> None:
    """Step 3 for a Hub id: a tokenizer in the local Hugging Face cache counts, offline, nothing downloaded;
    the steps before it (an unreachable server, not a local file) are one note each."""
    import shutil

    import huggingface_hub.constants

    repo = tmp_path / "hub" / "models--test-org--smollm2"
    snapshot = repo / "snapshots" / ("0" * 40)
    shutil.copytree(tokenizer_folder, snapshot)
    (snapshot / "config.json").write_text('{"model_type": "llama"}')  # SmolLM2's, as a cached model has one
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0" * 40)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))

    async def go() -> tuple[TokenCounter, list[int], list[int]]:
        backend = create_backend("openai", model="test-org/smollm2", base_url=closed_port_url)
        counter = await choose_token_counter(backend, chat=True)
        requests = [request for requests in _plan("chat", limit=1).requests.values() for request in requests]
        gguf = GGUFCounter(smollm2_gguf)
        counted, expected = await counter.count_all(requests), await gguf.count_all(requests)
        await gguf.aclose()
        await backend.aclose()
        return counter, counted, expected

    counter, counted, expected = asyncio.run(go())
    assert counter.method == "tokenizer" and "test-org/smollm2 (Hugging Face cache)" in counter.source
    assert (
        len(counter.notes) == 2
        and counter.notes[1] == "'test-org/smollm2' is not a local model file or folder"
    )
    assert counted == expected


def test_the_token_counter_keeps_idle_connections_no_longer_than_the_backends(monkeypatch) -> None:
    """A server's tokenize endpoint is asked on an httpx client whose idle connections expire after
    IDLE_CONNECTION_SECONDS, as the backends' aiohttp sessions do, under the 5 s after which uvicorn-based
    servers close them (httpx keeps them 5 s, so a request could be written into a connection being
    closed). The limit is shortened here so that the test need not wait 4 s."""
    from aiohttp import web

    from scrambled_bench.evaluation import tokens

    monkeypatch.setattr(tokens, "IDLE_CONNECTION_SECONDS", 0.3)
    peers: list[object] = []

    async def tokenize(request: web.Request) -> web.Response:  # llama-cpp-python's route and answer
        peers.append(request.transport.get_extra_info("peername") if request.transport else None)
        return web.json_response({"tokens": (await request.json())["input"].split()})

    async def go() -> list[int]:
        app = web.Application()
        app.router.add_post("/extras/tokenize", tokenize)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        backend = create_backend("openai", model="served", base_url=f"http://127.0.0.1:{port}/v1")
        connections = []
        try:
            counter = await tokens.choose_token_counter(backend, chat=False)
            try:
                for pause in (0.0, 0.0, 0.6):
                    await asyncio.sleep(pause)
                    assert await counter.count_text("one two three") == 3
                    connections.append(len(set(peers)))
            finally:
                await counter.aclose()
        finally:
            await backend.aclose()
            await runner.cleanup()
        return connections

    # the endpoint's probe opened the connection; two counts reuse it, the third comes after the idle limit
    assert asyncio.run(go()) == [1, 1, 2]
