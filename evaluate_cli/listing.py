"""``list``: what the package knows, one subcommand each: the scramble types (with their definitions), the
suites, the tasks, the registered harnesses, and the variants a ``scramble`` output holds.

Each subcommand prints to stdout, one item a line, from the library's own records (the type records, the
suites, the tasks, the harness registry, an output's manifest), so what it lists is what the commands take.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from scrambled_bench.builder.type_reference import type_lines
from scrambled_bench.evaluate_cli.options import command_group
from scrambled_bench.evaluation.suites import SUITES
from scrambled_bench.evaluation.tasks import TASKS
from scrambled_bench.integrations.base import INSTALL_HINT
from scrambled_bench.integrations.outputs import output_variants
from scrambled_bench.integrations.registry import described_harnesses

app = command_group(
    "list", "List the scramble types, suites, tasks and harnesses, or the variants a `scramble` output holds."
)


def _columns(rows: list[tuple[str, ...]]) -> list[str]:
    """Rows as left-aligned columns (the last column as it is).

    >>> _columns([("a", "one", "x"), ("bbb", "two", "y")])
    ['a    one  x', 'bbb  two  y']
    """
    widths = [max(len(row[index]) for row in rows) for index in range(len(rows[0]) - 1)]
    return ["  ".join([*(cell.ljust(width) for cell, width in zip(row, widths)), row[-1]]) for row in rows]


@app.command("types")
def types() -> None:
    """The scramble types, one family a line: the name --types takes (NN: a rate in percent), its group and
    its definition (as the documentation's Scramble types page gives them, with worked examples)."""
    for line in type_lines():
        typer.echo(line)


@app.command("suites")
def suites() -> None:
    """The suites `run --suite` takes, with what each holds."""
    typer.echo(
        "\n".join(
            _columns(
                [
                    (suite.name, f"{len(suite.configs)} configs", suite.description)
                    for suite in SUITES.values()
                ]
            )
        )
    )


@app.command("tasks")
def tasks() -> None:
    """The tasks `run --tasks` takes, with their datasets and what each measures."""
    typer.echo(
        "\n".join(
            _columns([(task.name, ",".join(task.datasets), task.description) for task in TASKS.values()])
        )
    )


@app.command("harnesses")
def harnesses() -> None:
    """The registered evaluation harnesses (`scramble NAME:TASK`, `score --from NAME`, `report --from NAME`):
    name, what they are, how a task is named after NAME:, and whether the harness is installed."""
    rows = [
        (name, title, f"{name}:{spec}", "installed" if installed else f"not installed ({INSTALL_HINT})")
        for name, title, spec, installed in described_harnesses()
    ]
    typer.echo("\n".join(_columns(rows)))


@app.command("variants")
def variants(
    folder: Annotated[Path, typer.Argument(help="A folder `scrambled-bench scramble` wrote (its --out).", show_default=False)],
) -> None:  # fmt: skip
    """The variant task names a `scramble` output holds, one a line, read from its manifest: for a harness
    task's output (`scramble HARNESS:TASK`), the names the harness runs the variants under; for a dataset's
    output, its configs (one per type or recipe), which `load_dataset(DIR, CONFIG)` reads."""
    for name in output_variants(folder).variants:
        typer.echo(name)
