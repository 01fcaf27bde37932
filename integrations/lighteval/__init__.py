"""lighteval, as one :class:`~scrambled_bench.integrations.base.Harness`.

- ``scramble lighteval:SUITE|TASK|FEWSHOT``: the spec is read by lighteval's own ``Registry`` (with
  ``--custom-tasks``, the option this harness declares), each task's dataset scrambled, and a custom-tasks
  module written beside it (``DIR/lighteval/scrambled_tasks.py``) that lists each canonical task's variants;
- ``score --from lighteval DIR`` / ``report --from lighteval DIR``: the ``--output-dir`` folder read back
  (:mod:`.logs`), the newest run of each task whichever command wrote it.

The bench's own tasks for lighteval are :mod:`.bench`; :mod:`.cli` starts lighteval's command line so that
it runs beside this package. Importing this package does not import lighteval: :mod:`.tasks_source` imports it
when a task is resolved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scrambled_bench.integrations.base import LoggedTask, LogLayout, ScrambleRequest, TaskOption
from scrambled_bench.integrations.datasets import DatasetHarness, HubData, TaskFiles
from scrambled_bench.integrations.exported import PREFIX, ExportedTask
from scrambled_bench.integrations.lighteval.logs import LAYOUT, logged_task
from scrambled_bench.integrations.lighteval.tasks_source import LightevalCanonicalTask, resolve_lighteval
from scrambled_bench.integrations.lighteval.variants import manifest_tasks, run_hint, write_lighteval_tasks
from scrambled_bench.integrations.logs import task_logs

CUSTOM_TASKS = TaskOption(
    "--custom-tasks", "your custom-tasks file or module (lighteval --custom-tasks)", "<file>"
)
"""``scramble``'s option naming the user's own custom-tasks file or module, as lighteval's ``--custom-tasks``."""


def task_name(exported: ExportedTask) -> str:
    """A bench config's task name in lighteval: ``scrambled_bench:<slug>`` (lighteval expands the part before
    the colon to every task sharing it).

    >>> from scrambled_bench.evaluation.tasks import TaskConfig
    >>> task_name(ExportedTask(TaskConfig("scrqa", "dream", "kfl")))
    'scrambled_bench:scrqa_dream_kfl'
    """
    return f"{PREFIX}:{exported.slug}"


class LightevalHarness(DatasetHarness):
    """lighteval: tasks from its ``Registry``, logs from ``--output-dir --save-details``."""

    name, title, spec, module = "lighteval", "lighteval", "SUITE|TASK|FEWSHOT", "lighteval"
    layout = LogLayout("lighteval", "--output-dir", "--save-details", "details")
    task_options = (CUSTOM_TASKS,)

    def resolve(self, spec: str, task_sources: Mapping[str, str]) -> Sequence[LightevalCanonicalTask]:
        return resolve_lighteval(spec, task_sources.get(CUSTOM_TASKS.flag))

    def write_task_files(
        self, folder: Path, tasks: Sequence[Any], request: ScrambleRequest, hub: HubData | None
    ) -> TaskFiles:
        files = write_lighteval_tasks(folder / "lighteval")
        return TaskFiles(files, run_hint(request.out, tasks, request.all_types), manifest_tasks(tasks, hub))

    def read_folder(self, folder: Path) -> list[LoggedTask]:
        """Each details file under ``folder`` with the results file of its invocation (the same timestamp)."""
        return [logged_task(log) for log in task_logs(folder, LAYOUT)]


__all__ = ["CUSTOM_TASKS", "LightevalHarness", "task_name"]
