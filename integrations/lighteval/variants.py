"""Derived lighteval tasks: a canonical task's scrambled variants, changing nothing but the data.

``scramble lighteval:SPEC --out DIR`` writes ``DIR/lighteval/scrambled_tasks.py``, a three-line module that
lighteval takes as ``--custom-tasks DIR/lighteval/scrambled_tasks.py`` (a custom-tasks file, as lighteval
users write their own). Its ``TASKS_TABLE`` is :func:`derived_tasks_table` of ``DIR``: from ``DIR``'s
manifest, per canonical task and type, the canonical ``LightevalTaskConfig`` (found again in the module that
defines it) with :func:`dataclasses.replace` of ``name`` (``<task>_<type>``), ``hf_repo`` (``DIR/<folder>``,
or after ``--push`` the Hub dataset), ``hf_subset`` (the type's config) and ``hf_revision`` (None for the
folder, the pushed commit on the Hub), and nothing else: prompts, metrics, splits, stops stay the task's.
A canonical task from a ``--custom-tasks`` module of the user's is listed too, so the one module registers
every task of the comparison. The folder is found from the module's own place, so ``DIR`` may be moved.

``score --from lighteval`` recognises a derived task in lighteval's results by its name and data: a task
``<canonical>_<type>|<shots>`` whose ``hf_subset`` is ``<type>`` (a scramble type)
(:mod:`.logs`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.integrations.datasets import variant_name

MODULE_FILE = "scrambled_tasks.py"
MODULE_TEXT = '''"""The scrambled variants of lighteval tasks, written by `scrambled-bench scramble lighteval:...`.

Give this file to lighteval: --custom-tasks {path}. See DIR/manifest.json for what was scrambled.
"""

from pathlib import Path

from scrambled_bench.integrations.lighteval.variants import derived_tasks_table

TASKS_TABLE = derived_tasks_table(Path(__file__).resolve().parents[1])
'''


# --------------------------------------------------------------------------------------------------
# Writing (``scramble lighteval:SPEC``)
# --------------------------------------------------------------------------------------------------


def manifest_tasks(tasks: Sequence[Any], hub: Any | None = None) -> list[dict[str, Any]]:
    """What ``DIR/manifest.json`` records (under ``lighteval``) for :func:`derived_tasks_table`: per task
    (:class:`.tasks_source.LightevalCanonicalTask`) its name, defining module, data folder and, after
    ``--push``, the Hub dataset and commit (:class:`~scrambled_bench.integrations.datasets.HubData`)."""
    return [
        {
            "task": task.name,
            "module": task.module,
            "builtin": task.builtin,
            "folder": task.folder,
            "num_fewshots": task.num_fewshots,
            "hub": None if hub is None else {"repo_id": hub.repo_id, "revision": hub.revision},
        }
        for task in tasks
    ]


def write_lighteval_tasks(folder: Path) -> list[str]:
    """Write the custom-tasks module into ``folder`` (``DIR/lighteval``); its path relative to ``DIR``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / MODULE_FILE
    path.write_text(MODULE_TEXT.format(path=f"{folder.name}/{MODULE_FILE}"), encoding="utf-8")
    return [path.relative_to(folder.parent).as_posix()]


def task_list(tasks: Sequence[Any], types: Sequence[str]) -> str:
    """The lighteval task list of the comparison: each canonical task beside its variants, at its shots.

    >>> from types import SimpleNamespace
    >>> task_list([SimpleNamespace(name="arc:easy", num_fewshots=0)], ["kfl", "sub"])
    'arc:easy|0,arc:easy_kfl|0,arc:easy_sub|0'
    """
    names = [
        f"{name}|{task.num_fewshots}"
        for task in tasks
        for name in (task.name, *(variant_name(task.name, t) for t in types))
    ]
    return ",".join(names)


def run_hint(out: Path, tasks: Sequence[Any], types: Sequence[str]) -> str:
    """The command that runs the comparison (lighteval through ``lighteval_cli``, which passes over the
    built-in task files that fail here)."""
    return (
        "python -m scrambled_bench.integrations.lighteval.cli endpoint litellm MODEL_ARGS "
        f"'{task_list(tasks, types)}' --custom-tasks {out / 'lighteval' / MODULE_FILE} "
        "--save-details --output-dir OUT"
    )


# --------------------------------------------------------------------------------------------------
# The custom-tasks module (run by lighteval)
# --------------------------------------------------------------------------------------------------


def canonical_config(module: str, name: str) -> Any:
    """The canonical task's ``LightevalTaskConfig``, from the module that defines it (a module name or a
    custom-tasks file), loaded as lighteval loads a custom-tasks module."""
    from lighteval.tasks.registry import Registry

    try:
        configs = Registry._extract_configs(Registry.create_custom_tasks_module(module))
    except Exception as exc:  # noqa: BLE001 - a module gone or broken since `scramble` ran
        raise ScrambledBenchError(
            f"cannot load {module}, which defines lighteval task {name}: {exc}"
        ) from None
    if name not in configs:
        raise ScrambledBenchError(f"{module} no longer defines lighteval task {name}")
    return configs[name]


def variant_config(canonical: Any, scramble_type: str, data: str, revision: str | None = None) -> Any:
    """One derived task: the canonical config with its name, data and config replaced, nothing else.

    >>> from types import SimpleNamespace
    >>> import dataclasses
    >>> Config = dataclasses.make_dataclass("Config", ["name", "hf_repo", "hf_subset", "hf_revision", "metrics"])
    >>> variant_config(Config("arc:easy", "allenai/ai2_arc", "ARC-Easy", None, ["acc"]), "kfl", "/out/arc_easy")
    Config(name='arc:easy_kfl', hf_repo='/out/arc_easy', hf_subset='kfl', hf_revision=None, metrics=['acc'])
    """
    return dataclasses.replace(
        canonical,
        name=variant_name(canonical.name, scramble_type),
        hf_repo=data,
        hf_subset=scramble_type,
        hf_revision=revision,
    )


def read_manifest(out: Path) -> dict[str, Any]:
    """``DIR/manifest.json`` of a ``scramble lighteval:...`` output, checked."""
    path = Path(out) / "manifest.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ScrambledBenchError(f"{path}: not a `scramble lighteval:...` output ({exc})") from None
    if manifest.get("harness") != "lighteval" or not isinstance(manifest.get("lighteval"), list):
        raise ScrambledBenchError(f"{path}: not a `scramble lighteval:...` output")
    return manifest


def derived_tasks_table(out: Path) -> list[Any]:
    """The ``TASKS_TABLE`` of ``DIR/lighteval/scrambled_tasks.py``: every variant of every canonical task in
    ``DIR``'s manifest, and the canonical tasks that are not lighteval built-ins."""
    manifest = read_manifest(out)
    table = []
    for entry in manifest["lighteval"]:
        canonical = canonical_config(entry["module"], entry["task"])
        if not entry.get("builtin"):
            table.append(canonical)
        hub = entry.get("hub")
        for scramble_type in manifest["types"]:
            if hub:
                table.append(variant_config(canonical, scramble_type, hub["repo_id"], hub["revision"]))
            else:
                table.append(variant_config(canonical, scramble_type, str(Path(out) / entry["folder"])))
    return table
