"""The ``report`` command's library entry point: :func:`build_report` assembles run folders (and probe runs)
into tables, figures, an HTML page, a paired comparison and the Hub's records, as :class:`ReportOptions` asks.

The command (``evaluate_cli/report.py``) only parses options into a :class:`ReportOptions` and calls it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.hub import check_repo_id
from scrambled_bench.io import atomic_write_text
from scrambled_bench.report.figures import plot_figures, svg_figures
from scrambled_bench.report.hub import push_to_hub, refuse_incomplete
from scrambled_bench.report.hub_eval import push_model_card_results
from scrambled_bench.report.paper import select_paper_models
from scrambled_bench.report.params import run_parameters
from scrambled_bench.report.render import RENDERERS, render_html
from scrambled_bench.report.runs import Run, check_same_build, label_runs, load_runs, reread, run_details
from scrambled_bench.report.tables import build_tables
from scrambled_bench.tables import ReportTable


class OtherRun(Protocol):
    """A run folder of another kind than an evaluation run, shown beside them: its table, its figures as
    inline SVG (name, title, SVG text) and as files. A probe run is one (``probing.report.ProbeRun``); the
    command finds them among the folders it is given, so the report imports nothing of theirs."""

    folder: Path
    made_by: str
    """The command that made it (its intervals are that command's, not recomputed here)."""

    def table(self, *, ci: bool) -> ReportTable: ...

    def svgs(self) -> list[tuple[str, str, str]]: ...

    def plot(self, out_dir: Path) -> list[Path]: ...


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
    from_harness: tuple[str, Path] | None = None
    """(harness, folder): a harness's log folder of scrambled variants (``scramble HARNESS:SPEC``) to report
    instead of run folders (``--from HARNESS DIR``)."""
    allow_unknown_endpoint: bool = False
    """With ``from_harness``: pair runs whose logs do not tell their endpoint (``--allow-unknown-endpoint``)."""
    allow_zero_loglikelihood: bool = False
    """With ``from_harness``: accept logs whose log-likelihoods hold exactly 0.0 (refused otherwise)."""

    @property
    def interval_settings(self) -> dict[str, Any]:
        return {"confidence_level": self.confidence_level, "n_resamples": self.n_resamples, "seed": self.seed}

    @property
    def interval_flags(self) -> list[str]:
        """The interval options given, as the command spells them.

        >>> ReportOptions(n_resamples=100, seed=1).interval_flags
        ['--n-resamples', '--seed']
        """
        return [
            f"--{name.replace('_', '-')}"
            for name, value in self.interval_settings.items()
            if value is not None
        ]

    @property
    def shows_intervals(self) -> bool:
        """Whether the output shows each run's own intervals (which the interval settings then recompute)."""
        return self.ci or self.plot is not None or self.fmt == "html"

    @property
    def draws_figures(self) -> bool:
        return self.plot is not None or self.fmt == "html"


def build_report(
    paths: Sequence[Path],
    options: ReportOptions,
    *,
    others: Sequence[OtherRun] = (),
    emit: Callable[[str], None] = print,
    notify: Callable[[str], None] = _to_stderr,
) -> None:
    """Report the run folders in ``paths`` (and ``others``: probe runs, say) as ``options`` asks: the text
    goes to ``options.output`` or to ``emit``; what was written or pushed is told to ``notify``, one line
    each.

    Every check on the request comes before anything is computed, written or sent.

    >>> build_report([], ReportOptions(n_resamples=100))
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --n-resamples set(s) the intervals that --ci, --compare, --plot and --format html show; add one of them
    """
    if options.from_harness is not None:
        _report_harness_folder([*paths, *(other.folder for other in others)], options, emit, notify)
        return
    references = _check_request(paths, others, options)
    loaded = _load(paths, options, notify)
    sizes = _sizes(loaded, options)
    _deliver(_report_text(loaded, others, options, references, sizes, notify), options, emit, notify)
    if options.plot is not None:
        for path in _plot(loaded, others, options, references, sizes, notify):
            notify(f"wrote {path}")
    _publish(loaded, options, notify)


def _check_request(paths: Sequence[Path], others: Sequence[OtherRun], options: ReportOptions) -> list:
    """Refuse what cannot be asked of run folders, before any is read; the paper's models asked for."""
    for flag, given in (
        ("--allow-unknown-endpoint", options.allow_unknown_endpoint),
        ("--allow-zero-loglikelihood", options.allow_zero_loglikelihood),
    ):
        if given:
            raise ScrambledBenchError(f"{flag} applies to --from HARNESS DIR, not to run folders")
    for value, flag in (
        (options.push, "--push"),
        (options.model_card_results, "--model-card-results"),
        (options.benchmark, "--benchmark"),
    ):
        if value is not None:
            check_repo_id(value, flag)
    references = select_paper_models(options.paper)
    given = options.interval_flags
    if given and not (options.shows_intervals or options.compare):
        raise ScrambledBenchError(
            f"{', '.join(given)} set(s) the intervals that --ci, --compare, --plot and --format html show; "
            "add one of them"
        )
    if not paths and not others:
        raise ScrambledBenchError("give run folders to report (or --from HARNESS DIR)")
    for other in others:
        if given and options.shows_intervals:
            raise ScrambledBenchError(
                f"{', '.join(given)} recompute(s) the intervals of run folders; a {other.made_by} run's were "
                f"made by `{other.made_by}` ({other.folder}): report it without them, or rerun "
                f"`{other.made_by}` with them"
            )
    return references


def _load(paths: Sequence[Path], options: ReportOptions, notify: Callable[[str], None]) -> list[Run]:
    """The run folders read (those without results left out, each told to ``notify``), re-read where asked,
    labelled and checked to come from one build; a publication refuses a run left out or incomplete."""
    loaded, left_out = load_runs(paths)
    for value, flag in ((options.push, "--push"), (options.model_card_results, "--model-card-results")):
        if value is not None:  # before anything is computed or sent
            if left_out:  # a publication names the runs it holds: none goes missing on the way
                raise ScrambledBenchError(
                    f"{flag}: a run given cannot be published ({left_out[0]}); give only runs with results"
                )
            refuse_incomplete(loaded, flag, allow_incomplete=options.allow_incomplete)
    for reason in left_out:  # one line each; the others are reported
        notify(f"left out {reason}")
    if options.reader is not None or (options.interval_flags and options.shows_intervals):
        # the stored outputs read again: with another reader, or every interval at the asked level
        loaded = [reread(run, options.reader, intervals=options.interval_settings) for run in loaded]
    loaded = label_runs(loaded)
    check_same_build(loaded)
    return loaded


def _sizes(loaded: list[Run], options: ReportOptions) -> Any:
    """The runs' parameter counts where a figure places them (None where none is drawn)."""
    if not options.draws_figures:
        if options.params:
            raise ScrambledBenchError(
                "--params places runs in the size figure: add --plot DIR or --format html"
            )
        return None
    return run_parameters(loaded, list(options.params))


def _deliver(
    text: str, options: ReportOptions, emit: Callable[[str], None], notify: Callable[[str], None]
) -> None:
    """The report's text to ``options.output`` (atomically, told to ``notify``), else to ``emit``."""
    if options.output is not None:
        atomic_write_text(options.output, text)
        notify(f"wrote {options.output}")
    else:
        emit(text)


def _compare_settings(options: ReportOptions) -> Any:
    """The comparison's settings: those given, the defaults for the others."""
    # deferred: metrics.statistics loads numpy, which only --compare and --from HARNESS DIR need
    from scrambled_bench.metrics.statistics import CompareSettings

    return CompareSettings(
        **{name: value for name, value in options.interval_settings.items() if value is not None}
    )


RUN_ONLY_OPTIONS = {
    "paper": "--paper",
    "compare": "--compare",
    "push": "--push",
    "model_card_results": "--model-card-results",
    "benchmark": "--benchmark",
    "reader": "--parser",
    "ci": "--ci",
    "allow_incomplete": "--allow-incomplete",
}
"""Options about run folders, refused beside a harness's folder (whose tables always show their intervals;
``--plot`` draws its charts)."""


def _report_harness_folder(
    paths: Sequence[Path], options: ReportOptions, emit: Callable[[str], None], notify: Callable[[str], None]
) -> None:
    """``--from HARNESS DIR``: the variants' paired tables and, in HTML, their chart and logged instances,
    canonical beside scrambled, under a title naming the model and the harness; with ``--plot`` the charts as
    PNG and SVG files too."""
    # deferred: the variants' pairing and report load numpy and the harness registry (about 0.5 s), which a
    # report of run folders does without
    from scrambled_bench.integrations.pairing import unknown_endpoint_note
    from scrambled_bench.report.variants import variants_report

    harness, folder = options.from_harness  # type: ignore[misc]
    flag = f"--from {harness}"
    if paths:
        raise ScrambledBenchError(f"give run folders or {flag} DIR, not both")
    if options.params:
        raise ScrambledBenchError(f"--params applies to run folders, not to {flag}")
    for name, option in RUN_ONLY_OPTIONS.items():
        if getattr(options, name) not in (None, False):
            raise ScrambledBenchError(f"{option} applies to run folders, not to {flag}")
    report = variants_report(
        harness,
        Path(folder),
        _compare_settings(options),
        allow_unknown_endpoint=options.allow_unknown_endpoint,
        allow_zero_loglikelihood=options.allow_zero_loglikelihood,
    )
    if report.unknown_endpoints:
        notify(unknown_endpoint_note(report.unknown_endpoints))
    for warning in report.warnings:
        notify(warning)
    _deliver(report.render(options.fmt), options, emit, notify)
    if options.plot is not None:
        for path in report.plot(options.plot):
            notify(f"wrote {path}")


def _report_text(
    loaded: list[Run],
    others: Sequence[OtherRun],
    options: ReportOptions,
    references: list,
    sizes: Any,
    notify: Callable[[str], None] = _to_stderr,
) -> str:
    """The tables (with the comparison), rendered in the asked format; html adds the figures and settings."""
    comparison = _comparison(loaded, options) if options.compare else []
    tables = build_tables(loaded, ci=options.ci, paper=references) if loaded else []
    tables += [other.table(ci=options.ci) for other in others]
    if not tables:
        raise ScrambledBenchError("the runs hold no scored config to report")
    if options.fmt != "html":
        return RENDERERS[options.fmt]([*tables, *comparison])
    figures = (
        [
            (one.name, one.caption, svg)
            for one, svg in svg_figures(loaded, paper=references, sizes=sizes, notify=notify)
        ]
        if loaded
        else []
    )
    figures += [figure for other in others for figure in other.svgs()]
    return render_html(
        tables,
        figures=figures,
        comparison=comparison,
        runs=[(run.label, run_details(run)) for run in loaded],
    )


def _plot(
    loaded: list[Run],
    others: Sequence[OtherRun],
    options: ReportOptions,
    references: list,
    sizes: Any,
    notify: Callable[[str], None],
) -> list[Path]:
    """The figures as PNG and SVG files under ``options.plot``; the paths written (a figure not drawn is
    told to ``notify``, with why)."""
    assert options.plot is not None
    written = (
        plot_figures(loaded, options.plot, paper=references, sizes=sizes, notify=notify) if loaded else []
    )
    for other in others:
        written += other.plot(options.plot)
    return written


def _publish(loaded: list[Run], options: ReportOptions, notify: Callable[[str], None]) -> None:
    """``--push`` (a leaderboard dataset) and ``--model-card-results`` (a model's evaluation results)."""
    source_url = None
    if options.push is not None:
        url = push_to_hub(loaded, options.push, private=options.private)
        source_url = f"https://huggingface.co/datasets/{options.push}"
        notify(
            f"pushed to {source_url} ({url})"
            if url
            else f"{options.push} already holds these runs: nothing pushed"
        )
    if options.model_card_results is not None:
        files, url = push_model_card_results(
            loaded, options.model_card_results, benchmark=options.benchmark, source_url=source_url
        )
        where = f"https://huggingface.co/{options.model_card_results}"
        notify(
            f"wrote {', '.join(files)} to {where} ({url})"
            if url
            else f"{where} already holds {', '.join(files)}"
        )


def _comparison(runs: list[Run], options: ReportOptions) -> list:
    """``--compare``: each run paired with the first, as tables."""
    # deferred: the paired statistics load numpy, for --compare only
    from scrambled_bench.report.compare import compare_runs, comparison_tables

    settings = _compare_settings(options)
    return comparison_tables(compare_runs(runs, settings), settings)


__all__ = ["ReportOptions", "build_report"]
