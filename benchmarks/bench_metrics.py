"""How long the metric modules take on all the authors' released outputs, what RapidFuzz buys over a DP, and
what scoring many files in one ``score`` call saves.

Prints figures; asserts nothing about time. Run from a checkout with the developers' data mirror:

    SCRAMBLED_BENCH_SHARED=../shared HF_HUB_OFFLINE=1 python benchmarks/bench_metrics.py

or point ``--outputs`` at any folder laid out as the authors' ``output/`` (``--tables`` defaults to the
packaged copy of the paper's tables).

1. Scoring everything shipped (30 ScrRec files, 79 ScrQA files): ``scrambled-bench reproduce`` minus the
   printing, with each answer reader (paper, careful) reading the raw outputs, split into reading,
   answer reading, and metric-module time.
2. Character Levenshtein distance: RapidFuzz against a plain Python dynamic programme on the same
   (original, recovered) and (original, scrambled) pairs, and the ``recovery_rate`` module (one
   ``compute`` per released file, as a user calls it) against both. The DP runs on a random sample of
   pairs (``--dp-pairs``, default 300) because on all ~24,000 pairs it would take many minutes; both are
   checked to agree on every sampled pair. Target: the module at least 1000x the DP.
3. Many files: every released ScrQA file converted to ``score``'s input format, scored by one
   ``scrambled-bench score FOLDER`` call and by one call per file (on ``--per-file-calls`` files,
   extrapolated): files per second each way.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rapidfuzz.distance import Levenshtein
from support import add_smoke_flag, skip

from scrambled_bench.io import shared_data_dir
from scrambled_bench.metrics import load, paper_reproduction, readers

#: the one model ``--smoke`` scores (31 of the mirror's 109 files, ScrQA and ScrRec)
SMOKE_MODEL = "flan-t5-xxl"


def python_levenshtein(a: str, b: str) -> int:
    """Character Levenshtein distance by the textbook two-row dynamic programme (all edits cost 1)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i]
        for j, char_b in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
        previous = current
    return previous[-1]


def _timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def _dataset_of(path: Path) -> str:
    """The dataset a released ScrQA file belongs to, from its folder."""
    if "few-shot-cot" in path.parts:
        return "aqua"
    return "dream" if "DREAM" in str(path) else "realtimeqa"


def _recovery_pairs(outputs: Path) -> list[tuple[str, str]]:
    paper = readers.get_reader("paper")
    pairs = []
    for path in sorted((outputs / "scrambled_rec").rglob("*.jsonl*")):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                original = row["original"].strip()
                pairs.append((original, paper.read_recovery(row["output"]).value))
                pairs.append((original, row["scrambled"].strip()))
    return pairs


def one_models_outputs(outputs: Path, model: str, into: Path) -> Path:
    """A copy of ``outputs``'s layout holding only ``model``'s files (links, not copies): what ``--smoke``
    scores, a third of the mirror, so the smoke run checks every step in seconds."""
    for path in (outputs / "scrambled_qa", outputs / "scrambled_rec"):
        for file in sorted(path.rglob(f"{model}.jsonl*")):
            link = into / file.relative_to(outputs)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(file)
    return into


def bench_scoring(outputs: Path, tables: dict, repeats: int, dream_annotations: Path | None) -> None:
    print("== scoring all shipped outputs with the metric modules")
    _, warm = _timed(lambda: [load(name) for name in ("recovery_rate", "relative_performance_gain")])
    print(f"loading the two modules (first time, evaluate import included): {warm:.2f} s")
    qa_files = sorted((outputs / "scrambled_qa").rglob("*.jsonl*"))
    rec_files = sorted((outputs / "scrambled_rec").rglob("*.jsonl*"))
    rows = {path: paper_reproduction.read_qa_rows(path) for path in qa_files}
    _, reading = _timed(
        lambda: (
            [paper_reproduction.read_qa_rows(p) for p in qa_files]
            + [paper_reproduction.read_recovery_rows(p) for p in rec_files]
        )
    )
    n_qa = sum(len(r) for r in rows.values())
    print(
        f"files: {len(rec_files)} ScrRec, {len(qa_files)} ScrQA; {n_qa} ScrQA rows; reading them all: {reading:.2f} s"
    )
    for reader in readers.READERS:
        read_answers = paper_reproduction.answer_reader(reader)
        _, answering = _timed(lambda read=read_answers: [read(r, _dataset_of(p)) for p, r in rows.items()])
        print(
            f"the {reader} reader on every ScrQA output: {answering:.2f} s ({1e6 * answering / n_qa:.0f} us each)"
        )
        times = []
        for _ in range(repeats):
            cells, seconds = _timed(
                paper_reproduction.reproduce,
                outputs,
                tables,
                reader=reader,
                dream_annotations=dream_annotations,
            )
            times.append(seconds)
        matching = sum(1 for cell in cells if cell.matches)
        compared = sum(1 for cell in cells if cell.matches is not None)
        print(
            f"reproduce --parser {reader}: {len(cells)} cells, {matching} of the {compared} in the paper match;"
            f" median {statistics.median(times):.2f} s over {repeats} runs (reading + answers + modules)"
        )


def bench_levenshtein(outputs: Path, dp_pairs: int, seed: int) -> None:
    print("== character Levenshtein: RapidFuzz vs a plain Python DP vs the recovery_rate module")
    pairs = _recovery_pairs(outputs)
    _, rapid_all = _timed(lambda: [Levenshtein.distance(a, b) for a, b in pairs])
    mean_length = statistics.mean(len(a) for a, _ in pairs)
    print(
        f"RapidFuzz, all {len(pairs)} pairs (mean original length {mean_length:.0f} chars): {rapid_all:.3f} s"
    )
    sample = random.Random(seed).sample(pairs, min(dp_pairs, len(pairs)))
    rapid_distances, rapid_sample = _timed(lambda: [Levenshtein.distance(a, b) for a, b in sample])
    dp_distances, dp_sample = _timed(lambda: [python_levenshtein(a, b) for a, b in sample])
    if rapid_distances != dp_distances:
        sys.exit("RapidFuzz and the DP disagree on a sampled pair: the benchmark compares different things")
    print(f"sample of {len(sample)} pairs (seed {seed}), both agree on every pair:")
    print(
        f"  RapidFuzz {rapid_sample * 1e3:.2f} ms, Python DP {dp_sample:.2f} s: speed-up x{dp_sample / rapid_sample:,.0f}"
    )
    dp_all = dp_sample / len(sample) * len(pairs)
    print(f"  the DP on all pairs would take about {dp_all / 60:.1f} min")

    paper = readers.get_reader("paper")
    inputs = []
    for path in sorted((outputs / "scrambled_rec").rglob("*.jsonl*")):
        rows = paper_reproduction.read_recovery_rows(path)
        inputs.append(
            {
                "predictions": [paper.read_recovery(row["output"]).value for row in rows],
                "references": [row["original"] for row in rows],
                "scrambled": [row["scrambled"] for row in rows],
            }
        )
    module = load("recovery_rate")
    module.compute(**inputs[0])  # the first compute pays one-off costs
    _, module_all = _timed(lambda: [module.compute(**one) for one in inputs])
    print(
        f"recovery_rate module, one compute per file over {len(inputs)} ScrRec files ({len(pairs)} distances): "
        f"{module_all:.3f} s, x{dp_all / module_all:,.0f} the Python DP (target >= 1000); "
        f"raw RapidFuzz is x{module_all / rapid_all:.1f} faster than the module"
    )


def _score_inputs(outputs: Path, folder: Path) -> list[Path]:
    """Every released ScrQA file as ``score`` input (prediction, choices, answer, dataset, id)."""
    files = []
    for path in sorted((outputs / "scrambled_qa").rglob("*.jsonl*")):
        rows = []
        for index, row in enumerate(paper_reproduction.read_qa_rows(path)):
            target = row["input"].rsplit("\n\nQuestion: ", 1)[-1]
            rows.append(
                {
                    "id": index,
                    "prediction": row["output"],
                    "choices": readers.parse_choices(target),
                    "answer": row["GT"],
                    "dataset": _dataset_of(path),
                }
            )
        target_path = folder / f"{len(files):03d}-{paper_reproduction.output_stem(path)}.jsonl"
        target_path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        files.append(target_path)
    return files


def bench_many_files(outputs: Path, per_file_calls: int) -> None:
    print("== scoring many files: one `score` call for all of them vs one call per file")
    command = [str(Path(sys.executable).with_name("scrambled-bench")), "score"]
    with tempfile.TemporaryDirectory() as scratch:
        files = _score_inputs(outputs, Path(scratch))
        _, together = _timed(
            subprocess.run, [*command, scratch, "--task", "qa"], check=True, capture_output=True
        )
        sample = files[:per_file_calls]
        _, apart = _timed(
            lambda: [
                subprocess.run([*command, str(f), "--task", "qa"], check=True, capture_output=True)
                for f in sample
            ]
        )
    per_file = apart / len(sample)
    print(
        f"{len(files)} files in one call: {together:.1f} s ({len(files) / together:.1f} files/s); "
        f"one call per file: {per_file:.2f} s each ({1 / per_file:.2f} files/s, measured on {len(sample)} files); "
        f"one call is x{per_file * len(files) / together:.0f} faster"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--outputs", type=Path, help="folder laid out as the authors' output/ (default: the mirror)"
    )
    parser.add_argument("--tables", type=Path, help="the paper's tables (default: the packaged copy)")
    parser.add_argument(
        "--dream-annotations", type=Path, help="DREAM's annotation/ folder (adds Tables 7 and 8)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs of the full scoring (median reported)")
    parser.add_argument("--dp-pairs", type=int, default=300, help="pairs the Python DP is timed on")
    parser.add_argument("--per-file-calls", type=int, default=8, help="files scored one call each (timed)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", help=f"score only this model's files (--smoke: {SMOKE_MODEL})")
    add_smoke_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.repeats, args.dp_pairs, args.per_file_calls = 1, 20, 1
        args.model = args.model or SMOKE_MODEL
    outputs = args.outputs
    shared = shared_data_dir()
    if outputs is None:
        if shared is None:
            skip(
                "needs the authors' outputs: give --outputs, or set SCRAMBLED_BENCH_SHARED to the developers' mirror"
            )
        outputs = shared / "paper_outputs"
    if args.model:
        scratch = tempfile.TemporaryDirectory(prefix="bench_metrics_")  # removed at exit
        outputs = one_models_outputs(outputs, args.model, Path(scratch.name))
        print(f"only {args.model}'s outputs")
    tables = paper_reproduction.load_tables(args.tables)
    dream_annotations = args.dream_annotations
    if dream_annotations is None and shared is not None:
        dream_annotations = shared / "sources" / "nlpdata" / "dream" / "annotation"
    if dream_annotations is not None and not dream_annotations.is_dir():
        dream_annotations = None
    print(
        f"Tables 7 and 8 (DREAM by category): {'included' if dream_annotations else 'left out (no annotations)'}"
    )
    bench_scoring(outputs, tables, args.repeats, dream_annotations)
    bench_levenshtein(outputs, args.dp_pairs, args.seed)
    bench_many_files(outputs, args.per_file_calls)


if __name__ == "__main__":
    main()
