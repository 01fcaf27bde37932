"""The Hub benchmark file of a dataset build (``eval.yaml``, https://huggingface.co/docs/hub/eval-results):
one task per scrambled config a task of the registry ranks, checked against the fields the Hub documents.

Every task comes from the task registry: a task's headline metric (``View.headline``: RR for ScrRec, RPG for
ScrQA, Acc for AQuA) at each scrambled type; the unscrambled and substituted texts are RPG's anchors, 100
and 0 by definition, so they are no tasks. The builder writes the file through :func:`eval_yaml_for`,
which its callers hand it (the builder sits below the tasks, which read its configs); the report's
``hub_eval`` writes a model's ``.eval_results`` against these task ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scrambled_bench.builder.build import EVAL_YAML_NAME
from scrambled_bench.builder.scrambler import type_order
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.tasks import TASKS, Task, TaskConfig

EVALUATION_FRAMEWORK = "scrambled-bench"
"""The evaluation framework named in eval.yaml and in each result, so that results show what made them."""
EVAL_YAML = EVAL_YAML_NAME
BENCHMARK_NAME = "Scrambled Bench"
BENCHMARK_DESCRIPTION = (
    "Scrambled Bench (Cao et al., EMNLP 2023, arXiv:2311.18805): how well language models recover "
    "scrambled sentences (ScrRec, recovery rate RR) and answer questions over scrambled context (ScrQA on "
    "RealtimeQA and DREAM, relative performance gain RPG; AQuA-RAT chain of thought, accuracy). One task per "
    "task, dataset and scramble type; run it with `scrambled-bench run`."
)
SPLIT = "test"


class HubDocument(BaseModel):
    """An object the Hub documents: its fields and no other, strictly typed (``"0.5"`` is no number, nor is
    ``True``). An optional field is absent or of its type: its ``None`` default is never validated, so an
    explicit ``null`` is a wrong type, as the Hub documents no nulls."""

    model_config = ConfigDict(extra="forbid", strict=True)


# The documented objects and fields, in the order of hub-docs' docs/hub/eval-results.md
class EvalYamlTask(HubDocument):
    """One task of a benchmark's ``eval.yaml``."""

    id: str = Field(description="the id results name as their dataset.task_id")
    config: str = Field(description="the dataset config the task reads")
    split: str = Field(description="the split it evaluates")


class EvalYaml(HubDocument):
    """The ``eval.yaml`` at the root of a dataset repository, which makes it a benchmark."""

    name: str = Field(description="the benchmark's display name")
    description: str = Field(None, description="what it measures")
    evaluation_framework: str = Field(None, description="the tool that runs it")
    tasks: list[EvalYamlTask] = Field(description="its tasks, one leaderboard each")


def hub_task_id(config: TaskConfig) -> str:
    """A config's task id on the Hub (letters, digits and ``-`` only).

    >>> hub_task_id(TaskConfig("scrqa", "dream", "rs100")), hub_task_id(TaskConfig("aqua-cot", "aqua", "rs50", 20))
    ('scrqa-dream-rs100', 'aqua-cot-aqua-rs50-exemplars-20')
    """
    return config.name.replace("/", "-")


def headline(task: Task) -> Any:
    """The metric a task's Hub results report.

    >>> [headline(task).label for task in TASKS.values()]
    ['RR', 'RR', 'RPG', 'Acc']
    """
    return task.view.headline or task.metrics[-1]


def benchmark_configs(data_configs: Iterable[str]) -> list[TaskConfig]:
    """Every config a build with ``data_configs`` (``dream_kfl``...) can run that a leaderboard ranks: each
    task at each scrambled type its build has, not at the types that anchor its metric.

    >>> [hub_task_id(c) for c in benchmark_configs(["dream_original", "dream_rs50", "dream_sub"])]
    ['scrqa-dream-rs50']
    >>> benchmark_configs(["dream_original", "dream_rs50"])
    []
    """
    available = set(data_configs)
    configs = []
    for task in TASKS.values():
        anchors = set(task.anchors)
        for dataset in task.datasets:
            types = sorted(
                {name.split("_", 1)[1] for name in available if name.split("_", 1)[0] == dataset},
                key=type_order,
            )
            if not anchors <= set(types):
                continue  # the headline metric needs its anchors (RPG: the original and substituted texts)
            configs.extend(task.configs([dataset], [t for t in types if t not in anchors]))
    return configs


def benchmark_eval_yaml(
    data_configs: Iterable[str],
    *,
    name: str = BENCHMARK_NAME,
    description: str = BENCHMARK_DESCRIPTION,
) -> str:
    """The ``eval.yaml`` that makes a dataset build a Hub benchmark: a task per config
    (:func:`benchmark_configs`) on the build's dataset config and split. Validated before it is returned.

    >>> import yaml
    >>> document = yaml.safe_load(benchmark_eval_yaml(["realtimeqa_rs50", "realtimeqa_original"]))
    >>> document["evaluation_framework"], [task["id"] for task in document["tasks"]]
    ('scrambled-bench', ['scrrec-zero-shot-realtimeqa-rs50', 'scrrec-few-shot-realtimeqa-rs50'])
    """
    import yaml

    configs = benchmark_configs(data_configs)
    if not configs:
        raise ScrambledBenchError("eval.yaml: the build holds no scrambled config a task runs on")
    tasks: list[dict[str, str]] = []
    seen: set[str] = set()
    for config in configs:
        task_id = hub_task_id(config)
        if task_id not in seen:
            seen.add(task_id)
            tasks.append({"id": task_id, "config": config.data_config, "split": SPLIT})
    document = {
        "name": name,
        "description": description,
        "evaluation_framework": EVALUATION_FRAMEWORK,
        "tasks": tasks,
    }
    validate_eval_yaml(document)
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)


def check_fields(where: str, value: Any, model: type[BaseModel]) -> None:
    """A one-line error naming the first thing in ``value`` that ``model`` does not document: unknown
    fields first, then a missing or mistyped one, at its path (``where.tasks[0]``)."""
    try:
        model.model_validate(value)
    except ValidationError as exc:
        raise ScrambledBenchError(_first_problem(where, exc.errors())) from None


def _first_problem(where: str, errors: Sequence[Any]) -> str:
    def at(loc: Sequence[str | int]) -> str:
        return where + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)

    unknown = [error["loc"] for error in errors if error["type"] == "extra_forbidden"]
    if unknown:
        names = ", ".join(sorted(str(loc[-1]) for loc in unknown))
        return f"{at(unknown[0][:-1])}: fields the Hub does not document: {names}"
    error = errors[0]
    loc, value = error["loc"], error["input"]
    if error["type"] == "missing":
        return f"{at(loc[:-1])}: missing required field {loc[-1]!r}"
    if error["type"] == "model_type":
        return f"{at(loc)}: expected a mapping, got {type(value).__name__}"
    return f"{at(loc)}: wrong type {type(value).__name__}"


def validate_eval_yaml(document: Any) -> None:
    """A one-line error where ``document`` is not an eval.yaml as the Hub documents it.

    >>> validate_eval_yaml({"name": "HLE", "tasks": [{"id": "hle", "config": "default", "split": "test"}]})
    >>> validate_eval_yaml({"name": "HLE", "tasks": [{"id": "hle", "config": "default"}]})
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: eval.yaml.tasks[0]: missing required field 'split'
    """
    check_fields(EVAL_YAML, document, EvalYaml)
    if not document["tasks"]:
        raise ScrambledBenchError(f"{EVAL_YAML}: no tasks")
    ids = [task["id"] for task in document["tasks"]]
    if len(ids) != len(set(ids)):
        raise ScrambledBenchError(f"{EVAL_YAML}: task ids repeat")


def eval_yaml_for(data_configs: Iterable[str]) -> str | None:
    """The ``eval.yaml`` of a build of ``data_configs``, or None where no task's headline metric can be
    computed from them (a build of the original texts only): what ``build_dataset`` takes as ``benchmark``.

    >>> eval_yaml_for(["dream_original"]) is None, eval_yaml_for(["dream_original", "dream_kfl", "dream_sub"])[:21]
    (True, 'name: Scrambled Bench')
    """
    names = list(data_configs)
    return benchmark_eval_yaml(names) if benchmark_configs(names) else None
