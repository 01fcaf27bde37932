"""lm-evaluation-harness, as one :class:`~scrambled_bench.integrations.base.Harness`.

- ``scramble lm-eval:TASK|GROUP``: the task (or each subtask of a group or tag) is resolved by lm-eval's own
  ``TaskManager`` (with ``--include-path``), its dataset scrambled, and derived YAML written beside it
  (``DIR/lm_eval/<task>/``: one task per type that ``include``s the canonical YAML, and a group
  ``<task>_scrambled``);
- ``score --from lm-eval DIR`` / ``report --from lm-eval DIR``: the ``--output_path`` folder read back
  (:mod:`.logs`), the newest run of each task whichever invocation wrote it.

The bench's own tasks for lm-eval are :mod:`.bench` (the YAML in ``tasks/``, ``!function`` hooks in
:mod:`.hooks`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from scrambled_bench.integrations.base import LoggedTask, LogLayout, ScrambleRequest
from scrambled_bench.integrations.datasets import DatasetHarness, HubData, TaskFiles
from scrambled_bench.integrations.labels import readable_metric

INCLUDE_PATH = "--include-path"


class LmEvalHarness(DatasetHarness):
    """lm-evaluation-harness: tasks from its ``TaskManager``, logs from ``--output_path --log_samples``."""

    name = "lm-eval"
    title = "lm-evaluation-harness"
    spec = "TASK or GROUP"
    module = "lm_eval"
    layout = LogLayout("lm_eval", "--output_path", "--log_samples", "logged samples")
    task_sources: ClassVar[Mapping[str, str]] = {
        INCLUDE_PATH: "a folder of your own task YAMLs (lm_eval --include_path)"
    }

    def resolve(self, spec: str, task_sources: Mapping[str, str]) -> Sequence[Any]:
        from scrambled_bench.integrations.lm_eval.tasks_source import resolve_lm_eval

        include = task_sources.get(INCLUDE_PATH)
        return resolve_lm_eval(spec, Path(include) if include is not None else None)

    def write_task_files(
        self, folder: Path, tasks: Sequence[Any], request: ScrambleRequest, hub: HubData | None
    ) -> TaskFiles:
        from scrambled_bench.integrations.lm_eval.variants import group_name, write_lm_eval_tasks

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

    def read_logs(self, folder: Path) -> list[LoggedTask]:
        from scrambled_bench.integrations.lm_eval.logs import read_lm_eval_logs

        self.check_folder(folder)
        tasks = read_lm_eval_logs(Path(folder))
        if not tasks:
            raise self.no_logs(folder)
        return tasks

    def metric_label(self, key: str) -> str:
        """``metric,filter`` as a reader reads it.

        >>> LmEvalHarness().metric_label("acc,none"), LmEvalHarness().metric_label("exact_match,strip")
        ('accuracy', 'exact match (strip)')
        """
        metric, _, filter_name = key.partition(",")
        return readable_metric(metric, filter_name)


__all__ = ["LmEvalHarness"]
