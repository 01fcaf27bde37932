"""The registry of harnesses, by name: the one place ``scramble``, ``score --from`` and ``report --from`` ask.

Harnesses register in two ways, as Inspect AI's registry takes tasks and solvers:

- through the ``scrambled_bench.harnesses`` entry point group of any installed package (the built-in three
  are registered so in ``pyproject.toml``): ``name = "package.module:HarnessClass"``, loaded on the first
  lookup. The value may be a :class:`~.base.Harness` subclass, an instance, or a module that registers its
  harness when imported;
- by calling :func:`register` with an instance (a harness defined in a script or a test).

Lookups never import a harness's own library (lm-eval, lighteval, inspect_ai): a harness checks that it is
installed when it is used (:meth:`~.base.Harness.require`).
"""

from __future__ import annotations

import difflib
import glob
import re
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError, first_line
from scrambled_bench.integrations.base import Harness

ENTRY_POINT_GROUP = "scrambled_bench.harnesses"
"""The entry point group through which installed packages register harnesses."""

_REGISTRY: dict[str, Harness] = {}
_loaded_entry_points = False


def register(harness: Harness) -> Harness:
    """Register ``harness`` under its name (a later registration of the same name replaces it); returns it,
    so it can be used as ``HARNESS = register(MyHarness())``.

    >>> from scrambled_bench.integrations.base import LogLayout
    >>> class Echo(Harness):
    ...     name, title, spec = "echo-doc", "Echo", "FILE"
    ...     layout = LogLayout("echo", "--out", "", "logs")
    ...     def resolve(self, spec, task_sources): return []
    ...     def write_variants(self, tasks, request): raise NotImplementedError
    ...     def read_logs(self, folder): return []
    >>> register(Echo()).name, get_harness("echo-doc").title
    ('echo-doc', 'Echo')
    >>> unregister("echo-doc")
    """
    if not isinstance(harness, Harness):
        raise TypeError(f"register() takes a Harness instance, got {type(harness).__name__}")
    name = getattr(harness, "name", "")
    if not isinstance(name, str) or not name or ":" in name or name != name.strip():
        raise ValueError(
            f"a harness's name must be a non-empty string without ':' or spaces around it, got {name!r}"
        )
    _REGISTRY[name] = harness
    return harness


def unregister(name: str) -> None:
    """Remove the harness called ``name`` (a test's own, say); nothing where there is none."""
    _REGISTRY.pop(name, None)


def _load_entry_points() -> None:
    """Register every harness of the entry point group, once; one that fails to load is a one-line error
    naming it (a broken plugin must not pass unnoticed)."""
    global _loaded_entry_points
    if _loaded_entry_points:
        return
    _loaded_entry_points = True
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name in _REGISTRY:
            continue  # registered in code first: that one stands
        try:
            loaded: Any = point.load()
        except Exception as exc:  # noqa: BLE001 - a plugin failing at import is one line, naming it
            raise ScrambledBenchError(
                f"harness {point.name!r} ({point.value}, entry point group {ENTRY_POINT_GROUP}) "
                f"cannot be loaded: {first_line(exc)}"
            ) from None
        if isinstance(loaded, type) and issubclass(loaded, Harness):
            loaded = loaded()
        if isinstance(loaded, Harness):
            _REGISTRY.setdefault(point.name, loaded)


def harness_names() -> list[str]:
    """The registered harnesses' names, sorted.

    >>> {"inspect", "lighteval", "lm-eval"} <= set(harness_names())
    True
    """
    _load_entry_points()
    return sorted(_REGISTRY)


def described_harnesses() -> list[tuple[str, str, str, bool]]:
    """Every registered harness as ``scrambled-bench list harnesses`` shows it: (name, title, how its tasks
    are named after ``NAME:``, whether its library is installed), by name.

    >>> [row[:3] for row in described_harnesses() if row[0] == "lm-eval"]
    [('lm-eval', 'lm-evaluation-harness', 'TASK or GROUP')]
    """
    rows = []
    for name in harness_names():
        harness = _REGISTRY[name]
        try:
            harness.require()
            installed = True
        except ScrambledBenchError:
            installed = False
        rows.append((name, harness.title, harness.spec, installed))
    return rows


def _unknown(name: str) -> str:
    """The words of an unknown harness name: the closest registered one, and every registered one."""
    names = sorted(_REGISTRY)
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    closest = f" (closest: {', '.join(close)})" if close else ""
    return f"no harness called {name!r}{closest}; registered: {', '.join(names)}"


def get_harness(name: str) -> Harness:
    """The harness called ``name``; a one-line error naming the registered ones (and the closest).

    >>> get_harness("lm-eval").title
    'lm-evaluation-harness'
    >>> get_harness("lm_eval")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: no harness called 'lm_eval' (closest: lm-eval); registered: inspect, lighteval, lm-eval
    """
    _load_entry_points()
    if name not in _REGISTRY:
        raise ScrambledBenchError(_unknown(name))
    return _REGISTRY[name]


HARNESS_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9_.-]+")
"""What the ``NAME`` of ``NAME:SPEC`` looks like when a harness is meant: two or more letters, digits, ``_``,
``.`` or ``-``, starting with a letter (so never a Windows drive, ``C:``)."""


def _reads_as_harness(source: str, prefix: str, spec: str) -> bool:
    """Whether a ``NAME:SPEC`` whose ``NAME`` no harness is registered under can only mean a harness task:
    ``NAME`` looks like a harness's name (:data:`HARNESS_PREFIX`), ``SPEC`` is no URL (``hf://``,
    ``https://``), and ``source`` is no existing file or folder and matches none as a glob. A Hub id never
    holds ``:``, so such a source is a typo of a harness's name (``lmeval:arc_easy``), not a dataset.

    >>> _reads_as_harness("lmeval:arc_easy", "lmeval", "arc_easy"), _reads_as_harness("C:/data.jsonl", "C", "/data.jsonl")
    (True, False)
    >>> _reads_as_harness("hf://datasets/org/name", "hf", "//datasets/org/name")
    False
    """
    if not HARNESS_PREFIX.fullmatch(prefix) or spec.startswith("//"):
        return False
    return not Path(source).expanduser().exists() and not glob.glob(source)


def harness_of(source: str) -> tuple[Harness, str] | None:
    """(harness, task spec) where ``source`` is ``NAME:SPEC`` for a registered harness ``NAME``, else None
    (a dataset, or a Hub id); an empty spec is a one-line error, and so is a ``NAME:SPEC`` that can only mean
    a harness that is not registered (:func:`_reads_as_harness`: ``lmeval:arc_easy``), with the closest
    registered name.

    >>> [(h.name, spec) for h, spec in [harness_of("lm-eval:arc_easy"), harness_of("lighteval:leaderboard|arc|0")]]
    [('lm-eval', 'arc_easy'), ('lighteval', 'leaderboard|arc|0')]
    >>> harness_of("cais/mmlu") is None, harness_of("data/x.jsonl") is None
    (True, True)
    >>> harness_of("inspect: ")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: inspect: names no task (inspect:TASK or inspect:FILE.py[@TASK])
    >>> harness_of("lmeval:kitchen_quiz")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: lmeval:kitchen_quiz: no harness called 'lmeval' (closest: lm-eval); registered: inspect, lighteval, lm-eval (and no file or folder of that name)
    """
    prefix, colon, spec = source.partition(":")
    if not colon:
        return None
    _load_entry_points()
    harness = _REGISTRY.get(prefix)
    if harness is None:
        if _reads_as_harness(source, prefix, spec):
            raise ScrambledBenchError(f"{source}: {_unknown(prefix)} (and no file or folder of that name)")
        return None
    if not spec.strip():
        spelling = " or ".join(f"{prefix}:{form.strip()}" for form in harness.spec.split(" or "))
        raise ScrambledBenchError(f"{prefix}: names no task ({spelling})")
    return harness, spec.strip()


__all__ = [
    "ENTRY_POINT_GROUP",
    "described_harnesses",
    "get_harness",
    "harness_names",
    "harness_of",
    "register",
    "unregister",
]
