"""Inspect AI's log folder (``inspect eval --log-dir``) read into :class:`~..base.LoggedTask` records,
through ``inspect_ai.log``.

A log folder may hold logs of three kinds of task, told apart by the task's metadata:

- the bench's own tasks (``scrambled_bench/<slug>``, :mod:`.bench`): each sample's metadata is the scoring
  metadata of ``run``'s request, so its output is scored again as ``run`` scores it, RPG included;
- scrambled variants (``scramble inspect:TASK``'s task file, or ``scrambled_bench/scrambled``): their
  metadata names the ``canonical_task``, the ``scramble_type``, the ``seed`` and the ``fields`` scrambled;
- the canonical tasks those variants name.

The newest log of each task is read (a folder re-run keeps the old logs), and only a run that ended
``success``. A log's identity is its model, the model's base URL (as Inspect logged it, else as the task
recorded it: :func:`run_identity`) and the generation config it ran with;
a sample's prompt is the last user turn of the conversation the model saw (after the task's solvers).
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError, first_line
from scrambled_bench.integrations.base import LoggedDocument, LoggedTask, MetricValue, RunIdentity
from scrambled_bench.integrations.exported import PREFIX
from scrambled_bench.integrations.logs import hashable_target, logged_meta

BENCH_KEY = "scrambled_bench_config"
"""The metadata key of the bench's own tasks (the config's name)."""
VARIANT_KEYS = ("canonical_task", "scramble_type", "seed", "fields")
"""The metadata keys of a scrambled variant."""


def is_variant(metadata: dict[str, Any] | None) -> bool:
    """Whether a task's metadata is a scrambled variant's (a variant of a bench task keeps the bench task's
    metadata beside its own, so this is asked first).

    >>> is_variant({"canonical_task": "t", "scramble_type": "kfl", "seed": 0, "fields": ["input"]})
    True
    >>> is_variant({"canonical_task": "scrambled_bench/scrqa_dream_original", "scramble_type": "kfl",
    ...             "scrambled_bench_config": "scrqa/dream/kfl"})
    False
    """
    metadata = metadata or {}
    return all(key in metadata for key in VARIANT_KEYS)


UNKNOWN_ENDPOINT = (
    "Inspect logs the base URL only when given as --model-base-url, and the task recorded none: it was not "
    "written by `scrambled-bench scramble inspect:`, or was logged by an older version"
)
"""Why an Inspect log does not tell its endpoint."""


def run_identity(header: Any) -> RunIdentity:
    """A log's identity: its model, the endpoint the model was served from, and the generation config and
    model arguments it ran with (the command line's, which win over a task's).

    The endpoint is the base URL Inspect logged (``--model-base-url``), else the one the task recorded when
    the eval created it (the task file of ``scramble inspect:``, the bench's tasks and
    ``scrambled_bench/scrambled`` record it, however the base URL was given: :data:`~.scrambled.ENDPOINT_KEY`),
    without a trailing slash; where neither is there the endpoint is unknown (:data:`UNKNOWN_ENDPOINT`)."""
    from scrambled_bench.integrations.inspect.scrambled import ENDPOINT_KEY  # deferred: it imports inspect_ai

    spec = header.eval
    generate = spec.model_generate_config
    config = generate.model_dump(exclude_none=True) if generate is not None else {}
    settings = {
        "generate_config": json.dumps(config, sort_keys=True, default=str) if config else None,
        "model_args": json.dumps(spec.model_args, sort_keys=True, default=str) if spec.model_args else None,
    }
    metadata = spec.metadata or {}
    unknown = ""
    if spec.model_base_url:
        endpoint: str | None = str(spec.model_base_url).rstrip("/")
    elif ENDPOINT_KEY in metadata:
        endpoint = str(metadata[ENDPOINT_KEY]).rstrip("/") if metadata[ENDPOINT_KEY] else None
    else:
        endpoint, unknown = None, UNKNOWN_ENDPOINT
    return RunIdentity(str(spec.model), endpoint, settings, str(header.location), unknown)


def newest_headers(folder: Path) -> list[Any]:
    """The header of the newest log of each task under ``folder`` (any depth); a one-line error for a run
    that did not end ``success``."""
    # deferred: inspect_ai is optional (the harness extra)
    from inspect_ai.log import list_eval_logs, read_eval_log

    newest: dict[str, Any] = {}
    for info in list_eval_logs(str(folder), recursive=True):
        try:
            header = read_eval_log(info, header_only=True)
        except Exception as exc:  # noqa: BLE001 - a file Inspect cannot read is one line naming it
            where = info.name.removeprefix("file://")
            raise ScrambledBenchError(
                f"{where}: not a readable Inspect log ({type(exc).__name__}: {first_line(exc)}); move it out of "
                "the log folder"
            ) from None
        task = header.eval.task
        if task not in newest or header.eval.created > newest[task].eval.created:
            newest[task] = header
    for header in newest.values():
        if header.status != "success":
            raise ScrambledBenchError(
                f"{header.location}: the run of {header.eval.task} ended '{header.status}', not 'success'; "
                "finish it (inspect eval-retry) before scoring"
            )
    return [newest[task] for task in sorted(newest)]


def _user_turn(sample: Any) -> str | None:
    """The last user turn of the conversation the model saw (after the solvers: a multiple-choice template
    renders the question with its choices there), else the sample's input."""
    for message in reversed(sample.messages or []):
        if getattr(message, "role", None) == "user":
            return message.text
    if isinstance(sample.input, str):
        return sample.input
    users = [message for message in sample.input or [] if getattr(message, "role", None) == "user"]
    return users[-1].text if users else None


def documents(log: Any, *, bench: bool) -> dict[Hashable, LoggedDocument]:
    """A log's samples by id (by (id, epoch) where it ran several epochs): each scorer's value as a number
    (Inspect's own ``value_to_float``: C/I as 1/0; a value that is not a number is left out), the target,
    the prompt, the choices, the output, and for a bench task the scoring metadata."""
    from inspect_ai.scorer import value_to_float  # deferred: inspect_ai is optional (the harness extra)

    to_float = value_to_float()
    epochs = {sample.epoch for sample in log.samples or []}
    found: dict[Hashable, LoggedDocument] = {}
    for sample in log.samples or []:
        key: Hashable = sample.id if epochs <= {1} else (sample.id, sample.epoch)
        where = f"{log.location}: sample {sample.id}"
        scores = {
            name: float(to_float(score.value))
            for name, score in (sample.scores or {}).items()
            if not isinstance(score.value, dict | list)
        }
        found[key] = LoggedDocument(
            key,
            scores,
            hashable_target(sample.target),
            _user_turn(sample),
            tuple(sample.choices) if sample.choices else None,
            (sample.output.completion if sample.output is not None else "") or "",
            logged_meta({"meta": sample.metadata}, where) if bench else None,
            where,
        )
    return found


def metric_values(log: Any) -> dict[str, MetricValue]:
    """Each scorer's headline metric as Inspect's log reports it (its first metric: ``accuracy``, ``mean``)
    with its ``stderr`` where reported."""
    values = {}
    for score in log.results.scores if log.results is not None else []:
        metrics = dict(score.metrics)
        stderr = metrics.pop("stderr", None)
        if metrics:
            first = next(iter(metrics.values()))
            values[score.name] = MetricValue(
                float(first.value), None if stderr is None else float(stderr.value)
            )
    return values


def read_inspect_logs(folder: Path) -> list[LoggedTask]:
    """The newest successful log of each task under ``folder``, as logged task runs: the bench's own
    tasks, scrambled variants and everything else (the canonical tasks among them)."""
    from inspect_ai.log import read_eval_log  # deferred: inspect_ai is optional (the harness extra)

    tasks = []
    for header in newest_headers(folder):
        metadata = header.eval.metadata or {}
        variant = is_variant(metadata)
        bench = not variant and BENCH_KEY in metadata and header.eval.task.startswith(f"{PREFIX}/")
        log = read_eval_log(header.location)
        tasks.append(
            LoggedTask(
                name=header.eval.task,
                run=run_identity(header),
                created=str(header.eval.created),
                documents=documents(log, bench=bench),
                location=str(header.location),
                canonical=str(metadata["canonical_task"]) if variant else None,
                scramble_type=str(metadata["scramble_type"]) if variant else None,
                bench=bench,
                metrics=metric_values(log),
                details={"seed": metadata["seed"], "fields": metadata["fields"]} if variant else {},
            )
        )
    return tasks


__all__ = ["documents", "is_variant", "metric_values", "newest_headers", "read_inspect_logs", "run_identity"]
