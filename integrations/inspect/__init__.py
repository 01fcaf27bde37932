"""Inspect AI, as one :class:`~scrambled_bench.integrations.base.Harness`.

- ``scramble inspect:TASK`` (a registry name or ``file.py@task``): the task is resolved by Inspect's own
  loader and a task file written (``DIR/inspect/scrambled_tasks.py``, :mod:`.variants`) that defines the
  canonical task and one variant per type, scrambled in memory when it loads (:mod:`.scrambled`);
- ``score --from inspect DIR`` / ``report --from inspect DIR``: the ``--log-dir`` folder read back
  (:mod:`.logs`), the newest successful log of each task.

The bench's own tasks for Inspect are :mod:`.bench` (registered through the package's ``inspect_ai`` entry
point, with ``scrambled_bench/scrambled``, a scrambled variant of any task, from :mod:`.scrambled`). Importing
this package does not import inspect_ai: :mod:`.scrambled` (which does) is imported when a task is resolved.
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
from scrambled_bench.integrations.inspect.logs import read_inspect_logs
from scrambled_bench.integrations.inspect.variants import InspectCanonicalTask, short_name, write_task_file
from scrambled_bench.integrations.labels import readable_metric


class InspectHarness(Harness):
    """Inspect AI: tasks from its loader, logs from ``inspect eval --log-dir``."""

    name, title, spec, module = "inspect", "Inspect AI", "TASK or FILE.py[@TASK]", "inspect_ai"
    layout = LogLayout("inspect eval", "--log-dir", "", "logs (.eval or .json)")
    columns_are = "fields (input, choices)"

    def resolve(self, spec: str, task_sources: Mapping[str, str]) -> Sequence[CanonicalTask]:
        """The one task ``spec`` names: a registry name, or a task file (``FILE.py@TASK``; ``FILE.py`` where
        it defines one task), its path made absolute so the written task file loads it from any folder."""
        # deferred: .scrambled imports inspect_ai, which a lookup of the harness does not need
        from scrambled_bench.integrations.inspect.scrambled import load_canonical, resolved_spec

        label = f"{self.name}:{spec}"
        spec = resolved_spec(spec, label)
        loaded = load_canonical(spec, label=label)
        return [InspectCanonicalTask(loaded.name, spec, loaded)]

    def write_variants(self, tasks: Sequence[CanonicalTask], request: ScrambleRequest) -> WrittenVariants:
        """The task file of the one task :meth:`resolve` gave, its fields checked on its samples first."""
        # deferred: inspect_ai is optional (the harness extra), and .scrambled imports it
        from inspect_ai._util.error import PrerequisiteError

        from scrambled_bench.integrations.inspect.scrambled import chosen_fields, scrambled_variant

        [task] = tasks
        if not isinstance(task, InspectCanonicalTask):
            raise TypeError(f"{self.name} writes the variants of its own tasks, got {type(task).__name__}")
        fields = chosen_fields(list(request.columns))
        try:  # the fields are checked on the samples now, not when the task file first loads
            scrambled_variant(task.task, request.types[0], fields, seed=request.seed)
        except PrerequisiteError as exc:
            raise ScrambledBenchError(str(exc)) from None
        return write_task_file(task, request)

    def read_folder(self, folder: Path) -> list[LoggedTask]:
        return read_inspect_logs(folder)

    def variant_names(self, task: str, types: Sequence[str]) -> list[str]:
        """The task file's names: the canonical task's name without its package, as an identifier.

        >>> InspectHarness().variant_names("inspect_evals/arc_easy", ["kfl"])
        ['arc_easy_kfl']
        """
        return [f"{short_name(task)}_{scramble_type}" for scramble_type in types]

    def metric_label(self, key: str) -> str:
        """A scorer's name as a reader reads it (its package left out).

        >>> InspectHarness().metric_label("choice"), InspectHarness().metric_label("scrambled_bench/bench_score")
        ('choice (correct)', 'bench score')
        """
        return readable_metric(key.rsplit("/", 1)[-1])


__all__ = ["InspectHarness"]
