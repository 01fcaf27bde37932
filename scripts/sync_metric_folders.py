#!/usr/bin/env python3
"""Regenerate each metric folder's scrambled_bench_shared.py from metrics/shared.py, the one home of what the
metric modules share (scrambled_bench.metrics.folders):

    python scripts/sync_metric_folders.py           # write the copies that differ, and name them
    python scripts/sync_metric_folders.py --check   # write nothing; exit 1 naming the copies that differ

It works on the checkout it lives in (this file's repository), whichever scrambled_bench the Python running it
imports, so it never writes into an installed package. Run it with the project's venv (.venv/bin/python).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scrambled_bench.metrics.folders import SHARED_SOURCE, stale_copies, write_copies

METRICS = Path(__file__).resolve().parents[1] / "metrics"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a copy differs")
    check = parser.parse_args(argv).check
    changed = stale_copies(METRICS) if check else write_copies(METRICS)
    for path in changed:
        print(f"{'differs' if check else 'wrote'}: {path.relative_to(METRICS.parent)}")
    if not changed:
        print(f"every metric folder's copy is metrics/{SHARED_SOURCE} as generated now")
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
