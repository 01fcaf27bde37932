"""lm-eval tasks as a ``scramble`` source: ``scrambled-bench scramble lm-eval:TASK|GROUP``.

The task is resolved through lm-eval's own ``TaskManager`` (with the user's ``--include-path``; a group or
tag becomes its subtasks), which gives each canonical task its YAML and its full config (``!function``
hooks resolved). The shared flow of :class:`~scrambled_bench.integrations.datasets.DatasetHarness` loads and
scrambles its dataset; nothing here scrambles text.

A column that holds the target is refused: one that ``doc_to_target`` names or reads in its Jinja template
(or ``doc_to_choice``, where a generated answer is compared with the gold choice's text), and, for a
``!function`` (or where ``process_docs`` reshapes the documents), one that changes the target of the first
documents once scrambled.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from scrambled_bench.builder.nested_columns import column_path
from scrambled_bench.builder.scramble import Variant
from scrambled_bench.errors import ScrambledBenchError, first_line
from scrambled_bench.integrations.datasets import (
    TARGET_CHECK_DOCS,
    DatasetTask,
    closest_names,
    first_documents,
    target_changes,
)
from scrambled_bench.io import user_cache_dir


@dataclass
class LmEvalCanonicalTask(DatasetTask):
    """One lm-eval task as its registry resolves it: its YAML, its full config (``!function`` hooks
    resolved) and what it reads."""

    name: str
    yaml_path: Path
    config: dict[str, Any] = field(repr=False)

    @property
    def folder(self) -> str:
        """The folder of ``DIR`` its scrambled data goes to (lm-eval's task names are file-system safe)."""
        return self.name

    @property
    def dataset_path(self) -> str:
        return str(self.config.get("dataset_path") or "")

    @property
    def dataset_name(self) -> str | None:
        return self.config.get("dataset_name")

    @property
    def dataset_kwargs(self) -> dict[str, Any]:
        return dict(self.config.get("dataset_kwargs") or {})

    @property
    def eval_split(self) -> str:
        """The split lm-eval evaluates: the test split where the task has one, else the validation split."""
        split = self.config.get("test_split") or self.config.get("validation_split")
        if not split:
            raise ScrambledBenchError(f"task {self.name} names no test_split or validation_split")
        return str(split)

    @property
    def eval_splits(self) -> list[str]:
        return [self.eval_split]

    @property
    def demo_split(self) -> str:
        """The split lm-eval draws demonstrations from (``fewshot_config.split``, ``fewshot_split``, else
        training, validation, test: lm-eval's own rule)."""
        fewshot = self.config.get("fewshot_config") or {}
        for key in ("fewshot_split", "training_split", "validation_split", "test_split"):
            split = (fewshot.get("split") if isinstance(fewshot, Mapping) else None) or self.config.get(key)
            if split:
                return str(split)
        return self.eval_split

    @property
    def num_fewshot(self) -> int | None:
        """The task config's ``num_fewshot`` (lm-eval's default: 0; ``lm_eval --num_fewshot`` overrides it)."""
        shots = self.config.get("num_fewshot")
        return int(shots) if isinstance(shots, int) else 0

    @property
    def splits(self) -> list[str]:
        """Every split the task names, the evaluation split first."""
        named: list[Any] = [self.eval_split, self.demo_split]
        named += [self.config.get(key) for key in ("training_split", "validation_split", "test_split")]
        return list(dict.fromkeys(str(split) for split in named if split))

    @property
    def metadata(self) -> dict[str, Any]:
        metadata = self.config.get("metadata")
        return dict(metadata) if isinstance(metadata, Mapping) else {}

    def describe(self) -> dict[str, Any]:
        """What the data folder's manifest records about the task (under ``harness``)."""
        return {"task": self.name, "yaml": str(self.yaml_path), "eval_split": self.eval_split,
                "demo_split": self.demo_split}  # fmt: skip

    def refuse_target_columns(
        self, dataset: Any, columns: Sequence[str], variants: Sequence[Variant], seed: int
    ) -> None:
        check_not_target(self, dataset, columns, variants, seed)

    def check_template_columns(self, dataset: Any) -> None:
        check_template_columns(self, dataset)


def resolve_lm_eval(spec: str, include_path: Path | None = None) -> list[LmEvalCanonicalTask]:
    """The tasks ``spec`` names in lm-eval's registry (a group or tag becomes its subtasks), with their
    configs as lm-eval loads them; an unknown name is a one-line error with the closest names.

    >>> [task.name for task in resolve_lm_eval("arc_easy")], resolve_lm_eval("arc_easy")[0].dataset_path
    (['arc_easy'], 'allenai/ai2_arc')
    """
    from lm_eval.tasks._index import Kind

    if include_path is not None and not Path(include_path).is_dir():
        raise ScrambledBenchError(f"--include-path {include_path}: no such folder")
    index = task_index(include_path)
    if spec not in index:
        raise ScrambledBenchError(f"lm-eval has no task or group {spec!r}{closest_names(spec, list(index))}")

    found: dict[str, LmEvalCanonicalTask] = {}

    def visit(name: str, seen: tuple[str, ...]) -> None:
        entry = index.get(name)
        if entry is None:
            raise ScrambledBenchError(f"lm-eval: {seen[-1]} names {name!r}, which is not in its registry")
        if entry.kind == Kind.TAG:
            for member in sorted(entry.tags):
                visit(member, (*seen, name))
        elif entry.kind == Kind.GROUP:
            for member in _group_members(entry):
                visit(member, (*seen, name))
        elif entry.kind == Kind.TASK and entry.yaml_path is not None:
            found.setdefault(name, _load_task(name, entry.yaml_path))
        else:
            raise ScrambledBenchError(
                f"lm-eval task {name} is defined in Python (class), not by a YAML config; it cannot be derived"
            )

    visit(spec, (spec,))
    return list(found.values())


def task_index(include_path: Path | None = None) -> dict[str, Any]:
    """lm-eval's registry as its ``TaskManager`` builds it: its built-in tasks, then ``include_path``'s, a name
    defined in both taken from ``include_path`` (lm-eval's own rule: later paths override earlier ones).

    The built-in part (thousands of YAML files, seconds to index) is read once per process, and kept in the
    user's cache between processes (:func:`_builtin_task_index`); only the user's folder, which can change
    between calls, is read on every call.

    >>> index = task_index()
    >>> index["arc_easy"].kind.name, task_index() is not index
    ('TASK', True)
    """
    from lm_eval.tasks._index import TaskIndex

    index = dict(_builtin_task_index())
    if include_path is not None:
        index.update(TaskIndex.build([Path(include_path)]))
    return index


@functools.cache
def _builtin_task_index() -> Mapping[str, Any]:
    """lm-eval's index of its own task folder, built once per installed lm-eval and its files.

    Building it parses every YAML file lm-eval ships (15,000 files in 0.4.13: 6.5 s of CPU on the 2-core
    development machine), and every ``scramble lm-eval:`` command needs it. The index is kept in the user's
    cache under the name of what it was built from: lm-eval's version and the path, size and modification
    time of every file in its task folder (walking them takes 0.1 s), so an upgrade or an edited YAML
    builds it anew. Reading it back takes under a second. An entry that cannot be read, or a cache that
    cannot be written, costs only the build.
    """
    import logging

    import lm_eval.tasks
    from lm_eval.tasks._index import TaskIndex

    logging.getLogger("lm_eval").setLevel(logging.ERROR)
    root = Path(lm_eval.tasks.__file__).parent
    stored = _index_cache_file(root)
    try:
        with stored.open("rb") as handle:
            index = pickle.load(handle)
    except Exception:  # noqa: BLE001 - a damaged file raises what its bytes lead to (IndexError, OverflowError...)
        index = None
    if not isinstance(index, dict):
        index = TaskIndex.build([root])
        partial = stored.with_name(f"{stored.name}.{os.getpid()}.partial")
        try:
            stored.parent.mkdir(parents=True, exist_ok=True)
            with partial.open("wb") as handle:
                pickle.dump(index, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(partial, stored)  # whole or absent: a reader never sees half a file
        except OSError:  # a full or read-only cache: the next process builds it again, and no half file stays
            with contextlib.suppress(OSError):
                partial.unlink()
    return MappingProxyType(index)


def _index_cache_file(root: Path) -> Path:
    """Where the index of lm-eval's task folder ``root`` is kept: named by lm-eval's version and a digest of
    every file's path, size and modification time under ``root``."""
    from importlib.metadata import version

    digest = hashlib.sha256(str(root).encode())
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(
            name for name in subfolders if name not in ("__pycache__", ".ipynb_checkpoints")
        )
        for name in sorted(files):
            stat = os.stat(os.path.join(folder, name))
            digest.update(f"\0{folder}/{name}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return (
        user_cache_dir("lm-eval-task-index")
        / f"lm_eval-{version('lm_eval')}-{digest.hexdigest()[:16]}.pickle"
    )


def _group_members(entry: Any) -> list[str]:
    from lm_eval.tasks._yaml_loader import load_yaml

    members = load_yaml(entry.yaml_path, resolve_func=False).get("task") or []
    names = []
    for member in members if isinstance(members, list) else [members]:
        if isinstance(member, str):
            names.append(member)
        elif isinstance(member, Mapping) and isinstance(member.get("task"), str):
            names.append(member["task"])
        else:
            raise ScrambledBenchError(
                f"lm-eval group {entry.name}: member {member!r} is defined inline; name a registered task"
            )
    return names


def _load_task(name: str, yaml_path: Path) -> LmEvalCanonicalTask:
    from lm_eval.tasks._yaml_loader import load_yaml

    try:
        config = load_yaml(yaml_path, resolve_func=True)
    except Exception as exc:  # noqa: BLE001 - a broken task file (or its !function module) is one line
        raise ScrambledBenchError(
            f"lm-eval task {name}: cannot load {yaml_path}: {first_line(exc)}"
        ) from None
    if config.get("task") != name:
        raise ScrambledBenchError(
            f"lm-eval task {name} is one of several in {yaml_path}; it cannot be derived"
        )
    if config.get("custom_dataset") is not None:
        raise ScrambledBenchError(f"lm-eval task {name} builds its dataset in Python (custom_dataset)")
    if not config.get("dataset_path"):
        raise ScrambledBenchError(f"lm-eval task {name} names no dataset_path")
    return LmEvalCanonicalTask(name, Path(yaml_path).resolve(), config)


# --------------------------------------------------------------------------------------------------
# Refusing a column that holds the target
# --------------------------------------------------------------------------------------------------


def template_columns(template: str) -> set[str]:
    """The names a Jinja template reads (lm-eval's ``doc_to_target: "{{answer}}"``).

    >>> sorted(template_columns("{{choices[gold]}} {{ answer | trim }}"))
    ['answer', 'choices', 'gold']
    """
    import jinja2
    from jinja2 import meta

    try:
        return set(meta.find_undeclared_variables(jinja2.Environment().parse(template)))
    except jinja2.TemplateSyntaxError:
        return set()


TEMPLATE_OPTIONS = ("doc_to_text", "doc_to_target", "doc_to_choice")
"""The options of an lm-eval task that read a document's columns, by name or in a Jinja template."""


def check_template_columns(task: LmEvalCanonicalTask, dataset: Any) -> None:
    """A one-line error where ``doc_to_text``, ``doc_to_target`` or ``doc_to_choice`` names a column the
    task's documents do not have (after ``process_docs``, where the task reshapes them): lm-eval would fail
    on every document, so no variant is written."""
    import jinja2

    if task.config.get("process_docs") is not None:
        documents = _processed(task, dataset.select(range(min(TARGET_CHECK_DOCS, len(dataset)))))
        if not documents:
            return
        available = set(documents[0])
    else:
        available = set(dataset.features)
    known = available | set(jinja2.Environment().globals)
    for option in TEMPLATE_OPTIONS:
        value = task.config.get(option)
        if not isinstance(value, str) or value in available:
            continue
        missing = sorted(template_columns(value) - known)
        if missing:
            raise ScrambledBenchError(
                f"task {task.name}: {option} reads column {missing[0]!r}, which its documents do not have "
                f"(columns: {', '.join(sorted(available))})"
            )


def _static_target_columns(task: LmEvalCanonicalTask, features: Sequence[str]) -> dict[str, str]:
    """Column -> the option that reads it, for targets given as a column name or a template."""
    readers = {"doc_to_target": task.config.get("doc_to_target")}
    if task.config.get("output_type") == "generate_until":
        readers["doc_to_choice"] = task.config.get("doc_to_choice")  # the gold is then a choice's text
    columns: dict[str, str] = {}
    for option, value in readers.items():
        if not isinstance(value, str):
            continue
        names = {value} if value in features else template_columns(value)
        columns.update({name: option for name in names})
    return columns


def _gold(task: LmEvalCanonicalTask, doc: Mapping[str, Any]) -> Any:
    """The target of one processed document as lm-eval reads it (a choice's text where the target is an
    index into the choices of a generated answer)."""
    from lm_eval import utils

    def apply(value: Any) -> Any:
        if callable(value):
            return value(doc)
        if isinstance(value, str):
            return doc[value] if value in doc else utils.apply_template(value, doc)
        return value

    target = apply(task.config.get("doc_to_target"))
    choices = task.config.get("doc_to_choice")
    if choices is not None and task.config.get("output_type") == "generate_until":
        listed = apply(choices)
        if isinstance(target, int | str) and str(target).isdigit() and isinstance(listed, list):
            return listed[int(target)]
        return target, listed
    return target


def check_not_target(
    task: LmEvalCanonicalTask, dataset: Any, columns: Sequence[str], variants: Sequence[Variant], seed: int
) -> None:
    """Refuse a column that holds the task's target: named by ``doc_to_target`` (or a template reading
    it), or, on the first documents, changing the target once scrambled (a ``!function``, or documents
    reshaped by ``process_docs``)."""
    features = list(dataset.features)
    static = _static_target_columns(task, features)
    for column in columns:
        root = column_path(column, dataset.features).root
        if root in static:
            raise ScrambledBenchError(
                f"column {column!r} holds the target of task {task.name} ({static[root]} reads it); "
                "scramble the inputs, never the target"
            )
    dynamic = callable(task.config.get("doc_to_target")) or task.config.get("process_docs") is not None
    if not dynamic:
        return
    first, scrambled_firsts = first_documents(dataset, columns, variants, seed)
    original = _processed(task, first)
    for variant, scrambled_rows in scrambled_firsts.items():
        scrambled = _processed(task, scrambled_rows)
        for index, (before, after) in enumerate(zip(original, scrambled)):
            if _gold(task, before) != _gold(task, after):
                raise target_changes(task.name, columns, index, variant)


def _processed(task: LmEvalCanonicalTask, dataset: Any) -> list[dict[str, Any]]:
    process_docs: Callable[[Any], Any] | None = task.config.get("process_docs")
    try:
        return list(process_docs(dataset) if process_docs is not None else dataset)
    except Exception as exc:  # noqa: BLE001 - the task's own hook failing on scrambled rows is one line
        raise ScrambledBenchError(
            f"task {task.name}: process_docs fails on the rows: {first_line(exc)}"
        ) from None
