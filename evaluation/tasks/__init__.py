"""The benchmark's tasks, one :class:`~.base.Task` object each, one module per task (family).

Every module in this package is imported here and registers its tasks, so adding a task is adding one
file (plus its tests): the engine, the results, the suites, the report and the harness exports find it in
:data:`TASKS`. The functions below are the tasks' entry points by config, for code that holds configs or
request ``meta`` rather than task objects.

>>> list(TASKS)
['scrrec-zero-shot', 'scrrec-few-shot', 'scrqa', 'aqua-cot']
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from scrambled_bench.builder.build import SOURCES
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends.base import Generation, GenerationRequest, GenerationSettings
from scrambled_bench.evaluation.tasks.base import _REGISTRY, Metric, Task, TaskConfig, View, get_task
from scrambled_bench.metrics.readers import DEFAULT_READER

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

TASKS: dict[str, Task] = {task.name: task for task in sorted(_REGISTRY.values(), key=lambda task: task.rank)}
"""Every task by name."""

DATASETS: tuple[str, ...] = tuple(SOURCES)
"""The datasets tasks run on (the builder's sources)."""

__all__ = [
    "DATASETS",
    "TASKS",
    "Metric",
    "Task",
    "TaskConfig",
    "View",
    "build_requests",
    "configs_from",
    "get_task",
    "on_result",
    "result_hook",
    "score_output",
    "select_rows",
]


def select_rows(
    config: TaskConfig, rows: Iterable[Mapping[str, Any]], *, limit: int | None = None
) -> list[dict]:
    """The rows a config evaluates, in dataset order, the first ``limit`` of them.

    >>> rows = [{"id": "1", "original": "x", "used_for_qa": False}, {"id": "2", "original": "x", "used_for_qa": True}]
    >>> [r["id"] for r in select_rows(TaskConfig("scrrec-zero-shot", "realtimeqa", "rs50"), rows)]
    ['1']
    >>> [r["id"] for r in select_rows(TaskConfig("scrqa", "realtimeqa", "rs50"), rows)]
    ['2']
    """
    return config.definition.select_rows(config, rows, limit)


def build_requests(
    config: TaskConfig,
    rows: Iterable[Mapping[str, Any]],
    *,
    seed: int = 0,
    max_new_tokens: int = 256,
    chat: bool = True,
    limit: int | None = None,
) -> list[GenerationRequest]:
    """One greedy :class:`GenerationRequest` per selected row, ``meta`` holding what scoring needs.

    >>> rows = [{"id": "q1", "original": "Bob won.", "scrambled": "Bob nwo.", "question": "Who won?",
    ...          "choices": ["Ann", "Bob", "Cy", "Di"], "answer": "B", "used_for_qa": True}]
    >>> [request] = build_requests(TaskConfig("scrqa", "realtimeqa", "rs50"), rows)
    >>> request.prompt.splitlines()[2], request.meta["answer"], request.settings.stop[0]
    ('Evidence: Bob nwo.', 'B', '\\nQuestion:')
    """
    task = config.definition
    demonstration = task.demonstration(config, seed)
    settings = GenerationSettings(max_new_tokens=max_new_tokens, temperature=0.0, stop=task.stop, seed=seed)
    return [
        GenerationRequest(
            task.prompt(config, row, demonstration),
            chat=chat,
            settings=settings,
            meta=task.meta(config, row),
        )
        for row in task.select_rows(config, rows, limit)
    ]


def score_output(
    meta: Mapping[str, Any], output: str, *, chat: bool = True, reader: str = DEFAULT_READER
) -> dict[str, Any]:
    """Read one raw output with the answer ``reader`` and score it against the gold in ``meta``, as its task
    does (pure).

    >>> score_output({"task": "scrqa", "dataset": "dream", "choices": ["Ann", "Bob", "Cy"], "answer": "B"}, "")
    {'prediction': None, 'correct': False, 'unparsed': True, 'rule': 'empty'}
    """
    return get_task(meta["task"]).score(meta, output, chat=chat, reader=reader)


def result_hook(reader: str = DEFAULT_READER) -> Callable[[GenerationRequest, Generation], dict[str, Any]]:
    """The engine's hook: the prediction, its score and the reader's rule, written beside each raw output in
    samples.jsonl as it arrives."""

    def on_result(request: GenerationRequest, generation: Generation) -> dict[str, Any]:
        scored = score_output(request.meta, generation.text, chat=request.chat, reader=reader)
        return {**scored, "reader": reader}

    return on_result


on_result = result_hook()
"""The hook with the default reader."""


def configs_from(
    tasks: Sequence[str],
    datasets: Sequence[str] | None,
    types: Sequence[str],
    exemplar_rates: Sequence[int] = (),
) -> list[TaskConfig]:
    """Every valid (task, dataset, type[, exemplar rate]) combination; combinations a task excludes are skipped.

    >>> [c.name for c in configs_from(["scrrec-zero-shot"], None, ["original", "rs50"])]
    ['scrrec-zero-shot/realtimeqa/rs50']
    """
    configs: list[TaskConfig] = []
    for name in tasks:
        configs.extend(get_task(name).configs(datasets, types, exemplar_rates))
    return configs


def check_dataset(name: str) -> str:
    """``name`` when it is a dataset some task runs on, else a one-line error.

    >>> check_dataset("squad")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: unknown dataset 'squad'; choose from realtimeqa, dream, aqua
    """
    if name not in DATASETS:
        raise ScrambledBenchError(f"unknown dataset {name!r}; choose from {', '.join(DATASETS)}")
    return name
