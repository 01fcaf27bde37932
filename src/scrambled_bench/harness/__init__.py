"""Deprecated: ``scrambled_bench.harness`` is ``scrambled_bench.evaluation`` since 1.1.0, and goes in 1.2.0.

"Harness" now means only an external evaluation harness (lm-eval, lighteval, Inspect:
``scrambled_bench.integrations``); the bench's own evaluation engine (tasks, backends, the resumable engine,
results) is ``scrambled_bench.evaluation``. Importing this package, or any module under it, warns once and
gives the very module of the new name, so code written for the old path keeps working for one release::

    from scrambled_bench.harness.backends import create_backend  # DeprecationWarning; the new module's object
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType
from typing import Any

OLD = __name__
NEW = "scrambled_bench.evaluation"

warnings.warn(
    f"{OLD} is renamed {NEW} (since 1.1.0; the old name goes in 1.2.0): import {NEW} instead",
    DeprecationWarning,
    stacklevel=2,
)


class _RenamedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``scrambled_bench.harness.X`` as ``scrambled_bench.evaluation.X``: the same module object, so
    its classes, registries and state are shared, never a second copy."""

    def __init__(self) -> None:
        self._specs: dict[str, Any] = {}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if not fullname.startswith(OLD + "."):
            return None
        real = importlib.util.find_spec(NEW + fullname[len(OLD) :])
        if real is None:
            return None
        return importlib.machinery.ModuleSpec(
            fullname, self, is_package=real.submodule_search_locations is not None
        )

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(NEW + spec.name[len(OLD) :])
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the import system stamped the old name's spec on the module: give it back its own
        module.__spec__ = self._specs.pop(module.__spec__.name)


sys.meta_path.insert(0, _RenamedModules())


def __getattr__(name: str) -> Any:
    return getattr(importlib.import_module(NEW), name)


def __dir__() -> list[str]:
    return dir(importlib.import_module(NEW))
