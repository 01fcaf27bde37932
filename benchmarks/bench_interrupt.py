"""How fast Ctrl-C stops the embedded backend, and what it waited for before.

    python benchmarks/bench_interrupt.py [--tokens N] [--after S] [--repeat R] [--skip-cli] [--smoke]

1. in-process: a generation of up to N tokens (a raw prompt that counts on, so it runs to N) on the embedded
   SmolLM2-135M-Instruct is cancelled S seconds after it started, as the engine cancels it on SIGINT or a
   timeout; timed from the cancellation to the moment the call gave up. Beside it, the same generation left to
   run: what a cancellation waited for when llama.cpp could not be stopped mid-generation (its remaining
   time);
2. the command: ``scrambled-bench run`` on the test fixture's tiny build, sent SIGINT once the first answer
   is on disk; timed to the moment results.json is written (the run has stopped and written what it had)
   and to the process's exit (which also unloads torch and the rest: slow on a loaded machine).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from support import add_smoke_flag, repo_file

PROMPT = "1, 2, 3, 4, 5,"


def bench_in_process(tokens: int, after: float, repeat: int) -> None:
    from scrambled_bench.evaluation.backends import create_backend
    from scrambled_bench.evaluation.backends.base import GenerationRequest, GenerationSettings

    request = GenerationRequest(
        PROMPT, chat=False, settings=GenerationSettings(max_new_tokens=tokens, temperature=0.0, seed=0)
    )

    async def go() -> tuple[list[float], float, int]:
        backend = create_backend("llama-cpp", n_threads=None)
        try:
            await backend.health_check()  # loads the model
            started = time.perf_counter()
            whole = await backend.generate(request)
            full = time.perf_counter() - started
            stops = []
            for _ in range(repeat):
                call = asyncio.ensure_future(backend.generate(request))
                await asyncio.sleep(after)
                call.cancel()
                cancelled = time.perf_counter()
                try:
                    await call
                except asyncio.CancelledError:
                    pass
                stops.append(time.perf_counter() - cancelled)
            return stops, full, whole.completion_tokens or 0
        finally:
            await backend.aclose()

    stops, full, generated = asyncio.run(go())
    print(f"a generation of {generated} tokens: {full:.2f} s uncancelled ({generated / full:.1f} tokens/s)")
    print(
        f"cancelled after {after:g} s: stopped {statistics.median(stops):.3f} s later (median of {len(stops)}, "
        f"max {max(stops):.3f} s); left to run it had {max(0.0, full - after):.2f} s to go"
    )


def _as_from_a_shell() -> None:
    """SIGINT delivered and handled in the child, as in a command a shell starts in the foreground."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def bench_command(tokens: int) -> None:
    tiny_build = repo_file("tests/fixtures/tiny_build")
    executable = Path(sys.executable).with_name("scrambled-bench")
    with tempfile.TemporaryDirectory() as folder:
        run_dir = Path(folder) / "run"
        command = [str(executable), "run", "--data", str(tiny_build), "--run-dir", str(run_dir), "--no-progress",
                   "--limit", "3", "--max-new-tokens", str(tokens), "--concurrency", "1"]  # fmt: skip
        process = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_as_from_a_shell,  # noqa: PLW1509 - it only resets SIGINT in the child, before exec
        )
        samples = run_dir / "samples.jsonl"
        while process.poll() is None and not (samples.is_file() and samples.read_text().count("\n") >= 1):
            time.sleep(0.02)
        if process.poll() is not None:
            print(f"the run ended before it could be interrupted (exit {process.returncode})")
            return
        process.send_signal(signal.SIGINT)
        sent_wall, sent = time.time(), time.perf_counter()
        _, err = process.communicate(timeout=600)
        exited = time.perf_counter() - sent
        results = run_dir / "results.json"
        if process.returncode != 130 or not results.is_file():
            print(f"the run did not stop as interrupted (exit {process.returncode}): {err.strip()[-300:]}")
            return
        written = results.stat().st_mtime - sent_wall
        totals = json.loads(results.read_text())["totals"]
        print(
            f"scrambled-bench run, SIGINT after the first answer: results.json written {written:.2f} s later "
            f"({totals['n_scored']} of {totals['n_requests']} scored, complete={totals['complete']}), "
            f"exit 130 after {exited:.2f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tokens", type=int, default=1024, help="tokens of the cancelled generation")
    parser.add_argument("--after", type=float, default=1.0, help="seconds before the cancellation")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-cli", action="store_true", help="leave out the command's SIGINT")
    add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.tokens, args.after, args.repeat, args.skip_cli = 8, 0.3, 1, True
    print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    bench_in_process(args.tokens, args.after, args.repeat)
    if not args.skip_cli:
        bench_command(256)


if __name__ == "__main__":
    main()
