"""What every benchmark shares: repository files found by a path that fails loudly when it moves, the
``--smoke`` flag, and the one way a benchmark says it cannot run here.

``--smoke`` runs a benchmark at tiny sizes, in seconds, so that a test (``tests/benchmarks``) can check that it
still runs and prints its figures; the figures then mean nothing. A benchmark that cannot run on this machine
(no data mirror, say) prints one line starting ``skipped:`` with the reason, and exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SKIPPED = "skipped:"


def repo_file(relative: str) -> Path:
    """A file of the checkout the benchmark needs (a test server, fixtures); exits naming it if it moved."""
    path = REPO / relative
    if not path.exists():
        raise SystemExit(
            f"{relative} is not in the checkout (moved or renamed?): update {Path(sys.argv[0]).name}"
        )
    return path


def add_smoke_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="tiny sizes, seconds: checks that the benchmark runs and prints its figures (which then mean nothing)",
    )


def skip(reason: str) -> None:
    """Say why the benchmark cannot run here, and stop with exit 0."""
    print(f"{SKIPPED} {reason}")
    raise SystemExit(0)


def source_mirror() -> Path | None:
    """The upstream source mirror (``<owner>/<repo>/<path>``) this machine has, if any:
    ``$SCRAMBLED_BENCH_SOURCE_DIR``, else the developers' ``$SCRAMBLED_BENCH_SHARED/data/sources``."""
    from scrambled_bench.io import shared_data_dir

    if os.environ.get("SCRAMBLED_BENCH_SOURCE_DIR"):
        return Path(os.environ["SCRAMBLED_BENCH_SOURCE_DIR"])
    shared = shared_data_dir()
    return shared / "sources" if shared is not None and (shared / "sources").is_dir() else None
