"""Fixtures of the integration tests: a harness run offline, and the letter-choice task run by lm-eval."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness_support import offline_vars


@pytest.fixture
def harness_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A harness resolved in this process runs offline, with a datasets cache of the test's own."""
    for name, value in offline_vars(tmp_path).items():
        monkeypatch.setenv(name, value)


# --- the letter-choice log-likelihood task, scrambled and run by lm-eval once per session ----------------------


@pytest.fixture(scope="session")
def letter_quiz(tmp_path_factory: pytest.TempPathFactory):
    """The tests' letter-choice task (tests/fixtures/letter_quiz) scrambled by ``scramble lm-eval:`` (kfl, sub)."""
    from harness_support import offline_env, require
    from letter_quiz import scrambled_quiz

    require("lm_eval")
    folder = tmp_path_factory.mktemp("letter_quiz")
    return scrambled_quiz(folder, offline_env(folder))


@pytest.fixture(scope="session")
def smollm2_checkpoint(smollm2_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``scrambled-bench dequantise``: the embedded SmolLM2 GGUF as a transformers checkpoint, in a cache of
    the session's own; the folder it prints."""
    import os

    from letter_quiz import run_cli

    pytest.importorskip(
        "torch", reason="de-quantising a GGUF needs torch (pip install 'scrambled-bench[local]')"
    )
    pytest.importorskip("gguf", reason="de-quantising a GGUF needs the gguf package")
    folder = tmp_path_factory.mktemp("dequantise")
    env = {**os.environ, "XDG_CACHE_HOME": str(folder / "cache"), "TRANSFORMERS_VERBOSITY": "error"}
    done = run_cli(["dequantise"], folder, env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{smollm2_gguf.name}: de-quantised checkpoint created" in done.stderr
    [line] = done.stdout.splitlines()  # only the folder goes to stdout
    checkpoint = Path(line)
    assert checkpoint.parent == folder / "cache" / "scrambled_bench" / "gguf-dequantised"
    again = run_cli(["dequantise"], folder, env)
    assert again.returncode == 0 and again.stdout.strip() == line and "checkpoint reused" in again.stderr
    return checkpoint


@pytest.fixture(scope="session")
def letter_quiz_hf_logs(letter_quiz, smollm2_checkpoint: Path) -> Path:
    """The documented local multiple-choice path (docs/harnesses/servers.md): ``lm_eval --model hf`` on the de-quantised SmolLM2, the
    canonical task and its variants in one invocation (``letter_quiz_scrambled``); the log folder."""
    from letter_quiz import TASK, run_lm_eval

    return run_lm_eval(
        letter_quiz, "hf", f"pretrained={smollm2_checkpoint},dtype=float32", f"{TASK}_scrambled",
        letter_quiz.folder / "hf_out", "--batch_size", "8",
    )  # fmt: skip


@pytest.fixture(scope="session")
def letter_quiz_llama_logs(letter_quiz, smollm2_checkpoint: Path, llama_server) -> Path:
    """The letter-choice task and its kfl variant through ``lm_eval --model local-completions`` against
    llama-cpp-python's server (the tokenizer: the de-quantised checkpoint's), two documents each."""
    from letter_quiz import TASK, run_lm_eval

    served = llama_server.get_json("/v1/models")["data"][0]["id"]
    model_args = (
        f"model={served},base_url={llama_server.base_url}/completions,tokenizer_backend=huggingface,"
        f"tokenizer={smollm2_checkpoint},tokenized_requests=False,num_concurrent=1,max_retries=1"
    )
    return run_lm_eval(
        letter_quiz, "local-completions", model_args, f"{TASK},{TASK}_kfl", letter_quiz.folder / "llama_out",
        "--limit", "2",
    )  # fmt: skip
