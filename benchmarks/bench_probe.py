"""The hidden-state probe's costs (``scrambled-bench probe``): figures, not pass/fail.

    python benchmarks/bench_probe.py [--source-dir DIR] [--samples 32] [--batch-sizes 1,8,32]
                                     [--train-per-type 1000] [--eval-per-type 500] [--layers 4]

1. extraction: samples/s and prompt tokens/s of the last-token hidden states (all 31 states of the embedded
   SmolLM2-135M-Instruct, transformers on CPU, float32) at each batch size, on the same DREAM prompts
   (half original, half rs100; the mirror comes from --source-dir or SCRAMBLED_BENCH_SOURCE_DIR);
2. probe fitting: synthetic float16 features for the paper's seven settings written to a real feature
   cache, then one probe per layer streamed from it: seconds per layer (loading + fit + bootstrap), and the
   peak memory the fit allocates (tracemalloc) for N and 2N layers, which should be the same;
3. the process's peak resident memory.
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


def bench_extraction(source_dir: str | None, samples: int, batch_sizes: list[int]) -> None:
    from scrambled_bench.builder.sources.fetch import SourceReader, resolve_source_dir
    from scrambled_bench.probing.data import EVAL_SPLITS, probe_prompt, read_questions, select_questions
    from scrambled_bench.probing.features import (
        forward_batch,
        length_sorted_batches,
        load_model,
        token_lengths,
    )

    started = time.perf_counter()
    loaded = load_model(device="cpu")
    print(
        f"model {loaded.name}: {loaded.n_states} hidden states x {loaded.hidden_size}, {loaded.dtype} on "
        f"{loaded.device}, loaded in {time.perf_counter() - started:.1f} s ({os.cpu_count()} CPUs)"
    )
    reader = SourceReader(mirror=resolve_source_dir(Path(source_dir) if source_dir else source_mirror()))
    questions = select_questions(read_questions(reader, EVAL_SPLITS), samples // 2 + samples % 2, seed=0)
    texts = [probe_prompt(q, t, seed=0) for t in ("original", "rs100") for q in questions][:samples]
    lengths = token_lengths(loaded, texts)
    print(
        f"extraction: {len(texts)} DREAM prompts (original + rs100), "
        f"{sum(lengths) / len(texts):.0f} tokens on average"
    )
    forward_batch(loaded, texts[:1])  # warm-up: the first call pays for lazy initialisation
    for batch_size in batch_sizes:
        began = time.perf_counter()
        for batch in length_sorted_batches(lengths, batch_size):
            forward_batch(loaded, [texts[i] for i in batch])
        wall = time.perf_counter() - began
        print(
            f"  batch {batch_size:>3}: {len(texts) / wall:6.2f} samples/s, "
            f"{sum(lengths) / wall:7.0f} tokens/s "
            f"({wall:.1f} s)"
        )


def bench_fitting(train_per_type: int, eval_per_type: int, layers: int) -> None:
    import numpy as np

    from scrambled_bench.probing.data import DEFAULT_TYPES, ProbeQuestion
    from scrambled_bench.probing.features import FeatureCache
    from scrambled_bench.probing.probes import fit_probes
    from scrambled_bench.probing.run import layer_data_loader

    n_states, hidden = 31, 576
    rng = np.random.default_rng(0)

    def questions(split: str, n: int) -> list[ProbeQuestion]:
        return [ProbeQuestion(f"{split}/q/{i}", split, "", "", ("a", "b", "c"), i % 3, "") for i in range(n)]

    train, evaluation = questions("train", train_per_type), questions("dev", eval_per_type)
    with tempfile.TemporaryDirectory() as folder:
        cache = FeatureCache(Path(folder))
        began = time.perf_counter()
        for scramble_type in DEFAULT_TYPES:
            for split, members in (("train", train), ("dev", evaluation)):
                for start in range(0, len(members), 256):
                    chunk = members[start : start + 256]
                    states = rng.normal(size=(n_states, len(chunk), hidden)).astype(np.float16)
                    cache.write_shard(scramble_type, split, [q.id for q in chunk], states)
        size = sum(p.stat().st_size for p in Path(folder).rglob("*.safetensors"))
        print(
            f"fitting: {len(DEFAULT_TYPES)} settings x ({train_per_type} train + {eval_per_type} eval) "
            f"synthetic features, {size / 2**20:.0f} MiB of float16 shards written in "
            f"{time.perf_counter() - began:.1f} s"
        )
        load = layer_data_loader(FeatureCache(Path(folder)), DEFAULT_TYPES, train, evaluation)
        fit_probes([0], load)  # warm-up: scikit-learn's imports and caches are not the fit's
        peaks = {}
        for count in (layers, 2 * layers):
            tracemalloc.start()
            began = time.perf_counter()
            results = fit_probes(range(count), load)
            wall = time.perf_counter() - began
            peaks[count] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            per_layer = [r.fit_seconds for r in results]
            print(
                f"  {count:>2} layers: {wall / count:.2f} s per layer (min {min(per_layer):.2f}, max "
                f"{max(per_layer):.2f}; {len(train) * len(DEFAULT_TYPES)} training samples x {hidden}), "
                f"peak allocated {peaks[count] / 2**20:.0f} MiB"
            )
        print(
            f"  memory with {2 * layers} layers / with {layers}: {peaks[2 * layers] / peaks[layers]:.2f}x "
            f"(1.00x: it does not grow with the number of layers); 31 layers would take about "
            f"{31 * wall / (2 * layers):.0f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--source-dir", default=None, help="DREAM mirror <owner>/<repo>/<path>")
    parser.add_argument("--samples", type=int, default=32, help="prompts per batch size")
    parser.add_argument("--batch-sizes", default="1,8,32")
    parser.add_argument("--train-per-type", type=int, default=1000)
    parser.add_argument("--eval-per-type", type=int, default=500)
    parser.add_argument("--layers", type=int, default=4, help="layers fitted (then twice as many)")
    parser.add_argument("--skip-extraction", action="store_true")
    parser.add_argument("--skip-fitting", action="store_true")
    add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.samples, args.batch_sizes, args.train_per_type, args.eval_per_type, args.layers = 4, "1,2", 30, 12, 1
    if not args.skip_extraction and args.source_dir is None and not source_mirror():
        skip("the extraction reads DREAM: give --source-dir, or set SCRAMBLED_BENCH_SOURCE_DIR or SCRAMBLED_BENCH_SHARED")
    # other processes share these cores: the load average says how much of them this run could have
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} CPUs")
    if not args.skip_fitting:
        bench_fitting(args.train_per_type, args.eval_per_type, args.layers)
    if not args.skip_extraction:
        bench_extraction(args.source_dir, args.samples, [int(b) for b in args.batch_sizes.split(",")])
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak resident memory of this process: {peak_kib / 2**10:.0f} MiB ({sys.platform})")


if __name__ == "__main__":
    main()
