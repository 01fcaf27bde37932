"""lm-evaluation-harness, as one :class:`~scrambled_bench.integrations.base.Harness`.

- ``scramble lm-eval:TASK|GROUP``: the task (or each subtask of a group or tag) is resolved by lm-eval's own
  ``TaskManager`` (with ``--include-path``, the option this harness declares), its dataset scrambled, and
  derived YAML written beside it (``DIR/lm_eval/<task>/``: one task per type that ``include``s the canonical
  YAML, and a group ``<task>_scrambled``);
- ``score --from lm-eval DIR`` / ``report --from lm-eval DIR``: the ``--output_path`` folder read back
  (:mod:`.logs`), the newest run of each task whichever invocation wrote it;
- ``lm-eval-path``: the folder of the bench's own tasks for ``--include_path`` (:meth:`~LmEvalHarness.bench_tasks_folder`).

The bench's own tasks for lm-eval are :mod:`.bench` (the YAML in ``tasks/``, ``!function`` hooks in
:mod:`.hooks`). Importing this package does not import lm-eval: :mod:`.tasks_source` imports it when a task is
resolved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.integrations.base import LoggedTask, LogLayout, ScrambleRequest, TaskOption
from scrambled_bench.integrations.datasets import DatasetHarness, HubData, TaskFiles
from scrambled_bench.integrations.labels import readable_metric
from scrambled_bench.integrations.lm_eval.bench import (
    PACKAGED_TASKS,
    data_location,
    default_folder,
    write_tasks,
)
from scrambled_bench.integrations.lm_eval.logs import LAYOUT, logged_task
from scrambled_bench.integrations.lm_eval.tasks_source import LmEvalCanonicalTask, resolve_lm_eval
from scrambled_bench.integrations.lm_eval.variants import group_name, write_lm_eval_tasks
from scrambled_bench.integrations.logs import task_logs

INCLUDE_PATH = TaskOption(
    "--include-path", "a folder of your own task YAMLs (lm_eval --include_path)", "<dir>"
)
"""``scramble``'s option naming a folder of the user's own task YAMLs, as lm-eval's ``--include_path``."""


class LmEvalHarness(DatasetHarness):
    """lm-evaluation-harness: tasks from its ``TaskManager``, logs from ``--output_path --log_samples``."""

    name, title, spec, module = "lm-eval", "lm-evaluation-harness", "TASK or GROUP", "lm_eval"
    layout = LogLayout("lm_eval", "--output_path", "--log_samples", "logged samples")
    task_options = (INCLUDE_PATH,)

    def resolve(self, spec: str, task_sources: Mapping[str, str]) -> Sequence[LmEvalCanonicalTask]:
        include = task_sources.get(INCLUDE_PATH.flag)
        return resolve_lm_eval(spec, Path(include) if include is not None else None)

    def write_task_files(
        self, folder: Path, tasks: Sequence[Any], request: ScrambleRequest, hub: HubData | None
    ) -> TaskFiles:
        files = write_lm_eval_tasks(
            folder / "lm_eval",
            tasks,
            request.out,
            request.all_types,
            columns=request.columns,
            seed=request.seed,
            hub=hub,
        )
        groups = ",".join(group_name(task.name) for task in tasks)
        return TaskFiles(
            files,
            f"lm_eval --include_path {request.out / 'lm_eval'} --tasks {groups} --log_samples --output_path OUT",
        )

    def read_folder(self, folder: Path) -> list[LoggedTask]:
        """Each ``samples_<task>_<date>.jsonl`` under ``folder`` with the results file of its invocation."""
        return [logged_task(log) for log in task_logs(folder, LAYOUT)]

    def bench_tasks_folder(
        self, data: str | None = None, revision: str | None = None, out: Path | None = None
    ) -> Path:
        """The packaged task folder (its tasks read ``./scrambled_bench``), or without ``data`` the one
        written for that build folder or Hub dataset (at ``revision``) into ``out`` (by default a folder per
        data location and version in the user's cache).

        >>> LmEvalHarness().bench_tasks_folder().name
        'tasks'
        >>> LmEvalHarness().bench_tasks_folder(revision="v1")
        Traceback (most recent call last):
        ...
        scrambled_bench.errors.ScrambledBenchError: --revision and --out apply with --data (the packaged tasks read ./scrambled_bench)
        """
        if data is None:
            if revision is not None or out is not None:
                raise ScrambledBenchError(
                    "--revision and --out apply with --data (the packaged tasks read ./scrambled_bench)"
                )
            return PACKAGED_TASKS
        location = data_location(data, revision)
        return write_tasks(out if out is not None else default_folder(location), location).resolve()

    def metric_label(self, key: str) -> str:
        """``metric,filter`` as a reader reads it.

        >>> LmEvalHarness().metric_label("acc,none"), LmEvalHarness().metric_label("exact_match,strip")
        ('accuracy', 'exact match (strip)')
        """
        metric, _, filter_name = key.partition(",")
        return readable_metric(metric, filter_name)


__all__ = ["INCLUDE_PATH", "LmEvalHarness"]
