"""``score`` and ``reproduce``: the metric modules on predictions made anywhere, and the paper's tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.options import (
    AllowUnknownEndpointOption,
    AllowZeroLoglikelihoodOption,
    FromOption,
    NResamplesOption,
    ReaderChoice,
    ReaderOption,
    choices_enum,
    open_unit_interval,
    option,
    refuse_options,
)
from scrambled_bench.evaluation.results import FRACTION, units
from scrambled_bench.io import atomic_write_text
from scrambled_bench.metrics import paper_reproduction
from scrambled_bench.metrics.readers import DATASET_LETTERS, DEFAULT_READER
from scrambled_bench.metrics.score_files import score_files, write_details

ScoreTaskChoice = choices_enum("ScoreTaskChoice", ["recovery", "qa"])
DatasetChoice = choices_enum("DatasetChoice", list(DATASET_LETTERS))


def score(
    files: Annotated[list[Path] | None, typer.Argument(help="JSONL prediction files (.gz too), or folders of them; one summary per file.")] = None,
    task: Annotated[ScoreTaskChoice | None, option("--task", "recovery (rows: prediction, original, scrambled) or qa (rows: prediction, choices, answer, dataset[, condition, id]); needed with FILES.")] = None,
    from_: FromOption = None,
    allow_unknown_endpoint: AllowUnknownEndpointOption = False,
    reader: ReaderOption = ReaderChoice[DEFAULT_READER],
    dataset: Annotated[DatasetChoice | None, option("--dataset", "qa: the dataset of rows without a 'dataset' field (aqua: chain of thought).")] = None,
    details: Annotated[Path | None, option("--details", "Write one JSONL row per input row: what was read, by which reader and rule.")] = None,
    confidence_level: Annotated[float | None, option("--confidence-level", "Add intervals at this level, between 0 and 1 (both excluded), e.g. 0.95: Wilson for Acc, BCa bootstrap (percentile where BCa is undefined) for RR, ED and RPG; each says its method.", callback=open_unit_interval)] = None,
    n_resamples: NResamplesOption = 1000,
    seed: Annotated[int, option("--seed", "Bootstrap seed (same seed, same interval).", min=0)] = 0,
    first_line: Annotated[bool, option("--first-line", "recovery: keep only the first line of each prediction (for models not stopped at a newline).")] = False,
    allow_zero_loglikelihood: AllowZeroLoglikelihoodOption = False,
) -> None:  # fmt: skip
    """Score predictions made by any tool; print a JSON summary (fractions) on stdout.

    Recovery rows carry `prediction`, `original` and `scrambled`; the
    summary holds the recovery rate (RR), the mean edit distances and how
    many outputs each reader rule changed.

    QA rows carry the raw model text as `prediction`, the `choices`, the
    gold letter `answer` and the `dataset` (realtimeqa, dream or aqua; or
    --dataset for the whole file): the readers' rules differ per dataset,
    and aqua is read as a chain of thought. The letter is read (never run
    as code) by the careful reader, or with --parser paper exactly as the
    paper's authors read it; an answer that cannot be read counts as
    wrong. Rows that name a `condition` are scored per condition; with an
    `original` and a `substituted` condition, every other condition also
    gets its relative performance gain (RPG) over the same `id`s.

    Several files (or a folder) are scored in one call: one summary per
    file on stderr, and on stdout one JSON object per file in a list.

    With --from HARNESS DIR (lm-eval, lighteval, inspect, or any registered
    harness) the outputs that harness logged on the exported scrambled_bench
    tasks are read again and scored as `run` scores its own: a table per
    config on stderr, and on stdout a document shaped like results.json
    (fractions), RPG included. Scrambled variants of other tasks (made by
    `scramble HARNESS:TASK`) are paired with their canonical task, document
    by document, whichever runs logged them into the folder.

    Examples:

        scrambled-bench score preds.jsonl --task recovery

        scrambled-bench score answers.jsonl --task qa --dataset dream --details parsed.jsonl

        scrambled-bench score outputs/ --task qa --parser paper --confidence-level 0.95

        scrambled-bench score --from lm-eval lm_eval_out/

        scrambled-bench score --from lighteval lighteval_out/

        scrambled-bench score --from inspect logs/
    """
    if from_ is not None:
        if files:
            raise ScrambledBenchError("give prediction FILES or --from HARNESS DIR, one of them per call")
        refuse_options(
            {"--task": task, "--dataset": dataset, "--details": details},
            "applies to prediction FILES, not to a harness's output folder",
        )
        _score_harness_output(from_[0], Path(from_[1]), reader.value, confidence_level, n_resamples, seed,
                              allow_unknown_endpoint, allow_zero_loglikelihood)  # fmt: skip
        return
    refuse_options(
        {
            "--allow-unknown-endpoint": allow_unknown_endpoint,
            "--allow-zero-loglikelihood": allow_zero_loglikelihood,
        },
        "applies to --from HARNESS DIR, not to prediction FILES",
    )
    if not files:
        raise ScrambledBenchError("give prediction FILES (with --task), or --from HARNESS DIR")
    if task is None:
        raise ScrambledBenchError("--task recovery|qa is needed to score prediction FILES")
    _score_files(files, task.value, reader.value, dataset.value if dataset is not None else None, details,
                 first_line, confidence_level, n_resamples, seed)  # fmt: skip


def _score_files(
    files: list[Path], task: str, reader: str, dataset: str | None, details: Path | None, first_line: bool,
    confidence_level: float | None, n_resamples: int, seed: int,
) -> None:  # fmt: skip
    """``score FILES``: each file's summary on stderr (percent), the JSON document on stdout (fractions), and
    the per-row details where asked."""
    from scrambled_bench.evaluate_cli.display import console, print_score_summaries  # deferred: rich

    summaries, rows = score_files(
        files, task=task, reader=reader, dataset=dataset, first_line=first_line,
        confidence_level=confidence_level, n_resamples=n_resamples, seed=seed,
    )  # fmt: skip
    write_details(details, rows)
    print_score_summaries(summaries, console(stderr=True))
    document = dict(summaries[0]) if len(summaries) == 1 else {"reader": reader, "files": summaries}
    document["units"] = units(FRACTION)  # results.json's vocabulary; the lines on stderr are in percent
    typer.echo(json.dumps(document, indent=2, ensure_ascii=False))


def _score_harness_output(
    source: str,
    folder: Path,
    reader: str,
    confidence_level: float | None,
    n_resamples: int,
    seed: int,
    allow_unknown_endpoint: bool,
    allow_zero_loglikelihood: bool,
) -> None:
    """``score --from HARNESS DIR``: the notes on stderr, a table per config, the JSON document on stdout."""
    from scrambled_bench.evaluate_cli.display import console, print_config_scores  # deferred: rich

    # deferred: the harness registry and its log readers (about half a second), for --from only
    from scrambled_bench.integrations.scoring import score_harness_output, scores_notes

    document = score_harness_output(
        source,
        folder,
        reader=reader,
        confidence_level=confidence_level if confidence_level is not None else 0.95,
        n_resamples=n_resamples,
        seed=seed,
        allow_unknown_endpoint=allow_unknown_endpoint,
        allow_zero_loglikelihood=allow_zero_loglikelihood,
    )
    for line in scores_notes(document):
        typer.echo(line, err=True)
    print_config_scores(document, console(stderr=True))
    typer.echo(json.dumps(document, indent=2, ensure_ascii=False))


def reproduce(
    outputs: Annotated[Path, option("--outputs", "A folder laid out as the authors' output/ (scrambled_rec/, scrambled_qa/; .jsonl or .jsonl.gz).")],
    reader: ReaderOption = ReaderChoice[DEFAULT_READER],
    tables: Annotated[Path | None, option("--tables", "The paper's tables as JSON (default: the copy shipped in the package).")] = None,
    as_json: Annotated[Path | None, option("--json", "Also write every cell (reproduced, paper, difference) to this JSON file.")] = None,
    dream_annotations: Annotated[Path | None, option("--dream-annotations", "DREAM's annotation/ folder (github.com/nlpdata/dream): adds Tables 7 and 8, by question category.")] = None,
) -> None:  # fmt: skip
    """Recompute the paper's Tables 1 and 3-8 from released outputs.

    Every model found in the folder is read from its raw outputs with the
    answer reader (--parser paper: the authors' own rules, which give
    their tables exactly; careful: the default) and scored with the
    packaged metric modules, beside the paper's numbers: each cell shows
    the reproduced value, the paper's, and their difference. The authors
    publish the outputs of all nineteen models in the output/ folder of
    their repository, in the layout this command reads.

    Examples:

        scrambled-bench reproduce --outputs unnatural-error-correction/output --parser paper

        scrambled-bench reproduce --outputs out/ --json cells.json

        scrambled-bench reproduce --outputs out/ --dream-annotations dream/annotation
    """
    # deferred: rich, which only the commands that print tables need
    from rich.console import Console

    from scrambled_bench.evaluate_cli.display import print_cells

    paper_tables = paper_reproduction.load_tables(tables)
    out = Console()
    with out.status("scoring the released outputs with the metric modules"):
        cells = paper_reproduction.reproduce(
            outputs, paper_tables, reader=reader.value, dream_annotations=dream_annotations
        )
    print_cells(cells, out)
    if as_json is not None:
        atomic_write_text(as_json, json.dumps([cell.as_dict() for cell in cells], indent=1) + "\n")
