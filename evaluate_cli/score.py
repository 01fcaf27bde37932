"""``score`` and ``reproduce``: the metric modules on predictions made anywhere, and the paper's tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from scrambled_bench.evaluate_cli.options import NResamplesOption, choices_enum

from scrambled_bench.errors import ScrambledBenchError

ScoreTaskChoice = choices_enum("ScoreTaskChoice", ["recovery", "qa"])
AnswersChoice = choices_enum("AnswersChoice", ["authors", "extracted"])


def score(
    file: Annotated[Path, typer.Argument(help="JSONL predictions, one row per sample (.gz is read too).")],
    task: Annotated[
        ScoreTaskChoice,
        typer.Option(
            "--task",
            help="recovery (rows: prediction, original, scrambled) or qa (rows: prediction, choices, answer[, condition, id]).",
        ),
    ],
    details: Annotated[
        Path | None,
        typer.Option("--details", help="Write one JSONL row per input row with what was parsed from it."),
    ] = None,
    confidence_level: Annotated[
        float | None,
        typer.Option(
            "--confidence-level",
            min=0.0,
            max=1.0,
            help="Add percentile-bootstrap intervals at this level, e.g. 0.95.",
        ),
    ] = None,
    n_resamples: NResamplesOption = 1000,
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Bootstrap seed (same seed, same interval).")
    ] = 0,
    chain_of_thought: Annotated[
        bool,
        typer.Option(
            "--chain-of-thought",
            help="qa: read the letter after the last 'answer is' (AQuA-style worked solutions).",
        ),
    ] = False,
    first_line: Annotated[
        bool,
        typer.Option(
            "--first-line",
            help="recovery: keep only the first line of each prediction (for models not stopped at a newline).",
        ),
    ] = False,
) -> None:
    """Score predictions made by any tool; print a JSON summary.

    Recovery rows carry `prediction`, `original` and `scrambled`; the
    summary holds the recovery rate (RR) and the mean edit distances.

    QA rows carry the raw model text as `prediction`, the `choices` and
    the gold letter `answer`. The letter is read from the text (never run
    as code); an answer that cannot be read counts as wrong. Rows that
    name a `condition` are scored per condition; when an `original` and
    a `substituted` condition are present, every other condition also
    gets its relative performance gain (RPG) over the same `id`s.

    Examples:

        scrambled-bench score preds.jsonl --task recovery

        scrambled-bench score answers.jsonl --task qa --details parsed.jsonl

        scrambled-bench score answers.jsonl --task qa --confidence-level 0.95
    """
    from scrambled_bench.metrics.score_files import score_qa, score_recovery, write_details

    if confidence_level is not None and not 0 < confidence_level < 1:
        raise ScrambledBenchError(
            f"--confidence-level must be between 0 and 1 (exclusive), got {confidence_level}"
        )
    if not file.exists():
        raise ScrambledBenchError(f"{file}: no such file")
    if file.is_dir():
        raise ScrambledBenchError(f"{file}: is a folder, not a JSONL file")
    bootstrap = {"confidence_level": confidence_level, "n_resamples": n_resamples, "seed": seed}
    if task.value == "recovery":
        summary, rows = score_recovery(file, first_line=first_line, **bootstrap)
    else:
        summary, rows = score_qa(file, chain_of_thought=chain_of_thought, **bootstrap)
    write_details(details, rows)
    typer.echo(json.dumps(summary, indent=2, ensure_ascii=False))


def reproduce(
    outputs: Annotated[
        Path,
        typer.Option(
            "--outputs",
            help="A folder laid out as the authors' output/ (scrambled_rec/, scrambled_qa/; .jsonl or .jsonl.gz).",
        ),
    ],
    tables: Annotated[
        Path | None,
        typer.Option(
            "--tables", help="The paper's tables as JSON (default: the copy shipped in the package)."
        ),
    ] = None,
    answers: Annotated[
        AnswersChoice,
        typer.Option(
            "--answers",
            help="ScrQA letters: authors (their parsed pred) or extracted (ours, from the raw outputs).",
        ),
    ] = AnswersChoice.authors,
    as_json: Annotated[
        Path | None,
        typer.Option(
            "--json", help="Also write every cell (reproduced, paper, difference) to this JSON file."
        ),
    ] = None,
    dream_annotations: Annotated[
        Path | None,
        typer.Option(
            "--dream-annotations",
            help="DREAM's annotation/ folder (github.com/nlpdata/dream): adds Tables 7 and 8, by question category.",
        ),
    ] = None,
) -> None:
    """Recompute the paper's Tables 1 and 3-8 from released outputs.

    Every model found in the folder is scored with the packaged metric
    modules and printed beside the paper's numbers: each cell shows the
    reproduced value, the paper's, and their difference. The authors
    publish the outputs of all nineteen models in the output/ folder of
    their repository, in the layout this command reads.

    Examples:

        scrambled-bench reproduce --outputs unnatural-error-correction/output

        scrambled-bench reproduce --outputs out/ --answers extracted --json cells.json

        scrambled-bench reproduce --outputs out/ --dream-annotations dream/annotation
    """
    from rich.console import Console
    from scrambled_bench.evaluate_cli.display import print_cells
    from scrambled_bench.metrics import paper_reproduction

    from scrambled_bench.io import atomic_write_text

    paper_tables = paper_reproduction.load_tables(tables)
    out = Console()
    with out.status("scoring the released outputs with the metric modules"):
        cells = paper_reproduction.reproduce(
            outputs, paper_tables, answers=answers.value, dream_annotations=dream_annotations
        )
    print_cells(cells, out)
    if as_json is not None:
        atomic_write_text(as_json, json.dumps([cell.as_dict() for cell in cells], indent=1) + "\n")
