"""The registry of harnesses, by name: the one place ``scramble``, ``score --from`` and ``report --from`` ask.

Harnesses come from three places, as lm-eval's and Inspect AI's registries take tasks:

- the built-in three (:data:`BUILT_IN`: lm-eval, lighteval, Inspect), known here by module path, so that a
  source tree on ``PYTHONPATH`` without installed metadata has them too;
- the ``scrambled_bench.harnesses`` entry point group of any installed package:
  ``name = "package.module:HarnessClass"``. The value may be a :class:`~.base.Harness` subclass, an instance,
  or a module that registers its harness when imported. This package lists its built-ins there as well (for
  the tools that read the group); the same name and value found both ways is one harness;
- :func:`register`, with an instance (a harness defined in a script or a test).

A name is taken once: a second harness under a registered name is refused in one line, unless registered
with ``replace=True``. Each built-in and entry point is loaded once, the first time a lookup needs it (a
lookup by name loads that harness alone, a listing loads all); one that fails to load is left out with one
warning naming it (:class:`HarnessLoadWarning`), the others still load, and asking for it by name is a
one-line error saying why. Lookups never import a harness's own library (lm-eval, lighteval, inspect_ai): a
harness checks that it is installed when it is used (:meth:`~.base.Harness.require`).
"""

from __future__ import annotations

import difflib
import glob
import re
import warnings
from collections.abc import Mapping
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from types import ModuleType
from typing import Any

from scrambled_bench.errors import ScrambledBenchError, first_line
from scrambled_bench.integrations.base import Harness

ENTRY_POINT_GROUP = "scrambled_bench.harnesses"
"""The entry point group through which installed packages register harnesses."""

BUILT_IN: Mapping[str, str] = {
    "inspect": "scrambled_bench.integrations.inspect:InspectHarness",
    "lighteval": "scrambled_bench.integrations.lighteval:LightevalHarness",
    "lm-eval": "scrambled_bench.integrations.lm_eval:LmEvalHarness",
}
"""The built-in harnesses, name -> ``module:class`` (as ``pyproject.toml``'s entry points name them)."""


class HarnessLoadWarning(UserWarning):
    """A harness of an entry point (or a built-in) that cannot be loaded, or whose name is taken: left out."""


def _checked_name(harness: Any) -> str:
    """The name ``harness`` registers under; a ``TypeError`` for what is not a harness, a ``ValueError`` for a
    name that ``NAME:SPEC`` cannot hold."""
    if not isinstance(harness, Harness):
        raise TypeError(f"register() takes a Harness instance, got {type(harness).__name__}")
    name = getattr(harness, "name", "")
    if not isinstance(name, str) or not name or ":" in name or name != name.strip():
        raise ValueError(
            f"a harness's name must be a non-empty string without ':' or spaces around it, got {name!r}"
        )
    return name


class Registry:
    """Harnesses by name: those registered in code, the built-ins (``built_in``) and the entry points of
    ``group``, each loaded once when a lookup first needs it. The package's lookups use one (:data:`REGISTRY`);
    a test can make its own.

    >>> registry = Registry(built_in={}, group="no.such.group")
    >>> registry.names()
    []
    """

    def __init__(self, built_in: Mapping[str, str] = BUILT_IN, group: str = ENTRY_POINT_GROUP) -> None:
        self.built_in = dict(built_in)
        self.group = group
        self._harnesses: dict[str, Harness] = {}
        self._pending: dict[str, EntryPoint] | None = None
        """Found and not loaded yet, by name (None: not looked for yet)."""
        self._failed: dict[str, str] = {}
        """Left out, by name: why (the warning given)."""
        self._loading: set[str] = set()

    # ------------------------------------------------------------------------------------------ registering

    def register(self, harness: Harness, *, replace: bool = False) -> Harness:
        """Register ``harness`` under its name; a one-line error where a harness (or a built-in or entry point
        not loaded yet) has that name, unless ``replace``. Returns it."""
        name = _checked_name(harness)
        pending = self._found()
        if not replace and name not in self._loading and (name in self._harnesses or name in pending):
            raise ScrambledBenchError(
                f"a harness called {name!r} is already registered ({self._origin(name)}); "
                "register(..., replace=True) replaces it"
            )
        if name not in self._loading:
            pending.pop(name, None)  # replaced before it was loaded: never loaded
        self._failed.pop(name, None)
        self._harnesses[name] = harness
        return harness

    def unregister(self, name: str) -> None:
        """Remove the harness called ``name``, loaded or not (nothing where there is none)."""
        self._harnesses.pop(name, None)
        self._found().pop(name, None)

    def _origin(self, name: str) -> str:
        """Where the harness called ``name`` comes from, in words."""
        harness = self._harnesses.get(name)
        if harness is not None:
            return f"{type(harness).__module__}.{type(harness).__qualname__}"
        point = self._found()[name]
        return f"{point.value}, {'built in' if self.built_in.get(name) == point.value else 'an entry point'}"

    # --------------------------------------------------------------------------------------------- finding

    def _found(self) -> dict[str, EntryPoint]:
        """The built-ins and entry points not loaded yet, looked for once: the built-ins first; an entry point
        of the same name and value as one found already is that one (a built-in's own entry point), one of
        the same name and another value is left out with a warning."""
        if self._pending is None:
            pending = {name: EntryPoint(name, value, self.group) for name, value in self.built_in.items()}
            for point in entry_points(group=self.group):
                taken = pending.get(point.name)
                if taken is None:
                    pending[point.name] = point
                elif taken.value != point.value:
                    self._warn(f"{self._described(point)} is left out: the name is taken by {taken.value}")
            self._pending = pending
        return self._pending

    def _described(self, point: EntryPoint) -> str:
        """A built-in or entry point in words, for the warnings that name it."""
        where = (
            "built in" if self.built_in.get(point.name) == point.value else f"entry point group {self.group}"
        )
        return f"harness {point.name!r} ({point.value}, {where})"

    def _warn(self, message: str) -> None:
        """One warning, one line (no source line below it): a harness left out, and why."""
        warnings.warn_explicit(message, HarnessLoadWarning, filename=self.group, lineno=0, module=__name__)

    def _load(self, name: str) -> None:
        """Load the built-in or entry point called ``name`` and register its harness; one that fails is left
        out with a warning (it is marked loaded only once it was tried)."""
        point = self._found()[name]
        self._loading.add(name)
        try:
            harness = self._harness_of(point)
        except Exception as exc:  # noqa: BLE001 - a plug-in failing in any way is one warning naming it
            self._found().pop(name, None)
            why = (
                f"{self._described(point)} cannot be loaded and is left out: "
                f"{type(exc).__name__}: {first_line(exc)}"
            )
            self._failed[name] = why
            self._warn(why)
            return
        finally:
            self._loading.discard(name)
        self._found().pop(name, None)
        self._harnesses[name] = harness

    def _harness_of(self, point: EntryPoint) -> Harness:
        """The harness an entry point gives: its class made an instance, an instance, or the harness its module
        registered when imported; a ``TypeError`` for anything else, or a harness of another name."""
        loaded = point.load()
        if isinstance(loaded, type) and issubclass(loaded, Harness):
            loaded = loaded()
        if isinstance(loaded, ModuleType) and point.name in self._harnesses:
            loaded = self._harnesses[point.name]
        if not isinstance(loaded, Harness):
            raise TypeError(
                f"it gives {type(loaded).__name__}, not a Harness (nor registers one called {point.name!r})"
            )
        if _checked_name(loaded) != point.name:
            raise TypeError(f"its harness is called {loaded.name!r}")
        return loaded

    def find(self, name: str) -> Harness | None:
        """The harness called ``name``, loaded if it was not yet; None where there is none (or it failed)."""
        if name not in self._harnesses and name in self._found():
            self._load(name)
        return self._harnesses.get(name)

    def names(self) -> list[str]:
        """Every harness's name, sorted, each loaded (those that fail are left out, each with its warning)."""
        for name in list(self._found()):
            self._load(name)
        return sorted(self._harnesses)

    def get(self, name: str) -> Harness:
        """The harness called ``name``; a one-line error naming the registered ones (and the closest), or why
        it was left out."""
        harness = self.find(name)
        if harness is None:
            raise ScrambledBenchError(self._failed.get(name) or self.unknown(name))
        return harness

    def unknown(self, name: str) -> str:
        """The words of an unknown harness name: the closest registered one, and every registered one."""
        names = self.names()
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        closest = f" (closest: {', '.join(close)})" if close else ""
        return f"no harness called {name!r}{closest}; registered: {', '.join(names)}"


REGISTRY = Registry()
"""The package's registry, which the functions below ask."""


def register(harness: Harness, *, replace: bool = False) -> Harness:
    """Register ``harness`` under its name (a name already taken is a one-line error, unless ``replace``);
    returns it, so it can be used as ``HARNESS = register(MyHarness())``.

    >>> from scrambled_bench.integrations.base import LogLayout
    >>> class Echo(Harness):
    ...     name, title, spec = "echo-doc", "Echo", "FILE"
    ...     layout = LogLayout("echo", "--out", "", "logs")
    ...     def resolve(self, spec, task_sources): return []
    ...     def write_variants(self, tasks, request): raise NotImplementedError
    ...     def read_folder(self, folder): return []
    >>> register(Echo()).name, get_harness("echo-doc").title
    ('echo-doc', 'Echo')
    >>> register(Echo())
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: a harness called 'echo-doc' is already registered (scrambled_bench.integrations.registry.Echo); register(..., replace=True) replaces it
    >>> register(Echo(), replace=True).name
    'echo-doc'
    >>> unregister("echo-doc")
    """
    return REGISTRY.register(harness, replace=replace)


def unregister(name: str) -> None:
    """Remove the harness called ``name`` (a test's own, say); nothing where there is none."""
    REGISTRY.unregister(name)


def harness_names() -> list[str]:
    """The registered harnesses' names, sorted.

    >>> {"inspect", "lighteval", "lm-eval"} <= set(harness_names())
    True
    """
    return REGISTRY.names()


def described_harnesses() -> list[tuple[str, str, str, bool]]:
    """Every registered harness as ``scrambled-bench list harnesses`` shows it: (name, title, how its tasks
    are named after ``NAME:``, whether its library is installed), by name.

    >>> [row[:3] for row in described_harnesses() if row[0] == "lm-eval"]
    [('lm-eval', 'lm-evaluation-harness', 'TASK or GROUP')]
    """
    rows = []
    for name in harness_names():
        harness = REGISTRY.get(name)
        try:
            harness.require()
            installed = True
        except ScrambledBenchError:
            installed = False
        rows.append((name, harness.title, harness.spec, installed))
    return rows


def get_harness(name: str) -> Harness:
    """The harness called ``name``; a one-line error naming the registered ones (and the closest).

    >>> get_harness("lm-eval").title
    'lm-evaluation-harness'
    >>> get_harness("lm_eval")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: no harness called 'lm_eval' (closest: lm-eval); registered: ...
    """
    return REGISTRY.get(name)


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
    scrambled_bench.errors.ScrambledBenchError: lmeval:kitchen_quiz: no harness called 'lmeval' (closest: lm-eval); registered: ... (and no file or folder of that name)
    """
    prefix, colon, spec = source.partition(":")
    if not colon:
        return None
    harness = REGISTRY.find(prefix)
    if harness is None:
        if _reads_as_harness(source, prefix, spec):
            raise ScrambledBenchError(
                f"{source}: {REGISTRY.unknown(prefix)} (and no file or folder of that name)"
            )
        return None
    if not spec.strip():
        spelling = " or ".join(f"{prefix}:{form.strip()}" for form in harness.spec.split(" or "))
        raise ScrambledBenchError(f"{prefix}: names no task ({spelling})")
    return harness, spec.strip()


__all__ = [
    "BUILT_IN",
    "ENTRY_POINT_GROUP",
    "REGISTRY",
    "HarnessLoadWarning",
    "Registry",
    "described_harnesses",
    "get_harness",
    "harness_names",
    "harness_of",
    "register",
    "unregister",
]
