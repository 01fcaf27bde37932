"""``scrambled-bench probe`` end to end on SmolLM2 (structure, not accuracy), resuming, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scrambled_bench.evaluate_cli.main import main

TYPES = ("original", "kfl")
LIMIT_TRAIN, LIMIT_EVAL = 6, 3  # the fewest the structure needs: 2 types x 9 questions, 3 answer classes each split


def _probe(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["probe", "--no-progress", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.slow
@pytest.mark.shared
def test_a_small_real_run_writes_the_probe_and_both_figures(
    probe_model_deps: None, source_mirror: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    code, out, err = _probe(
        capsys,
        "--types", ",".join(TYPES),
        "--limit-train", str(LIMIT_TRAIN),
        "--limit-eval", str(LIMIT_EVAL),
        "--device", "cpu",
        "--run-dir", str(run_dir),
        "--source-dir", str(source_mirror),
    )  # fmt: skip
    assert code == 0, err
    # --no-progress: no bar and no warning, of the probe or of transformers and the Hub
    assert err == "", err
    assert out.strip().splitlines()[-1] == str(run_dir / "probe.json")
    assert "original: best layer" in out and "kfl: best layer" in out

    document = json.loads((run_dir / "probe.json").read_text())
    assert document["kind"] == "scrambled-bench probe"
    assert document["types"] == list(TYPES)
    assert document["layers"] == list(range(31))
    assert document["chance"] == pytest.approx(1 / 3)
    assert document["hidden_states"] == 31 and document["hidden_size"] == 576
    assert document["template"].startswith(
        "Dialogue:\n{dialogue}\nQuestion: {question}\nChoices: {choices}\n"
    )
    assert document["train"] == {
        "splits": ["train"],
        "questions_per_type": LIMIT_TRAIN,
        "samples": LIMIT_TRAIN * 2,
        "mixture": list(TYPES),
    }
    assert document["eval"]["questions_per_type"] == LIMIT_EVAL
    assert document["eval"]["splits"] == ["dev", "test"]
    assert document["extraction"]["computed_samples"] == 2 * (LIMIT_TRAIN + LIMIT_EVAL)
    # on a CPU, auto fits with scikit-learn
    assert (document["probe"]["fitter"], document["probe"]["fit_device"]) == ("sklearn", "cpu")
    assert document["settings"]["fitter"] == "auto"
    assert len(document["results"]) == 31
    for entry in document["results"]:
        assert 0 <= entry["train_accuracy"] <= 1
        assert set(entry["accuracy"]) == set(TYPES)
        for score in entry["accuracy"].values():
            low, high = score["interval"]
            assert 0 <= low <= score["value"] <= high <= 1 and score["n"] == LIMIT_EVAL
    assert set(document["best_layer"]) == set(TYPES)

    for name in ("figure7.png", "figure7.svg", "figure8.png", "figure8.svg"):
        assert (run_dir / name).stat().st_size > 1000
    config = json.loads((run_dir / "probe_config.json").read_text())
    assert config["identity"]["model"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert config["model"]["model_fingerprint"].startswith("sha256:")
    for scramble_type in TYPES:
        for split in ("train", "dev", "test"):
            assert list((run_dir / "features" / scramble_type / split).glob("shard-*.safetensors"))

    from scrambled_bench.probing.report import load_probe, probe_table

    result = load_probe(run_dir)
    assert result is not None and result.types == TYPES
    table = probe_table(result)
    assert table.columns == ["layer", "Ori", "KFL", "train"] and len(table.rows) == 31


@pytest.mark.slow
@pytest.mark.shared
def test_a_rerun_computes_only_what_is_missing_and_gives_the_same_probe(
    smollm2, source_mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import scrambled_bench.probing.run as probe_run

    loads = []

    def already_loaded(source: str | None = None, device: str = "auto"):
        loads.append(source)
        return smollm2  # the session's model: reloading it would only cost time

    monkeypatch.setattr(probe_run, "load_model", already_loaded)
    options = {"source_dir": source_mirror, "run_dir": tmp_path, "layers": "0,15,30"}
    first = probe_run.run_probe(types=["original"], limit_train=6, limit_eval=3, **options)
    assert first.info["extraction"]["computed_samples"] == 9
    again = probe_run.run_probe(types=["original"], limit_train=6, limit_eval=3, **options)
    assert again.info["extraction"]["computed_samples"] == 0
    assert [layer.to_dict() | {"fit_seconds": 0} for layer in again.layers] == [
        layer.to_dict() | {"fit_seconds": 0} for layer in first.layers
    ]
    # more questions and another setting: only the new ones are computed (the selection is nested)
    grown = probe_run.run_probe(types=["original", "kfl"], limit_train=9, limit_eval=3, **options)
    assert grown.info["extraction"]["computed_samples"] == 3 + (9 + 3)
    assert [layer.layer for layer in grown.layers] == [0, 15, 30]
    assert len(loads) == 3
    # the torch fitter on the same cached features: scikit-learn's accuracies within a few questions
    by_torch = probe_run.run_probe(types=["original"], limit_train=6, limit_eval=3, fitter="torch", **options)
    assert (
        by_torch.info["probe"]["fitter"] == "torch" and by_torch.info["extraction"]["computed_samples"] == 0
    )


# -- bad input: one line, exit 2, nothing computed ---------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--types", "original,kfx"], "unknown scramble type 'kfx'"),
        (["--limit-train", "2"], "--limit-train 2 is below the number of answer classes (3)"),
        (["--limit-eval", "1"], "--limit-eval 1 is below the number of answer classes (3)"),
        (["--layers", "0,x"], "--layers takes 'all' or layer numbers"),
        (["--full", "--limit-eval", "50"], "--full uses every question"),
    ],
)
def test_bad_options_are_one_line_errors(
    args: list[str], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], probe_fitting: None
) -> None:
    code, _, err = _probe(capsys, *args, "--run-dir", str(tmp_path / "run"))
    assert code == 2
    assert expected in _one_line_error(err)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "args",
    [["--limit-train", "0"], ["--batch-size", "0"], ["--device", "tpu"], ["--backend", "openai"]],
)
def test_out_of_range_values_are_usage_errors(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _probe(capsys, *args, "--run-dir", str(tmp_path / "run"))
    assert code == 2
    _one_line_error(err)
    assert not (tmp_path / "run").exists()


def test_a_run_folder_of_another_model_is_refused_before_loading(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    probe_model_deps: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import scrambled_bench.probing.run as probe_run
    from scrambled_bench.probing.run import feature_identity

    def must_not_load(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model was loaded although the folder is another model's")

    monkeypatch.setattr(probe_run, "load_model", must_not_load)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    config = {"kind": "scrambled-bench probe config", "identity": feature_identity("other-model.gguf", 0)}
    (run_dir / "probe_config.json").write_text(json.dumps(config))
    code, _, err = _probe(capsys, "--run-dir", str(run_dir))
    assert code == 2
    line = _one_line_error(err)
    assert "holds features of model 'other-model.gguf'" in line and "another --run-dir" in line
    assert not (run_dir / "features").exists()

    # the same model with another seed: its features are other texts
    code, _, err = _probe(capsys, "--run-dir", str(run_dir), "--model", "other-model.gguf", "--seed", "1")
    assert code == 2 and "was made with seed 0, not 1" in _one_line_error(err)


def test_a_model_that_is_not_available_offline_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], probe_fitting: None, hub_offline: None
) -> None:
    pytest.importorskip("torch", reason="the model loader needs torch (pip install 'scrambled-bench[local]')")
    code, _, err = _probe(
        capsys, "--model", "HuggingFaceTB/no-such-model-for-scrambled-bench",
        "--run-dir", str(tmp_path / "run"),
        "--source-dir", str(tmp_path / "no-mirror"),  # the model fails first: no data is read
    )  # fmt: skip
    assert code == 2
    line = _one_line_error(err)
    assert "cannot load 'HuggingFaceTB/no-such-model-for-scrambled-bench'" in line
    assert "hf download HuggingFaceTB/no-such-model-for-scrambled-bench" in line
    assert "HF_HUB_OFFLINE=0" in line
    assert not (tmp_path / "run").exists()

    code, _, err = _probe(
        capsys, "--model", str(tmp_path / "missing.gguf"), "--run-dir", str(tmp_path / "run")
    )
    assert code == 2 and "model file not found" in _one_line_error(err)


def test_the_cli_defaults_are_the_libraries() -> None:
    from scrambled_bench.evaluate_cli import probe as command
    from scrambled_bench.probing import data, run

    assert command.DEFAULT_TYPES_TEXT == ",".join(data.DEFAULT_TYPES)
    assert (command.DEFAULT_LIMIT_TRAIN, command.DEFAULT_LIMIT_EVAL) == (
        run.DEFAULT_LIMIT_TRAIN,
        run.DEFAULT_LIMIT_EVAL,
    )
