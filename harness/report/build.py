"""The ``report`` command's library entry point: :func:`build_report` assembles run folders and probe folders
into tables, figures, an HTML page, a paired comparison and the Hub's records, as :class:`ReportOptions` asks.

The command (``evaluate_cli/report.py``) only parses options into a :class:`ReportOptions` and calls it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr)


@dataclass(frozen=True)
class ReportOptions:
    """What ``report`` is asked for; each field is the command's option of the same name."""

    fmt: str = "markdown"
    """``markdown``, ``csv`` or ``html`` (one self-contained page with figures and settings)."""
    output: Path | None = None
    """Where the text goes (atomically); None: handed to ``emit``."""
    ci: bool = False
    plot: Path | None = None
    paper: str | None = None
    params: Sequence[str] = ()
    compare: bool = False
    n_resamples: int | None = None
    confidence_level: float | None = None
    seed: int | None = None
    push: str | None = None
    private: bool = False
    reader: str | None = None
    """Re-read every run's stored outputs with this answer reader (``--parser``)."""
    model_card_results: str | None = None
    benchmark: str | None = None
    allow_incomplete: bool = False
    from_lm_eval: Path | None = None
    """An lm-eval ``--output_path`` folder of derived tasks (``scramble lm-eval:TASK``) to report instead of runs."""
    from_lighteval: Path | None = None
    """The same for a lighteval ``--output-dir`` folder (``scramble lighteval:SPEC``)."""

    @property
    def harness_folder(self) -> tuple[str, Path] | None:
        """(harness, folder) where a harness's output folder is reported instead of run folders."""
        given = [
            (name, path)
            for name, path in (("lm-eval", self.from_lm_eval), ("lighteval", self.from_lighteval))
            if path
        ]
        if len(given) > 1:
            raise ScrambledBenchError("give --from-lm-eval or --from-lighteval, not both")
        return given[0] if given else None

    @property
    def interval_settings(self) -> dict[str, Any]:
        return {"confidence_level": self.confidence_level, "n_resamples": self.n_resamples, "seed": self.seed}

    @property
    def shows_intervals(self) -> bool:
        """Whether the output shows each run's own intervals (which the interval settings then recompute)."""
        return self.ci or self.plot is not None or self.fmt == "html"


def build_report(
    paths: Sequence[Path],
    options: ReportOptions,
    *,
    emit: Callable[[str], None] = print,
    notify: Callable[[str], None] = _to_stderr,
) -> None:
    """Report the run folders (and probe folders) in ``paths`` as ``options`` asks: the text goes to
    ``options.output`` or to ``emit``; what was written or pushed is told to ``notify``, one line each.

    Every check on the request comes before anything is computed, written or sent.

    >>> build_report([], ReportOptions(n_resamples=100))
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --n-resamples set(s) the intervals that --ci, --compare, --plot and --format html show; add one of them
    """
    from scrambled_bench.harness.report.hub import refuse_incomplete
    from scrambled_bench.harness.report.paper import select_paper_models
    from scrambled_bench.harness.report.runs import check_same_build, label_runs, load_run, reread
    from scrambled_bench.hub import check_repo_id
    from scrambled_bench.probing.report import split_probe_runs

    if options.harness_folder is not None:
        _report_harness_folder(paths, options, emit, notify)
        return
    for value, flag in (
        (options.push, "--push"),
        (options.model_card_results, "--model-card-results"),
        (options.benchmark, "--benchmark"),
    ):
        if value is not None:
            check_repo_id(value, flag)
    references = select_paper_models(options.paper)
    intervals = options.interval_settings
    given = [f"--{name.replace('_', '-')}" for name, value in intervals.items() if value is not None]
    if given and not (options.shows_intervals or options.compare):
        raise ScrambledBenchError(
            f"{', '.join(given)} set(s) the intervals that --ci, --compare, --plot and --format html show; "
            "add one of them"
        )
    if not paths:
        raise ScrambledBenchError("give run folders to report (or --from-lm-eval / --from-lighteval DIR)")
    probes, runs = split_probe_runs(list(paths))
    if given and options.shows_intervals and probes:
        raise ScrambledBenchError(
            f"{', '.join(given)} recompute(s) the intervals of run folders; a probe run's were made by `probe` "
            f"({', '.join(map(str, probes))}): report it without them, or rerun `probe` with them"
        )
    loaded = [load_run(path) for path in runs]
    for value, flag in ((options.push, "--push"), (options.model_card_results, "--model-card-results")):
        if value is not None:  # before anything is computed or sent
            refuse_incomplete(loaded, flag, allow_incomplete=options.allow_incomplete)
    if options.reader is not None or (given and options.shows_intervals):
        # the stored outputs read again: with another reader, or every interval at the asked level
        loaded = [reread(run, options.reader, intervals=intervals) for run in loaded]
    loaded = label_runs(loaded)
    check_same_build(loaded)
    draws_figures = options.plot is not None or options.fmt == "html"
    if options.params and not draws_figures:
        raise ScrambledBenchError("--params places runs in the size figure: add --plot DIR or --format html")
    sizes = _sizes(loaded, options) if draws_figures else None

    text = _report_text(loaded, probes, options, references, sizes, notify)
    if options.output is not None:
        from scrambled_bench.io import atomic_write_text

        atomic_write_text(options.output, text)
        notify(f"wrote {options.output}")
    else:
        emit(text)
    if options.plot is not None:
        for path in _plot(loaded, probes, options, references, sizes, notify):
            notify(f"wrote {path}")
    _publish(loaded, options, notify)


RUN_ONLY_OPTIONS = {
    "paper": "--paper",
    "plot": "--plot",
    "compare": "--compare",
    "push": "--push",
    "model_card_results": "--model-card-results",
    "benchmark": "--benchmark",
    "reader": "--parser",
    "ci": "--ci",
    "allow_incomplete": "--allow-incomplete",
}
"""Options about run folders, refused beside a harness's folder (whose tables always show their intervals)."""


def _report_harness_folder(
    paths: Sequence[Path], options: ReportOptions, emit: Callable[[str], None], notify: Callable[[str], None]
) -> None:
    """``--from-lm-eval`` / ``--from-lighteval``: the derived tasks' paired tables, and in HTML their logged
    instances, original beside scrambled."""
    from scrambled_bench.harness.report.derived import HARNESS_OPTIONS, derived_report
    from scrambled_bench.harness.report.render import RENDERERS, render_html

    source, folder = options.harness_folder  # type: ignore[misc]
    flag = HARNESS_OPTIONS[source]
    if paths:
        raise ScrambledBenchError(f"give run folders or {flag} DIR, not both")
    if options.params:
        raise ScrambledBenchError(f"--params applies to run folders, not to {flag}")
    for name, option in RUN_ONLY_OPTIONS.items():
        if getattr(options, name) not in (None, False):
            raise ScrambledBenchError(f"{option} applies to run folders, not to {flag}")
    tables, instances = derived_report(
        source,
        Path(folder),
        confidence_level=options.confidence_level if options.confidence_level is not None else 0.95,
        n_resamples=options.n_resamples if options.n_resamples is not None else 1000,
        seed=options.seed if options.seed is not None else 0,
    )
    if options.fmt == "html":
        text = render_html(tables, instances=instances, title=f"Scrambled variants in {folder}")
    else:
        text = RENDERERS[options.fmt](tables)
    if options.output is not None:
        from scrambled_bench.io import atomic_write_text

        atomic_write_text(options.output, text)
        notify(f"wrote {options.output}")
    else:
        emit(text)


def _report_text(
    loaded: list,
    probes: dict,
    options: ReportOptions,
    references: list,
    sizes: Any,
    notify: Callable[[str], None] = _to_stderr,
) -> str:
    """The tables (with the comparison), rendered in the asked format; html adds the figures and settings."""
    from scrambled_bench.harness.report.render import RENDERERS, render_html
    from scrambled_bench.harness.report.runs import run_details
    from scrambled_bench.harness.report.tables import build_tables
    from scrambled_bench.probing.report import probe_svgs, probe_table

    comparison = _comparison(loaded, options) if options.compare else []
    tables = build_tables(loaded, ci=options.ci, paper=references) if loaded else []
    tables += [probe_table(result, ci=options.ci) for result in probes.values()]
    if not tables:
        raise ScrambledBenchError("the runs hold no scored config to report")
    if options.fmt != "html":
        return RENDERERS[options.fmt]([*tables, *comparison])
    from scrambled_bench.harness.report.figures import svg_figures

    figures = (
        [
            (one.name, one.caption, svg)
            for one, svg in svg_figures(loaded, paper=references, sizes=sizes, notify=notify)
        ]
        if loaded
        else []
    )
    figures += [figure for folder, result in probes.items() for figure in probe_svgs(folder, result)]
    return render_html(
        tables,
        figures=figures,
        comparison=comparison,
        runs=[(run.label, run_details(run)) for run in loaded],
    )


def _sizes(loaded: list, options: ReportOptions) -> Any:
    from scrambled_bench.harness.report.params import run_parameters

    return run_parameters(loaded, list(options.params))


def _plot(
    loaded: list,
    probes: dict,
    options: ReportOptions,
    references: list,
    sizes: Any,
    notify: Callable[[str], None],
) -> list[Path]:
    """The figures as PNG and SVG files under ``options.plot``; the paths written (a figure not drawn is
    told to ``notify``, with why)."""
    from scrambled_bench.harness.report.figures import plot_figures
    from scrambled_bench.probing.report import plot_probe

    assert options.plot is not None
    written = (
        plot_figures(loaded, options.plot, paper=references, sizes=sizes, notify=notify) if loaded else []
    )
    for folder, result in probes.items():
        written += plot_probe(result, options.plot / Path(folder).name)
    return written


def _publish(loaded: list, options: ReportOptions, notify: Callable[[str], None]) -> None:
    """``--push`` (a leaderboard dataset) and ``--model-card-results`` (a model's evaluation results)."""
    source_url = None
    if options.push is not None:
        from scrambled_bench.harness.report.hub import push_to_hub

        url = push_to_hub(loaded, options.push, private=options.private)
        source_url = f"https://huggingface.co/datasets/{options.push}"
        notify(
            f"pushed to {source_url} ({url})"
            if url
            else f"{options.push} already holds these runs: nothing pushed"
        )
    if options.model_card_results is not None:
        from scrambled_bench.harness.report.hub_eval import push_model_card_results

        files, url = push_model_card_results(
            loaded, options.model_card_results, benchmark=options.benchmark, source_url=source_url
        )
        where = f"https://huggingface.co/{options.model_card_results}"
        notify(
            f"wrote {', '.join(files)} to {where} ({url})"
            if url
            else f"{where} already holds {', '.join(files)}"
        )


def _comparison(runs: list, options: ReportOptions) -> list:
    from scrambled_bench.harness.report.compare import CompareSettings, compare_runs, comparison_tables

    given = {
        "n_resamples": options.n_resamples,
        "confidence_level": options.confidence_level,
        "seed": options.seed,
    }
    settings = CompareSettings(**{name: value for name, value in given.items() if value is not None})
    return comparison_tables(compare_runs(runs, settings), settings)


__all__ = ["ReportOptions", "build_report"]
