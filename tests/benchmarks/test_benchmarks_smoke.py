"""Every benchmark still runs and prints its figures (``--smoke``: tiny sizes, seconds).

The figures are not checked against any target here: performance is judged by running the benchmarks in
full on a quiet machine. This test only keeps them from rotting silently, as two did when a test server they
start moved (they printed "the fixed-delay server did not start" and measured nothing).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from scrambled_bench.io import shared_data_dir

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SKIPPED = "skipped:"  # benchmarks/support.py: how a benchmark says it cannot run here
SMOKE_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class Benchmark:
    #: a line of figures the smoke run must print
    figures: str
    #: it reads the developers' data mirror (../shared): skipped with that reason where it is absent
    needs_shared: bool = False


BENCHMARK_FIGURES = {
    "bench_ci.py": Benchmark(r"ratio after/before: [\d.]+", needs_shared=True),
    "bench_test_cpu.py": Benchmark(
        r"the process tree's CPU: [\d.]+ s, \d+% of wall[\s\S]*pytest \(controller\) +1 +[\d.]+"
        r"[\s\S]*the costliest \d+ test modules by CPU[^\n]*\n +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+  tests/"
    ),
    "bench_dequantise.py": Benchmark(
        r"ratio read once / stock: [\d.]+[\s\S]*the same metadata both ways: yes"
    ),
    "bench_builder.py": Benchmark(r"full default build \(\d+ configs\): [\d.]+ s wall"),
    "bench_scramble.py": Benchmark(r"ratio loop/build: [\d.]+ wall"),
    "bench_metrics.py": Benchmark(r"x[\d,]+ the Python DP", needs_shared=True),
    "bench_readers.py": Benchmark(r"judged samples, all +\d+ +[\d,]+ +[\d,]+ +[\d,]+"),
    "bench_probe.py": Benchmark(
        r"torch vs sklearn accuracies[\s\S]*batch +1: +[\d.]+ samples/s", needs_shared=True
    ),
    "bench_interrupt.py": Benchmark(r"cancelled after [\d.]+ s: stopped [\d.]+ s later"),
    "bench_embedded.py": Benchmark(r"\d+ samples in [\d.]+ s = [\d.]+ samples/s", needs_shared=True),
    "bench_transformers_batch.py": Benchmark(
        r"from the cache = \d+% of the first[\s\S]*batch +2: backend +[\d.]+ samples/s[\s\S]*backend / raw: [\d.]+x"
    ),
    "bench_token_estimate.py": Benchmark(r"worst \|error\| per type +[\d.]+%"),
    "bench_client_overhead.py": Benchmark(r"\d+\.\d+%\s+[\d.]+\s+aiohttp"),
    "bench_concurrency_speedup.py": Benchmark(r"speed-up\s+[\d.]+x"),
    "bench_server_determinism.py": Benchmark(r"concurrency 1, another order\s+\d+ of \d+ differ"),
    "bench_harness_throughput.py": Benchmark(
        r"\brun\s+[\d.]+\s+[\d.]+%[\s\S]*run reaches [\d.]+% of the reference client"
    ),
}


def test_every_benchmark_has_a_smoke_check() -> None:
    """A new benchmark joins the table above (and so the smoke run) or this fails."""
    assert sorted(p.name for p in BENCHMARKS.glob("bench_*.py")) == sorted(BENCHMARK_FIGURES)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BENCHMARK_FIGURES))
def test_the_benchmark_runs_and_prints_its_figures(name: str, tmp_path: Path) -> None:
    benchmark = BENCHMARK_FIGURES[name]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    shared = shared_data_dir()
    if benchmark.needs_shared:
        if shared is None:
            pytest.skip("needs the developers' data mirror: set SCRAMBLED_BENCH_SHARED to ../shared")
        env.setdefault("SCRAMBLED_BENCH_SOURCE_DIR", str(shared / "sources"))
    process = subprocess.run(
        [sys.executable, str(BENCHMARKS / name), "--smoke"],
        check=False,
        cwd=tmp_path,  # a benchmark finds its helpers from its own path, not from where it is started
        env=env,
        capture_output=True,
        text=True,
        timeout=SMOKE_TIMEOUT_SECONDS,
    )
    output = process.stdout + process.stderr
    assert process.returncode == 0, f"{name} --smoke exited {process.returncode}:\n{output[-3000:]}"
    if process.stdout.startswith(SKIPPED):
        pytest.skip(f"{name}: {process.stdout.strip()}")
    assert re.search(benchmark.figures, output), f"{name} --smoke printed no figures:\n{output[-3000:]}"
