"""The bench's own tasks as any harness runs them, harness-neutral: which configs are exported, their
documents, per-sample scores and aggregates. Each harness's package names them its own way
(``scrambled_bench_<slug>`` in lm-eval, ``scrambled_bench:<slug>`` in lighteval, ``scrambled_bench/<slug>``
in Inspect) and writes them in its own format.

An :class:`ExportedTask` is one config of the paper suite (a cell of the paper's tables) as a harness sees
it. Everything it does is delegated to the package's own definitions, so a harness cannot drift from
``scrambled-bench run``:

- the rows a config evaluates are :meth:`Task.select_rows` (RealtimeQA's QA questions, ScrRec's distinct
  evidence texts), in dataset order;
- the prompt is :meth:`Task.prompt` with :meth:`Task.demonstration` (the paper's prompts, exemplars
  scrambled with seed 0 as ``run``'s default), sent as one user message, as ``run``'s chat mode sends it;
- an output is scored by :meth:`Task.score` with an answer reader (``careful`` unless told), and a config's
  scores come from the packaged ``evaluate`` modules (:func:`aggregate`), as in ``run`` and ``score``.

A document is a flat dict that a ``datasets.Dataset`` can hold: ``id``, ``prompt``, ``target`` (the gold:
the letter, or the original text for ScrRec) and ``meta``, the JSON of what scoring needs (the request meta
of ``run``), so a harness's logged samples carry everything needed to score them again.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from scrambled_bench.builder.manifest import DEFAULT_BUILD_DIR
from scrambled_bench.builder.scrambler import UNSCRAMBLED
from scrambled_bench.evaluation.suites import get_suite
from scrambled_bench.evaluation.tasks import Metric, Task, TaskConfig, get_task
from scrambled_bench.metrics import loaded

PREFIX = "scrambled_bench"
"""The first part of every exported task's name in every harness (lm-eval's group, lighteval's superset,
Inspect's registry namespace)."""
SUITE = "paper"
"""The suite whose configs are exported: the paper's Tables 1 and 3-8."""
SEED = 0
"""The exemplars' scramble seed: ``run``'s default ``--seed``, so prompts equal ``run``'s."""
MAX_NEW_TOKENS = 256
"""The generation cap: ``run``'s default ``--max-new-tokens``."""
VERSION = 1
"""The exported tasks' version; bump it when a prompt, a row selection or a score changes."""

DATA_ENV = "SCRAMBLED_BENCH_DATA"
"""The build folder or Hub dataset id the lighteval and Inspect tasks read unless told (``./scrambled_bench``)."""
REVISION_ENV = "SCRAMBLED_BENCH_DATA_REVISION"
"""The Hub revision that goes with :data:`DATA_ENV`."""

PER_CONFIG_METRICS = ("accuracy", "recovery_rate", "edit_distance")
"""The task metrics a harness can aggregate within one config. RPG pairs three configs (a type with
``original`` and ``sub``), which no harness can: ``scrambled-bench score --from HARNESS`` computes it."""


@dataclass(frozen=True)
class ExportedTask:
    """One config of the benchmark, as a harness's task.

    >>> task = ExportedTask(TaskConfig("scrqa", "dream", "kfl"))
    >>> task.slug, task.data_config
    ('scrqa_dream_kfl', 'dream_kfl')
    >>> {scramble_type: anchor.slug for scramble_type, anchor in task.anchors().items()}
    {'original': 'scrqa_dream_original', 'sub': 'scrqa_dream_sub'}
    >>> [metric.key for metric in task.metrics]
    ['accuracy']
    """

    config: TaskConfig

    @property
    def task(self) -> Task:
        return self.config.definition

    @property
    def slug(self) -> str:
        return self.task.export_slug(self.config)

    @property
    def data_config(self) -> str:
        return self.config.data_config

    @property
    def metrics(self) -> tuple[Metric, ...]:
        """The task's metrics a harness computes within this config (not RPG), in the task's order."""
        return tuple(metric for metric in self.task.metrics if metric.key in PER_CONFIG_METRICS)

    def anchors(self) -> dict[str, ExportedTask]:
        """The same task at the scramble types its scores are paired with: ``original`` (a harness's
        ``canonical_task``) and, for RPG, ``sub``; a type the task does not run at is left out."""
        found = {}
        for scramble_type in (UNSCRAMBLED, *self.task.anchors):
            if scramble_type in self.task.excluded_types:
                continue  # ScrRec has no unscrambled config: recovering a clean text measures nothing
            found[scramble_type] = ExportedTask(self.task.anchor(self.config, scramble_type))
        return found

    @cached_property
    def demonstration(self) -> str:
        return self.task.demonstration(self.config, SEED)

    def documents(self, rows: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
        """The documents of the rows this config evaluates, in dataset order (every one: a harness's
        ``--limit`` then takes the first, as ``run --limit`` does).

        >>> rows = [{"id": 7, "original": "Bob won.", "scrambled": "Bob nwo.", "question": "Who won?",
        ...          "choices": ["Ann", "Bob"], "answer": "B", "used_for_qa": True}]
        >>> [doc] = ExportedTask(TaskConfig("scrqa", "realtimeqa", "rs50")).documents(rows)
        >>> doc["id"], doc["target"], doc["prompt"].splitlines()[2], json.loads(doc["meta"])["config"]
        ('7', 'B', 'Evidence: Bob nwo.', 'scrqa/realtimeqa/rs50')
        """
        return [self.document(row) for row in self.task.select_rows(self.config, rows, None)]

    def document(self, row: Mapping[str, Any]) -> dict[str, str]:
        meta = self.task.meta(self.config, row)
        return {
            "id": meta["id"],
            "prompt": self.task.prompt(self.config, row, self.demonstration),
            "target": gold(meta),
            "meta": json.dumps(meta, ensure_ascii=False, sort_keys=True),
        }


def data_from_environment(environ: Mapping[str, str] = os.environ) -> tuple[str, str | None]:
    """The dataset path (a build folder or a Hub id) and revision that tasks read unless told otherwise.

    >>> data_from_environment({}), data_from_environment({DATA_ENV: "org/scrambled_bench", REVISION_ENV: "v1.0.0"})
    (('scrambled_bench', None), ('org/scrambled_bench', 'v1.0.0'))
    """
    return environ.get(DATA_ENV) or str(DEFAULT_BUILD_DIR), environ.get(REVISION_ENV) or None


def gold(meta: Mapping[str, Any]) -> str:
    """The reference a harness logs beside the output: the gold letter, or the original text (ScrRec).

    >>> gold({"answer": "C"}), gold({"original": "The cat."})
    ('C', 'The cat.')
    """
    return meta["answer"] if "answer" in meta else meta["original"]


def exported_tasks(suite: str = SUITE) -> list[ExportedTask]:
    """The exported configs, in the suite's order.

    >>> tasks = exported_tasks()
    >>> len(tasks), tasks[0].slug, tasks[-1].slug
    (40, 'scrrec_realtimeqa_rs20', 'aqua_cot_rs100_exemplars100')
    """
    return [ExportedTask(config) for config in get_suite(suite).configs]


def exported_task(slug: str) -> ExportedTask:
    """The exported config called ``slug`` (also any config of the ``letters`` suite, which holds ``paper``).

    >>> exported_task("scrqa_dream_kfl").config.name
    'scrqa/dream/kfl'
    >>> exported_task("scrqa_dream_typo")
    Traceback (most recent call last):
    ...
    KeyError: "no Scrambled Bench config is exported as 'scrqa_dream_typo'"
    """
    for task in exported_tasks("letters"):
        if task.slug == slug:
            return task
    raise KeyError(f"no Scrambled Bench config is exported as {slug!r}")


def document_meta(document: Mapping[str, Any]) -> dict[str, Any]:
    """The scoring metadata of a document (as a harness hands it back, or as it logged it)."""
    meta = document["meta"]
    return json.loads(meta) if isinstance(meta, str) else dict(meta)


def config_of(meta: Mapping[str, Any]) -> TaskConfig:
    """The config a document's metadata belongs to.

    >>> config_of({"task": "aqua-cot", "dataset": "aqua", "scramble_type": "rs50", "exemplar_rate": 20}).name
    'aqua-cot/aqua/rs50/exemplars-20'
    """
    return TaskConfig(meta["task"], meta["dataset"], meta["scramble_type"], meta.get("exemplar_rate"))


def score_sample(meta: Mapping[str, Any], output: str, *, reader: str) -> dict[str, Any]:
    """:meth:`Task.score` on one output, as ``run`` scores a chat answer (pure).

    >>> score_sample({"task": "scrqa", "dataset": "dream", "choices": ["x", "y"], "answer": "B"}, " B", reader="careful")
    {'prediction': 'B', 'correct': True, 'unparsed': False, 'rule': 'leading-letter'}
    """
    return task_of(meta).score(meta, output if isinstance(output, str) else "", chat=True, reader=reader)


def task_of(meta: Mapping[str, Any]) -> Task:
    """The task a document's metadata belongs to."""
    return get_task(meta["task"])


def metric_items(meta: Mapping[str, Any], scored: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """One sample's item per exported metric of its task: what :func:`aggregate` needs of it (JSON-able,
    so a harness can log it).

    >>> scored = {"prediction": "The cat.", "edit_distance": 0}
    >>> metric_items({"task": "scrrec-zero-shot", "original": "The cat.", "scrambled": "Teh cat."}, scored)["recovery_rate"]
    {'prediction': 'The cat.', 'original': 'The cat.', 'scrambled': 'Teh cat.'}
    """
    items = {}
    for metric in task_of(meta).metrics:
        if metric.key == "accuracy":
            items[metric.key] = {"prediction": scored["prediction"], "answer": meta["answer"]}
        elif metric.key in ("recovery_rate", "edit_distance"):
            items[metric.key] = {
                "prediction": scored["prediction"],
                "original": meta["original"],
                "scrambled": meta["scrambled"],
            }
    return items


def aggregate(metric: str, items: Sequence[Mapping[str, Any]]) -> float:
    """A config's score from its samples' items, by the packaged metric module (a fraction, as the modules
    and both harnesses report, and as ``run``'s results.json holds them). NaN where the module says the score
    is undefined or there is no sample: a harness's table still prints.

    >>> aggregate("accuracy", [{"prediction": "A", "answer": "A"}, {"prediction": None, "answer": "B"}])
    0.5
    >>> aggregate("recovery_rate", [{"prediction": "The cat.", "original": "The cat.", "scrambled": "Teh cat."}])
    1.0
    >>> aggregate("edit_distance", [{"prediction": "Teh cat.", "original": "The cat.", "scrambled": "Teh cat."}])
    2.0
    """
    if not items:
        return math.nan
    if metric == "accuracy":
        result = loaded("relative_performance_gain").compute(
            predictions=[item["prediction"] or "" for item in items],
            references=[item["answer"] for item in items],
        )
        return float(result["accuracy"])
    if metric not in ("recovery_rate", "edit_distance"):
        raise ValueError(f"no per-config aggregate for metric {metric!r}; choose from {PER_CONFIG_METRICS}")
    try:
        result = loaded("recovery_rate").compute(
            predictions=[item["prediction"] for item in items],
            references=[item["original"] for item in items],
            scrambled=[item["scrambled"] for item in items],
        )
    except ValueError:  # every sampled text equals its original: RR is undefined (the module's verdict)
        return math.nan
    return float(result[metric])


# :func:`aggregate` per metric under the metric's name, for the harnesses that find an aggregation by its
# module-level name (lm-eval's ``!function`` in the exported YAML; lighteval's bootstrap workers)


def accuracy(items: Sequence[Mapping[str, Any]]) -> float:
    """Accuracy (a fraction) by the ``relative_performance_gain`` module, as ``run`` computes it."""
    return aggregate("accuracy", items)


def recovery_rate(items: Sequence[Mapping[str, Any]]) -> float:
    """RR (a fraction) by the ``recovery_rate`` module, as ``run`` computes it."""
    return aggregate("recovery_rate", items)


def edit_distance(items: Sequence[Mapping[str, Any]]) -> float:
    """Mean character edit distance by the ``recovery_rate`` module, as ``run`` computes it."""
    return aggregate("edit_distance", items)


AGGREGATIONS: dict[str, Callable[[Sequence[Mapping[str, Any]]], float]] = {
    "accuracy": accuracy,
    "recovery_rate": recovery_rate,
    "edit_distance": edit_distance,
}
"""Each of :data:`PER_CONFIG_METRICS` to its named aggregation."""
