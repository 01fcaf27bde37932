"""Scrambling speed and memory: the build against the paper's own loop, ``scramble`` and the datatrove step.

Usage (prints figures; asserts nothing)::

    python benchmarks/bench_scramble.py [--source-dir DIR] [--repeat 5] [--skip-datatrove]

Figures:

1. **Full default build vs the paper's bare loop.** The paper's data were made by ``create.py`` calling the
   functions of ``process.py`` (github.com/ccqq77/unnatural-error-correction): per source, ten stepwise
   random-scramble passes (rs10..rs100, each pass re-splitting the previous pass's text with
   ``re.split(r"(\\W)")``, choosing 10 % more of the words with two or more letters and shuffling each
   chosen word so that it differs), then keep-first, keep-first-last and substitution passes, each followed
   by the whitespace clean-up it applies. ``paper_loop`` below **reimplements that loop from this
   description** (it is not their code, and nothing of it is in the package); it writes nothing. The build
   does all of that and more: 30 configs (10 types x 3 sources) as zstd parquet, the dataset card and the
   manifest with the sha256 of every file. Both run on the same texts (the three sources' originals),
   interleaved, in one process; the medians are compared. A ratio loop/build >= 1 means the build is faster.
2. **Words per second per core** of the package's word functions against the reimplemented paper functions,
   one process, on the same texts.
3. **``scramble --num-proc 1/2``**: wall time of the command on a corpus of the same texts, non-streaming
   (``datasets.map``) and streaming (the bounded process pool).
4. **Streaming memory at 1x/4x/16x input**: ``scramble --streaming`` on JSON Lines of the texts repeated,
   each in a fresh process: peak RSS, Python's peak traced allocation (reached while datasets infers the
   JSON schema from its first block), and the highest live traced memory after any batch is written. Flat
   means the 16x figures stay near the 1x ones.
5. **datatrove**: the local executor's throughput with ``ScrambleStep`` (reader -> step -> writer).

The mirror defaults to ``$SCRAMBLED_BENCH_SOURCE_DIR``, else ``$SCRAMBLED_BENCH_SHARED/data/sources``, else
the hand-made fixtures of ``tests/builder`` (then the figures are only indicative). Other work on the
machine moves absolute times; the ratios are measured in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bench_builder import FIXTURES, default_mirror  # the same source mirror as the build benchmark
from support import add_smoke_flag

#: texts the smoke run keeps (the first of the mirror's)
SMOKE_TEXTS = 200

WORD = re.compile(r"\w+")


def source_texts(mirror: Path) -> list[tuple[str, str]]:
    """(original text, scramble key) of every record the build scrambles."""
    from scrambled_bench.builder.sources import aqua, dream, realtimeqa
    from scrambled_bench.builder.sources.fetch import SourceReader

    reader = SourceReader(mirror=mirror)
    return [
        (record.fields["original"], record.scramble_key)
        for module in (realtimeqa, dream, aqua)
        for record in module.load(reader).records
    ]


# --------------------------------------------------------------------------------------------------
# The paper's loop, reimplemented from the description of process.py/create.py (see the module docstring)
# --------------------------------------------------------------------------------------------------

PAPER_SPLIT = re.compile(r"(\W)")


def _shuffle_not_identity(items: list[str]) -> None:
    """Fisher-Yates in which one randomly chosen step draws strictly below its index: never the identity."""
    forced = random.randrange(1, len(items))
    for index in range(len(items) - 1, 0, -1):
        other = int(random.random() * index) if index == forced else int(random.random() * (index + 1))
        items[index], items[other] = items[other], items[index]


def _refill(word: str, letters: Sequence[str]) -> str:
    it = iter(letters)
    return "".join(next(it) if char.isalpha() else char for char in word)


def paper_random(word: str) -> str:
    letters = [char for char in word if char.isalpha()]
    if len(letters) < 2:
        return word
    _shuffle_not_identity(letters)
    return _refill(word, letters)


def paper_keep_first(word: str) -> str:
    letters = [char for char in word if char.isalpha()]
    if len(letters) < 3:
        return word
    rest = letters[1:]
    _shuffle_not_identity(rest)
    return _refill(word, [letters[0], *rest])


def paper_keep_first_last(word: str) -> str:
    letters = [char for char in word if char.isalpha()]
    if len(letters) < 4:
        return word
    inner = letters[1:-1]
    _shuffle_not_identity(inner)
    return _refill(word, [letters[0], *inner, letters[-1]])


def paper_substitute(word: str) -> str:
    letters = [char for char in word if char.isalpha()]
    if len(letters) < 2:
        return word
    return _refill(word, [random.choice(string.ascii_letters.replace(char, "")) for char in letters])


def _tidy(pieces: Sequence[str]) -> str:
    return "\n".join(" ".join(line.split()) for line in "".join(pieces).splitlines())


def _paper_step(text: str, step: int, done: list[int]) -> tuple[str, list[int]]:
    pieces = PAPER_SPLIT.split(text)
    eligible = [index for index, piece in enumerate(pieces) if sum(char.isalpha() for char in piece) > 1]
    size = len(eligible) * 0.1
    remaining = sorted(set(eligible) - set(done))
    chosen = random.sample(remaining, k=round(size * step) - round(size * (step - 1)))
    for index in chosen:
        pieces[index] = paper_random(pieces[index])
    return _tidy(pieces), done + chosen


def paper_loop(texts: Sequence[str], seed: int = 0) -> None:
    """rs10..rs100 stepwise, then kf, kfl and sub over every text, as create.py runs process.py's functions."""
    current, done = list(texts), [[] for _ in texts]
    for step in range(1, 11):
        random.seed(seed)
        results = [_paper_step(text, step, done[index]) for index, text in enumerate(current)]
        current, done = [text for text, _ in results], [ids for _, ids in results]
    for word_function in (paper_keep_first, paper_keep_first_last, paper_substitute):
        random.seed(seed)
        for text in texts:
            _tidy([word_function(piece) for piece in PAPER_SPLIT.split(text)])


# --------------------------------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------------------------------


def _clock(function: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    function()
    return time.perf_counter() - wall, time.process_time() - cpu


def build_against_loop(mirror: Path, texts: Sequence[str], repeat: int) -> dict[str, float]:
    """Median wall and CPU seconds of the full default build and of the paper's loop, interleaved."""
    from scrambled_bench.builder.build import build_dataset

    timings: dict[str, list[tuple[float, float]]] = {"build": [], "loop": []}
    with tempfile.TemporaryDirectory() as scratch:
        build_dataset(Path(scratch) / "warm-up", sources=["aqua"], types=["kfl"], source_dir=mirror)
        for index in range(repeat):
            out = Path(scratch) / f"b{index}"
            timings["build"].append(_clock(lambda out=out: build_dataset(out, source_dir=mirror)))
            timings["loop"].append(_clock(lambda: paper_loop(texts)))
    return {
        f"{name}_{kind}": statistics.median(pair[position] for pair in pairs)
        for name, pairs in timings.items()
        for position, kind in enumerate(("wall", "cpu"))
    }


def words_per_second(texts: Sequence[tuple[str, str]], repeat: int) -> list[tuple[str, float, float]]:
    """(type, package words/s, paper words/s) on one core: every word of every text, one type at a time."""
    from scrambled_bench.builder.scrambler import scramble

    words = sum(len(WORD.findall(text)) for text, _ in texts)
    theirs = {
        "rs100": paper_random,
        "kf": paper_keep_first,
        "kfl": paper_keep_first_last,
        "sub": paper_substitute,
    }
    rows = []
    for scramble_type, paper_function in theirs.items():
        ours, paper = [], []
        for _ in range(repeat):
            ours.append(
                _clock(
                    lambda name=scramble_type: [
                        scramble(t, name, seed=0, sample_id=k, place="text") for t, k in texts
                    ]
                )[1]
            )
            random.seed(0)
            paper.append(
                _clock(
                    lambda f=paper_function: [_tidy([f(p) for p in PAPER_SPLIT.split(t)]) for t, _ in texts]
                )[1]
            )
        rows.append((scramble_type, words / statistics.median(ours), words / statistics.median(paper)))
    return rows


def write_corpus(path: Path, texts: Sequence[tuple[str, str]], copies: int) -> int:
    """JSON Lines of the texts ``copies`` times (ids made unique); the number of rows."""
    rows = 0
    with open(path, "w", encoding="utf-8") as handle:
        for copy in range(copies):
            for text, key in texts:
                handle.write(json.dumps({"id": f"{copy}/{key}", "text": text}, ensure_ascii=False) + "\n")
                rows += 1
    return rows


def _busy(count: int) -> int:
    total = 0
    for index in range(count):
        total += index * index
    return total


def parallel_headroom(count: int = 5_000_000) -> float:
    """The speed-up two processes get on pure Python work on this machine right now (2.0 on two idle cores):
    the ceiling for a --num-proc 2 speed-up while other work shares the cores."""
    from concurrent.futures import ProcessPoolExecutor

    serial, _ = _clock(lambda: [_busy(count) for _ in range(2)])
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_busy, [1, 1]))
        parallel, _ = _clock(lambda: list(pool.map(_busy, [count, count])))
    return serial / parallel


def num_proc_scaling(texts: Sequence[tuple[str, str]], copies: int) -> list[tuple[str, int, float]]:
    """(mode, num_proc, wall seconds) of ``scramble`` to kfl,rs50 on the corpus."""
    from scrambled_bench.builder.scramble import scramble_dataset

    results = []
    with tempfile.TemporaryDirectory() as scratch:
        corpus = Path(scratch) / "corpus.jsonl"
        write_corpus(corpus, texts, copies)
        cache = str(Path(scratch) / "cache")
        scramble_dataset(
            str(corpus), columns=["text"], types=["kfl"], out=Path(scratch) / "warm", cache_dir=cache
        )
        for streaming in (False, True):
            for num_proc in (1, 2):
                out = Path(scratch) / f"out-{streaming}-{num_proc}"
                options = {"num_proc": num_proc, "streaming": streaming}
                wall, _ = _clock(
                    lambda out=out, options=options: scramble_dataset(
                        str(corpus),
                        columns=["text"],
                        types=["kfl", "rs50"],
                        out=out,
                        cache_dir=cache,
                        **options,
                    )
                )
                results.append(("streaming" if streaming else "datasets.map", num_proc, wall))
    return results


MEMORY_PROBE = """
import json, resource, sys, tracemalloc
from pathlib import Path
import datasets, pyarrow.parquet  # imported before tracing: the figure is the data, not library code
from scrambled_bench.builder.scramble import pipeline as module, shards
loop_high = [0]
write = shards.ShardWriter.write
def traced_write(self, table):  # the live Python memory while rows stream through, after each batch
    write(self, table)
    loop_high[0] = max(loop_high[0], tracemalloc.get_traced_memory()[0])
shards.ShardWriter.write = traced_write
tracemalloc.start()
module.scramble_dataset(sys.argv[1], columns=["text"], types=["kfl"], out=Path(sys.argv[2]), streaming=True,
                        cache_dir=sys.argv[3])
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"traced_peak_mb": peak / 1e6, "loop_high_mb": loop_high[0] / 1e6,
                  "rss_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3}))
"""


def streaming_memory(
    texts: Sequence[tuple[str, str]], factors: Sequence[int] = (1, 4, 16)
) -> list[tuple[int, int, dict]]:
    """Peak memory of ``scramble --streaming`` on 1x, 4x and 16x copies of the texts, a fresh process each."""
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for factor in factors:
            corpus = Path(scratch) / f"corpus{factor}.jsonl"
            rows = write_corpus(corpus, texts, factor)
            probe = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    MEMORY_PROBE,
                    str(corpus),
                    str(Path(scratch) / f"out{factor}"),
                    str(Path(scratch) / "cache"),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            results.append((factor, rows, json.loads(probe.stdout.strip().splitlines()[-1])))
    return results


def datatrove_throughput(
    texts: Sequence[tuple[str, str]], copies: int
) -> list[tuple[int, int, float, int, int]]:
    """(tasks, workers, wall seconds, documents, words) of reader -> ScrambleStep(kfl) -> writer, locally."""
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter
    from datatrove.utils.logging import logger

    from scrambled_bench.builder.datatrove_step import ScrambleStep

    logger.remove()  # datatrove logs every task's stats to stderr through loguru; the figures are printed below
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        corpus = Path(scratch) / "corpus"
        corpus.mkdir()
        documents = 0
        for part in range(4):
            documents += write_corpus(corpus / f"part-{part}.jsonl", texts, max(1, copies // 4))
        words = 4 * max(1, copies // 4) * sum(len(WORD.findall(text)) for text, _ in texts)
        for tasks, workers in ((4, 1), (4, 2)):
            run = Path(scratch) / f"run-{tasks}-{workers}"
            executor = LocalPipelineExecutor(
                [JsonlReader(str(corpus), id_key="id"), ScrambleStep("kfl"), JsonlWriter(str(run / "out"))],
                tasks=tasks,
                workers=workers,
                logging_dir=str(run / "logs"),
            )
            wall, _ = _clock(executor.run)
            results.append((tasks, workers, wall, documents, words))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source-dir", type=Path, default=None, help="upstream mirror <owner>/<repo>/<path>")
    parser.add_argument(
        "--repeat", type=int, default=5, help="interleaved runs per timing (the median is printed)"
    )
    parser.add_argument(
        "--copies", type=int, default=8, help="corpus size for 3 and 5, in copies of the texts"
    )
    parser.add_argument("--skip-datatrove", action="store_true")
    add_smoke_flag(parser)
    args = parser.parse_args()
    mirror = args.source_dir or default_mirror()
    texts = source_texts(mirror)
    if args.smoke:
        args.repeat, args.copies, texts = 1, 1, texts[:SMOKE_TEXTS]
    words = sum(len(WORD.findall(text)) for text, _ in texts)
    print(f"mirror: {mirror}{'  (hand-made fixtures: indicative only)' if mirror == FIXTURES else ''}")
    print(
        f"cpu cores: {os.cpu_count()}, python {sys.version.split()[0]}; {len(texts):,} texts, {words:,} words"
    )

    figures = build_against_loop(mirror, [text for text, _ in texts], args.repeat)
    print(
        f"\n1. full default build (30 configs, parquet, card, manifest) vs the paper's bare loop (reimplemented), median of {args.repeat}"
    )
    print(f"   build: {figures['build_wall']:.2f} s wall, {figures['build_cpu']:.2f} s CPU")
    print(f"   loop:  {figures['loop_wall']:.2f} s wall, {figures['loop_cpu']:.2f} s CPU")
    print(
        f"   ratio loop/build: {figures['loop_wall'] / figures['build_wall']:.2f} wall, "
        f"{figures['loop_cpu'] / figures['build_cpu']:.2f} CPU (>= 1: the build is faster)"
    )

    print("\n2. words per second on one core (every word of every text)")
    for scramble_type, ours, paper in words_per_second(texts, args.repeat):
        print(
            f"   {scramble_type:6s} package {ours:>12,.0f}   paper's functions {paper:>12,.0f}   x{ours / paper:.2f}"
        )

    print(
        f"\n3. scramble --types kfl,rs50 on {args.copies}x the texts ({args.copies * len(texts):,} rows), wall seconds"
    )
    busy_count = 50_000 if args.smoke else 5_000_000
    headroom = parallel_headroom(busy_count)
    scaling = num_proc_scaling(texts, args.copies)
    headroom = (headroom + parallel_headroom(busy_count)) / 2
    print(f"   (two processes of pure Python get x{headroom:.2f} on this machine now: the ceiling here)")
    for mode, num_proc, wall in scaling:
        base = next(w for m, n, w in scaling if m == mode and n == 1)
        print(f"   {mode:13s} --num-proc {num_proc}: {wall:6.2f} s  (speed-up x{base / wall:.2f})")

    print("\n4. scramble --streaming memory as the input grows (fresh process each)")
    for factor, rows, memory in streaming_memory(texts, (1,) if args.smoke else (1, 4, 16)):
        print(
            f"   {factor:>2d}x input ({rows:>7,d} rows): peak RSS {memory['rss_peak_mb']:7.1f} MB, "
            f"traced peak {memory['traced_peak_mb']:6.1f} MB, live while streaming {memory['loop_high_mb']:5.1f} MB"
        )

    if args.skip_datatrove:
        return
    try:
        import datatrove  # noqa: F401
    except ImportError:
        print("\n5. datatrove: not installed (pip install 'scrambled-bench[datatrove]')")
        return
    print("\n5. datatrove LocalPipelineExecutor: JsonlReader -> ScrambleStep('kfl') -> JsonlWriter")
    for tasks, workers, wall, documents, words_done in datatrove_throughput(texts, args.copies):
        print(
            f"   {tasks} tasks, {workers} worker(s): {wall:6.2f} s, {documents / wall:>9,.0f} documents/s, "
            f"{words_done / wall:>11,.0f} words/s"
        )


if __name__ == "__main__":
    main()
