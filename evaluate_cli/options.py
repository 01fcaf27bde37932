"""Options shared by several commands, declared once (as the ``hf`` CLI of huggingface_hub does); the choices
they take, built from the registries they name (backends, suites, tasks), never restated; and :func:`option`,
with which every command declares its own options.

A command's signature is a table: one option per line (type, flag, help, bounds, default), the header marked
``# fmt: skip`` so that the formatter does not fold it into four-line blocks that all look alike."""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from scrambled_bench.builder.build import DATASET_VERSION, build_tag
from scrambled_bench.builder.manifest import DEFAULT_BUILD_DIR
from scrambled_bench.builder.scrambler import known_type_names
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends import BACKENDS
from scrambled_bench.evaluation.settings import PROMPT_MODES
from scrambled_bench.evaluation.suites import SUITES
from scrambled_bench.integrations import TaskOption, get_harness, harness_names
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


def command_group(name: str, help: str) -> typer.Typer:
    """A Typer app of commands, as every group of this command line is made: help when given no command, no
    shell-completion commands, click's plain help (compact, greppable, flags without a value placeholder),
    and no rich traceback (``main`` turns every error a user can fix into one line).

    >>> command_group("list", "List things.").info.name
    'list'
    """
    return typer.Typer(
        name=name,
        help=help,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )


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


def harness_folder(given: tuple[str, Path] | None) -> tuple[str, Path] | None:
    """The (harness, folder) of ``--from HARNESS DIR``, the folder as a path (None: not given).

    >>> harness_folder(("lm-eval", "out"))
    ('lm-eval', PosixPath('out'))
    """
    return None if given is None else (given[0], Path(given[1]))


def refuse_options(given: Mapping[str, Any], reason: str) -> None:
    """A one-line error ``{flag} {reason}`` for the first of ``given`` (flag -> value) that was given: not
    None, not False (a flag), not empty.

    >>> refuse_options({"--split": None, "--streaming": False}, "does not apply")
    >>> refuse_options({"--split": None, "--config": "all"}, "does not apply to a harness task")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --config does not apply to a harness task
    """
    for flag, value in given.items():
        if value is not None and value is not False and value != []:
            raise ScrambledBenchError(f"{flag} {reason}")


TASK_SOURCES = "task_sources"
"""The parameter of a command of :func:`with_harness_task_options` that takes the options' values."""


def harness_task_options() -> dict[str, list[tuple[str, TaskOption]]]:
    """The task-definition options the registered harnesses declare, by flag: each harness that takes it,
    with its declaration.

    >>> [(name, option.metavar) for name, option in harness_task_options()["--include-path"]]
    [('lm-eval', '<dir>')]
    """
    found: dict[str, list[tuple[str, TaskOption]]] = {}
    for name in harness_names():
        for declared in get_harness(name).task_options:
            found.setdefault(declared.flag, []).append((name, declared))
    return found


def task_option_parameter(declared: Sequence[tuple[str, TaskOption]]) -> inspect.Parameter:
    """The command-line parameter of one task-definition option (declared by each harness of ``declared``):
    a text value, its help what each harness takes it for (``lm-eval: a folder of your own task YAMLs``), its
    metavar the first declaration's."""
    words = "; ".join(f"{name}: {option.help}" for name, option in declared)
    first = declared[0][1]
    info = typer.Option(first.flag, help=f"{words}.", metavar=first.metavar, show_default=False)
    return inspect.Parameter(
        first.parameter, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[str | None, info]
    )


class HarnessTaskOptions:
    """A command whose options grow by the task-definition options the registered harnesses declare
    (:attr:`~scrambled_bench.integrations.base.Harness.task_options`): Typer reads the command's signature
    (``__signature__``, computed from the registry each time the command line is built, so a harness
    registered at any time gets its options), and the values given reach the command as one mapping,
    flag -> value, in its ``task_sources`` parameter. An option whose name the command has already is left
    out, with a warning."""

    def __init__(self, command: Callable[..., Any]) -> None:
        functools.update_wrapper(self, command)
        self.command = command

    def _options(self) -> dict[str, list[tuple[str, TaskOption]]]:
        """The harnesses' options, by parameter name, less those whose name the command has already (each
        left out with a warning)."""
        own = inspect.signature(self.command).parameters
        options = {}
        for flag, declared in harness_task_options().items():
            parameter = declared[0][1].parameter
            if parameter in own:
                names = ", ".join(name for name, _ in declared)
                warnings.warn(
                    f"{flag} of {names} is left out: the command has an option of that name", stacklevel=2
                )
                continue
            options[parameter] = declared
        return options

    @property
    def __signature__(self) -> inspect.Signature:
        """The command's signature, less ``task_sources``, with one keyword parameter per harness option."""
        own = inspect.signature(self.command, eval_str=True)
        kept = [parameter for name, parameter in own.parameters.items() if name != TASK_SOURCES]
        added = [task_option_parameter(declared) for declared in self._options().values()]
        return own.replace(parameters=[*kept, *added])

    def __call__(self, **values: Any) -> Any:
        """The command, called with the harness options' values (those not None) as ``task_sources``."""
        task_sources = {
            declared[0][1].flag: value
            for name, declared in self._options().items()
            if (value := values.pop(name, None)) is not None
        }
        return self.command(**values, **{TASK_SOURCES: task_sources})


def with_harness_task_options(command: Callable[..., Any]) -> HarnessTaskOptions:
    """``command`` (which takes ``task_sources``) with the registered harnesses' task-definition options on
    its command line (:class:`HarnessTaskOptions`)."""
    return HarnessTaskOptions(command)
