"""Derived lm-eval task files: a canonical task's scrambled variants, changing nothing but the data.

Per (task, type) one YAML ``include``s the canonical task's own YAML by absolute path, so its prompts,
filters, metrics and ``!function`` hooks stay the task's own, and overrides only the dataset (the scrambled
folder and the type's config; after ``--push`` the Hub dataset at the pushed commit), the name ``<task>_<type>``, the tag ``scrambled_bench_<type>`` and
``metadata``. lm-eval merges an ``include`` shallowly, so ``metadata`` is the canonical task's own (its
``version`` included) plus what marks a derived task: ``canonical_task``, ``scramble_type``, ``seed``,
``columns`` and ``scrambled_bench_version``. A group ``<task>_scrambled`` holds the canonical task and its
variants, so ``lm_eval --include_path OUT/lm_eval --tasks <task>_scrambled`` runs the whole comparison.

A canonical task that is not one of lm-eval's built-in tasks (a user's ``--include-path`` task) also gets a
file that only ``include``s its YAML, so the folder alone registers everything the group names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scrambled_bench import __version__
from scrambled_bench.integrations.datasets import variant_name

DERIVED_KEY = "canonical_task"
"""The ``metadata`` key that marks a derived task (``score --from lm-eval`` reads it, :mod:`.logs`)."""
TAG_PREFIX = "scrambled_bench_"


def group_name(task: str) -> str:
    """The group of a canonical task and its variants.

    >>> group_name("gsm8k")
    'gsm8k_scrambled'
    """
    return f"{task}_scrambled"


def variant_config(
    canonical_yaml: Path,
    task: str,
    canonical_metadata: Mapping[str, Any],
    data_folder: Path | str,
    scramble_type: str,
    *,
    columns: Sequence[str],
    seed: int,
    revision: str | None = None,
) -> dict[str, Any]:
    """The YAML of one derived task, as a dict: its data in ``data_folder`` (a folder, or a Hub dataset id
    read at the commit ``revision``).

    >>> config = variant_config(Path("/t/arc.yaml"), "arc", {"version": 1.0}, Path("/o/arc"), "kfl", columns=["q"], seed=0)
    >>> config["include"], config["task"], config["dataset_path"], config["dataset_name"], config["metadata"]["version"]
    ('/t/arc.yaml', 'arc_kfl', '/o/arc', 'kfl', 1.0)
    >>> pushed = variant_config(Path("/t/arc.yaml"), "arc", {}, "org/arc-scr", "kfl", columns=["q"], seed=0, revision="9f3c")
    >>> pushed["dataset_path"], pushed["dataset_kwargs"]
    ('org/arc-scr', {'revision': '9f3c'})
    """
    return {
        "include": str(canonical_yaml),
        "task": variant_name(task, scramble_type),
        "tag": [TAG_PREFIX + scramble_type],
        "dataset_path": str(data_folder),
        "dataset_name": scramble_type,
        "dataset_kwargs": {} if revision is None else {"revision": revision},
        "metadata": {
            **dict(canonical_metadata),
            DERIVED_KEY: task,
            "scramble_type": scramble_type,
            "seed": seed,
            "columns": list(columns),
            "scrambled_bench_version": __version__,
        },
    }


def _is_built_in(yaml_path: Path) -> bool:
    """Whether a task's YAML is one of lm-eval's own (the derived tasks then need not list it)."""
    import lm_eval.tasks  # deferred: lm-eval is optional (the harness extra)

    return Path(lm_eval.tasks.__file__).resolve().parent in yaml_path.resolve().parents


def write_lm_eval_tasks(
    folder: Path,
    tasks: Sequence[Any],
    out: Path,
    types: Sequence[str],
    *,
    columns: Sequence[str],
    seed: int,
    hub: Any | None = None,
) -> list[str]:
    """Write the derived task files of ``tasks`` (:class:`.tasks_source.LmEvalCanonicalTask`) into ``folder``,
    their data read from ``out/<task>`` or, after ``--push``, from ``hub`` (:class:`~scrambled_bench.integrations.datasets.HubData`:
    the dataset id at the pushed commit); the files' paths relative to ``folder``'s parent."""
    import yaml

    written = []
    for task in tasks:
        task_folder = folder / task.name
        task_folder.mkdir(parents=True, exist_ok=True)
        files: dict[str, dict[str, Any]] = {}
        if not _is_built_in(task.yaml_path):
            files[task.name] = {"include": str(task.yaml_path)}
        for scramble_type in types:
            files[variant_name(task.name, scramble_type)] = variant_config(
                task.yaml_path, task.name, task.metadata, hub.repo_id if hub else out / task.name,
                scramble_type, columns=columns, seed=seed, revision=hub.revision if hub else None,
            )  # fmt: skip
        files[group_name(task.name)] = {
            "group": group_name(task.name),
            "task": [task.name, *(variant_name(task.name, t) for t in types)],
            "metadata": {"version": 1.0},
        }
        for name, config in files.items():
            path = task_folder / f"{name}.yaml"
            path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
            written.append(path.relative_to(folder.parent).as_posix())
    return written
