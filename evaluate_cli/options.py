"""Options shared by several commands, declared once (as the ``hf`` CLI of huggingface_hub does), and the
choices they take, built from the registries they name (backends, suites, tasks), never restated."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from scrambled_bench.builder.manifest import DEFAULT_BUILD_DIR
from scrambled_bench.builder.scrambler import known_type_names
from scrambled_bench.harness.backends import BACKENDS
from scrambled_bench.harness.settings import PROMPT_MODES
from scrambled_bench.harness.suites import SUITES
from scrambled_bench.metrics.readers import READERS


def choices_enum(name: str, values: list[str]) -> type[Enum]:
    """A str Enum whose members are ``values`` (Typer shows and checks them as the option's choices)."""
    return Enum(name, {value.replace("-", "_"): value for value in values}, type=str)  # type: ignore[return-value]


BackendChoice = choices_enum("BackendChoice", list(BACKENDS))
SuiteChoice = choices_enum("SuiteChoice", list(SUITES))
PromptModeChoice = choices_enum("PromptModeChoice", list(PROMPT_MODES))
FormatChoice = choices_enum("FormatChoice", ["markdown", "csv", "html"])
ParserChoice = choices_enum("ParserChoice", list(READERS))

TYPES_HELP = f"Scramble types, repeated or comma-separated: {known_type_names()}."

TypesOption = Annotated[list[str] | None, typer.Option("--types", "-t", help=TYPES_HELP, show_default=False)]
SeedOption = Annotated[int, typer.Option("--seed", min=0, help="Seed (same seed, same output).")]
BuildDirOption = Annotated[
    Path, typer.Option("--out", "-o", help="Build folder (named like the dataset, for load_dataset).")
]
DEFAULT_BUILD = DEFAULT_BUILD_DIR
ConfidenceLevelOption = Annotated[
    float, typer.Option("--confidence-level", min=0.0, max=1.0, help="Bootstrap interval level, in (0, 1).")
]
NResamplesOption = Annotated[int, typer.Option("--n-resamples", min=1, help="Bootstrap resamples.")]
PrivateOption = Annotated[bool, typer.Option("--private", help="Create the Hub repository as private.")]
ProgressOption = Annotated[bool, typer.Option("--progress/--no-progress", help="Show progress bars.")]
ParserOption = Annotated[
    ParserChoice,
    typer.Option(
        "--parser",
        help="How answers are read: careful (the default; for your own models) or paper (the authors' exact "
        "rules, for numbers comparable with the paper's tables).",
    ),
]
