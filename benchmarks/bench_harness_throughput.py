"""Throughput of `scrambled-bench run` beside lm-evaluation-harness, lighteval and Inspect: the same N ScrQA requests
from each, to the same fixed-delay server, at the same concurrency, measured in one run.

Each harness runs as its own command, as a user would start it: ``run --backend openai``, lm-eval's
``local-chat-completions`` with ``num_concurrent`` on the exported YAML task, lighteval's litellm endpoint
with ``concurrent_requests`` on the exported custom task, and ``inspect eval`` on the exported @tasks through its
OpenAI-compatible provider with ``--max-connections``. The data is a copy of the tiny test build whose
ScrQA DREAM ``original`` and ``sub`` configs (``run`` always sends ScrQA's two anchors) are grown to N
distinct rows between them. A fresh fixed-delay server
(tests/servers/fixed_delay_server.py) serves each command and reports, on the machine's shared monotonic
clock, when the first request arrived and the last answer left; so start-up (imports, task loading) and
scoring are outside the figures:

- req/s: answers over that window; "share" is req/s over concurrency / delay (the ideal);
- CPU ms/req: the harness's processes' CPU over the same window, per answer (sampled every 20 ms);
- peak: the most requests the server had in flight at once.

Beside the harnesses, a reference client (benchmarks/_reference_client.py) sends ``run``'s requests over
kept-alive connections and only reads the bytes back: the most any client gets from this server on this
machine. It is a yardstick, never one of the peers run is compared with. The verdict compares ``run`` with
the fastest peer: at least as fast (run's median is at least the peer's), level (lower, but the ranges of
the repeated runs overlap) or slower.

A harness that fails, answers fewer than N requests, or never reaches the concurrency is reported with its
reason and left out of the comparison at that setting. On a shared machine one run of a harness moves by a
few percent: ``--repeat N`` runs each N times per setting, in rotated order, and shows the median run with
the range. The harnesses are a table (``HARNESSES``): a new one
is one more function that returns its command.

    .venv/bin/python benchmarks/bench_harness_throughput.py                        # N=1000; 0.25 s and 1 s; 64 and 256
    .venv/bin/python benchmarks/bench_harness_throughput.py --harness run --harness lm-eval --concurrency 64
    .venv/bin/python benchmarks/bench_harness_throughput.py --harness run --harness lm-eval --repeat 5   # medians
    .venv/bin/python benchmarks/bench_harness_throughput.py --smoke
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from _local_servers import start_fixed_delay_server, stop
from support import repo_file

from scrambled_bench.evaluation.tasks import TaskConfig

TINY_BUILD = repo_file("tests/fixtures/tiny_build")
#: ScrQA on DREAM at its two anchor types: ``run`` sends both whatever ScrQA type it is given
CONFIGS = (TaskConfig("scrqa", "dream", "original"), TaskConfig("scrqa", "dream", "sub"))
MODEL = "fixed-delay"
MAX_NEW_TOKENS = 16
#: how long one harness may take at one setting
COMMAND_TIMEOUT = 900.0
#: not a harness but the yardstick: run's requests from a client that does nothing else
#: (benchmarks/_reference_client.py); shown, never counted among the peers
REFERENCE = "reference"


@dataclass(frozen=True)
class Workload:
    build: Path
    requests: int
    workdir: Path


@dataclass(frozen=True)
class Command:
    argv: list[str]
    env: dict[str, str]


@dataclass
class Outcome:
    answered: int = 0
    window: float = 0.0
    cpu: float = 0.0
    peak: int = 0
    problem: str | None = None

    def rate(self) -> float:
        return self.answered / self.window if self.window > 0 else 0.0


def harness_env() -> dict[str, str]:
    """Offline, quiet: as tests/evaluation/test_harness_equal_numbers.py runs lm-eval and lighteval."""
    return {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        # litellm fetches a price list from GitHub at import unless told to use its bundled copy
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "TRANSFORMERS_VERBOSITY": "error",
        "TOKENIZERS_PARALLELISM": "false",
    }


def run_selection(work: Workload) -> list[str]:
    """``run``'s options that choose its requests: the same for ``run`` and the reference client."""
    return [
        "--data", str(work.build), "--tasks", "scrqa", "--datasets", "dream",
        "--types", ",".join(c.scramble_type for c in CONFIGS), "--limit", str(work.requests),
        "--max-new-tokens", str(MAX_NEW_TOKENS),
    ]  # fmt: skip


def run_command(work: Workload, root: str, concurrency: int, out: Path) -> Command:
    argv = [
        sys.executable, "-m", "scrambled_bench.evaluate_cli.main", "run", "--backend", "openai",
        "--base-url", root + "/v1", "--model", MODEL, *run_selection(work), "--concurrency", str(concurrency),
        "--no-progress", "--run-dir", str(out / "run"),
    ]  # fmt: skip
    return Command(argv, {**harness_env(), "HF_DATASETS_CACHE": str(out / "datasets_cache")})


def lm_eval_command(work: Workload, root: str, concurrency: int, out: Path) -> Command:
    from scrambled_bench.integrations.exported import ExportedTask
    from scrambled_bench.integrations.lm_eval.bench import DataLocation, task_name, write_tasks

    include = write_tasks(out / "lm_eval_tasks", DataLocation(str(work.build)))
    model_args = (
        f"model={MODEL},base_url={root}/v1/chat/completions,num_concurrent={concurrency},max_retries=1,"
        "tokenized_requests=False"
    )
    argv = [
        sys.executable, "-m", "lm_eval", "run", "--model", "local-chat-completions", "--model_args", model_args,
        "--tasks", ",".join(task_name(ExportedTask(c)) for c in CONFIGS), "--include_path", str(include), "--apply_chat_template",
        "--gen_kwargs", f"max_gen_toks={MAX_NEW_TOKENS}", "--output_path", str(out / "lm_eval_out"),
    ]  # fmt: skip
    return Command(argv, {**harness_env(), "HF_DATASETS_CACHE": str(out / "datasets_cache")})


def lighteval_command(work: Workload, root: str, concurrency: int, out: Path) -> Command:
    from scrambled_bench.integrations.exported import ExportedTask
    from scrambled_bench.integrations.lighteval import task_name as lighteval_name

    model_args = (
        f"model_name=openai/{MODEL},base_url={root}/v1,api_key=sk-no-key-required,max_model_length=2048,"
        f"concurrent_requests={concurrency},cache_dir={out / 'lighteval_cache'},"
        "generation_parameters={temperature:0.0}"
    )
    argv = [
        sys.executable, "-m", "scrambled_bench.integrations.lighteval.cli", "endpoint", "litellm", model_args,
        ",".join(lighteval_name(ExportedTask(c)) for c in CONFIGS), "--custom-tasks", "scrambled_bench.integrations.lighteval.bench",
        "--output-dir", str(out / "lighteval_out"),
    ]  # fmt: skip
    env = {
        **harness_env(),
        "HF_DATASETS_CACHE": str(out / "datasets_cache"),
        "SCRAMBLED_BENCH_DATA": str(work.build),
        "SCRAMBLED_BENCH_MAX_NEW_TOKENS": str(MAX_NEW_TOKENS),
    }
    return Command(argv, env)


def inspect_command(work: Workload, root: str, concurrency: int, out: Path) -> Command:
    """Inspect's OpenAI-compatible provider (``openai-api/<service>/<model>``) on the exported @tasks."""
    from scrambled_bench.integrations.exported import ExportedTask

    argv = [
        str(Path(sys.executable).parent / "inspect"), "eval", *(f"scrambled_bench/{ExportedTask(c).slug}" for c in CONFIGS),
        "--model", f"openai-api/bench/{MODEL}", "-T", f"data={work.build}", "--max-tokens", str(MAX_NEW_TOKENS),
        "--max-connections", str(concurrency), "--log-dir", str(out / "inspect_logs"), "--display", "none",
    ]  # fmt: skip
    env = {
        **harness_env(),
        "HF_DATASETS_CACHE": str(out / "datasets_cache"),
        "BENCH_BASE_URL": root + "/v1",
        "BENCH_API_KEY": "sk-no-key-required",
    }
    return Command(argv, env)


def reference_command(work: Workload, root: str, concurrency: int, out: Path) -> Command:
    """benchmarks/_reference_client.py: ``run``'s requests (planned from the same options) from a client that
    only sends them and reads the bytes back, the most any client gets from this server here."""
    argv = [
        sys.executable, str(repo_file("benchmarks/_reference_client.py")), "--base-url", root + "/v1",
        "--model", MODEL, "--concurrency", str(concurrency), *run_selection(work),
    ]  # fmt: skip
    return Command(argv, {**harness_env(), "HF_DATASETS_CACHE": str(out / "datasets_cache")})


#: harness name -> its command for (workload, server root, concurrency, its own output folder)
HARNESSES: dict[str, Callable[[Workload, str, int, Path], Command]] = {
    "run": run_command,
    "lm-eval": lm_eval_command,
    "lighteval": lighteval_command,
    "inspect": inspect_command,
    REFERENCE: reference_command,
}


def grow_build(folder: Path, rows: int) -> Path:
    """A copy of the tiny build whose configs in :data:`CONFIGS` have ``rows`` distinct rows between them
    (the tiny rows repeated, each question numbered so every prompt differs), their manifest entries
    updated to match."""
    build = folder / "build"
    shutil.copytree(TINY_BUILD, build)
    manifest_path = build / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for position, config in enumerate(CONFIGS):
        name = f"{config.dataset}_{config.scramble_type}"
        data = build / name / "test.jsonl"
        seeds = [json.loads(line) for line in data.read_text().splitlines() if line.strip()]
        count = rows // len(CONFIGS) + (position < rows % len(CONFIGS))
        grown = []
        for index in range(count):
            row = dict(seeds[index % len(seeds)])
            row["id"] = f"{config.dataset}-bench-{index}"
            row["question"] = f"{row['question']} (question {index})"
            grown.append(json.dumps(row, ensure_ascii=False))
        data.write_text("\n".join(grown) + "\n")
        entry = manifest["outputs"][f"{name}/test.jsonl"]
        entry["rows"], entry["sha256"] = count, hashlib.sha256(data.read_bytes()).hexdigest()
    manifest_path.write_text(json.dumps(manifest, indent=2))
    return build


def tree_cpu(pid: int) -> float:
    """CPU seconds of a process, its live descendants and the children it has waited for."""
    import psutil

    try:
        process = psutil.Process(pid)
        times = process.cpu_times()
        total = times.user + times.system + times.children_user + times.children_system
        for child in process.children(recursive=True):
            try:
                child_times = child.cpu_times()
                total += child_times.user + child_times.system
            except psutil.Error:
                pass
        return total
    except psutil.Error:
        return float("nan")


def cpu_at(samples: list[tuple[float, float]], moment: float) -> float:
    """The CPU reading at ``moment``, interpolated between the samples around it.

    >>> cpu_at([(0.0, 1.0), (1.0, 3.0)], 0.5)
    2.0
    """
    before = max((s for s in samples if s[0] <= moment), default=samples[0])
    after = min((s for s in samples if s[0] >= moment), default=samples[-1])
    if after[0] == before[0]:
        return before[1]
    return before[1] + (after[1] - before[1]) * (moment - before[0]) / (after[0] - before[0])


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def measure(name: str, work: Workload, concurrency: int, delay: float, attempt: int = 0) -> Outcome:
    """Run one harness against a fresh fixed-delay server; what it answered, over which window, at what CPU."""
    out = work.workdir / f"{name}-{concurrency}-{delay:g}-{attempt}"
    out.mkdir(parents=True)
    server, root = start_fixed_delay_server(delay)
    log = out / "log.txt"
    try:
        command = HARNESSES[name](work, root, concurrency, out)
        samples: list[tuple[float, float]] = []
        with log.open("w") as handle:
            process = subprocess.Popen(
                command.argv, env=command.env, cwd=out, stdout=handle, stderr=subprocess.STDOUT
            )
            stop_sampling = threading.Event()

            def sample() -> None:
                while not stop_sampling.is_set():
                    reading = tree_cpu(process.pid)
                    if not math.isnan(reading):  # the process is still there
                        samples.append((time.monotonic(), reading))
                    stop_sampling.wait(0.02)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            try:
                code = process.wait(timeout=COMMAND_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                code = None
            stop_sampling.set()
            sampler.join()
        stats = get_json(root + "/_stats")
    finally:
        stop(server)
    outcome = Outcome(answered=stats["answered"], peak=stats["peak_in_flight"])
    if stats["first_arrival"] is not None and stats["last_answer"] is not None and samples:
        outcome.window = stats["last_answer"] - stats["first_arrival"]
        outcome.cpu = cpu_at(samples, stats["last_answer"]) - cpu_at(samples, stats["first_arrival"])
    if code is None:
        outcome.problem = f"did not finish within {COMMAND_TIMEOUT:g} s"
    elif code != 0:
        tail = [line for line in log.read_text(errors="replace").splitlines() if line.strip()][-1:]
        outcome.problem = f"exit {code}: {tail[0][:160] if tail else 'no output'} (log: {log})"
    elif (races := log.read_text(errors="replace").count("ImportError")) and name == "lighteval":
        outcome.problem = f"{races} ImportError(s) in its log: litellm's lazy imports raced (log: {log})"
    elif stats["requests"] != work.requests:
        outcome.problem = f"sent {stats['requests']} requests for {work.requests} rows (log: {log})"
    elif outcome.peak < 0.9 * min(concurrency, work.requests):
        outcome.problem = f"never more than {outcome.peak} in flight"
    return outcome


def measure_repeated(
    names: list[str], work: Workload, concurrency: int, delay: float, repeat: int
) -> dict[str, list[Outcome]]:
    """Each harness ``repeat`` times at one setting, the order rotated every round so that no harness always
    runs first (or right after the heaviest one) on a machine whose load drifts."""
    outcomes: dict[str, list[Outcome]] = {name: [] for name in names}
    for attempt in range(repeat):
        shift = attempt % len(names)
        for name in names[shift:] + names[:shift]:
            outcomes[name].append(measure(name, work, concurrency, delay, attempt))
    return outcomes


def median_outcome(outcomes: list[Outcome]) -> Outcome:
    """The run at the median rate; the first failed one where any failed (a harness that fails once is
    reported as failing).

    >>> runs = [Outcome(answered=10, peak=4, window=w) for w in (2.0, 1.0, 4.0)]
    >>> median_outcome(runs).window
    2.0
    """
    failed = [outcome for outcome in outcomes if outcome.problem]
    if failed:
        return failed[0]
    return sorted(outcomes, key=Outcome.rate)[len(outcomes) // 2]


def verdict(ours: list[float], fastest: list[float]) -> str:
    """How ``run``'s rates (req/s, one per run) compare with the fastest peer's: "at least as fast as" when
    run's median is at least the peer's; "level with" when it is lower but the two ranges of rates overlap
    (the difference is within what repeating the same run moves); "slower than" otherwise.

    >>> verdict([240.0, 242.0, 241.0], [239.0, 241.5, 240.0])
    'at least as fast as'
    >>> verdict([238.4, 240.5, 242.1], [235.5, 240.6, 243.8])
    'level with'
    >>> verdict([230.0], [240.0])
    'slower than'
    """
    # median_high: the run median_outcome shows
    if statistics.median_high(ours) >= statistics.median_high(fastest):
        return "at least as fast as"
    if max(ours) >= min(fastest):
        return "level with"
    return "slower than"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000, help="ScrQA requests per harness (N)")
    parser.add_argument("--concurrency", type=int, action="append", help="repeat (default: 64 and 256)")
    parser.add_argument(
        "--delay", type=float, action="append", help="server delay in s; repeat (default: 0.25, 1)"
    )
    parser.add_argument(
        "--harness", action="append", choices=sorted(HARNESSES), help="repeat (default: all of them)"
    )
    parser.add_argument(
        "--repeat", type=int, default=1,
        help="runs of each harness per setting, in rotated order; the median is shown, with the range",
    )  # fmt: skip
    parser.add_argument("--keep", type=Path, help="keep each command's output and log under this folder")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: 24 requests, 8 in flight, 0.05 s")
    args = parser.parse_args()
    names = args.harness or list(HARNESSES)
    if args.smoke:
        # lm-eval and lighteval take a minute or more each just to start on a busy 2-core machine: the
        # smoke run times `run` and the reference client unless --harness names others
        names = args.harness or ["run", REFERENCE]
        args.requests, settings = 24, [(8, 0.05)]
    else:
        settings = [(c, d) for d in args.delay or [0.25, 1.0] for c in args.concurrency or [64, 256]]

    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        work = Workload(
            grow_build(Path(tempfile.mkdtemp(dir=workdir)), args.requests), args.requests, workdir
        )
        print(
            f"{args.requests} ScrQA requests ({', '.join(c.name for c in CONFIGS)}; {MAX_NEW_TOKENS} new tokens) per harness "
            "to the fixed-delay server, timed at the server from the first request to the last answer"
        )
        header = f"{'delay':>6} {'in flight':>9} {'harness':<10} {'req/s':>7} {'share':>6} {'CPU ms/req':>10} {'peak':>5}  run's ratio / note"
        print(header)
        for concurrency, delay in settings:
            repeated = measure_repeated(names, work, concurrency, delay, max(1, args.repeat))
            outcomes = {name: median_outcome(runs) for name, runs in repeated.items()}
            ideal = concurrency / delay
            ours = outcomes.get("run")
            for name, outcome in outcomes.items():
                if outcome.problem:
                    note = f"not compared: {outcome.problem}"
                elif name == "run" or ours is None or ours.problem:
                    note = ""
                else:
                    note = f"run is {ours.rate() / outcome.rate():.3f}x"
                cpu = outcome.cpu / outcome.answered * 1000 if outcome.answered else float("nan")
                if len(repeated[name]) > 1 and not outcome.problem:
                    rates = sorted(run.rate() for run in repeated[name])
                    note = f"{note}{'; ' if note else ''}median of {len(rates)}: {rates[0]:.1f}-{rates[-1]:.1f} req/s"
                print(
                    f"{delay:>5g}s {concurrency:>9} {name:<10} {outcome.rate():>7.1f} {outcome.rate() / ideal:>6.1%} "
                    f"{cpu:>10.2f} {outcome.peak:>5}  {note}"
                )
            peers = {n: o for n, o in outcomes.items() if n not in ("run", REFERENCE) and not o.problem}
            if ours is not None and not ours.problem and peers:
                fastest = max(peers, key=lambda n: peers[n].rate())
                said = verdict([o.rate() for o in repeated["run"]], [o.rate() for o in repeated[fastest]])
                ranges = " (ranges of the runs overlap)" if said == "level with" else ""
                print(
                    f"{'':>17} run is {said} the fastest other harness here, {fastest} "
                    f"({ours.rate() / peers[fastest].rate():.3f}x){ranges}"
                )
            reference = outcomes.get(REFERENCE)
            if ours is not None and not ours.problem and reference is not None and not reference.problem:
                print(
                    f"{'':>17} run reaches {ours.rate() / reference.rate():.1%} of the reference client "
                    "(run's requests, sent and read back and nothing else)"
                )
    print("ideal = concurrency / delay; the server and every harness share this machine's cores.")


if __name__ == "__main__":
    main()
