"""The bench's own evaluation engine as a library: tasks, backends, the resumable engine, results and reports.

``scrambled-bench run`` and ``report`` are thin commands over these modules; a Python user calls them
directly::

    from scrambled_bench.evaluation import RunSettings, evaluate_model
    results = evaluate_model(RunSettings(suite="quick", limit=2))

- ``tasks/``: one :class:`~.tasks.base.Task` object per task (prompt, scoring, aggregate metrics, view)
- ``backends/``: one class per backend with a typed config, registered in ``BACKENDS``
- ``engine``, ``store``: concurrency, retries, rate limits, resumable run folders
- ``settings``, ``data``, ``evaluate``: what defines a run, where its data comes from, running it
- ``tokens``: a run's prompt tokens before it is sent (``--dry-run``), by the model's own tokenizer
- ``results``, ``aggregate``: results.json; ``report/``: tables, renderers, figures, Hub upload
"""

from __future__ import annotations

from scrambled_bench.evaluation.engine import EngineSettings
from scrambled_bench.evaluation.evaluate import evaluate_model, execute_run, plan_run
from scrambled_bench.evaluation.settings import RunSettings
from scrambled_bench.evaluation.tasks import TASKS, TaskConfig

__all__ = [
    "TASKS",
    "EngineSettings",
    "RunSettings",
    "TaskConfig",
    "evaluate_model",
    "execute_run",
    "plan_run",
]
