"""lighteval's own command line, started so that it runs beside this package:
``python -m scrambled_bench.integrations.lighteval.cli endpoint litellm ...`` takes lighteval's arguments.

lighteval 0.13 imports every built-in task file whenever it builds its task registry (every evaluation
command does), and three of them fail at import in this package's environment, which stops the command
before it reads any task: ``mt_bench`` and ``mix_eval`` call ``HfApi.list_models(model_name=...)``, an
argument huggingface_hub >= 1 (which this package needs) no longer takes, and ``tiny_benchmarks`` downloads a
file from GitHub, which fails offline. This launcher imports the built-in task files first and puts an
empty module in place of each one that fails (lighteval's registry passes over a module without
``TASKS_TABLE``), says which on stderr, then runs lighteval's CLI unchanged.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Sequence
from pathlib import Path


def builtin_task_modules() -> list[str]:
    """The module names of lighteval's built-in task files, as its registry lists them (files in
    ``lighteval/tasks/tasks/`` and the ``main.py`` of its subfolders)."""
    from lighteval.tasks import registry

    tasks_dir = Path(registry.__file__).parent / "tasks"
    files = [f"lighteval.tasks.tasks.{p.stem}" for p in tasks_dir.glob("*.py") if p.name != "__init__.py"]
    folders = [
        f"lighteval.tasks.tasks.{p.name}.main"
        for p in tasks_dir.iterdir()
        if p.is_dir() and (p / "main.py").exists()
    ]
    return sorted(files + folders)


def import_builtin_tasks() -> tuple[list[types.ModuleType], dict[str, str]]:
    """Import every built-in task file: the modules that imported, and why each other one failed."""
    imported, failed = [], {}
    for name in builtin_task_modules():
        try:
            imported.append(importlib.import_module(name))
        except Exception as exc:  # noqa: BLE001 - whatever a task file raises at import, lighteval would too
            failed[name] = f"{exc.__class__.__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return imported, failed


def pass_over(names: Sequence[str]) -> None:
    """Put an empty module in place of each named one, so lighteval's registry imports it and finds no task."""
    for name in names:
        sys.modules[name] = types.ModuleType(name)


def main(argv: Sequence[str] | None = None) -> None:
    """Pass over the built-in task files that fail to import, then run lighteval's CLI on ``argv``."""
    _, failed = import_builtin_tasks()
    pass_over(list(failed))
    for name, reason in failed.items():
        print(
            f"note: lighteval's built-in task file {name} cannot be imported here ({reason}); passed over",
            file=sys.stderr,
        )
    from lighteval.__main__ import app

    app(args=list(sys.argv[1:] if argv is None else argv), prog_name="lighteval")


if __name__ == "__main__":
    main()
