"""``scrambled-bench scramble HARNESS:SPEC``: a harness's task turned into scrambled variants that the
harness runs unchanged, for any registered harness.

The options are checked here, the same way for every harness (what a harness takes it declares:
``task_sources``, ``demos``, ``pushes``); the task is resolved by the harness's own registry
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
from scrambled_bench.integrations.base import ScrambleRequest, WrittenVariants
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
    writes, all or nothing. ``task_sources`` maps ``scramble``'s options naming a harness's own task
    definitions (``--include-path``, ``--custom-tasks``) to their values; one the harness does not take is
    refused. With ``push`` (one task; harnesses whose variants read data) the task's scrambled data is also
    uploaded to that Hub dataset; ``api`` replaces ``huggingface_hub.HfApi`` (tests). A previous output of
    the same source and settings in ``out`` grows by the types asked for (:mod:`.outputs`), and the result
    names those it kept (``kept``); ``replace`` starts over.

    >>> scramble_harness_task("lm-eval:arc_easy", columns=["question"], types=["kfl"], out=None)
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: give --out DIR: the variants' task files read the scrambled data from there
    """
    found = harness_of(source)
    if found is None:
        raise ScrambledBenchError(f"{source}: not a harness task (NAME:SPEC of a registered harness)")
    harness, spec = found
    if out is None:
        raise ScrambledBenchError(
            "give --out DIR: the variants' task files read the scrambled data from there"
        )
    given = {flag: str(value) for flag, value in (task_sources or {}).items() if value is not None}
    for flag in given:
        if flag not in harness.task_sources:
            takes = f"; it takes {', '.join(harness.task_sources)}" if harness.task_sources else ""
            raise ScrambledBenchError(f"{flag} does not apply to {harness.name} tasks{takes}")
    if demos is not None and not harness.demos:
        raise ScrambledBenchError(
            f"--demos does not apply to {harness.name} tasks: they draw no demonstrations from a split"
        )
    if push is not None and not harness.pushes:
        raise ScrambledBenchError(
            f"--push does not apply to {harness.name} tasks: their variants write no data"
        )
    columns = list(dict.fromkeys(columns))
    if not columns:
        raise ScrambledBenchError(f"give --columns to scramble (the {harness.columns_are} of the task)")
    types = [variant.scramble_type for variant in variants_for(types, None, None)]
    if push is not None:
        check_repo_id(push, "--push")
    out = Path(out).expanduser().resolve()
    check_output_folder(
        out,
        replaceable=is_scramble_output,
        refusal=f"output folder {out} exists and is not a previous `scramble` output; refusing to replace it",
    )
    if demos is None and harness.demos:
        demos = "original"
    kept = previous_types(out, replace, source=source, columns=columns, seed=seed, demos=demos)
    harness.require()
    tasks = harness.resolve(spec, given)
    request = ScrambleRequest(
        source=source,
        spec=spec,
        columns=tuple(columns),
        types=tuple(types),
        out=out,
        task_sources=given,
        demos=demos,
        seed=seed,
        num_proc=num_proc,
        command=command or f"scrambled-bench scramble {source}",
        push=push,
        private=private,
        api=api,
        replace=replace,
        previous_types=kept,
    )
    written = harness.write_variants(tasks, request)
    return dataclasses.replace(written, kept=tuple(kept_type for kept_type in kept if kept_type not in types))


__all__ = ["scramble_harness_task"]
