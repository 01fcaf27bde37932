"""Where the test suite's CPU goes: every Python process a ``pytest`` run starts, by kind.

    python benchmarks/bench_test_cpu.py [--smoke] [-- PYTEST_ARGS ...]    (default: -n 2, the whole suite)

On 2 cores ``pytest -n 2`` keeps both cores busy for most of its run, so its wall time is bound by the CPU the
tests' processes spend, and only less CPU makes it faster. This shows whose CPU that is: the xdist workers
(the tests that run in-process), the llama.cpp servers the tests start, ``scrambled-bench`` commands run as
subprocesses, lm-eval, lighteval, Inspect, the benchmarks' smoke runs.

How: the run gets a ``sitecustomize`` (on ``PYTHONPATH``, which every subprocess inherits unless a test
clears its environment) that writes, when each Python process exits (or gets SIGTERM), its own user + system
CPU seconds, its wall seconds and its command line. A process killed with SIGKILL writes nothing, and a test
that starts a subprocess with an empty environment is not seen: the table says how much of the whole
process tree's CPU (``RUSAGE_CHILDREN`` once pytest has exited) it accounts for.

Printed: pytest's summary line and wall seconds, then per kind the processes, CPU seconds and share of the
tree's CPU, the tree's CPU beside wall x cores (how busy the cores were), and the costliest single processes.

``--per-test`` also prints the costliest tests and modules by CPU, which ``--durations`` cannot show: under
``pytest -n 2`` a test's wall time depends on what the other worker runs meanwhile, and most of a slow test's
work is done by other processes (a server, a harness, a command). A plugin in each worker records, per test,
the CPU of the worker itself, of the processes it started and reaped during the test, and what its live child
processes (the session's servers and proxies) spent meanwhile. A server started by another worker, or a
grandchild its parent does not reap, is not counted.

``--smoke`` runs one quick test module, in seconds, with ``--per-test``; its figures mean nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from support import REPO, add_smoke_flag

#: the module that records each process; ``SCRAMBLED_BENCH_CPU_LOG`` names the file it appends to
SITECUSTOMIZE = """
import atexit, json, os, resource, signal, sys, time

_log = os.environ.get("SCRAMBLED_BENCH_CPU_LOG")
if _log:
    _started = time.monotonic()

    def _record():
        usage = resource.getrusage(resource.RUSAGE_SELF)
        line = {"ppid": os.getppid(), "cpu": usage.ru_utime + usage.ru_stime,
                "wall": time.monotonic() - _started, "argv": sys.argv[:12]}
        with open(_log, "a") as log:
            log.write(json.dumps(line) + "\\n")

    atexit.register(_record)

    def _on_term(signum, frame):
        _record()
        atexit.unregister(_record)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    try:  # a process that installs its own SIGTERM handler (a server) replaces this one, and exits by atexit
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _on_term)
    except ValueError:  # not the main thread
        pass
"""

#: the pytest plugin of ``--per-test``, loaded in every worker with ``-p``; ``SCRAMBLED_BENCH_CPU_PER_TEST``
#: names the file it appends one line per test to
PER_TEST_PLUGIN = """
import json, os, resource, time

import pytest

_TICK = os.sysconf("SC_CLK_TCK")


def _children():
    # process id -> CPU seconds of this process's live children, started from any of its threads
    found = {}
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as listing:
                pids = listing.read().split()
        except OSError:
            continue
        for pid in pids:
            try:
                with open(f"/proc/{pid}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            found[pid] = (int(fields[11]) + int(fields[12])) / _TICK
    return found


def _cpu(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    log = os.environ["SCRAMBLED_BENCH_CPU_PER_TEST"]
    started, own, reaped, live = time.monotonic(), _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN), _children()
    yield
    ended = _children()
    # a child reaped during the test counts whole in RUSAGE_CHILDREN: take off what it had spent before
    children = _cpu(resource.RUSAGE_CHILDREN) - reaped - sum(cpu for pid, cpu in live.items() if pid not in ended)
    children += sum(cpu - live.get(pid, 0.0) for pid, cpu in ended.items())
    line = {"test": item.nodeid, "wall": time.monotonic() - started,
            "own": _cpu(resource.RUSAGE_SELF) - own, "children": children}
    with open(log, "a") as out:
        out.write(json.dumps(line) + "\\n")
"""

WORKERS = "xdist workers (the tests that run in-process)"
#: (kind, pattern on the program a process runs: its ``sys.argv[0]``), the first match wins; a ``python -c``
#: that is not an xdist worker, and anything else, is "other Python"
KINDS = (
    ("llama.cpp server (tests/servers/llama_server.py)", r"servers/llama_server\.py$"),
    ("TGI-schema server (llama.cpp in-process)", r"servers/tgi_schema_server\.py$"),
    ("other test servers and proxies (tests/servers)", r"tests/servers/"),
    ("lm-eval", r"(/lm_eval/|tests/lm_eval_command\.py$)"),  # the tests run it as tests/lm_eval_command.py
    ("lighteval", r"lighteval"),
    ("Inspect AI", r"/inspect$"),
    ("benchmarks' smoke runs", r"benchmarks/bench_\w+\.py$"),
    ("pytest (controller)", r"pytest"),
    ("scrambled-bench commands", r"(/scrambled-bench$|evaluate_cli/main\.py$)"),
)
SMOKE_ARGS = ["-q", "-p", "no:cacheprovider", "tests/metrics/test_statistics.py"]


def kind_of(record: dict, controller: int) -> str:
    """The kind of process a record is: an xdist worker (``python -c``, started by the pytest controller),
    else by the first pattern of ``KINDS`` its program matches.

    >>> kind_of({"argv": ["/repo/tests/servers/llama_server.py", "--port", "1"], "ppid": 7}, controller=7)
    'llama.cpp server (tests/servers/llama_server.py)'
    >>> kind_of({"argv": ["-c"], "ppid": 7}, controller=7), kind_of({"argv": ["-c"], "ppid": 9}, controller=7)
    ('xdist workers (the tests that run in-process)', 'other Python')
    >>> kind_of({"argv": ["/repo/tests/lm_eval_command.py", "run"], "ppid": 9}, controller=7)
    'lm-eval'
    """
    program = record["argv"][0] if record["argv"] else ""
    if program == "-c":
        return WORKERS if record["ppid"] == controller else "other Python"
    for kind, pattern in KINDS:
        if re.search(pattern, program):
            return kind
    return "other Python"


def run_pytest(
    pytest_args: list[str], log: Path, per_test: Path | None = None
) -> tuple[str, float, float, int, int]:
    """``pytest pytest_args`` with each process's CPU recorded in ``log`` (and, with ``per_test``, each
    test's in that file): its last line, wall seconds, the tree's CPU seconds, exit status and the
    controller's process id."""
    with tempfile.TemporaryDirectory(prefix="bench_test_cpu_") as folder:
        (Path(folder) / "sitecustomize.py").write_text(SITECUSTOMIZE)
        path = os.pathsep.join(filter(None, [folder, os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "PYTHONPATH": path, "SCRAMBLED_BENCH_CPU_LOG": str(log)}
        if per_test is not None:
            (Path(folder) / "bench_test_cpu_plugin.py").write_text(PER_TEST_PLUGIN)
            env["SCRAMBLED_BENCH_CPU_PER_TEST"] = str(per_test)
            pytest_args = ["-p", "bench_test_cpu_plugin", *pytest_args]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        # the venv's pytest script, as the documented commands run it: `python -m pytest` would also put the
        # checkout's root on sys.path, where its top-level folders shadow what some tests import
        with subprocess.Popen(
            [str(Path(sys.executable).parent / "pytest"), *pytest_args], cwd=REPO, env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        ) as process:  # fmt: skip
            output, _ = process.communicate()
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    tree = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    lines = output.strip().splitlines()
    # pytest's summary line, after the tests that failed (-q's short summary names them)
    failed = [line for line in lines if line.startswith(("FAILED ", "ERROR "))]
    summary = "\n".join([*failed, lines[-1] if lines else "(no output)"])
    return summary, wall, tree, process.returncode, process.pid


def print_per_test(records: list[dict], top: int) -> None:
    """The costliest ``top`` tests and modules by CPU: the test's own (its worker's), its processes', both.

    >>> print_per_test([{"test": "tests/a.py::t", "wall": 2.0, "own": 0.5, "children": 1.0}], top=5)
    the costliest 5 tests by CPU (CPU s: own, processes, both; wall s):
           0.5      1.0      1.5      2.0  tests/a.py::t
    the costliest 5 test modules by CPU (CPU s: own, processes, both; wall s; tests):
           0.5      1.0      1.5      2.0  tests/a.py (1)
    """
    modules: dict[str, dict] = {}
    for record in records:
        module = modules.setdefault(
            record["test"].split("::", 1)[0], {"own": 0.0, "children": 0.0, "wall": 0.0, "tests": 0}
        )
        for key in ("own", "children", "wall"):
            module[key] += record[key]
        module["tests"] += 1

    def row(entry: dict) -> str:
        own, children = entry["own"], entry["children"]
        return f"  {own:8.1f} {children:8.1f} {own + children:8.1f} {entry['wall']:8.1f}"

    print(f"the costliest {top} tests by CPU (CPU s: own, processes, both; wall s):")
    for record in sorted(records, key=lambda record: -(record["own"] + record["children"]))[:top]:
        print(f"{row(record)}  {record['test']}")
    print(f"the costliest {top} test modules by CPU (CPU s: own, processes, both; wall s; tests):")
    ranked = sorted(modules.items(), key=lambda item: -(item[1]["own"] + item[1]["children"]))
    for name, module in ranked[:top]:
        print(f"{row(module)}  {name} ({module['tests']})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_smoke_flag(parser)
    parser.add_argument("--top", type=int, default=10, help="the costliest processes (and tests) shown")
    parser.add_argument(
        "--per-test",
        action="store_true",
        help="also the costliest tests and modules by CPU (a plugin per worker)",
    )
    parser.add_argument("pytest_args", nargs="*", help="pytest's arguments, after --")
    args = parser.parse_args()
    pytest_args = (
        SMOKE_ARGS if args.smoke else (args.pytest_args or ["-n", "2", "-q", "-p", "no:cacheprovider"])
    )
    with tempfile.TemporaryDirectory(prefix="bench_test_cpu_log_") as scratch:
        log = Path(scratch) / "cpu.jsonl"
        per_test = Path(scratch) / "per_test.jsonl" if args.per_test or args.smoke else None
        print(f"pytest {' '.join(pytest_args)}  ({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f})")
        summary, wall, tree, status, controller = run_pytest(pytest_args, log, per_test)
        records = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        tests = (
            [json.loads(line) for line in per_test.read_text().splitlines()]
            if per_test is not None and per_test.exists()
            else None
        )
    print(f"{summary}\nexit {status}, {wall:.1f} s wall")
    cpu: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for record in records:
        kind = kind_of(record, controller)
        cpu[kind] += record["cpu"]
        count[kind] += 1
    logged = sum(cpu.values())
    cores = os.cpu_count() or 1
    print(
        f"the process tree's CPU: {tree:.1f} s, {100 * tree / (wall * cores):.0f}% of wall x {cores} cores; "
        f"{len(records)} processes recorded, {logged:.1f} s ({100 * logged / tree if tree else 0:.0f}% of the tree's)"
    )
    print(f"{'kind':<52}{'processes':>10}{'CPU s':>10}{'share':>8}")
    for kind, seconds in sorted(cpu.items(), key=lambda item: -item[1]):
        print(f"{kind:<52}{count[kind]:>10}{seconds:>10.1f}{100 * seconds / tree if tree else 0:>7.1f}%")
    print(f"the costliest {args.top} processes (CPU s, wall s, command):")
    for record in sorted(records, key=lambda record: -record["cpu"])[: args.top]:
        print(f"  {record['cpu']:8.1f} {record['wall']:8.1f}  {' '.join(record['argv'])[:110]}")
    if tests is not None:
        print_per_test(tests, args.top)


if __name__ == "__main__":
    main()
