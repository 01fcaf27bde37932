"""How long each answer reader takes per record, on long outputs above all: `run` reads every answer as it
arrives (its committer calls the reader once per record), so a slow rule slows every run.

Prints figures; asserts nothing about time. Run from a checkout:

    SCRAMBLED_BENCH_SHARED=../shared python benchmarks/bench_readers.py

Inputs, each read by both readers (``--repeat`` passes, the fastest reported):

1. long outputs of the authors' released ScrQA files (at least ``--min-chars`` characters: GPT-4's AQuA
   chains of thought, mostly), when the developers' mirror is there;
2. the blind-judged samples under ``tests/metrics/fixtures/judged`` (SmolLM2-135M-Instruct and the three
   released models: the shapes the careful reader's rules are about), all of them and the long ones;
3. degenerate loops of ``--loop-chars`` characters ("The answer is (B) Paris. " again and again, a model
   paraphrasing itself, a recital of the options): a model stuck in a loop writes until its token cap.
"""

from __future__ import annotations

import argparse
import gzip
import json
import time

from support import REPO, add_smoke_flag

from scrambled_bench.io import shared_data_dir
from scrambled_bench.metrics.readers import READERS, parse_choices

CHOICES = ["Amazon", "Microsoft", "Meta", "Google"]
LOOPS = {
    "answer statements": "The answer is (B) Microsoft. ",
    "a paraphrase": "Microsoft bought the company last week, the evidence says so clearly. ",
    "a recital": "A) Amazon\nB) Microsoft\nC) Meta\nD) Google\n",
    "letters and choices": "(A) or (B) Microsoft or Meta, ",
}


def _released(min_chars: int, limit: int) -> list[tuple[str, list[str], str]]:
    shared = shared_data_dir()
    if shared is None:
        return []
    base = shared / "paper_outputs" / "scrambled_qa"
    records = []
    for path in sorted(base.rglob("*.jsonl.gz")):
        dataset = "aqua" if "AQuA" in str(path) else "dream" if "DREAM" in str(path) else "realtimeqa"
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                if len(row["output"]) >= min_chars:
                    records.append((row["output"], parse_choices(row["input"]), dataset))
    return records[:limit]


def _judged() -> list[tuple[str, list[str], str]]:
    records = []
    for packet in sorted((REPO / "tests" / "metrics" / "fixtures" / "judged").glob("*.packet.jsonl")):
        keys = {}
        key_path = packet.with_name(packet.name.replace(".packet.", ".key."))
        with open(key_path, encoding="utf-8") as handle:
            keys = {row["id"]: row for row in map(json.loads, handle)}
        with open(packet, encoding="utf-8") as handle:
            for item in map(json.loads, handle):
                records.append((item["output"], list(item["choices"].values()), keys[item["id"]]["dataset"]))
    return records


def _per_record(records: list[tuple[str, list[str], str]], repeat: int) -> dict[str, float]:
    """Microseconds per record for each reader, the fastest of ``repeat`` passes."""
    times = {}
    for name, reader in READERS.items():
        best = float("inf")
        for _ in range(repeat):
            started = time.perf_counter()
            for output, choices, dataset in records:
                reader.read_choice(output, choices, dataset=dataset)
            best = min(best, time.perf_counter() - started)
        times[name] = best / max(1, len(records)) * 1e6
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="passes over each input (fastest reported)")
    parser.add_argument("--min-chars", type=int, default=1000, help="a released output this long is long")
    parser.add_argument("--released", type=int, default=2000, help="at most this many long released outputs")
    parser.add_argument("--loop-chars", type=int, default=20_000, help="length of each degenerate loop")
    add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.repeat, args.released, args.loop_chars = 1, 20, 2000
    judged = _judged()
    inputs = {
        f"released outputs of {args.min_chars}+ chars": _released(args.min_chars, args.released),
        "judged samples, all": judged,
        f"judged samples of {args.min_chars // 2}+ chars": [
            r for r in judged if len(r[0]) >= args.min_chars // 2
        ],
    }
    for name, unit in LOOPS.items():
        output = unit * (args.loop_chars // len(unit))
        inputs[f"loop of {name}, {len(output):,} chars"] = [
            (output, CHOICES, d) for d in ("realtimeqa", "aqua")
        ]
    print(f"{'input':<48} {'records':>8} {'mean chars':>10} {'paper us/rec':>13} {'careful us/rec':>15}")
    for name, records in inputs.items():
        if not records:
            print(f"{name:<48} {'-':>8}   (not available here)")
            continue
        times = _per_record(records, args.repeat)
        chars = sum(len(r[0]) for r in records) / len(records)
        print(
            f"{name:<48} {len(records):>8} {chars:>10,.0f} {times['paper']:>13,.0f} {times['careful']:>15,.0f}"
        )


if __name__ == "__main__":
    main()
