"""The Scrambled Bench for lighteval: ``--custom-tasks scrambled_bench.integrations.lighteval.bench``.

``TASKS_TABLE`` holds one generative task per config of the paper suite, named ``scrambled_bench:<slug>``
(``scrambled_bench:scrqa_dream_kfl``, ``scrambled_bench:scrrec_realtimeqa_rs50_fewshot``...), so the task
``scrambled_bench`` runs them all (lighteval expands the part before the colon). Each evaluates the rows
``run`` evaluates, with the paper's prompt as one user message, the task's stop sequences and ``run``'s
256-token cap; a sample is scored by the task with the careful reader, and a config's accuracy, RR and ED
come from the packaged metric modules (:mod:`.task_export`). RPG pairs three configs, which lighteval
cannot: feed the details to ``scrambled-bench score --from lighteval`` (docs/harnesses/lighteval.md).

The data is the build in ``./scrambled_bench`` unless ``SCRAMBLED_BENCH_DATA`` names another build folder or
a Hub dataset id (with ``SCRAMBLED_BENCH_DATA_REVISION``); ``SCRAMBLED_BENCH_MAX_NEW_TOKENS`` lowers the
cap (lighteval's own ``max_new_tokens`` model argument does not replace a task's ``generation_size``).
lighteval 0.13 honours custom tasks in its endpoint (litellm, tgi, inference providers), accelerate and
vllm commands; its inspect-ai ``lighteval eval`` command does not.

Importing this module needs lighteval (the ``harness`` extra); a task name that a lighteval built-in
already has is refused here, naming it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lighteval.metrics.metrics_sample import SampleLevelComputation
from lighteval.metrics.utils.metric_utils import SampleLevelMetricGrouping
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.registry import Registry
from lighteval.tasks.requests import Doc, SamplingMethod

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.integrations.exported import (
    AGGREGATIONS,
    MAX_NEW_TOKENS,
    VERSION,
    ExportedTask,
    data_from_environment,
    document_meta,
    exported_tasks,
    metric_items,
    score_sample,
)
from scrambled_bench.integrations.lighteval import task_name
from scrambled_bench.integrations.lighteval.cli import import_builtin_tasks
from scrambled_bench.metrics.readers import DEFAULT_READER

MAX_NEW_TOKENS_ENV = "SCRAMBLED_BENCH_MAX_NEW_TOKENS"


class ConfigRows:
    """lighteval's ``prompt_function`` for one config: a dataset row to its :class:`Doc`, or None for a row
    the config does not evaluate (lighteval skips it).

    lighteval formats rows one at a time, in dataset order, numbering them ``__index``; the rows already
    taken are kept so that :meth:`Task.keeps` decides as in ``select_rows`` (ScrRec: each evidence text
    once), and forgotten when a pass over the split starts again at index 0.
    """

    def __init__(self, exported: ExportedTask) -> None:
        self.exported = exported
        self._taken: list[dict[str, Any]] = []

    def __call__(self, line: Mapping[str, Any], task_name: str) -> Doc | None:
        row = {key: value for key, value in line.items() if not key.startswith("__")}
        if line.get("__index") == 0:
            self._taken = []
        if not self.exported.task.keeps(row, self._taken):
            return None
        self._taken.append(row)
        document = self.exported.document(row)
        return Doc(
            query=document["prompt"],
            choices=[document["target"]],
            gold_index=0,
            task_name=task_name,
            specific=document_meta(document),
        )


class ScoreSample(SampleLevelComputation):
    """A sample scored by its task (the careful reader): an item per exported metric of the task."""

    def compute(self, doc: Doc, model_response: Any, **kwargs: Any) -> dict[str, dict[str, Any]]:
        texts = getattr(model_response, "text", None) or [""]
        return metric_items(doc.specific, score_sample(doc.specific, texts[0], reader=DEFAULT_READER))


def metric_for(exported: ExportedTask) -> SampleLevelMetricGrouping:
    """The task's per-config metrics as one lighteval metric group (one scoring pass per sample).

    lighteval bootstraps a stderr for an aggregation whose name lacks "mean" (ours take items, not numbers),
    in worker processes that find it by its module-level name: :data:`.task_export.AGGREGATIONS`' are."""
    names = [metric.key for metric in exported.metrics]
    return SampleLevelMetricGrouping(
        metric_name=names,
        higher_is_better={metric.key: not metric.lower_is_better for metric in exported.metrics},
        category=SamplingMethod.GENERATIVE,
        sample_level_fn=ScoreSample(),
        corpus_level_fn={name: AGGREGATIONS[name] for name in names},
    )


def max_new_tokens(environ: Mapping[str, str] = os.environ) -> int:
    """The generation cap: ``run``'s 256 unless ``SCRAMBLED_BENCH_MAX_NEW_TOKENS`` says otherwise.

    >>> max_new_tokens({}), max_new_tokens({MAX_NEW_TOKENS_ENV: "32"})
    (256, 32)
    """
    value = environ.get(MAX_NEW_TOKENS_ENV)
    if value is None:
        return MAX_NEW_TOKENS
    if not value.isdigit() or int(value) < 1:
        raise ScrambledBenchError(f"{MAX_NEW_TOKENS_ENV} must be a positive integer, got {value!r}")
    return int(value)


def task_config(exported: ExportedTask, environ: Mapping[str, str] = os.environ) -> LightevalTaskConfig:
    path, revision = data_from_environment(environ)
    return LightevalTaskConfig(
        name=task_name(exported),
        prompt_function=ConfigRows(exported),
        hf_repo=path,
        hf_subset=exported.data_config,
        hf_revision=revision,
        hf_avail_splits=["test"],
        evaluation_splits=["test"],
        few_shots_split=None,
        few_shots_select=None,
        generation_size=max_new_tokens(environ),
        stop_sequence=list(exported.task.stop),
        metrics=[metric_for(exported)],
        version=VERSION,
    )


def refuse_collisions(names: Iterable[str], builtin: Iterable[str]) -> None:
    """Fail, naming them, when exported names are already lighteval built-ins (which lighteval would
    otherwise refuse only when a run loads them, or shadow).

    >>> refuse_collisions(["scrambled_bench:a"], ["gsm8k", "scrambled_bench:a"])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: lighteval already has built-in task(s) named scrambled_bench:a; the Scrambled Bench tasks cannot take their names
    """
    clashes = sorted(set(names) & set(builtin))
    if clashes:
        raise ScrambledBenchError(
            f"lighteval already has built-in task(s) named {', '.join(clashes)}; "
            "the Scrambled Bench tasks cannot take their names"
        )


def builtin_task_names() -> set[str]:
    """The names of lighteval's built-in tasks, from every built-in task file that imports here (one that
    fails, see :mod:`.lighteval_cli`, holds no task a run could load)."""
    imported, _ = import_builtin_tasks()
    return {name for module in imported for name in Registry._extract_configs(module)}


def task_lists(tasks: Sequence[ExportedTask]) -> list[str]:
    """The exported task names as comma-separated lists, one per stop-sequence family (ScrRec, ScrQA, AQuA).

    lighteval 0.13's litellm client sends every document of a command once per family present, each time
    with that family's stop sequences and token cap, and keeps the first answers
    (huggingface/lighteval#1177): through that client, run one list per command.

    >>> from scrambled_bench.evaluation.tasks import TaskConfig
    >>> task_lists([ExportedTask(TaskConfig("scrqa", "dream", "kfl")), ExportedTask(TaskConfig("scrrec-zero-shot", "realtimeqa", "kf")),
    ...             ExportedTask(TaskConfig("scrqa", "dream", "sub"))])
    ['scrambled_bench:scrqa_dream_kfl,scrambled_bench:scrqa_dream_sub', 'scrambled_bench:scrrec_realtimeqa_kf']
    """
    families: dict[tuple[str, ...], list[str]] = {}
    for task in tasks:
        families.setdefault(tuple(task.task.stop), []).append(task_name(task))
    return [",".join(names) for names in families.values()]


TASKS_TABLE: list[LightevalTaskConfig] = [task_config(exported) for exported in exported_tasks()]
refuse_collisions([config.name for config in TASKS_TABLE], builtin_task_names())

if __name__ == "__main__":
    # `python -m scrambled_bench.integrations.lighteval.bench`: one task list per line, for a shell loop
    print("\n".join(task_lists(exported_tasks())))
