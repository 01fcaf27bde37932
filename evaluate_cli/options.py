"""Options shared by several commands, declared once (as the ``hf`` CLI of huggingface_hub does); the choices
they take, built from the registries they name (backends, suites, tasks), never restated; and :func:`option`,
with which every command declares its own options.

A command's signature is a table: one option per line (type, flag, help, bounds, default), the header marked
``# fmt: skip`` so that the formatter does not fold it into four-line blocks that all look alike."""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from scrambled_bench.builder.manifest import DEFAULT_BUILD_DIR
from scrambled_bench.builder.scrambler import known_type_names
from scrambled_bench.evaluation.backends import BACKENDS
from scrambled_bench.evaluation.settings import PROMPT_MODES
from scrambled_bench.evaluation.suites import SUITES
from scrambled_bench.metrics.readers import READERS

SHORT_FLAGS: dict[str, str] = {
    "--backend": "-b",
    "--columns": "-c",
    "--datasets": "-d",
    "--format": "-f",
    "--model": "-m",
    "--limit": "-n",
    "--out": "-o",  # -o is where a command writes: a folder (--out) or a file (--output)
    "--output": "-o",
    "--suite": "-s",
    "--types": "-t",
}
"""Every short option, by the long one it abbreviates: one table, so a letter means one thing in every
command (``-s`` is always ``--suite``, never ``--sources``)."""


def option(flag: str, help: str, **settings: Any) -> Any:
    """``typer.Option(flag[, its short form], help=help, **settings)``: the flag and what it does first, then
    its settings (``min``, ``max``, ``show_default``), so that one declaration reads as one short call. The
    short form comes from :data:`SHORT_FLAGS`."""
    short = SHORT_FLAGS.get(flag)
    return typer.Option(flag, *([short] if short else []), help=help, **settings)


def with_build_tag(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` with ``{build_tag}`` in its docstring (its ``--help``) replaced by the Hub tag of this
    version's build (``v`` and :data:`~scrambled_bench.builder.build.DATASET_VERSION`), so the help never
    cites a tag the build does not have.

    >>> from scrambled_bench.builder.build import DATASET_VERSION
    >>> def show():
    ...     'load_dataset(..., revision="{build_tag}")'
    >>> with_build_tag(show).__doc__ == f'load_dataset(..., revision="v{DATASET_VERSION}")'
    True
    """
    from scrambled_bench.builder.build import DATASET_VERSION, build_tag

    command.__doc__ = (command.__doc__ or "").replace(
        "{build_tag}", build_tag(DATASET_VERSION, seed=0, window=None)
    )
    return command


def choices_enum(name: str, values: list[str]) -> type[Enum]:
    """A str Enum whose members are ``values`` (Typer shows and checks them as the option's choices)."""
    return Enum(name, {value.replace("-", "_"): value for value in values}, type=str)  # type: ignore[return-value]


BackendChoice = choices_enum("BackendChoice", list(BACKENDS))
SuiteChoice = choices_enum("SuiteChoice", list(SUITES))
PromptModeChoice = choices_enum("PromptModeChoice", list(PROMPT_MODES))
FormatChoice = choices_enum("FormatChoice", ["markdown", "csv", "html"])
ReaderChoice = choices_enum("ReaderChoice", list(READERS))

TYPES_HELP = (
    f"Scramble types, repeated or comma-separated: {known_type_names()}. Their definitions: "
    "`scrambled-bench list types`, and with worked examples the documentation's Reference > Scramble types "
    "page."
)

TypesOption = Annotated[list[str] | None, option("--types", TYPES_HELP, show_default=False)]
SeedOption = Annotated[int, option("--seed", "Seed (same seed, same output).", min=0)]
BuildDirOption = Annotated[Path, option("--out", "Build folder (named like the dataset, for load_dataset).")]
DEFAULT_BUILD = DEFAULT_BUILD_DIR


def open_unit_interval(value: float | None) -> float | None:
    """A confidence level's check: strictly between 0 and 1 (a 100% or 0% interval is no interval).

    >>> open_unit_interval(0.5), open_unit_interval(None)
    (0.5, None)
    >>> open_unit_interval(1.0)
    Traceback (most recent call last):
    ...
    typer._click.exceptions.BadParameter: must be between 0 and 1, both excluded; got 1
    """
    if value is not None and not 0 < value < 1:
        raise typer.BadParameter(f"must be between 0 and 1, both excluded; got {value:g}")
    return value


def percent_of_rows(value: float | None) -> float | None:
    """``--sample-rate``'s check, as its help states it: a percentage in (0, 100] (0% scrambles nothing).
    Typer's ``min=``/``max=`` have no open bound, and would show ``[0<=x<=100]``.

    >>> percent_of_rows(60.0), percent_of_rows(100.0), percent_of_rows(None)
    (60.0, 100.0, None)
    >>> percent_of_rows(0.0)
    Traceback (most recent call last):
    ...
    typer._click.exceptions.BadParameter: must be in (0, 100] (percent of the rows), got 0
    """
    import math

    if value is not None and (math.isnan(value) or not 0 < value <= 100):
        raise typer.BadParameter(f"must be in (0, 100] (percent of the rows), got {value:g}")
    return value


CONFIDENCE_HELP = (
    "Interval level, between 0 and 1 (both excluded), e.g. 0.95: Wilson intervals for Acc, BCa bootstrap "
    "(percentile where BCa is undefined) for ED, RR and RPG."
)
ConfidenceLevelOption = Annotated[
    float, option("--confidence-level", CONFIDENCE_HELP, callback=open_unit_interval)
]
NResamplesOption = Annotated[int, option("--n-resamples", "Bootstrap resamples.", min=1)]
PrivateOption = Annotated[bool, option("--private", "Create the Hub repository as private.")]
ProgressOption = Annotated[
    bool,
    option(
        "--progress/--no-progress",
        "Show progress bars (--no-progress also silences transformers' and the Hub's bars and warnings).",
    ),
]
ReaderOption = Annotated[
    ReaderChoice,
    option(
        "--parser",
        "How answers are read: careful (the default; for your own models) or paper (the authors' exact "
        "rules, for numbers comparable with the paper's tables).",
    ),
]


FROM_HELP = (
    "A harness's log folder instead of prediction FILES: HARNESS is lm-eval, lighteval, inspect or any "
    "registered harness, DIR the folder its logs went to (lm_eval --output_path with --log_samples, lighteval "
    "--output-dir with --save-details, inspect eval --log-dir)."
)
FromOption = Annotated[
    tuple[str, Path] | None, option("--from", FROM_HELP, metavar="HARNESS DIR", show_default=False)
]
AllowUnknownEndpointOption = Annotated[
    bool,
    option(
        "--allow-unknown-endpoint",
        "With --from: pair runs whose logs do not tell the endpoint they ran against (Inspect logs of a task "
        "not written by `scramble inspect:`, run without --model-base-url; older logs), which are refused "
        "otherwise: runs against two endpoints would not be told apart. Said on stderr and recorded.",
    ),
]
ALLOW_ZERO_LOGLIKELIHOOD_HELP = (
    "With --from: accept log-likelihood results in which a choice has a log-likelihood of exactly 0.0 "
    "(probability 1), refused otherwise: an endpoint that echoes the prompt without the generated token gives "
    "that to every single-token choice (check one with `scrambled-bench check-endpoint`). Recorded in the output."
)
AllowZeroLoglikelihoodOption = Annotated[
    bool, option("--allow-zero-loglikelihood", ALLOW_ZERO_LOGLIKELIHOOD_HELP)
]
LEGACY_FROM = {"--from-lm-eval": "lm-eval", "--from-lighteval": "lighteval", "--from-inspect": "inspect"}
"""The options ``--from HARNESS DIR`` replaced, still taken (hidden) with a one-line deprecation note."""


def legacy_from(flag: str) -> Any:
    """A deprecated ``--from-<harness> DIR`` option: hidden from ``--help``, still taken."""
    return typer.Option(flag, hidden=True, help=f"Deprecated: --from {LEGACY_FROM[flag]} DIR.")


def harness_folder(given: tuple[str, Path] | None, legacy: dict[str, Path | None]) -> tuple[str, Path] | None:
    """The (harness, folder) a command is asked to read, from ``--from HARNESS DIR`` or one of the deprecated
    ``--from-<harness> DIR`` options (with a note on stderr); a one-line error where several are given.

    >>> harness_folder(("lm-eval", Path("out")), {"--from-inspect": None})
    ('lm-eval', PosixPath('out'))
    >>> harness_folder(None, {"--from-inspect": None}) is None
    True
    """
    from scrambled_bench.errors import ScrambledBenchError

    asked = [(LEGACY_FROM[flag], path, flag) for flag, path in legacy.items() if path is not None]
    if given is not None:
        asked.append((given[0], Path(given[1]), "--from"))
    if len(asked) > 1:
        raise ScrambledBenchError("give one harness folder (--from HARNESS DIR) per call")
    if not asked:
        return None
    name, path, flag = asked[0]
    if flag != "--from":
        typer.echo(f"note: {flag} DIR is deprecated; use --from {name} DIR", err=True)
    return name, path
