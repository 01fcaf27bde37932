"""The hidden-state probe's costs (``scrambled-bench probe``), where its time goes, and the two fitters
compared: figures, not pass/fail.

    python benchmarks/bench_probe.py [--device cpu] [--full] [--source-dir DIR] [--samples 32]
                                     [--batch-sizes 1,8,32] [--train-per-type 1000] [--eval-per-type 500]
                                     [--layers 4] [--fitters sklearn,torch] [--real-limits 0,0]

1. extraction in its two stages: the DREAM prompts (half original, half rs100; the mirror comes from
   --source-dir or SCRAMBLED_BENCH_SOURCE_DIR) tokenized once (prompts/s), then the last-token hidden states
   of all 31 states of the embedded SmolLM2-135M-Instruct on ``--device`` (its dtype: float32 on a CPU,
   bfloat16 on a recent GPU), gathered back to the CPU as float16, at each batch size: samples/s and prompt
   tokens/s;
2. probe fitting: synthetic float16 features for the paper's seven settings (the answer planted more
   strongly in later layers) written to a real feature cache, then one probe per layer streamed from it by
   each fitter (scikit-learn on the CPU; torch on ``--device``): seconds per layer (loading + fit +
   interval), the peak memory the fit allocates (tracemalloc) for N and 2N layers, which should be the same,
   and how far the two fitters' accuracies are apart, layer by layer;
3. with ``--real-limits TRAIN,EVAL``: the real probe (``run_probe``) on original and rs100 at those limits,
   fitted by scikit-learn and by torch on the same cached features, and their accuracies per layer compared;
4. the process's peak resident memory.

``--full`` runs the probe's ``--full`` sizes: the fits on 6,116 train and 4,081 evaluation questions per
setting (2.5 GB of synthetic features in a temporary folder), by torch for all 31 layers and by scikit-learn
for the first ``--layers``, and the extraction on 2,048 prompts at batch 32, 64 and 128, from which the
71,379 prompts of ``probe --full`` are extrapolated. On a GPU
(the check of issue 32; a few minutes on one H100):

    python benchmarks/bench_probe.py --device cuda --full
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from support import add_smoke_flag, skip, source_mirror

#: probe --full: DREAM's train questions, and its dev + test ones, per setting
FULL_TRAIN, FULL_EVAL, FULL_LAYERS = 6116, 4081, 31


def synchronize(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def bench_extraction(source_dir: str | None, samples: int, batch_sizes: list[int], device: str) -> float:
    """Prints the profile; returns the best samples/s."""
    from scrambled_bench.builder.sources.fetch import SourceReader, resolve_source_dir
    from scrambled_bench.probing.data import EVAL_SPLITS, probe_prompt, read_questions, select_questions
    from scrambled_bench.probing.features import encode, forward_rows, length_sorted_batches, load_model

    started = time.perf_counter()
    loaded = load_model(device=device)
    print(
        f"model {loaded.name}: {loaded.n_states} hidden states x {loaded.hidden_size}, {loaded.dtype} on "
        f"{loaded.device}, loaded in {time.perf_counter() - started:.1f} s ({os.cpu_count()} CPUs)"
    )
    reader = SourceReader(mirror=resolve_source_dir(Path(source_dir) if source_dir else source_mirror()))
    questions = select_questions(read_questions(reader, EVAL_SPLITS), samples // 2 + samples % 2, seed=0)
    texts = [probe_prompt(q, t, seed=0) for t in ("original", "rs100") for q in questions][:samples]
    began = time.perf_counter()
    rows, _ = encode(loaded, texts)
    tokenize = time.perf_counter() - began
    lengths = [len(row) for row in rows]
    print(
        f"extraction: {len(texts)} DREAM prompts (original + rs100), {sum(lengths) / len(texts):.0f} tokens on "
        f"average, tokenized once in {tokenize:.2f} s ({len(texts) / tokenize:.0f} prompts/s)"
    )
    forward_rows(loaded, rows[:1])  # warm-up: the first call pays for lazy initialisation
    best = 0.0
    for batch_size in batch_sizes:
        synchronize(loaded.device)
        began = time.perf_counter()
        for batch in length_sorted_batches(lengths, batch_size):
            forward_rows(loaded, [rows[i] for i in batch])  # forward pass, then the gather to the CPU
        synchronize(loaded.device)
        wall = time.perf_counter() - began
        best = max(best, len(texts) / wall)
        print(
            f"  batch {batch_size:>3}: {len(texts) / wall:6.2f} samples/s, {sum(lengths) / wall:7.0f} tokens/s "
            f"({wall:.1f} s)"
        )
    return best


def planted(rng, n: int, hidden: int, layer: int, n_states: int, labels):
    """``[n, hidden]`` float16 noise with the label planted more strongly in later layers."""
    import numpy as np

    values = rng.normal(size=(n, hidden)).astype(np.float32)
    values[np.arange(n), labels] += 2.0 * layer / (n_states - 1)
    return values.astype(np.float16)


def bench_fitting(
    train_per_type: int, eval_per_type: int, layers: int, fitters: list[str], device: str, full: bool
) -> float:
    """Prints the fits' figures; returns the seconds the fastest fitter would take for 31 layers."""
    import numpy as np

    from scrambled_bench.probing.data import DEFAULT_TYPES, ProbeQuestion
    from scrambled_bench.probing.features import FeatureCache
    from scrambled_bench.probing.probes import fit_probes
    from scrambled_bench.probing.run import layer_data_loader

    n_states, hidden = FULL_LAYERS, 576
    rng = np.random.default_rng(0)

    def questions(split: str, n: int) -> list[ProbeQuestion]:
        return [ProbeQuestion(f"{split}/q/{i}", split, "", "", ("a", "b", "c"), i % 3, "") for i in range(n)]

    train, evaluation = questions("train", train_per_type), questions("dev", eval_per_type)
    fastest = float("inf")
    with tempfile.TemporaryDirectory() as folder:
        cache = FeatureCache(Path(folder))
        began = time.perf_counter()
        for scramble_type in DEFAULT_TYPES:
            for split, members in (("train", train), ("dev", evaluation)):
                for start in range(0, len(members), 256):
                    chunk = members[start : start + 256]
                    labels = np.array([q.label for q in chunk])
                    states = np.stack(
                        [planted(rng, len(chunk), hidden, s, n_states, labels) for s in range(n_states)]
                    )
                    cache.write_shard(scramble_type, split, [q.id for q in chunk], states)
        size = sum(p.stat().st_size for p in Path(folder).rglob("*.safetensors"))
        print(
            f"fitting: {len(DEFAULT_TYPES)} settings x ({train_per_type} train + {eval_per_type} eval) "
            f"synthetic features, {size / 2**20:.0f} MiB of float16 shards written in "
            f"{time.perf_counter() - began:.1f} s"
        )
        load = layer_data_loader(FeatureCache(Path(folder)), DEFAULT_TYPES, train, evaluation)
        accuracies: dict[str, list] = {}
        for fitter in fitters:
            # --full: torch fits every layer; scikit-learn, minutes a layer at this size, the first --layers
            counts = ((n_states,) if fitter == "torch" else (layers,)) if full else (layers, 2 * layers)
            fit_device = device if fitter == "torch" else "cpu"
            fit_probes([0], load, fitter=fitter, device=fit_device)  # warm-up: imports, caches, CUDA context
            peaks = {}
            for count in counts:
                tracemalloc.start()
                synchronize(fit_device)
                began = time.perf_counter()
                results = fit_probes(range(count), load, fitter=fitter, device=fit_device)
                synchronize(fit_device)
                wall = time.perf_counter() - began
                peaks[count] = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
                per_layer = [r.fit_seconds for r in results]
                unconverged = sum(not r.converged for r in results)
                print(
                    f"  {fitter} on {fit_device}, {count:>2} layers: {wall / count:.2f} s per layer (min "
                    f"{min(per_layer):.2f}, max {max(per_layer):.2f}; {len(train) * len(DEFAULT_TYPES)} training "
                    f"samples x {hidden}), peak allocated {peaks[count] / 2**20:.0f} MiB"
                    + (f"; {unconverged} not converged" if unconverged else "")
                )
                accuracies[fitter] = results
            fastest = min(fastest, n_states * wall / counts[-1])
            if len(counts) == 2:
                print(
                    f"  memory with {counts[1]} layers / with {counts[0]}: {peaks[counts[1]] / peaks[counts[0]]:.2f}x "
                    f"(1.00x: it does not grow with the number of layers); 31 layers would take about "
                    f"{31 * wall / counts[1]:.0f} s"
                )
        if {"sklearn", "torch"} <= set(accuracies):
            shared = min(len(accuracies["sklearn"]), len(accuracies["torch"]))
            print("  " + compare_fitters(accuracies["sklearn"][:shared], accuracies["torch"][:shared]))
    return fastest


def compare_fitters(reference: list, other: list) -> str:
    """How far the torch fitter's accuracies are from scikit-learn's, over every layer and setting."""
    gaps = [
        abs(a.scores[name].accuracy - b.scores[name].accuracy) * 100
        for a, b in zip(reference, other, strict=True)
        for name in a.scores
    ]
    worst = max(gaps)
    at = next(
        (a.layer, name)
        for a, b in zip(reference, other, strict=True)
        for name in a.scores
        if abs(a.scores[name].accuracy - b.scores[name].accuracy) * 100 == worst
    )
    return (
        f"torch vs sklearn accuracies over {len(gaps)} (layer, setting) pairs: mean |difference| "
        f"{sum(gaps) / len(gaps):.2f} points, largest {worst:.2f} (layer {at[0]}, {at[1]}); identical on "
        f"{sum(g == 0 for g in gaps)}"
    )


def bench_real_fitters(source_dir: str | None, limit_train: int, limit_eval: int, device: str) -> None:
    from scrambled_bench.probing.run import run_probe

    with tempfile.TemporaryDirectory() as folder:
        options = {
            "types": ["original", "rs100"], "limit_train": limit_train, "limit_eval": limit_eval,
            "device": "auto" if device.startswith("cuda") else device, "run_dir": folder,
            "source_dir": source_dir or source_mirror(),
        }  # fmt: skip
        results = {fitter: run_probe(**options, fitter=fitter) for fitter in ("sklearn", "torch")}
    timing = {name: result.info["timing"] for name, result in results.items()}
    print(
        f"real features ({limit_train} train + {limit_eval} eval questions per setting, original and rs100; "
        f"extraction {timing['sklearn']['extract_seconds']:.0f} s): fits took {timing['sklearn']['fit_seconds']:.1f} s "
        f"(sklearn) and {timing['torch']['fit_seconds']:.1f} s (torch on {results['torch'].info['probe']['fit_device']})"
    )
    print("  " + compare_fitters(results["sklearn"].layers, results["torch"].layers))
    for a, b in zip(results["sklearn"].layers, results["torch"].layers, strict=True):
        cells = ", ".join(
            f"{name} {a.scores[name].accuracy * 100:.1f}/{b.scores[name].accuracy * 100:.1f}"
            for name in a.scores
        )
        print(f"  layer {a.layer:>2}: {cells} (sklearn/torch, %)")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--device", default="cpu", help="cpu or cuda: the extraction, and the torch fitter")
    parser.add_argument("--full", action="store_true", help="the probe's --full sizes (see above)")
    parser.add_argument("--source-dir", default=None, help="DREAM mirror <owner>/<repo>/<path>")
    parser.add_argument("--samples", type=int, default=32, help="prompts per batch size")
    parser.add_argument("--batch-sizes", default="1,8,32")
    parser.add_argument("--train-per-type", type=int, default=1000)
    parser.add_argument("--eval-per-type", type=int, default=500)
    parser.add_argument("--layers", type=int, default=4, help="layers fitted (then twice as many)")
    parser.add_argument("--fitters", default="sklearn,torch", help="comma-separated: sklearn, torch")
    parser.add_argument("--real-limits", default="", help="TRAIN,EVAL: also the real probe by both fitters")
    parser.add_argument("--skip-extraction", action="store_true")
    parser.add_argument("--skip-fitting", action="store_true")
    add_smoke_flag(parser)
    args = parser.parse_args()
    if args.full:
        args.train_per_type, args.eval_per_type = FULL_TRAIN, FULL_EVAL
        args.samples, args.batch_sizes = 2048, "32,64,128"
    if args.smoke:
        args.samples, args.batch_sizes, args.train_per_type, args.eval_per_type, args.layers = (
            4,
            "1,2",
            30,
            12,
            1,
        )
    if not args.skip_extraction and args.source_dir is None and not source_mirror():
        skip(
            "the extraction reads DREAM: give --source-dir, or set SCRAMBLED_BENCH_SOURCE_DIR or SCRAMBLED_BENCH_SHARED"
        )
    from scrambled_bench.quiet import quiet_libraries

    # other processes share these cores: the load average says how much of them this run could have
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} CPUs")
    fitters = [name.strip() for name in args.fitters.split(",") if name.strip()]
    fits = rate = None
    with quiet_libraries():
        if not args.skip_fitting:
            fits = bench_fitting(
                args.train_per_type, args.eval_per_type, args.layers, fitters, args.device, args.full
            )
        if not args.skip_extraction:
            rate = bench_extraction(
                args.source_dir, args.samples, [int(b) for b in args.batch_sizes.split(",")], args.device
            )
        if args.real_limits:
            limit_train, limit_eval = (int(v) for v in args.real_limits.split(","))
            bench_real_fitters(args.source_dir, limit_train, limit_eval, args.device)
    if args.full and fits is not None and rate:
        prompts = 7 * (FULL_TRAIN + FULL_EVAL)
        print(
            f"probe --full estimate: {prompts:,} prompts at {rate:.1f} samples/s = {prompts / rate / 60:.1f} min of "
            f"extraction, {fits / 60:.1f} min of fits (the fastest fitter, 31 layers)"
        )
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak resident memory of this process: {peak_kib / 2**10:.0f} MiB ({sys.platform})")


if __name__ == "__main__":
    main()
