"""Builder performance: words scrambled per second, wall time of the full build, memory as input grows.

Usage (prints figures; asserts nothing)::

    python benchmarks/bench_builder.py [--source-dir DIR] [--repeat 3]

The mirror defaults to ``$SCRAMBLED_BENCH_SOURCE_DIR``, else ``$SCRAMBLED_BENCH_SHARED/data/sources``,
else the small hand-made fixtures of ``tests/builder`` (then the figures are only indicative).

Memory: the same build runs on a mirror whose AQuA test file holds the upstream problems once (1x) and
four and sixteen times (4x, 16x), each in a fresh process, measuring Python's peak traced allocation (tracemalloc) and
the process's peak RSS. Flat memory means the 16x peak stays close to the 1x peak rather than growing
with the input: rows are scrambled and written in batches of ``ROWS_PER_GROUP``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from support import add_smoke_flag, repo_file, source_mirror

FIXTURES = repo_file("tests/builder/fixtures/sources")
#: the families timed word by word (``--smoke``: the first two)
WORD_TYPES = ("rs100", "kf", "kfl", "kr2", "klkr1", "kfkr1", "sub", "adj100", "ins100", "del100", "rep100")


def default_mirror() -> Path:
    """This machine's source mirror, else the small hand-made fixtures of ``tests/builder``."""
    return source_mirror() or FIXTURES


def words_per_second(
    mirror: Path, repeat: int, types: tuple[str, ...] = WORD_TYPES
) -> list[tuple[str, int, float]]:
    """(family, words, words/s) over every context of the three sources, per type family."""
    from scrambled_bench.builder.scrambler import WORD_PATTERN, scramble
    from scrambled_bench.builder.sources import aqua, dream, realtimeqa
    from scrambled_bench.builder.sources.fetch import SourceReader

    reader = SourceReader(mirror=mirror)
    records = [r for module in (realtimeqa, dream, aqua) for r in module.load(reader).records]
    texts = [(r.fields["original"], r.scramble_key) for r in records]
    word_count = sum(len(WORD_PATTERN.findall(text)) for text, _ in texts)
    results = []
    for scramble_type in types:
        timings = []
        for _ in range(repeat):
            started = time.perf_counter()
            for text, key in texts:
                scramble(text, scramble_type, seed=0, sample_id=key, place="text")
            timings.append(time.perf_counter() - started)
        results.append((scramble_type, word_count, word_count / statistics.median(timings)))
    return results


def build_seconds(mirror: Path, types: list[str], repeat: int) -> float:
    from scrambled_bench.builder.build import build_dataset

    timings = []
    with tempfile.TemporaryDirectory() as scratch:
        for index in range(repeat):
            started = time.perf_counter()
            build_dataset(Path(scratch) / f"b{index}", types=types, source_dir=mirror)
            timings.append(time.perf_counter() - started)
    return statistics.median(timings)


MEMORY_PROBE = """
import json, resource, sys, tracemalloc
from pathlib import Path
import pyarrow.parquet  # imported before tracing: the figure is the build's data, not library code
from scrambled_bench.builder.build import build_dataset
tracemalloc.start()
build_dataset(Path(sys.argv[1]), sources=["aqua"], types=["all"], source_dir=Path(sys.argv[2]))
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"traced_peak_mb": peak / 1e6, "rss_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3}))
"""


def memory_growth(mirror: Path, factors: tuple[int, ...] = (1, 4, 16)) -> list[tuple[int, int, dict]]:
    """Peak memory of an AQuA build (every type) on 1x, 4x and 16x copies of the test problems."""
    results = []
    upstream = (mirror / "google-deepmind" / "AQuA" / "test.json").read_text(encoding="utf-8").splitlines()
    with tempfile.TemporaryDirectory() as scratch:
        for factor in factors:
            grown = Path(scratch) / f"mirror{factor}" / "google-deepmind" / "AQuA"
            grown.mkdir(parents=True)
            (grown / "test.json").write_text("\n".join(upstream * factor) + "\n", encoding="utf-8")
            out = Path(scratch) / f"out{factor}"
            probe = subprocess.run(
                [sys.executable, "-c", MEMORY_PROBE, str(out), str(grown.parent.parent)],
                capture_output=True,
                text=True,
                check=True,
            )
            results.append((factor, len(upstream) * factor, json.loads(probe.stdout)))
            shutil.rmtree(out, ignore_errors=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source-dir", type=Path, default=None, help="upstream mirror <owner>/<repo>/<path>")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (the median is printed)")
    add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.repeat = 1
    mirror = args.source_dir or default_mirror()
    print(f"mirror: {mirror}{'  (hand-made fixtures: indicative only)' if mirror == FIXTURES else ''}")
    print(f"cpu cores: {os.cpu_count()}, python {sys.version.split()[0]}")

    print("\nwords scrambled per second (every RealtimeQA/DREAM/AQuA context, median of runs)")
    word_types = WORD_TYPES[:2] if args.smoke else WORD_TYPES
    for scramble_type, words, rate in words_per_second(mirror, args.repeat, word_types):
        print(f"  {scramble_type:7s} {words:>8,d} words  {rate:>12,.0f} words/s")

    from scrambled_bench.builder.build import ALL_TYPES, DEFAULT_TYPES

    default = build_seconds(mirror, list(DEFAULT_TYPES), args.repeat)
    print(
        f"\nfull default build ({3 * len(DEFAULT_TYPES)} configs): {default:.2f} s wall (median of {args.repeat})"
    )
    if not args.smoke:
        every = build_seconds(mirror, list(ALL_TYPES), 1)
        print(f"full build of every shipped type ({3 * len(ALL_TYPES)} configs): {every:.2f} s wall")

    print("\nmemory as the input grows (AQuA, every type, fresh process each)")
    for factor, rows, figures in memory_growth(mirror, (1,) if args.smoke else (1, 4, 16)):
        print(
            f"  {factor}x input ({rows:>5,d} problems): traced peak {figures['traced_peak_mb']:6.1f} MB, "
            f"process peak RSS {figures['rss_peak_mb']:6.1f} MB"
        )


if __name__ == "__main__":
    main()
