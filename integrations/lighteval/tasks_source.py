"""lighteval tasks as a ``scramble`` source: ``scrambled-bench scramble lighteval:SPEC``.

``SPEC`` is lighteval's own task spec (``suite|task|fewshot``, or ``task|fewshot``; lighteval 0.13 ignores
the suite), resolved by lighteval's ``Registry`` with the user's ``--custom-tasks`` module (a file or a module
name, as ``lighteval --custom-tasks`` takes it). A superset (``mmlu``) or a comma-separated list becomes its
tasks. lighteval's registry imports every built-in task file, and three fail here (see
``integrations.lighteval.cli``): they are passed over, as the launcher does, while the registry is read.

From each task's ``LightevalTaskConfig`` comes what it reads: ``hf_repo``, ``hf_subset``, ``hf_revision``,
``evaluation_splits`` and the split its demonstrations come from (``few_shots_split``, else the one
lighteval picks from ``hf_avail_splits``: its own ``LightevalTask`` decides). The shared flow
(:class:`~scrambled_bench.integrations.datasets.DatasetHarness`) loads and scrambles that; nothing here scrambles text.

A column whose scrambling changes a document's gold is refused: the task's ``prompt_function`` is applied to
the first documents, original and scrambled, and the texts of ``Doc.choices[gold_index]`` compared.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import sys
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrambled_bench.builder.scramble import Variant
from scrambled_bench.errors import ScrambledBenchError, first_line
from scrambled_bench.integrations.datasets import DatasetTask, closest_names, first_documents, target_changes
from scrambled_bench.integrations.lighteval.cli import import_builtin_tasks, pass_over

BUILTIN_PREFIX = "lighteval.tasks."


def folder_name(task: str) -> str:
    """A task's data folder in ``DIR``: its name with what a file system (or the Hub) may refuse replaced.

    >>> folder_name("arc:easy"), folder_name("mmlu:college_biology")
    ('arc_easy', 'mmlu_college_biology')
    """
    return re.sub(r"[^A-Za-z0-9._-]", "_", task)


@dataclass
class LightevalCanonicalTask(DatasetTask):
    """One lighteval task as its registry resolves it: its config, the module that defines it (a built-in
    module's name, or the ``--custom-tasks`` file or module) and the split its demonstrations come from."""

    name: str
    config: Any = field(repr=False)
    module: str
    fewshot_split: str | None

    @property
    def folder(self) -> str:
        return folder_name(self.name)

    @property
    def builtin(self) -> bool:
        return self.module.startswith(BUILTIN_PREFIX)

    @property
    def dataset_path(self) -> str:
        return str(self.config.hf_repo)

    @property
    def dataset_name(self) -> str | None:
        return self.config.hf_subset

    @property
    def dataset_kwargs(self) -> dict[str, Any]:
        revision = self.config.hf_revision
        return {"revision": revision} if revision else {}

    @property
    def eval_splits(self) -> list[str]:
        return [str(split) for split in self.config.evaluation_splits]

    @property
    def demo_split(self) -> str:
        """The split lighteval draws demonstrations from; its first evaluation split where it finds no other
        (lighteval then draws them from its evaluation splits)."""
        return self.fewshot_split or self.eval_splits[0]

    @property
    def splits(self) -> list[str]:
        """Every split the task reads, the evaluation splits first."""
        return list(dict.fromkeys([*self.eval_splits, self.demo_split]))

    @property
    def num_fewshots(self) -> int:
        return int(self.config.num_fewshots)

    @property
    def num_fewshot(self) -> int | None:
        """The spec's number of demonstrations (``suite|task|N``)."""
        return self.num_fewshots

    def describe(self) -> dict[str, Any]:
        return {"task": self.name, "module": self.module, "eval_splits": self.eval_splits,
                "demo_split": self.demo_split, "num_fewshots": self.num_fewshots}  # fmt: skip

    def refuse_target_columns(
        self, dataset: Any, columns: Sequence[str], variants: Sequence[Variant], seed: int
    ) -> None:
        """Refuse ``columns`` when scrambling them changes the gold text of one of the first documents."""
        first, scrambled_firsts = first_documents(dataset, columns, variants, seed)
        original = self.golds(first)
        for variant, rows in scrambled_firsts.items():
            scrambled = self.golds(rows)
            for index in range(max(len(original), len(scrambled))):
                before = original[index] if index < len(original) else None
                after = scrambled[index] if index < len(scrambled) else None
                if before != after:
                    raise target_changes(self.name, columns, index, variant)

    def check_template_columns(self, dataset: Any) -> None:
        """Nothing to check before running: a lighteval task reads its columns in its Python prompt function,
        which :meth:`refuse_target_columns` has already run on the first documents (a missing column fails
        there, in one line)."""

    def golds(self, rows: Any) -> list[list[str] | None]:
        """The gold texts (``Doc.choices[gold_index]``) of each row, as the task's ``prompt_function`` makes
        its document (after ``hf_filter``); None for a row it skips."""
        if self.config.hf_filter is not None:
            rows = rows.filter(self.config.hf_filter)
        golds: list[list[str] | None] = []
        for index, row in enumerate(rows):
            line = {**row, "__few_shots": False, "__index": index}
            try:
                doc = self.config.prompt_function(line, self.name)
            except Exception as exc:  # noqa: BLE001 - the task's own function failing is one line
                raise ScrambledBenchError(
                    f"task {self.name}: its prompt_function fails on the rows: {first_line(exc)}"
                ) from None
            golds.append(None if doc is None or doc == [] else gold_texts(doc))
        return golds


def gold_texts(doc: Any) -> list[str]:
    """The texts of a lighteval ``Doc``'s gold choice(s).

    >>> from types import SimpleNamespace
    >>> gold_texts(SimpleNamespace(choices=[" A", " B"], gold_index=1)), gold_texts(SimpleNamespace(choices=["x", "y"], gold_index=[0, 1]))
    ([' B'], ['x', 'y'])
    """
    indices = doc.gold_index if isinstance(doc.gold_index, list | tuple) else [doc.gold_index]
    return [doc.choices[int(index)] for index in indices]


@contextlib.contextmanager
def quiet_imports() -> Iterator[None]:
    """lighteval's imports chatter on stderr (the nltk data its metrics try to download, huggingface_hub's
    deprecations), which says nothing about the user's task: kept out of the command's output."""
    with contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@contextlib.contextmanager
def builtin_tasks_importable() -> Iterator[list]:
    """While inside, lighteval's built-in task files that fail to import here are empty modules (lighteval's
    registry passes over them, as :mod:`.cli` arranges for a run); the modules that
    imported are given. ``sys.modules`` is as it was afterwards."""
    with quiet_imports():
        imported, failed = import_builtin_tasks()
    before = {name: sys.modules.get(name) for name in failed}
    pass_over(list(failed))
    try:
        yield imported
    finally:
        for name, module in before.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def custom_tasks_ref(custom_tasks: str | Path | None) -> str | None:
    """``--custom-tasks`` as lighteval takes it: an existing file (made absolute, so that the derived tasks
    find it from anywhere) or a module name.

    >>> custom_tasks_ref(None), custom_tasks_ref("my_pkg.tasks")
    (None, 'my_pkg.tasks')
    """
    if custom_tasks is None:
        return None
    path = Path(custom_tasks).expanduser()
    return str(path.resolve()) if path.exists() else str(custom_tasks)


def resolve_lighteval(spec: str, custom_tasks: str | Path | None = None) -> list[LightevalCanonicalTask]:
    """The tasks ``spec`` names in lighteval's registry (with ``custom_tasks``); an unknown name is a one-line
    error with the closest names.

    >>> [(task.name, task.dataset_path, task.eval_splits) for task in resolve_lighteval("lighteval|arc:easy|0")]
    [('arc:easy', 'allenai/ai2_arc', ['test'])]
    """
    logging.getLogger("lighteval").setLevel(logging.ERROR)
    with quiet_imports():
        from lighteval.tasks.lighteval_task import LightevalTask
        from lighteval.tasks.registry import Registry

    custom = custom_tasks_ref(custom_tasks)
    with builtin_tasks_importable() as imported:
        try:
            registry = Registry(tasks=spec, custom_tasks=custom)
        except ValueError as exc:
            missing = re.search(r"Cannot find task (\S+)", str(exc))
            if missing is None:
                raise ScrambledBenchError(f"lighteval:{spec}: {first_line(exc)}") from None
            known = list(Registry.load_all_task_configs(custom_tasks=custom))
            name = missing[1]
            raise ScrambledBenchError(f"lighteval has no task {name!r}{closest_names(name, known)}") from None
        except Exception as exc:  # noqa: BLE001 - a custom-tasks module that fails to load is one line
            where = f"--custom-tasks {custom_tasks}" if custom_tasks is not None else f"lighteval:{spec}"
            raise ScrambledBenchError(f"{where}: {first_line(exc)}") from None
        defined_in = {
            name: module.__name__ for module in imported for name in Registry._extract_configs(module)
        }
    tasks: dict[str, LightevalCanonicalTask] = {}
    for configs in registry.task_to_configs.values():
        for config in configs:
            if config.name in tasks:
                continue
            module = defined_in.get(config.name, custom)
            if module is None:
                raise ScrambledBenchError(
                    f"lighteval task {config.name}: cannot tell which module defines it"
                )
            tasks[config.name] = LightevalCanonicalTask(
                config.name, config, module, LightevalTask(config).fewshot_split
            )
    return list(tasks.values())
