"""How long CI takes: a fresh-clone ``bash .ci/run`` of two commits, back to back on this machine.

    python benchmarks/bench_ci.py --before COMMIT [--after HEAD] [--shared ../shared] [--workdir DIR] [--smoke]

Each commit is cloned from this repository into ``DIR/<before|after>/repo`` with ``DIR/<before|after>/shared``
linked to the developers' data mirror, which is CI's layout (``../shared`` beside a clean clone), and its own
``.ci/run`` is run there with ``CI=true``, one after the other, its output kept in ``DIR/<before|after>.log``.
A CI time only compares with another measured on the same machine under the same load (this machine's speed
varies from day to day), hence both runs in one call; leave the machine otherwise idle while it runs.

Printed: each run's seconds and exit status, the ratio after/before, the phases the after run's ``.ci/run``
printed (its ``[ci]`` lines), its pytest summary and the slowest 10 entries of its durations table.

``--smoke`` measures the same clones with ``git log -1`` in place of ``.ci/run``: it checks the measurement
itself, in seconds, and its figures mean nothing.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

from support import REPO, add_smoke_flag, skip

from scrambled_bench.io import shared_data_dir

SLOWEST = 10


def shared_folder(given: str | None) -> Path | None:
    """The data mirror to put beside each clone (the folder holding ``data/``): the option, else the one
    ``$SCRAMBLED_BENCH_SHARED`` names (as the tests find it, :func:`scrambled_bench.io.shared_data_dir`)."""
    data = Path(given) / "data" if given else shared_data_dir()
    if data is None or data.name != "data" or not data.is_dir():
        return None
    return data.parent.resolve()


def short_commit(name: str) -> str:
    """The short hash of the commit ``name`` (a hash, branch, tag or ``HEAD~1``) in this repository."""
    resolved = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", name], check=True, capture_output=True, text=True
    )
    return resolved.stdout.strip()


def clone(commit: str, place: Path, shared: Path) -> Path:
    """A clean clone of this repository at ``commit`` in ``place/repo``, with ``place/shared`` beside it."""
    place.mkdir(parents=True)
    repo = place / "repo"
    subprocess.run(["git", "clone", "-q", str(REPO), str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", commit], check=True)
    (place / "shared").symlink_to(shared, target_is_directory=True)
    return repo


def timed(command: list[str], repo: Path, log: Path) -> tuple[float, int]:
    """Seconds and exit status of ``command`` run in ``repo`` as CI runs it, its output in ``log``."""
    started = time.monotonic()
    with log.open("w") as out:
        completed = subprocess.run(
            command,
            check=False,
            cwd=repo,
            env={**os.environ, "CI": "true"},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    return time.monotonic() - started, completed.returncode


def summary(log_text: str) -> list[str]:
    """What the after run printed of its own timing: ``[ci]`` phases, pytest's summary, the slowest tests."""
    lines = log_text.splitlines()
    found = [line for line in lines if line.startswith("[ci] ")]
    found += [line for line in lines if re.match(r"=+ .*\b(passed|failed)\b.* in [\d.]+s", line)]
    durations = [line for line in lines if re.match(r"^[\d.]+s (call|setup|teardown) ", line)]
    return found + durations[:SLOWEST]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--before",
        help="the baseline commit (with --smoke, default --after itself: a shallow clone has no parent)",
    )
    parser.add_argument("--after", default="HEAD", help="the commit measured against it")
    parser.add_argument("--shared", help="the developers' data mirror (default: $SCRAMBLED_BENCH_SHARED)")
    parser.add_argument("--workdir", help="where the clones and logs go (default: a new temporary folder)")
    add_smoke_flag(parser)
    args = parser.parse_args()
    if args.before is None and not args.smoke:
        parser.error("--before COMMIT is required: the baseline to compare with")
    shared = shared_folder(args.shared)
    if shared is None:
        skip("needs the developers' data mirror beside each clone: --shared or SCRAMBLED_BENCH_SHARED")
    after = short_commit(args.after)
    before = short_commit(args.before or args.after)
    if args.workdir:
        measure(before, after, Path(args.workdir).resolve(), shared, smoke=args.smoke)
    elif args.smoke:  # nothing worth keeping
        with tempfile.TemporaryDirectory(prefix="bench_ci_") as workdir:
            measure(before, after, Path(workdir), shared, smoke=True)
    else:  # the logs stay for reading
        measure(before, after, Path(tempfile.mkdtemp(prefix="bench_ci_")), shared, smoke=False)


def measure(before: str, after: str, workdir: Path, shared: Path, *, smoke: bool) -> None:
    """Both runs, one after the other, and what they printed."""
    command = ["git", "log", "-1", "--oneline"] if smoke else ["bash", ".ci/run"]
    print(f"measuring `{' '.join(command)}` in fresh clones under {workdir} (data mirror {shared})")

    seconds = {}
    for which, commit in (("before", before), ("after", after)):
        repo = clone(commit, workdir / which, shared)
        log = workdir / f"{which}.log"
        seconds[which], status = timed(command, repo, log)
        print(f"{which} ({commit}): {seconds[which]:.1f} s, exit {status}; output in {log}")
        if status != 0:
            raise SystemExit(f"the {which} run failed (exit {status}): see {log}")
    print(f"ratio after/before: {seconds['after'] / max(seconds['before'], 1e-9):.2f}")
    for line in summary((workdir / "after.log").read_text(errors="replace")):
        print(f"  {line}")


if __name__ == "__main__":
    main()
