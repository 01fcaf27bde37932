"""``report``: paper-shaped tables and figures from one or more run folders, the paper's models beside them
(``--paper``), a paired comparison (``--compare``), one self-contained HTML file (``--format html``), and the
Hub (``--push`` a leaderboard dataset, ``--model-card-results`` a model's evaluation results).

The command parses options and calls :mod:`scrambled_bench.harness.report`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.options import (
    ConfidenceLevelOption,
    FormatChoice,
    NResamplesOption,
    ParserChoice,
    PrivateOption,
    SeedOption,
    option,
)

PAPER_OPTION = "--paper"
PAPER_ALL = "all"


def expand_bare_paper(argv: Sequence[str]) -> list[str]:
    """``report ... --paper`` with no selection means every paper model: Typer has no option with an optional
    value, so a bare ``--paper`` (last, or followed by another option or an existing run folder) becomes
    ``--paper all`` before parsing. Other commands are left alone.

    >>> expand_bare_paper(["report", "runs/a", "--paper"])
    ['report', 'runs/a', '--paper', 'all']
    >>> expand_bare_paper(["report", "runs/a", "--paper", "gpt-4,llama-2-70b", "--ci"])
    ['report', 'runs/a', '--paper', 'gpt-4,llama-2-70b', '--ci']
    >>> expand_bare_paper(["report", "--paper", "--ci", "runs/a"])
    ['report', '--paper', 'all', '--ci', 'runs/a']
    """
    argv = list(argv)
    if "report" not in argv[:1]:
        return argv
    expanded: list[str] = []
    for index, token in enumerate(argv):
        expanded.append(token)
        if token == PAPER_OPTION:
            following = argv[index + 1] if index + 1 < len(argv) else None
            if following is None or following.startswith("-") or Path(following).exists():
                expanded.append(PAPER_ALL)
    return expanded


def report(
    runs: Annotated[list[Path], typer.Argument(help="Run folders (a results.json, or a probe run's probe.json), one row group per model.")],
    fmt: Annotated[FormatChoice, option("--format", "Table format; html is one self-contained page with figures and settings.")] = FormatChoice.markdown,
    output: Annotated[Path | None, option("--output", "Write the report to this file instead of stdout.")] = None,
    ci: Annotated[bool, option("--ci", "Show bootstrap intervals beside each score.")] = False,
    plot: Annotated[Path | None, option("--plot", "Also draw the paper's figures (PNG and SVG) into this folder.")] = None,
    paper: Annotated[str | None, option(PAPER_OPTION, "Add the paper's models as reference rows and series: alone, all nineteen; or a comma-separated selection, any case (gpt-4,llama-2-70b).", show_default=False)] = None,
    params: Annotated[list[str] | None, option("--params", "A run's parameter count for the size figure (135M, 7B): VALUE for one run, MODEL=VALUE for several (repeatable); else read from the model's files where the run recorded them.", show_default=False)] = None,
    compare: Annotated[bool, option("--compare", "Paired significance of every run against the first, on the samples they share.")] = False,
    n_resamples: NResamplesOption = 1000,
    confidence_level: ConfidenceLevelOption = 0.95,
    seed: SeedOption = 0,
    push: Annotated[str | None, option("--push", "Add the runs to the Hub leaderboard dataset ORG/REPO.", show_default=False)] = None,
    private: PrivateOption = False,
    parser: Annotated[ParserChoice | None, option("--parser", "Re-read every run's stored outputs with this answer reader (default: as each run was scored); paper for numbers comparable with the paper's tables.")] = None,
    model_card_results: Annotated[str | None, option("--model-card-results", "Write the runs' .eval_results/*.yaml to the Hub model repository ORG/MODEL.", show_default=False)] = None,
    benchmark: Annotated[str | None, option("--benchmark", "The benchmark's Hub dataset for --model-card-results (default: the Hub build the runs read).", show_default=False)] = None,
) -> None:  # fmt: skip
    """Tables (and figures) in the shape of the paper's, from one or more run folders.

    Examples:

      scrambled-bench report runs/*   (markdown tables of every run)

      scrambled-bench report runs/* --paper gpt-4,llama-2-7b --plot figures/ --params 135M

      scrambled-bench report runs/a runs/b --compare --n-resamples 2000

      scrambled-bench report runs/* --paper --compare --format html -o report.html

      scrambled-bench report runs/my-run --push my-org/scrambled-bench-results
    """
    from scrambled_bench.harness.report import (
        RENDERERS,
        build_tables,
        check_same_build,
        label_runs,
        load_run,
        render_html,
        run_details,
        select_paper_models,
    )
    from scrambled_bench.harness.report.tables import reread
    from scrambled_bench.hub import check_repo_id
    from scrambled_bench.probing.report import plot_probe, probe_svgs, probe_table, split_probe_runs

    for value, flag in (
        (push, "--push"),
        (model_card_results, "--model-card-results"),
        (benchmark, "--benchmark"),
    ):
        if value is not None:
            check_repo_id(value, flag)
    references = select_paper_models(paper)
    probes, runs = split_probe_runs(runs)
    loaded = [load_run(path) for path in runs]
    if parser is not None:
        loaded = [reread(run, parser.value) for run in loaded]
    loaded = label_runs(loaded)
    check_same_build(loaded)
    comparison = _comparison(loaded, n_resamples, confidence_level, seed) if compare else []
    tables = build_tables(loaded, ci=ci, paper=references) if loaded else []
    tables += [probe_table(result, ci=ci) for result in probes.values()]
    if not tables:
        raise ScrambledBenchError("the runs hold no scored config to report")
    sizes = None
    if plot is not None or fmt.value == "html":
        from scrambled_bench.harness.report.params import run_parameters

        sizes = run_parameters(loaded, params or [])
    elif params:
        raise ScrambledBenchError("--params places runs in the size figure: add --plot DIR or --format html")

    if fmt.value == "html":
        from scrambled_bench.harness.report.figures import svg_figures

        figures = (
            [(one.name, one.caption, svg) for one, svg in svg_figures(loaded, paper=references, sizes=sizes)]
            if loaded
            else []
        )
        figures += [figure for folder, result in probes.items() for figure in probe_svgs(folder, result)]
        text = render_html(
            tables,
            figures=figures,
            comparison=comparison,
            runs=[(run.label, run_details(run)) for run in loaded],
        )
    else:
        text = RENDERERS[fmt.value]([*tables, *comparison])
    if output is not None:
        from scrambled_bench.io import atomic_write_text

        atomic_write_text(output, text)
        typer.echo(f"wrote {output}", err=True)
    else:
        typer.echo(text)
    if plot is not None:
        from scrambled_bench.harness.report.figures import plot_figures

        written = plot_figures(loaded, plot, paper=references, sizes=sizes) if loaded else []
        for folder, result in probes.items():
            written += plot_probe(result, plot / Path(folder).name)
        for path in written:
            typer.echo(f"wrote {path}", err=True)
    source_url = None
    if push is not None:
        from scrambled_bench.harness.report import push_to_hub

        url = push_to_hub(loaded, push, private=private)
        source_url = f"https://huggingface.co/datasets/{push}"
        typer.echo(
            f"pushed to {source_url} ({url})" if url else f"{push} already holds these runs: nothing pushed",
            err=True,
        )
    if model_card_results is not None:
        from scrambled_bench.harness.report.hub_eval import push_model_card_results

        files, url = push_model_card_results(
            loaded, model_card_results, benchmark=benchmark, source_url=source_url
        )
        where = f"https://huggingface.co/{model_card_results}"
        typer.echo(
            f"wrote {', '.join(files)} to {where} ({url})"
            if url
            else f"{where} already holds {', '.join(files)}",
            err=True,
        )


def _comparison(runs: list, n_resamples: int, confidence_level: float, seed: int) -> list:
    from scrambled_bench.harness.report.compare import CompareSettings, compare_runs, comparison_tables

    settings = CompareSettings(n_resamples=n_resamples, confidence_level=confidence_level, seed=seed)
    return comparison_tables(compare_runs(runs, settings), settings)
