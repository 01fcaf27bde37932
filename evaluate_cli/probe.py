"""The ``probe`` command: hidden-state probes per layer (the paper's Appendix A.3, Figures 7 and 8).

The command only parses options; the work is :func:`scrambled_bench.probing.run.run_probe`.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.options import open_unit_interval, option
from scrambled_bench.names import split_names

# kept in step with scrambled_bench.probing (data.DEFAULT_TYPES, run.DEFAULT_LIMIT_*); a test checks it, and
# the CLI need not import the probing package (numpy, torch) to print its help
DEFAULT_TYPES_TEXT = "original,rs20,rs50,rs100,kf,kfl,sub"
DEFAULT_LIMIT_TRAIN = 24
DEFAULT_LIMIT_EVAL = 12


class Device(str, Enum):
    auto = "auto"
    cpu = "cpu"
    cuda = "cuda"


class ProbeBackend(str, Enum):
    transformers = "transformers"


class Fitter(str, Enum):
    auto = "auto"
    sklearn = "sklearn"
    torch = "torch"


def probe(
    model: Annotated[str | None, option("--model", "Hub id, local folder or .gguf file (default: the embedded SmolLM2-135M-Instruct).")] = None,
    backend: Annotated[ProbeBackend, option("--backend", "Where the model runs (in-process transformers).")] = ProbeBackend.transformers,
    types: Annotated[list[str] | None, option("--types", f"Scramble settings, repeat or comma-separate (default: {DEFAULT_TYPES_TEXT}).")] = None,
    limit_train: Annotated[int | None, option("--limit-train", f"DREAM train questions per setting for the probes (default: {DEFAULT_LIMIT_TRAIN}).", min=1)] = None,
    limit_eval: Annotated[int | None, option("--limit-eval", f"DREAM dev + test questions per setting for scoring (default: {DEFAULT_LIMIT_EVAL}).", min=1)] = None,
    full: Annotated[bool, option("--full", "Every question: 6,116 train, 4,081 dev + test (hours on a CPU; for a GPU).")] = False,
    layers: Annotated[str, option("--layers", "'all' or layer numbers such as 0,4,8 (0 = the embeddings).")] = "all",
    batch_size: Annotated[int, option("--batch-size", "Prompts per forward pass (left-padded).", min=1)] = 8,
    device: Annotated[Device, option("--device", "auto (CUDA when there is one), cpu or cuda.")] = Device.auto,
    fitter: Annotated[Fitter, option("--fitter", "What fits the probes: sklearn (CPU), torch (the same regression on --device), or auto (torch on a GPU, sklearn on a CPU).")] = Fitter.auto,
    run_dir: Annotated[Path | None, option("--run-dir", "Run folder (default: runs/probe-<model>-<hash>; a rerun resumes there).")] = None,
    source_dir: Annotated[Path | None, option("--source-dir", "DREAM mirror <owner>/<repo>/<path> (default: $SCRAMBLED_BENCH_SOURCE_DIR or GitHub).")] = None,
    seed: Annotated[int, option("--seed", "Seed of the scrambling, the question choice and the probes.")] = 0,
    confidence_level: Annotated[float, option("--confidence-level", "Level of the accuracies' Wilson intervals, between 0 and 1 (both excluded).", callback=open_unit_interval)] = 0.95,
    progress: Annotated[bool, option("--progress/--no-progress", "Show a progress bar with ETA (--no-progress also silences transformers' and the Hub's bars and warnings).")] = True,
) -> None:  # fmt: skip
    """Probe every layer for the DREAM answer under each scramble setting (Appendix A.3, Figures 7-8).

    For each layer (0 = embeddings) a logistic regression reads the last prompt token's hidden state
    and predicts the answer letter; it is trained on a mixture of the settings over DREAM train and
    scored per setting on dev + test, with Wilson intervals and the chance level (1/3). Writes
    probe.json and figure7/figure8 (PNG, SVG) into the run folder; features are cached there
    (float16 safetensors), so a rerun resumes. The defaults take a few minutes on a CPU; on a GPU
    the probes are fitted there too (--fitter).

    Examples:

      scrambled-bench probe   (the embedded SmolLM2-135M-Instruct, 24 + 12 questions per setting)

      scrambled-bench probe --types original,rs100,sub --limit-train 200 --limit-eval 100

      scrambled-bench probe --model HuggingFaceTB/SmolLM2-360M-Instruct --full --device cuda -b 32
    """
    # deferred: the probing package and numpy (about 0.7 s), which `--help` and the other commands do without
    from scrambled_bench.probing.probes import summarise
    from scrambled_bench.probing.run import RESULT_FILE, run_probe

    if full and (limit_train is not None or limit_eval is not None):
        raise ScrambledBenchError("--full uses every question; leave out --limit-train and --limit-eval")
    result = run_probe(
        model, types=split_names(types) or None,
        limit_train=None if full else (limit_train or DEFAULT_LIMIT_TRAIN),
        limit_eval=None if full else (limit_eval or DEFAULT_LIMIT_EVAL),
        layers=layers, batch_size=batch_size, device=device.value, run_dir=run_dir, source_dir=source_dir,
        seed=seed, confidence_level=confidence_level, progress=progress, fitter=fitter.value,
    )  # fmt: skip
    typer.echo(summarise(result.layers, result.types))
    typer.echo(str(Path(result.info["run_dir"]) / RESULT_FILE))
