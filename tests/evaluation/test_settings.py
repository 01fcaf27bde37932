"""Run settings: which options name the run folder, pinned to the folder names runs had before the backends'
configs declared their own options (so that every existing run folder still resumes), and the backend
options reached only through ``backend_options``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends import BACKENDS, ENGINE_OPTIONS
from scrambled_bench.evaluation.backends.base import (
    OPTION_MARKS,
    GenerationRequest,
    GenerationSettings,
)
from scrambled_bench.evaluation.settings import ALWAYS_RECORDED, IDENTITY_OPTIONS, RunSettings, run_dir_for

CONFIGS = ["scrqa/dream/kf", "scrrec-zero-shot/realtimeqa/rs50"]

#: (settings, the model the backend resolved, the run folder's name): computed with the code before the
#: backends' configs declared their options, when base_url, provider, api_key and n_ctx were RunSettings fields.
#: A base URL names the folder in the form the backend sends to (issue 43): the forms docs/evaluate.md gives
#: (openai's ``.../v1``, TGI's server root) keep their folders, and another form of one server's URL now
#: names the same folder (the openai and tgi rows below were Model-7B-51bd280720 and model-71d62ca669, the
#: folders of ``http://127.0.0.1:8080`` and ``http://h:80/v1`` as typed; their answers are taken from there)
PINNED_FOLDERS: list[tuple[dict[str, Any], str, str]] = [
    ({}, "smollm2-135m-instruct.Q8_0.gguf", "smollm2-135m-instruct.Q8_0-7f588f571f"),
    (
        {"model": "/m/x.gguf", "backend_options": {"n_ctx": 512}, "seed": 3},
        "x.gguf",
        "x-a798b69c10",
    ),
    (
        {
            "backend": "openai",
            "model": "org/Model-7B",
            "backend_options": {"base_url": "http://127.0.0.1:8080", "api_key": "sk-x"},
            "suite": "paper",
        },
        "org/Model-7B",
        "Model-7B-ef41ca8fb8",
    ),
    (
        {"backend": "tgi", "backend_options": {"base_url": "http://h:80/v1"}, "prompt_mode": "completion"},
        "served/model",
        "model-3d88d57e85",
    ),
    (
        {
            "backend": "hf",
            "model": "meta-llama/Llama-3.1-8B-Instruct",
            "backend_options": {"provider": "together"},
            "parser": "paper",
        },
        "meta-llama/Llama-3.1-8B-Instruct",
        "Llama-3.1-8B-Instruct-5d7201dec8",
    ),
    (
        {"backend": "transformers", "model": "HuggingFaceTB/SmolLM2-135M-Instruct", "max_new_tokens": 12},
        "HuggingFaceTB/SmolLM2-135M-Instruct",
        "SmolLM2-135M-Instruct-11debe9a69",
    ),
]


def test_the_forms_of_one_servers_url_name_one_run_folder() -> None:
    """``--base-url http://127.0.0.1:8080`` and ``.../v1`` are one endpoint: one folder, one URL recorded."""

    def folder(backend: str, url: str) -> tuple[str, str]:
        settings = RunSettings(backend=backend, model="m", backend_options={"base_url": url})
        return _folder(settings, "m"), settings.scrubbed()["base_url"]

    for backend, forms, sent in (
        ("openai", ("http://127.0.0.1:8080", "http://127.0.0.1:8080/", "HTTP://127.0.0.1:8080/v1/"), "/v1"),
        ("tgi", ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/"), ""),
    ):
        named = {folder(backend, url) for url in forms}
        assert len(named) == 1, named
        [(_, recorded)] = named
        assert recorded == "http://127.0.0.1:8080" + sent
    # two servers stay two endpoints, and so do two backends at one URL (they send to other routes)
    assert folder("openai", "http://127.0.0.1:8080")[0] != folder("openai", "http://127.0.0.1:8081")[0]
    assert folder("openai", "http://127.0.0.1:8080")[0] != folder("tgi", "http://127.0.0.1:8080")[0]


def _folder(settings: RunSettings, model: str) -> str:
    return run_dir_for(settings.identity(model, configs=CONFIGS, limit=8, data="manifest:abc")).name


@pytest.mark.parametrize(("options", "model", "folder"), PINNED_FOLDERS)
def test_existing_run_folders_keep_their_names(options: dict[str, Any], model: str, folder: str) -> None:
    assert _folder(RunSettings(**options), model) == folder


def test_request_keys_keep_their_values() -> None:
    """The resume keys (pinned likewise): a backend option never enters a request's key."""
    assert GenerationRequest("hi", chat=True).key("m") == "b75c974f93b9d1e1d670d883e9cc1cfc"
    settings = GenerationSettings(max_new_tokens=12, stop=("\n",), seed=3)
    request = GenerationRequest("Q: x", chat=False, settings=settings)
    assert request.key("smollm2-135m-instruct.Q8_0.gguf") == "38f15ff844fe3e4aa3b85a4d829cd172"


def test_config_json_settings_keep_their_keys() -> None:
    """config.json's settings keep every key they had (a report reads them), in the same order."""
    settings = RunSettings(
        backend="openai", model="m", backend_options={"base_url": "http://h", "api_key": "k"}
    )
    keys = list(settings.scrubbed())
    assert keys[:7] == ["backend", "model", "base_url", "provider", "api_key_given", "n_ctx", "suite"]
    assert settings.scrubbed()["api_key_given"] is True and "k" not in settings.scrubbed().values()


@given(batch_size=st.integers(1, 512), threads=st.integers(1, 64))
def test_only_given_identity_options_name_the_run(batch_size: int, threads: int) -> None:
    """An identity option (batch_size, device) makes a new folder only where it is given; one that cannot
    change the numbers (n_threads) never does; and "32" on the command line is 32 from Python."""
    base = RunSettings(backend="transformers", model="m")
    with_batch = replace(base, backend_options={"batch_size": batch_size})
    assert _folder(with_batch, "m") != _folder(base, "m")
    assert _folder(with_batch, "m") == _folder(
        replace(base, backend_options={"batch_size": str(batch_size)}), "m"
    )
    assert _folder(replace(base, backend_options={"device": "cpu"}), "m") != _folder(base, "m")
    llama = RunSettings()
    assert _folder(replace(llama, backend_options={"n_threads": threads}), "x.gguf") == _folder(
        llama, "x.gguf"
    )


def test_every_backend_option_declares_what_it_is() -> None:
    """Each option of each backend's config is made with backend_option, so it says whether it names the
    run; the always-recorded ones are options some backend still takes."""
    for backend in BACKENDS.values():
        for name, info in backend.Config.model_fields.items():
            assert isinstance(info.json_schema_extra, dict), f"{backend.kind}.{name} is not a backend_option"
            assert set(OPTION_MARKS) <= set(info.json_schema_extra), f"{backend.kind}.{name}"
    assert {"batch_size", "device", "n_ctx", "model", "base_url", "provider"} <= IDENTITY_OPTIONS
    assert "n_threads" not in IDENTITY_OPTIONS and "request_timeout" not in IDENTITY_OPTIONS
    takers = {name for backend in BACKENDS.values() for name in backend.Config.model_fields}
    assert set(ALWAYS_RECORDED) <= takers


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"backend": "transformers", "model": "m", "backend_options": {"batch_size": "many"}},
            (
                "--backend-option batch_size: input should be a valid integer, unable to parse string as an "
                "integer, got 'many'; the transformers backend takes --model, --backend-option batch_size=INT, "
                "--backend-option device=TEXT"
            ),
        ),
        (
            {"backend": "transformers", "model": "m", "backend_options": {"batch_size": 0}},
            "--backend-option batch_size: input should be greater than or equal to 1, got 0",
        ),
        (
            {"backend": "transformers", "model": "m", "backend_options": {"n_threads": 2}},
            (
                "--backend-option n_threads does not apply to the transformers backend (the model runs "
                "in-process); --backend-option n_threads applies to --backend llama-cpp; the transformers "
                "backend takes --model"
            ),
        ),
        (
            {"backend": "llama-cpp", "backend_options": {"colour": "red"}},
            (
                "--backend-option colour does not apply to the llama-cpp backend (the model runs in-process); "
                "the llama-cpp backend takes --model, --n-ctx, --backend-option n_threads=INT"
            ),
        ),
        (
            {"backend": "transformers", "model": "a", "backend_options": {"model": "b"}},
            "--backend-option model=b together with --model a: name the model once",
        ),
        (
            {"backend": "openai", "model": "m", "backend_options": {"request_timeout": 3}},
            "request_timeout is the engine's setting, not a backend option: give --request-timeout",
        ),
    ],
)
def test_a_bad_backend_option_is_one_line_naming_the_options(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ScrambledBenchError) as caught:
        RunSettings(**options)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_the_model_may_come_as_a_backend_option() -> None:
    settings = RunSettings(backend="transformers", backend_options={"model": "m", "device": "cpu"})
    assert settings.model == "m" and settings.options() == {"model": "m", "device": "cpu"}
    assert "request_timeout" in ENGINE_OPTIONS
