"""``report``: paper-shaped tables and figures from one or more run folders, the paper's models beside them
(``--paper``), a paired comparison (``--compare``), one self-contained HTML file (``--format html``), and the
Hub (``--push`` a leaderboard dataset, ``--model-card-results`` a model's evaluation results).

The command parses options and calls :mod:`scrambled_bench.report`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from scrambled_bench.evaluate_cli.options import (
    AllowUnknownEndpointOption,
    AllowZeroLoglikelihoodOption,
    FormatChoice,
    PrivateOption,
    ReaderChoice,
    harness_folder,
    open_unit_interval,
    option,
)
from scrambled_bench.report.build import ReportOptions, build_report

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
    runs: Annotated[list[Path] | None, typer.Argument(help="Run folders (a results.json, or a probe run's probe.json), one row group per model.", show_default=False)] = None,
    fmt: Annotated[FormatChoice, option("--format", "Table format; html is one self-contained page with figures and settings.")] = FormatChoice.markdown,
    output: Annotated[Path | None, option("--output", "Write the report to this file instead of stdout.")] = None,
    ci: Annotated[bool, option("--ci", "Show each score's interval beside it (Wilson for Acc, BCa bootstrap for ED, RR, RPG); each table notes their level and method.")] = False,
    plot: Annotated[Path | None, option("--plot", "Also draw the paper's figures (PNG and SVG) into this folder; with --from, the variants' chart of each task.")] = None,
    paper: Annotated[str | None, option(PAPER_OPTION, "Add the paper's models as reference rows and series: alone, all nineteen; or a comma-separated selection, any case (gpt-4,llama-2-70b).", show_default=False)] = None,
    params: Annotated[list[str] | None, option("--params", "A run's parameter count for the size figure (135M, 7B): VALUE for one run, MODEL=VALUE for several (repeatable); else read from the model's files where the run recorded them.", show_default=False)] = None,
    compare: Annotated[bool, option("--compare", "Paired significance of every run against the first, on the samples they share.")] = False,
    n_resamples: Annotated[int | None, option("--n-resamples", "Bootstrap resamples (default: as each run stored them for --ci, --plot and html; 1000 for --compare).", min=1, show_default=False)] = None,
    confidence_level: Annotated[float | None, option("--confidence-level", "Interval level, between 0 and 1 (both excluded), e.g. 0.9: recomputes each run's intervals (Wilson for Acc, BCa bootstrap for ED, RR, RPG) for --ci, --plot and html from its stored outputs, and sets --compare's (default: as each run stored them; 0.95 for --compare).", callback=open_unit_interval, show_default=False)] = None,
    seed: Annotated[int | None, option("--seed", "Bootstrap seed (default: as each run stored it; 0 for --compare).", min=0, show_default=False)] = None,
    push: Annotated[str | None, option("--push", "Add the runs to the Hub leaderboard dataset ORG/REPO.", show_default=False)] = None,
    private: PrivateOption = False,
    reader: Annotated[ReaderChoice | None, option("--parser", "Re-read every run's stored outputs with this answer reader (default: as each run was scored); paper for numbers comparable with the paper's tables.")] = None,
    model_card_results: Annotated[str | None, option("--model-card-results", "Write the runs' .eval_results/*.yaml to the Hub model repository ORG/MODEL.", show_default=False)] = None,
    benchmark: Annotated[str | None, option("--benchmark", "The benchmark's Hub dataset for --model-card-results (default: the Hub build the runs read).", show_default=False)] = None,
    allow_incomplete: Annotated[bool, option("--allow-incomplete", "Let --push and --model-card-results publish incomplete runs (requests failed after their retries); their rows and entries are marked incomplete.")] = False,
    from_: Annotated[tuple[str, Path] | None, option("--from", "Instead of run folders: a harness's log folder of the variants made by `scramble HARNESS:TASK` (HARNESS: lm-eval, lighteval, inspect or any registered harness): per task, the score per type with the paired differences; html adds a chart and the logged instances, canonical beside scrambled.", metavar="HARNESS DIR", show_default=False)] = None,
    allow_unknown_endpoint: AllowUnknownEndpointOption = False,
    allow_zero_loglikelihood: AllowZeroLoglikelihoodOption = False,
) -> None:  # fmt: skip
    """Tables (and figures) in the shape of the paper's, from one or more run folders.

    Examples:

      scrambled-bench report runs/*   (markdown tables of every run)

      scrambled-bench report runs/* --paper gpt-4,llama-2-7b --plot figures/ --params 135M

      scrambled-bench report runs/a runs/b --compare --n-resamples 2000

      scrambled-bench report runs/* --paper --compare --format html -o report.html

      scrambled-bench report runs/my-run --push my-org/scrambled-bench-results

      scrambled-bench report --from lm-eval lm-out --format html -o arc-scrambled.html

      scrambled-bench report --from lm-eval lm-out --plot figures/
    """
    # deferred: the probe runs' reader imports torch (through probing), which only a report of runs needs
    from scrambled_bench.probing.report import probe_runs

    options = ReportOptions(
        fmt=fmt.value, output=output, ci=ci, plot=plot, paper=paper, params=tuple(params or ()), compare=compare,
        n_resamples=n_resamples, confidence_level=confidence_level, seed=seed, push=push, private=private,
        reader=reader.value if reader else None, model_card_results=model_card_results, benchmark=benchmark,
        allow_incomplete=allow_incomplete, from_harness=harness_folder(from_),
        allow_unknown_endpoint=allow_unknown_endpoint, allow_zero_loglikelihood=allow_zero_loglikelihood,
    )  # fmt: skip
    others, folders = probe_runs(runs or [])  # probe runs beside evaluation runs: shown by their own code
    build_report(
        folders, options, others=others, emit=typer.echo, notify=lambda line: typer.echo(line, err=True)
    )
