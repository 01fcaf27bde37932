"""The one interface every evaluation harness implements (:class:`Harness`), and the records it trades in.

A harness (lm-evaluation-harness, lighteval, Inspect AI, or one of a user's own) is one implementation of
:class:`Harness`, in one package, registered under its name (:mod:`.registry`). It does four things, and
nothing outside its package asks it anything else or branches on its name:

- **resolve** a task spec (``scramble lm-eval:arc_easy``) into its canonical tasks, through the harness's
  own registry (:meth:`Harness.resolve`);
- **write the variants** of those tasks: the files the harness runs unchanged, so that one of its commands
  runs the canonical task beside one variant per scramble type (:meth:`Harness.write_variants`);
- **read a folder of its logs** (:meth:`Harness.read_logs`) into :class:`LoggedTask` records: per task its
  documents' scores, prompts, choices and outputs, and the run's identity (model, endpoint, generation
  settings). The pairing of variants with their canonical task across runs (:mod:`.pairing`), ``score
  --from`` and ``report --from`` work on those records alone;
- **describe its log layout** (:attr:`Harness.layout`), which the one-line errors name.

The records are plain frozen dataclasses, so a harness of a few dozen lines (see the JSON Lines harness in
the tests) gets ``scramble``, ``score`` and ``report`` without an edit anywhere else.
"""

from __future__ import annotations

import importlib.util
from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from scrambled_bench.errors import ScrambledBenchError

INSTALL_HINT = "pip install 'scrambled-bench[harness]'"


class _NoTarget:
    """The target of a document whose harness logged none: never compared."""

    def __repr__(self) -> str:
        return "NO_TARGET"


NO_TARGET: Any = _NoTarget()


@dataclass(frozen=True)
class LogLayout:
    """Where a harness writes its logs and what writes them: what the one-line errors of ``score --from``
    and ``report --from`` say.

    >>> LogLayout("lm_eval", "--output_path", "--log_samples", "logged samples").hint("out")
    'run lm_eval with --log_samples --output_path out'
    """

    command: str
    """The command that runs the harness (``lm_eval``, ``inspect eval``)."""
    output_option: str
    """Its option naming the folder the logs go to (``--output_path``, ``--log-dir``)."""
    log_option: str
    """Its option that writes per-document logs, where one is needed (``--log_samples``), else ``""``."""
    logs: str
    """What the harness calls its per-document logs, in messages (``logged samples``, ``details``)."""

    def hint(self, folder: str | Path) -> str:
        """How to write logs into ``folder``."""
        words = ("run", self.command, "with", self.log_option, self.output_option, str(folder))
        return " ".join(word for word in words if word)


@dataclass(frozen=True)
class RunIdentity:
    """Who answered a log: the model, the endpoint it was served from, and the generation settings (chat
    or completions, decoding, length cap, what the harness adds to the prompt). Two logs compared document
    by document must come from the same identity; ``source`` names the file that records it.

    ``endpoint`` None is a model served from no URL (a local model), unless ``endpoint_unknown`` says why
    the log does not tell (an Inspect log of a task that recorded none): such a run cannot be told from a
    run against another endpoint, and pairing refuses it unless asked to accept it
    (:func:`~.pairing.check_same_run`).

    >>> a = RunIdentity("smollm2", "http://127.0.0.1:8080/v1", {"chat": True}, "a.json")
    >>> b = RunIdentity("smollm2", "http://127.0.0.1:8080/v1", {"chat": False}, "b.json")
    >>> a.differences(b), a.differences(a)
    (['chat True vs False'], [])
    >>> RunIdentity("smollm2", None, {"chat": True}, endpoint_unknown="not logged").differences(a)
    []
    """

    model: str
    endpoint: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""
    endpoint_unknown: str = ""
    """Why the log does not tell the endpoint, in words (empty: it does, and ``endpoint`` is the truth)."""

    def differences(self, other: RunIdentity) -> list[str]:
        """What differs between two identities, each as ``what mine vs theirs`` (empty: the same run); an
        endpoint one of them does not know is not compared (pairing refuses or accepts that first)."""
        pairs = [("model", self.model, other.model)]
        if not (self.endpoint_unknown or other.endpoint_unknown):
            pairs.append(("endpoint", self.endpoint, other.endpoint))
        pairs += [
            (key, self.settings.get(key), other.settings.get(key))
            for key in dict.fromkeys([*self.settings, *other.settings])
        ]
        return [f"{key} {_shown(mine)} vs {_shown(theirs)}" for key, mine, theirs in pairs if mine != theirs]

    def as_record(self) -> dict[str, Any]:
        """The identity as ``score``'s document records it (``endpoint_unknown`` only where it is unknown).

        >>> RunIdentity("m", None, {}, "x.json", "not logged").as_record()
        {'model': 'm', 'endpoint': None, 'settings': {}, 'source': 'x.json', 'endpoint_unknown': 'not logged'}
        """
        record: dict[str, Any] = {
            "model": self.model,
            "endpoint": self.endpoint,
            "settings": dict(self.settings),
            "source": self.source,
        }
        if self.endpoint_unknown:
            record["endpoint_unknown"] = self.endpoint_unknown
        return record


def _shown(value: Any) -> str:
    return "unset" if value is None else str(value)


@dataclass(frozen=True)
class LoggedDocument:
    """One document a task logged: its per-document scores (metric key -> number), the target to check
    pairs by, the prompt as the model saw it (a chat run's rendered user turn), the choices it was shown,
    and the model's output. ``meta``: the scoring metadata of the bench's own exported tasks (``score``
    scores their outputs again as ``run`` does), else None. ``log_likelihoods``: for a log-likelihood
    document, the log-likelihood the model gave each continuation it was scored on (each choice of a
    multiple-choice document), as the harness logged them; None where it logged none (a generation), which
    the log-likelihood guard (:mod:`.loglikelihood`) then has nothing to check."""

    doc_id: Hashable
    scores: Mapping[str, float] = field(default_factory=dict)
    target: Any = NO_TARGET
    prompt: str | None = None
    choices: tuple[str, ...] | None = None
    output: str | None = None
    meta: Mapping[str, Any] | None = None
    where: str = ""
    log_likelihoods: tuple[float, ...] | None = None


@dataclass(frozen=True)
class MetricValue:
    """A task's metric as the harness itself aggregated it (its results file), where it records one."""

    value: float | None = None
    stderr: float | None = None


@dataclass(frozen=True)
class LoggedTask:
    """One run of one task, as a harness's log folder holds it.

    ``canonical`` and ``scramble_type`` mark a scrambled variant (the canonical task's name as its own log
    names it); ``bench`` marks one of the Scrambled Bench's own exported tasks (its documents carry the
    scoring metadata). ``created`` orders runs of the same task (the newest is read); ``means`` are the
    metrics the harness aggregates as the mean of per-document scores (the ones a paired difference is
    defined for; None: all of them). ``details``: what the harness adds to the task's entry of ``score``'s
    ``scrambled_tasks`` section (Inspect's seed and fields).
    """

    name: str
    run: RunIdentity
    created: str
    documents: Mapping[Hashable, LoggedDocument]
    location: str = ""
    canonical: str | None = None
    scramble_type: str | None = None
    bench: bool = False
    metrics: Mapping[str, MetricValue] = field(default_factory=dict)
    means: frozenset[str] | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_variant(self) -> bool:
        return self.canonical is not None and self.scramble_type is not None

    def pairable(self, metric: str) -> bool:
        """Whether ``metric`` is a mean of per-document scores here (a paired difference is defined)."""
        return self.means is None or metric in self.means

    def metric_keys(self) -> list[str]:
        """The metrics the task logged per document, in the order first seen, then those only aggregated."""
        keys = {key: None for document in self.documents.values() for key in document.scores}
        keys.update({key: None for key in self.metrics})
        return list(keys)


class CanonicalTask(ABC):
    """A task as its harness's own registry resolves it (``scramble HARNESS:SPEC``): its name and the
    folder of the output its variants go to. Harnesses whose tasks read a dataset extend it
    (:class:`~.datasets.DatasetTask`)."""

    name: str

    @property
    def folder(self) -> str:
        """The folder of ``--out`` that holds what belongs to this task (a name a file system takes)."""
        import re

        return re.sub(r"[^A-Za-z0-9._-]", "_", self.name)

    def describe(self) -> dict[str, Any]:
        """What the output's manifest records about the task."""
        return {"task": self.name}


@dataclass(frozen=True)
class ScrambleRequest:
    """What ``scramble HARNESS:SPEC`` asks for, checked: the spec, the columns (or fields) and types, the
    output folder, the harness's own task sources (``--include-path``, ``--custom-tasks``, by flag), the
    demonstrations, seed, processes and the Hub dataset to push to."""

    source: str
    spec: str
    columns: tuple[str, ...]
    types: tuple[str, ...]
    out: Path
    task_sources: Mapping[str, str] = field(default_factory=dict)
    demos: str | None = None
    seed: int = 0
    num_proc: int = 1
    command: str = ""
    push: str | None = None
    private: bool = False
    api: Any | None = None
    replace: bool = False
    previous_types: tuple[str, ...] = ()
    """The types a previous output in ``out`` holds, which this one keeps and grows (empty: none, or
    ``--replace``)."""

    @property
    def all_types(self) -> tuple[str, ...]:
        """The types the output holds once written: the previous output's, then those asked for.

        >>> ScrambleRequest("s", "t", ("q",), ("kfl",), Path("o"), previous_types=("sub", "kfl")).all_types
        ('sub', 'kfl')
        """
        return tuple(dict.fromkeys([*self.previous_types, *self.types]))


@dataclass(frozen=True)
class WrittenVariants:
    """What ``scramble HARNESS:SPEC`` wrote: the folder, rows per task (config and split) where data was
    written, notes to tell the user, the Hub dataset pushed (repository, commit), the command that runs
    the comparison, per task where data was written the texts each type left unchanged, in words, and the
    types a previous output held and this one keeps."""

    out: Path
    harness: str
    tasks: list[str]
    run_hint: str
    rows: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    hub: tuple[str, str] | None = None
    unchanged: dict[str, str] = field(default_factory=dict)
    kept: tuple[str, ...] = ()
    """The types a previous output in the folder held that this one keeps (those not asked for again)."""


class Harness(ABC):
    """One evaluation harness, as ``scramble``, ``score --from`` and ``report --from`` see it.

    Subclasses set the class attributes and implement :meth:`resolve`, :meth:`write_variants` and
    :meth:`read_logs`; :meth:`metric_label` and :meth:`prompt_of` have defaults. Register an instance with
    :func:`scrambled_bench.integrations.register` or through the ``scrambled_bench.harnesses`` entry point
    group.
    """

    name: ClassVar[str]
    """The registry name: the prefix of ``scramble NAME:SPEC`` and the value of ``--from NAME DIR``."""
    title: ClassVar[str]
    """The harness's name in prose and page titles (``lm-evaluation-harness``)."""
    spec: ClassVar[str]
    """How a task is named after ``NAME:`` (``TASK or GROUP``), for messages and help."""
    layout: ClassVar[LogLayout]
    module: ClassVar[str | None] = None
    """The module the harness needs installed (``lm_eval``), checked before use; None: nothing."""
    task_sources: ClassVar[Mapping[str, str]] = {}
    """``scramble``'s options naming the harness's own task definitions that it takes (flag -> what)."""
    demos: ClassVar[bool] = False
    """Whether it takes ``--demos`` (its tasks draw demonstrations from a dataset split)."""
    pushes: ClassVar[bool] = False
    """Whether it takes ``--push`` (its variants read scrambled data, which can live on the Hub)."""
    columns_are: ClassVar[str] = "columns"
    """What ``--columns`` names for this harness (``fields`` of an Inspect sample)."""

    def require(self) -> None:
        """A one-line error, with the extra to install, where the harness is not importable."""
        if self.module is not None and importlib.util.find_spec(self.module) is None:
            raise ScrambledBenchError(f"{self.name} is not installed: {INSTALL_HINT}")

    @abstractmethod
    def resolve(self, spec: str, task_sources: Mapping[str, str]) -> Sequence[CanonicalTask]:
        """The canonical tasks ``spec`` names in the harness's registry; an unknown one is a one-line error
        (with the closest names)."""

    @abstractmethod
    def write_variants(self, tasks: Sequence[CanonicalTask], request: ScrambleRequest) -> WrittenVariants:
        """Write the variants of ``tasks`` into ``request.out`` (all or nothing), so that one command of the
        harness runs each canonical task beside its variants."""

    @abstractmethod
    def read_logs(self, folder: Path) -> list[LoggedTask]:
        """Every task run logged under ``folder`` (at any depth), each with its run's identity; a one-line
        error for a missing folder or one without logs (naming :attr:`layout`)."""

    def variant_names(self, task: str, types: Sequence[str]) -> list[str]:
        """The names the harness runs the variants of canonical task ``task`` under (as ``scramble``'s
        manifest names the task), one per type in order: ``<task>_<type>`` unless the harness names them
        otherwise (``scrambled-bench list variants``).

        >>> from scrambled_bench.integrations import get_harness
        >>> get_harness("lm-eval").variant_names("arc_easy", ["kfl", "sub"])
        ['arc_easy_kfl', 'arc_easy_sub']
        """
        return [f"{task}_{scramble_type}" for scramble_type in types]

    def metric_label(self, key: str) -> str:
        """A metric key as a reader reads it (``acc,none`` -> ``accuracy``)."""
        from scrambled_bench.integrations.labels import readable_metric

        return readable_metric(key)

    def check_folder(self, folder: Path) -> None:
        """A one-line error where ``folder`` is not a folder."""
        if not Path(folder).is_dir():
            what = "a file, not a folder" if Path(folder).exists() else "no such folder"
            raise ScrambledBenchError(
                f"{folder}: {what} (give {self.layout.command}'s {self.layout.output_option})"
            )

    def no_logs(self, folder: Path) -> ScrambledBenchError:
        """The error of a folder without any of the harness's logs."""
        return ScrambledBenchError(
            f"{folder}: no {self.layout.logs} of {self.title}; {self.layout.hint(folder)}"
        )


def checked_results(path: Path, document: Any, harness: str, sections: Sequence[str]) -> dict[str, Any]:
    """A harness's parsed results file, checked to be a JSON object whose ``sections`` (where present) are
    objects too; a one-line error naming the file otherwise.

    >>> checked_results(Path("r.json"), {"results": {}}, "lm-eval", ["results", "configs"])
    {'results': {}}
    >>> checked_results(Path("r.json"), {"results": []}, "lm-eval", ["results"])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: r.json: not a results file of lm-eval ('results' is not an object)
    """
    if not isinstance(document, Mapping):
        raise ScrambledBenchError(f"{path}: not a results file of {harness} (not a JSON object)")
    for section in sections:
        if document.get(section) is not None and not isinstance(document[section], Mapping):
            raise ScrambledBenchError(
                f"{path}: not a results file of {harness} ({section!r} is not an object)"
            )
    return dict(document)


def read_logs_checked(harness: Harness, folder: Path) -> list[LoggedTask]:
    """``harness.read_logs(folder)``, where a log of an unexpected shape that the harness did not catch
    (a field of another type, a file another tool wrote) is a one-line error naming the folder and the
    harness, never a traceback.

    >>> read_logs_checked(type("Odd", (), {"title": "Odd", "read_logs": lambda self, f: [][1]})(), Path("logs"))
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: logs: a log there is not as Odd writes it (IndexError: list index out of range)
    """
    try:
        return harness.read_logs(folder)
    except ScrambledBenchError:
        raise
    except (AttributeError, IndexError, KeyError, TypeError, ValueError, OSError) as exc:
        from scrambled_bench.errors import first_line

        raise ScrambledBenchError(
            f"{folder}: a log there is not as {harness.title} writes it ({type(exc).__name__}: {first_line(exc)})"
        ) from None


__all__ = [
    "NO_TARGET",
    "CanonicalTask",
    "Harness",
    "LogLayout",
    "LoggedDocument",
    "LoggedTask",
    "MetricValue",
    "RunIdentity",
    "ScrambleRequest",
    "WrittenVariants",
    "checked_results",
    "read_logs_checked",
]
