"""The functions lm-evaluation-harness calls, named in the exported YAML as
``!function scrambled_bench.integrations.lm_eval.hooks.<name>`` (lm-eval 0.4.13 imports a dotted name
that is not a file beside the YAML as a module).

- ``process_docs_<slug>``: a config's rows to its documents (:meth:`ExportedTask.documents`: the rows
  ``run`` evaluates, the paper's prompt, the gold, the scoring metadata). One per config, because lm-eval
  hands ``process_docs`` the dataset alone; they are made on first use by the module's ``__getattr__``
  from the slug, so every exported config has one without a list to keep in step.
- ``process_results``: one output read and scored by the task (careful reader), as per-metric items;
- ``accuracy``, ``recovery_rate``, ``edit_distance``: the aggregations (:mod:`.task_export`'s), through the
  packaged metric modules (the metric names are only keys of ``process_results``' dict: lm-eval looks a
  metric up in its registry, or in ``evaluate``, only for a task without ``process_results``).

No lm-eval import here: the functions take and return plain data (and a ``datasets.Dataset``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from scrambled_bench.integrations.exported import (
    accuracy,
    document_meta,
    edit_distance,
    exported_task,
    metric_items,
    recovery_rate,
    score_sample,
)
from scrambled_bench.metrics.readers import DEFAULT_READER

__all__ = ["accuracy", "edit_distance", "process_docs_for", "process_results", "recovery_rate"]

PROCESS_DOCS_PREFIX = "process_docs_"


def process_docs_for(slug: str) -> Callable[[Any], Any]:
    """lm-eval's ``process_docs`` for the config exported as ``slug``: its ``datasets.Dataset`` split in,
    the config's documents out.

    >>> import datasets
    >>> split = datasets.Dataset.from_list([{"id": "q1", "original": "Bob won.", "scrambled": "Bob nwo.",
    ...     "question": "Who won?", "choices": ["Ann", "Bob"], "answer": "B", "used_for_qa": True}])
    >>> docs = process_docs_for("scrqa_realtimeqa_rs50")(split)
    >>> docs.column_names, docs[0]["target"]
    (['id', 'prompt', 'target', 'meta'], 'B')
    """
    exported = exported_task(slug)

    def process_docs(dataset: Any) -> Any:
        import datasets

        documents = exported.documents(dataset)
        if not documents:  # an empty list has no columns; lm-eval still needs the fields it reads
            return datasets.Dataset.from_dict({"id": [], "prompt": [], "target": [], "meta": []})
        return datasets.Dataset.from_list(documents)

    process_docs.__name__ = process_docs.__qualname__ = f"{PROCESS_DOCS_PREFIX}{slug}"
    return process_docs


def __getattr__(name: str) -> Callable[[Any], Any]:
    # PEP 562: `process_docs_<slug>` for any exported slug (lm-eval resolves `!function` with getattr)
    if name.startswith(PROCESS_DOCS_PREFIX):
        try:
            return process_docs_for(name[len(PROCESS_DOCS_PREFIX) :])
        except KeyError as exc:
            raise AttributeError(f"{__name__} has no {name!r}: {exc.args[0]}") from None
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def process_results(doc: Mapping[str, Any], results: Sequence[str]) -> dict[str, dict[str, Any]]:
    """One generated output (``results[0]``) read and scored; an item per metric of the task.

    >>> from scrambled_bench.integrations.exported import ExportedTask, TaskConfig
    >>> [doc] = ExportedTask(TaskConfig("scrqa", "dream", "kfl")).documents(
    ...     [{"id": "d1", "scrambled": "W: Hi.", "question": "Who?", "choices": ["W", "M", "N"], "answer": "A"}])
    >>> process_results(doc, [" A."])
    {'accuracy': {'prediction': 'A', 'answer': 'A'}}
    """
    meta = document_meta(doc)
    output = results[0] if results else ""
    return metric_items(meta, score_sample(meta, output, reader=DEFAULT_READER))
