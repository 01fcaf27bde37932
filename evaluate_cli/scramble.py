"""The ``scramble`` command: scramble any dataset's text columns with the benchmark's scrambler, or a harness
task into variants its harness runs.

The command only parses options; the work is ``scrambled_bench.builder.scramble.scramble_dataset`` and
``scrambled_bench.integrations.scramble.scramble_harness_task``. The harnesses' own task-definition options
(``--include-path``, ``--custom-tasks``, those of any registered harness) are not written here: each harness
declares its own, and the command line adds them from the registry (:func:`~.options.with_harness_task_options`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer

from scrambled_bench.builder.recipes import RECIPES
from scrambled_bench.builder.scramble import ScrambleResult, scramble_dataset
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.options import (
    PrivateOption,
    SeedOption,
    TypesOption,
    choices_enum,
    option,
    percent_of_rows,
    refuse_options,
    with_harness_task_options,
)
from scrambled_bench.integrations import WrittenVariants, harness_of
from scrambled_bench.integrations.scramble import scramble_harness_task
from scrambled_bench.names import split_names

RecipeChoice = choices_enum("RecipeChoice", list(RECIPES))
"""The paper's Appendix A.4 corpora, from their records (``scrambled_bench.builder.recipes.RECIPES``)."""
DemosChoice = choices_enum("DemosChoice", ["original", "scrambled"])
"""What a harness task's demonstrations become (``integrations.datasets.DEMOS``)."""


@with_harness_task_options
def scramble(
    source: Annotated[str, typer.Argument(help="A Hub dataset id (owner/name), a local folder, data files (parquet, JSON Lines, CSV, text; a glob works), or a harness task: lm-eval:TASK|GROUP, lighteval:SUITE|TASK|FEWSHOT, inspect:TASK|FILE.py[@TASK] (or NAME:SPEC of any registered harness).")],
    columns: Annotated[list[str], option("--columns", "Text columns to scramble (repeat or comma-separate); for an Inspect task, the sample fields: input, choices.")],
    types: TypesOption = None,
    recipe: Annotated[RecipeChoice | None, option("--recipe", "A fine-tuning corpus of the paper (App. A.4); sets the sample rate and the type.")] = None,
    out: Annotated[Path | None, option("--out", "Output folder; a previous scramble output there of the same source and settings grows by these types (written atomically).")] = None,
    replace: Annotated[bool, option("--replace", "Replace a previous scramble output in --out with exactly these types (default: add to it).")] = False,
    push: Annotated[str | None, option("--push", "Also (or only) upload to this Hub dataset ORG/NAME.")] = None,
    private: PrivateOption = False,
    split: Annotated[list[str] | None, option("--split", "Splits to scramble (repeat or comma-separate; default: all).")] = None,
    config: Annotated[str | None, option("--config", "The source's config (subset), where it has several.")] = None,
    revision: Annotated[str | None, option("--revision", "Hub revision (branch, tag or commit).")] = None,
    seed: SeedOption = 0,
    num_proc: Annotated[int, option("--num-proc", "Worker processes (datasets.map; a process pool when streaming).", min=1)] = 1,
    streaming: Annotated[bool, option("--streaming", "Stream the source (larger than memory); parquet shards are written as it goes.")] = False,
    id_column: Annotated[str | None, option("--id-column", "Column whose value keys each row's scramble (default: the row's index in its split).")] = None,
    sample_rate: Annotated[float | None, option("--sample-rate", "Percent of the rows to scramble, in (0, 100] (default 100; a recipe sets its own).", callback=percent_of_rows, show_default=False)] = None,
    demos: Annotated[DemosChoice | None, option("--demos", "Harness tasks: the demonstrations' splits copied unchanged (original, the default) or scrambled too.")] = None,
    task_sources: Mapping[str, str] | None = None,
) -> None:  # fmt: skip
    """Scramble text columns of any dataset: `<column>` scrambled, `<column>_original` beside it.

    One output config per type (or the recipe's one) with the source's splits, a dataset card and a
    manifest. A text's output depends only on (text, type, seed, row key, its column and position in a
    list), never on --num-proc or --streaming; the items of a list that differ stay different. Scrambling
    again into --out adds the new types and keeps the configs it held (--replace starts over).

    Examples:

        scrambled-bench scramble cais/mmlu --config all --split test --columns question --types kfl,rs50 --out mmlu-scrambled

        scrambled-bench scramble wikimedia/wikipedia --config 20231101.simple --columns text --recipe ft-rs --streaming --num-proc 8 --out wiki-ft-rs

        scrambled-bench scramble 'data/*.jsonl' --columns text --types adj30 --sample-rate 60 --id-column id --push my-org/typos

        scrambled-bench scramble lm-eval:arc_easy --columns question,choices.text --types kfl,rs50,sub --out arc-scrambled

        scrambled-bench scramble 'lighteval:lighteval|arc:easy|0' --columns question --types kfl,rs50,sub --out arc-lighteval

        scrambled-bench scramble inspect:inspect_evals/arc_easy --columns input,choices --types kfl,rs50,sub --out arc-inspect

    A harness task (lm-eval:TASK or lm-eval:GROUP; lighteval:SUITE|TASK|FEWSHOT; inspect:TASK or
    inspect:FILE.py[@TASK]) is resolved through the harness's registry, and its variants written so that
    one command of the harness runs the canonical task beside them: lm-eval's and lighteval's datasets
    are scrambled into OUT/<task>/ with derived task files in OUT/lm_eval/ (`lm_eval --include_path
    OUT/lm_eval --tasks <task>_scrambled`) or OUT/lighteval/ (`--custom-tasks
    OUT/lighteval/scrambled_tasks.py`); Inspect's task file OUT/inspect/scrambled_tasks.py scrambles the
    samples when it loads (`inspect eval OUT/inspect/scrambled_tasks.py`, the path as printed: relative
    to the folder scramble ran in). With --push (one task) the task files read the pushed Hub dataset at
    the commit the push made. A NAME:SPEC whose NAME is no registered harness, and which names no
    existing file, is refused with the closest harness (a Hub id never holds ':'). The options of a
    harness's own task definitions (lm-eval's --include-path, lighteval's --custom-tasks) are each
    harness's, listed last.
    """
    if not source.strip():
        raise ScrambledBenchError(
            "SOURCE is empty: give a Hub dataset id, a local folder, data files or a harness task (HARNESS:TASK)"
        )
    if harness_of(source) is not None:
        refuse_options(
            {"--recipe": recipe, "--split": split, "--config": config, "--revision": revision,
             "--id-column": id_column, "--sample-rate": sample_rate},
            "does not apply to a harness task: its config names its dataset",
        )  # fmt: skip
        refuse_options({"--streaming": streaming}, "does not apply to a harness task")
        written = scramble_harness_task(
            source, columns=split_names(columns) or [], types=split_names(types), out=out,
            task_sources=task_sources, demos=demos.value if demos is not None else None, seed=seed,
            num_proc=num_proc, push=push, private=private, replace=replace,
        )  # fmt: skip
        print_harness_task(source, written)
        return
    refuse_options(
        {**(task_sources or {}), "--demos": demos},
        "applies to a harness task (HARNESS:TASK), not to a dataset",
    )
    result = scramble_dataset(
        source, columns=split_names(columns) or [], types=split_names(types),
        recipe=recipe.value if recipe is not None else None, out=out, push=push, private=private,
        splits=split_names(split), config=config, revision=revision, seed=seed, num_proc=num_proc,
        streaming=streaming, id_column=id_column, sample_rate=sample_rate, replace=replace,
    )  # fmt: skip
    print_dataset(source, result)


def print_dataset(source: str, result: ScrambleResult) -> None:
    """What ``scramble`` of a dataset says: where it wrote, the rows per config and split, the texts left
    unchanged, and the configs a previous output kept."""
    counts = "; ".join(
        f"{config_name}: " + ", ".join(f"{name} {rows}" for name, rows in per_split.items())
        for config_name, per_split in result.rows.items()
    )
    where = " and ".join(str(place) for place in (result.out, result.url) if place is not None)
    kept = f"; kept {', '.join(result.kept)} from the previous output" if result.kept else ""
    typer.echo(
        f"scrambled {source} into {where} (rows per config and split: {counts}; {result.unchanged_summary()}){kept}"
    )


def print_harness_task(source: str, result: WrittenVariants) -> None:
    """What ``scramble HARNESS:TASK`` says: its notes (stderr), the tasks, where it wrote (and pushed), the
    types a previous output kept, the command that runs the comparison, and per task the texts left
    unchanged."""
    for note in result.notes:
        typer.echo(f"note: {note}", err=True)
    tasks = ", ".join(result.tasks)
    pushed = f" and {result.hub[0]}@{result.hub[1]}" if result.hub is not None else ""
    kept = f"; kept {', '.join(result.kept)} from the previous output" if result.kept else ""
    typer.echo(f"scrambled {source} ({tasks}) into {result.out}{pushed}{kept}; run: {result.run_hint}")
    for task, summary in result.unchanged.items():
        typer.echo(f"{task}: {summary}")
