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
- **describe its log layout** (:attr:`Harness.layout`), which the one-line errors name;
- **declare the options it takes**: its own task-definition options (:attr:`Harness.task_options`, such as
  lm-eval's ``--include-path``), which ``scramble``'s command line adds from the registry, and whether it
  takes ``--demos`` and ``--push``.

The records are plain frozen dataclasses, so a harness of a few dozen lines (see the JSON Lines harness in
the tests) gets ``scramble`` (with its own options), ``score`` and ``report`` without an edit anywhere else.
"""

from __future__ import annotations

import importlib.util
import re
from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from scrambled_bench.errors import ScrambledBenchError, first_line
from scrambled_bench.integrations.labels import readable_metric

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
        pairs: list[tuple[str, Any, Any]] = [("model", self.model, other.model)]
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
    def variant_of(self) -> tuple[str, str] | None:
        """(canonical task, scramble type) of a scrambled variant; None for any other task.

        >>> LoggedTask("t_kfl", RunIdentity("m"), "1", {}, canonical="t", scramble_type="kfl").variant_of
        ('t', 'kfl')
        """
        if self.canonical is None or self.scramble_type is None:
            return None
        return self.canonical, self.scramble_type

    @property
    def is_variant(self) -> bool:
        """Whether the task is a scrambled variant (it names its canonical task and its type)."""
        return self.variant_of is not None

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
        return re.sub(r"[^A-Za-z0-9._-]", "_", self.name)

    def describe(self) -> dict[str, Any]:
        """What the output's manifest records about the task."""
        return {"task": self.name}


@dataclass(frozen=True)
class ScrambleRequest:
    """What ``scramble HARNESS:SPEC`` asks for, checked: the spec, the columns (or fields) and types, the
    output folder, the values of the harness's own task-definition options (:attr:`Harness.task_options`,
    by flag: ``{"--include-path": "my_tasks"}``), the demonstrations, seed, processes and the Hub dataset to
    push to."""

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


TASK_OPTION_FLAG = re.compile(r"--[a-z][a-z0-9]*(-[a-z0-9]+)*")
"""What a task option's flag looks like."""


@dataclass(frozen=True)
class TaskOption:
    """An option of ``scramble`` that names a harness's own task definitions (lm-eval's ``--include-path``,
    lighteval's ``--custom-tasks``), as the harness declares it (:attr:`Harness.task_options`): the command
    line adds it from the registry, and its value reaches :meth:`Harness.resolve` under ``flag``.

    >>> TaskOption("--include-path", "a folder of your own task YAMLs", "<dir>").parameter
    'include_path'
    >>> TaskOption("include", "what")
    Traceback (most recent call last):
    ...
    ValueError: a task option's flag is --words-with-dashes (lower case), got 'include'
    """

    flag: str
    """The long option (``--include-path``): lower-case words joined by ``-``."""
    help: str
    """What it names, for ``--help`` (the harness's name is put before it)."""
    metavar: str = "<path>"
    """What ``--help`` shows as its value."""

    def __post_init__(self) -> None:
        if not TASK_OPTION_FLAG.fullmatch(self.flag):
            raise ValueError(f"a task option's flag is --words-with-dashes (lower case), got {self.flag!r}")

    @property
    def parameter(self) -> str:
        """The flag as a Python name (the command's parameter that takes it)."""
        return self.flag.removeprefix("--").replace("-", "_")


class Harness(ABC):
    """One evaluation harness, as ``scramble``, ``score --from`` and ``report --from`` see it.

    Subclasses set the class attributes and implement :meth:`resolve`, :meth:`write_variants` and either
    :meth:`read_folder` (the usual way: :meth:`read_logs` checks the folder around it) or :meth:`read_logs`
    itself; :meth:`metric_label`, :meth:`bench_tasks_folder` and :meth:`require` have defaults. Register an
    instance with :func:`scrambled_bench.integrations.register` or through the ``scrambled_bench.harnesses``
    entry point group.
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
    task_options: ClassVar[tuple[TaskOption, ...]] = ()
    """``scramble``'s options naming the harness's own task definitions, which it takes (none by default);
    their values reach :meth:`resolve` by flag."""
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
        """The canonical tasks ``spec`` names in the harness's registry, with the values given to its
        :attr:`task_options` (by flag; an option not given is absent); an unknown one is a one-line error
        (with the closest names)."""

    @abstractmethod
    def write_variants(self, tasks: Sequence[CanonicalTask], request: ScrambleRequest) -> WrittenVariants:
        """Write the variants of ``tasks`` into ``request.out`` (all or nothing), so that one command of the
        harness runs each canonical task beside its variants."""

    def read_logs(self, folder: Path) -> list[LoggedTask]:
        """Every task run logged under ``folder`` (at any depth), each with its run's identity: the folder
        checked (:meth:`check_folder`), its logs read (:meth:`read_folder`), and a one-line error where it
        holds none (naming :attr:`layout`, :meth:`no_logs`). A harness may replace the whole of it."""
        self.check_folder(folder)
        tasks = self.read_folder(Path(folder))
        if not tasks:
            raise self.no_logs(folder)
        return tasks

    def read_folder(self, folder: Path) -> list[LoggedTask]:
        """Every task run logged under ``folder``, an existing folder (empty: it holds none of the harness's
        logs). A harness implements this or replaces :meth:`read_logs`."""
        raise NotImplementedError(f"{type(self).__name__} implements neither read_folder nor read_logs")

    def bench_tasks_folder(
        self, data: str | None = None, revision: str | None = None, out: Path | None = None
    ) -> Path:
        """The folder of the Scrambled Bench's own tasks for this harness, where it reads tasks from a folder
        (lm-eval's ``--include_path``): the packaged one without ``data``, else one written into ``out`` for
        the build folder or Hub dataset ``data`` (at ``revision``). A one-line error where the harness reads
        the bench's tasks otherwise (a module, an entry point)."""
        raise ScrambledBenchError(f"{self.title} reads the Scrambled Bench's tasks from no folder")

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
    "TaskOption",
    "WrittenVariants",
    "read_logs_checked",
]
