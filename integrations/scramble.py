"""``scrambled-bench scramble HARNESS:SPEC``: a harness's task turned into scrambled variants that the
harness runs unchanged, for any registered harness.

The options are checked here, the same way for every harness (what a harness takes it declares:
``task_options``, ``demos``, ``pushes``); the task is resolved by the harness's own registry
(:meth:`~.base.Harness.resolve`) and its variants written by the harness (:meth:`~.base.Harness.write_variants`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scrambled_bench.builder.build import check_output_folder
from scrambled_bench.builder.scramble import is_scramble_output, variants_for
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.hub import check_repo_id
from scrambled_bench.integrations.base import Harness, ScrambleRequest, WrittenVariants
from scrambled_bench.integrations.outputs import previous_types
from scrambled_bench.integrations.registry import harness_of


def scramble_harness_task(
    source: str,
    *,
    columns: Sequence[str],
    types: Sequence[str] | None,
    out: Path | None,
    task_sources: Mapping[str, str | Path | None] | None = None,
    demos: str | None = None,
    seed: int = 0,
    num_proc: int = 1,
    command: str | None = None,
    push: str | None = None,
    private: bool = False,
    api: Any | None = None,
    replace: bool = False,
) -> WrittenVariants:
    """Scramble the harness task(s) ``source`` (``NAME:SPEC``) names into ``out``: the variants its harness
    writes, all or nothing. ``task_sources`` maps the harness's own task-definition options
    (:attr:`~.base.Harness.task_options`: ``--include-path``, ``--custom-tasks``) to their values; one the
    harness does not declare is refused. With ``push`` (one task; harnesses whose variants read data) the
    task's scrambled data is also uploaded to that Hub dataset; ``api`` replaces ``huggingface_hub.HfApi``
    (tests). A previous output of the same source and settings in ``out`` grows by the types asked for
    (:mod:`.outputs`), and the result names those it kept (``kept``); ``replace`` starts over.

    >>> scramble_harness_task("lm-eval:arc_easy", columns=["question"], types=["kfl"], out=None)
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: give --out DIR: the variants' task files read the scrambled data from there
    """
    harness, spec = harness_task(source)
    if out is None:
        raise ScrambledBenchError(
            "give --out DIR: the variants' task files read the scrambled data from there"
        )
    given = given_task_sources(harness, task_sources or {})
    check_harness_options(harness, demos=demos, push=push)
    columns = checked_columns(harness, columns)
    types = [variant.scramble_type for variant in variants_for(types, None, None)]
    if push is not None:
        check_repo_id(push, "--push")
    out = checked_output(out)
    if demos is None and harness.demos:
        demos = "original"
    kept = previous_types(out, replace, source=source, columns=columns, seed=seed, demos=demos)
    harness.require()
    request = ScrambleRequest(
        source=source, spec=spec, columns=tuple(columns), types=tuple(types), out=out, task_sources=given,
        demos=demos, seed=seed, num_proc=num_proc, command=command or f"scrambled-bench scramble {source}",
        push=push, private=private, api=api, replace=replace, previous_types=kept,
    )  # fmt: skip
    written = harness.write_variants(harness.resolve(spec, given), request)
    return dataclasses.replace(written, kept=tuple(kept_type for kept_type in kept if kept_type not in types))


def harness_task(source: str) -> tuple[Harness, str]:
    """The registered harness and the task spec of ``NAME:SPEC``; a one-line error for anything else.

    >>> harness, spec = harness_task("lm-eval:arc_easy")
    >>> harness.name, spec
    ('lm-eval', 'arc_easy')
    """
    found = harness_of(source)
    if found is None:
        raise ScrambledBenchError(f"{source}: not a harness task (NAME:SPEC of a registered harness)")
    return found


def given_task_sources(harness: Harness, task_sources: Mapping[str, str | Path | None]) -> dict[str, str]:
    """The task-definition options given (by flag, as text), each one the harness declares; a one-line
    error naming one it does not take, and those it does.

    >>> from scrambled_bench.integrations.registry import get_harness
    >>> given_task_sources(get_harness("lm-eval"), {"--include-path": Path("tasks"), "--custom-tasks": None})
    {'--include-path': 'tasks'}
    >>> given_task_sources(get_harness("lighteval"), {"--include-path": "tasks"})
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --include-path does not apply to lighteval tasks; it takes --custom-tasks
    """
    given = {flag: str(value) for flag, value in task_sources.items() if value is not None}
    takes = [option.flag for option in harness.task_options]
    for flag in given:
        if flag not in takes:
            options = f"; it takes {', '.join(takes)}" if takes else ""
            raise ScrambledBenchError(f"{flag} does not apply to {harness.name} tasks{options}")
    return given


def check_harness_options(harness: Harness, *, demos: str | None, push: str | None) -> None:
    """A one-line error for ``--demos`` or ``--push`` given for a harness that does not take it."""
    if demos is not None and not harness.demos:
        raise ScrambledBenchError(
            f"--demos does not apply to {harness.name} tasks: they draw no demonstrations from a split"
        )
    if push is not None and not harness.pushes:
        raise ScrambledBenchError(
            f"--push does not apply to {harness.name} tasks: their variants write no data"
        )


def checked_columns(harness: Harness, columns: Sequence[str]) -> list[str]:
    """The columns (or fields) to scramble, each once, in order; a one-line error for none."""
    columns = list(dict.fromkeys(columns))
    if not columns:
        raise ScrambledBenchError(f"give --columns to scramble (the {harness.columns_are} of the task)")
    return columns


def checked_output(out: Path) -> Path:
    """``out`` made absolute; a one-line error where it exists and is not a previous ``scramble`` output."""
    out = Path(out).expanduser().resolve()
    check_output_folder(
        out,
        replaceable=is_scramble_output,
        refusal=f"output folder {out} exists and is not a previous `scramble` output; refusing to replace it",
    )
    return out


__all__ = [
    "check_harness_options",
    "checked_columns",
    "checked_output",
    "given_task_sources",
    "harness_task",
    "scramble_harness_task",
]
