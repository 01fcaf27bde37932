"""Inspect AI, as one :class:`~scrambled_bench.integrations.base.Harness`.

- ``scramble inspect:TASK`` (a registry name or ``file.py@task``): the task is resolved by Inspect's own
  loader and a task file written (``DIR/inspect/scrambled_tasks.py``, :mod:`.variants`) that defines the
  canonical task and one variant per type, scrambled in memory when it loads (:mod:`.scrambled`);
- ``score --from inspect DIR`` / ``report --from inspect DIR``: the ``--log-dir`` folder read back
  (:mod:`.logs`), the newest successful log of each task.

The bench's own tasks for Inspect are :mod:`.bench` (registered through the package's ``inspect_ai`` entry
point, with ``scrambled_bench/scrambled``, a scrambled variant of any task, from :mod:`.scrambled`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.integrations.base import (
    CanonicalTask,
    Harness,
    LoggedTask,
    LogLayout,
    ScrambleRequest,
    WrittenVariants,
)
from scrambled_bench.integrations.labels import readable_metric


def absolute_spec(spec: str) -> str:
    """A file spec with its file made absolute (the task file loads it from wherever ``inspect eval`` runs);
    a registry name as it is.

    >>> absolute_spec("inspect_evals/arc_easy")
    'inspect_evals/arc_easy'
    >>> import os
    >>> absolute_spec(os.path.relpath(__file__) + "@planets") == f"{Path(__file__).resolve()}@planets"
    True
    """
    path, at, name = spec.partition("@")
    if Path(path).is_file():
        return f"{Path(path).resolve()}{at}{name}"
    return spec


class InspectHarness(Harness):
    """Inspect AI: tasks from its loader, logs from ``inspect eval --log-dir``."""

    name = "inspect"
    title = "Inspect AI"
    spec = "TASK or FILE.py@TASK"
    module = "inspect_ai"
    layout = LogLayout("inspect eval", "--log-dir", "", "logs (.eval or .json)")
    columns_are = "fields (input, choices)"

    def resolve(self, spec: str, task_sources: Mapping[str, str]) -> Sequence[CanonicalTask]:
        from scrambled_bench.integrations.inspect.scrambled import load_canonical
        from scrambled_bench.integrations.inspect.variants import InspectCanonicalTask

        spec = absolute_spec(spec)
        loaded = load_canonical(spec)
        return [InspectCanonicalTask(loaded.name, spec, loaded)]

    def write_variants(self, tasks: Sequence[CanonicalTask], request: ScrambleRequest) -> WrittenVariants:
        from inspect_ai._util.error import PrerequisiteError

        from scrambled_bench.integrations.inspect.scrambled import chosen_fields, scrambled_variant
        from scrambled_bench.integrations.inspect.variants import write_task_file

        [task] = tasks
        fields = chosen_fields(list(request.columns))
        try:  # the fields are checked on the samples now, not when the task file first loads
            scrambled_variant(task.task, request.types[0], fields, seed=request.seed)  # type: ignore[attr-defined]
        except PrerequisiteError as exc:
            raise ScrambledBenchError(str(exc)) from None
        return write_task_file(task, request)  # type: ignore[arg-type]

    def read_logs(self, folder: Path) -> list[LoggedTask]:
        from scrambled_bench.integrations.inspect.logs import read_inspect_logs

        self.check_folder(folder)
        tasks = read_inspect_logs(Path(folder))
        if not tasks:
            raise self.no_logs(folder)
        return tasks

    def metric_label(self, key: str) -> str:
        """A scorer's name as a reader reads it (its package left out).

        >>> InspectHarness().metric_label("choice"), InspectHarness().metric_label("scrambled_bench/bench_score")
        ('choice (correct)', 'bench score')
        """
        return readable_metric(key.rsplit("/", 1)[-1])


__all__ = ["InspectHarness"]
