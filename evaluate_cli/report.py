"""``report``: paper-shaped tables and figures from one or more run folders, and ``--push`` to the Hub.

The command parses options and calls :mod:`scrambled_bench.harness.report`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.options import FormatChoice, ParserChoice, PrivateOption


def report(
    runs: Annotated[
        list[Path], typer.Argument(help="Run folders (each with a results.json), one row group per model.")
    ],
    fmt: Annotated[
        FormatChoice, typer.Option("--format", "-f", help="Table format.")
    ] = FormatChoice.markdown,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the tables to this file instead of stdout.")
    ] = None,
    ci: Annotated[bool, typer.Option("--ci", help="Show bootstrap intervals beside each score.")] = False,
    plot: Annotated[
        Path | None,
        typer.Option("--plot", help="Also draw the paper's figures (PNG and SVG) into this folder."),
    ] = None,
    push: Annotated[
        str | None, typer.Option("--push", help="Upload the runs' results as the Hub dataset ORG/REPO.")
    ] = None,
    private: PrivateOption = False,
    parser: Annotated[
        ParserChoice | None,
        typer.Option(
            "--parser",
            help="Re-read every run's stored outputs with this answer reader (default: as each run was scored); "
            "paper for numbers comparable with the paper's tables.",
        ),
    ] = None,
) -> None:
    """Tables (and figures) in the shape of the paper's, from one or more run folders.

    Examples:

      scrambled-bench report runs/*   (markdown tables of every run)

      scrambled-bench report runs/gpt-4o-* runs/SmolLM2-* --format html -o report.html --plot figures/

      scrambled-bench report runs/my-run --push my-org/scrambled-bench-results
    """
    from scrambled_bench.harness.report import (
        RENDERERS,
        build_tables,
        label_runs,
        load_run,
        plot_figures,
        push_to_hub,
    )
    from scrambled_bench.harness.report.tables import reread
    from scrambled_bench.hub import check_repo_id

    if push is not None:
        check_repo_id(push, "--push")
    loaded = [load_run(path) for path in runs]
    if parser is not None:
        loaded = [reread(run, parser.value) for run in loaded]
    loaded = label_runs(loaded)
    tables = build_tables(loaded, ci=ci)
    if not tables:
        raise ScrambledBenchError("the runs hold no scored config to report")
    text = RENDERERS[fmt.value](tables)
    if output is not None:
        from scrambled_bench.io import atomic_write_text

        atomic_write_text(output, text)
        typer.echo(f"wrote {output}", err=True)
    else:
        typer.echo(text)
    if plot is not None:
        for path in plot_figures(loaded, plot):
            typer.echo(f"wrote {path}", err=True)
    if push is not None:
        url = push_to_hub(loaded, push, private=private)
        typer.echo(f"pushed to https://huggingface.co/datasets/{push} ({url})", err=True)
