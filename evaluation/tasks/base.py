"""What a task is: one object holding everything the evaluation engine needs to know about it.

A :class:`Task` (lighteval's ``LightevalTaskConfig`` is the model) defines, in one place:

- the datasets it runs on, the scramble types it excludes and whether its configs carry an exemplar rate;
- which rows it evaluates, its prompt and demonstrations, and its stop sequences;
- how one raw output is read and scored (:meth:`Task.score`), and which aggregate metrics a config
  reports (:meth:`Task.aggregate`);
- how its table and figure look (titles, metric rows, layout, the paper's table it mirrors).

The engine, the results, the suites and the report ask a task; they never branch on its name. A *config*
(:class:`TaskConfig`) is one cell of the paper's tables: a task on one dataset at one scramble type
(and, for AQuA, one exemplar scramble rate).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scrambled_bench.builder.scrambler import parse_type
from scrambled_bench.errors import ScrambledBenchError

if TYPE_CHECKING:
    from scrambled_bench.evaluation.aggregate import Bootstrap


@dataclass(frozen=True)
class Metric:
    """An aggregate metric as results.json keys it and a table or figure shows it.

    >>> ED.axis_label, RR.axis_label
    ('ED (characters, lower is better)', 'RR (%)')
    """

    key: str
    label: str
    unit: str
    lower_is_better: bool = False

    @property
    def axis_label(self) -> str:
        hint = ", lower is better" if self.lower_is_better else ""
        return f"{self.label} ({self.unit}{hint})"


ACCURACY = Metric("accuracy", "Acc", "%")
RPG = Metric("relative_performance_gain", "RPG", "%")
RR = Metric("recovery_rate", "RR", "%")
ED = Metric("edit_distance", "ED", "characters", lower_is_better=True)
METRICS = (ACCURACY, RPG, RR, ED)
"""Every aggregate metric; those in "%" are fractions in results.json and percent wherever a person reads."""


@dataclass(frozen=True)
class View:
    """How a task's results look in a report.

    ``layout`` is ``"types"`` (a column per scramble type, a row per model and metric; a line per model
    over the types in a figure) or ``"exemplars"`` (a row per question type, a column per exemplar rate).
    ``figure`` names the figure file the task's panels go to; tasks sharing it share the file.
    """

    titles: Mapping[str, str]
    """Table title per dataset."""
    panel_titles: Mapping[str, str]
    """Figure panel title per dataset."""
    figure: str
    layout: str = "types"
    paper_tables: Mapping[str, str] = field(default_factory=dict)
    """The key of the paper's table (``metrics/paper_tables.json``) per dataset."""
    prompt_tokens_table: bool = False
    """Whether the report adds a table of prompt tokens per type (the paper's Figure 1 point)."""
    categories: Mapping[str, CategoryView] = field(default_factory=dict)
    """Per dataset with question categories: how the per-category tables look."""
    headline: Metric | None = None
    """The metric the paper leads with (RR, RPG, Acc): the y axis of the parameter-count figure (the
    paper's Figure 5) and the value of a Hub evaluation result. None: the task's last metric."""


@dataclass(frozen=True)
class CategoryView:
    """The per-category tables of a dataset whose questions carry categories (DREAM)."""

    accuracy_title: str
    gain_title: str
    accuracy_paper_table: str | None = None
    gain_paper_table: str | None = None


class Task(ABC):
    """One task of the benchmark; subclasses fill in the prompt, the scoring and the aggregation."""

    name: str
    description: str
    datasets: tuple[str, ...]
    stop: tuple[str, ...]
    metrics: tuple[Metric, ...]
    view: View
    excluded_types: frozenset[str] = frozenset()
    exemplar_rates: tuple[int, ...] = ()
    """The exemplar scramble rates its configs take; empty: its configs have none."""
    rank: int = 100
    """Where the task comes in listings, help texts and reports (lower first)."""
    anchors: tuple[str, ...] = ()
    """The unscrambled and fully substituted types a relative score (RPG) needs beside any scrambled one,
    upper anchor first; empty: the task reports no relative score."""

    # -- configs ---------------------------------------------------------------------------------------

    def validate(self, config: TaskConfig) -> None:
        """A one-line error for a config this task cannot run."""
        if config.dataset not in self.datasets:
            raise ScrambledBenchError(
                f"task {self.name!r} does not run on dataset {config.dataset!r}; it runs on {', '.join(self.datasets)}"
            )
        parse_type(config.scramble_type)
        if config.scramble_type in self.excluded_types:
            raise ScrambledBenchError(
                f"task {self.name!r} does not run at scramble type {config.scramble_type!r}"
            )
        if self.exemplar_rates:
            if config.exemplar_rate not in self.exemplar_rates:
                raise ScrambledBenchError(
                    f"exemplar rate must be one of {', '.join(map(str, self.exemplar_rates))}, "
                    f"got {config.exemplar_rate}"
                )
        elif config.exemplar_rate is not None:
            raise ScrambledBenchError(f"--exemplar-rate applies to the aqua-cot task only, not {self.name!r}")

    def configs(
        self, datasets: Iterable[str] | None, types: Sequence[str], exemplar_rates: Sequence[int] = ()
    ) -> list[TaskConfig]:
        """Every valid config of this task on ``datasets`` (None: all of its own) at ``types``; types the
        task excludes are skipped, and ``exemplar_rates`` (default: all) apply where the task takes them."""
        configs = []
        for dataset in self.datasets:
            if datasets is not None and dataset not in datasets:
                continue
            for scramble_type in types:
                parse_type(scramble_type)
                if scramble_type in self.excluded_types:
                    continue
                rates = (
                    [rate for rate in (exemplar_rates or self.exemplar_rates)]
                    if self.exemplar_rates
                    else [None]
                )
                configs.extend(TaskConfig(self.name, dataset, scramble_type, rate) for rate in rates)
        return configs

    def anchor(self, config: TaskConfig, scramble_type: str) -> TaskConfig:
        """The config of the same task, dataset and exemplar rate at another scramble type."""
        return TaskConfig(self.name, config.dataset, scramble_type, config.exemplar_rate)

    def export_slug(self, config: TaskConfig) -> str:
        """The config's name in other harnesses (lm-eval's ``scrambled_bench_<slug>``, lighteval's
        ``scrambled_bench:<slug>``): task, dataset, type, and the exemplar rate where it is not the first
        (unscrambled exemplars); lower case and underscores, as both harnesses' task names are.

        >>> config = TaskConfig("scrqa", "dream", "kfl")
        >>> config.definition.export_slug(config)
        'scrqa_dream_kfl'
        """
        parts = [self.name, config.dataset, config.scramble_type]
        if config.exemplar_rate is not None and config.exemplar_rate != self.exemplar_rates[0]:
            parts.append(f"exemplars{config.exemplar_rate}")
        return "_".join(parts).replace("-", "_")

    def baseline(self, config: TaskConfig) -> TaskConfig | None:
        """The unscrambled config that prompt-token inflation is measured against (None: no such config)."""
        return None

    # -- requests --------------------------------------------------------------------------------------

    def select_rows(
        self, config: TaskConfig, rows: Iterable[Mapping[str, Any]], limit: int | None
    ) -> list[dict]:
        """The rows a config evaluates, in dataset order, the first ``limit`` of them. Taking the first rows
        keeps the same samples across scramble types, which paired scores (RPG) need."""
        selected: list[dict] = []
        for row in rows:
            if not self.keeps(row, selected):
                continue
            selected.append(dict(row))
            if limit is not None and len(selected) >= limit:
                break
        return selected

    def keeps(self, row: Mapping[str, Any], selected: Sequence[Mapping[str, Any]]) -> bool:
        """Whether ``row`` is evaluated, given the rows already selected (default: every row)."""
        return True

    def demonstration(self, config: TaskConfig, seed: int) -> str:
        """The few-shot block of a config's prompts (exemplars scrambled with ``seed``); empty when zero-shot."""
        return ""

    @abstractmethod
    def prompt(self, config: TaskConfig, row: Mapping[str, Any], demonstration: str) -> str:
        """The paper's prompt for one row."""

    def meta(self, config: TaskConfig, row: Mapping[str, Any]) -> dict[str, Any]:
        """What scoring a row's output needs, carried by its request (never part of the resume key)."""
        meta: dict[str, Any] = {
            "task": self.name,
            "dataset": config.dataset,
            "config": config.name,
            "data_config": config.data_config,
            "scramble_type": config.scramble_type,
            "id": str(row["id"]),
        }
        if config.exemplar_rate is not None:
            meta["exemplar_rate"] = config.exemplar_rate
        return meta

    # -- scores ----------------------------------------------------------------------------------------

    @abstractmethod
    def score(
        self, meta: Mapping[str, Any], output: str, *, chat: bool = True, reader: str = "careful"
    ) -> dict[str, Any]:
        """Read one raw output with the answer ``reader`` (``careful`` or ``paper``) and score it against the
        gold in ``meta`` (pure); ``rule`` in the result names the reader's rule that decided."""

    @abstractmethod
    def aggregate(
        self,
        config: TaskConfig,
        samples: Sequence[Mapping[str, Any]],
        scored: Mapping[TaskConfig, Sequence[Mapping[str, Any]]],
        boot: Bootstrap,
    ) -> dict[str, Any]:
        """The config's entries of results.json (each metric in :attr:`metrics`, with intervals), from its
        scored ``samples``; ``scored`` holds every config's samples of the run (for paired metrics)."""


_REGISTRY: dict[str, Task] = {}


def register(task: Task) -> Task:
    """Add ``task`` to the registry (each task module registers its own)."""
    if task.name in _REGISTRY:
        raise ValueError(f"task {task.name!r} is defined twice")
    _REGISTRY[task.name] = task
    return task


def get_task(name: str) -> Task:
    """The task called ``name``, or a one-line error listing the known ones (in their rank order; the
    package ``evaluation.tasks`` imports every task module, so all are registered before any is asked for)."""
    if name not in _REGISTRY:
        known = sorted(_REGISTRY.values(), key=lambda task: task.rank)
        raise ScrambledBenchError(f"unknown task {name!r}; choose from {', '.join(t.name for t in known)}")
    return _REGISTRY[name]


@dataclass(frozen=True, order=True)
class TaskConfig:
    """One cell of the paper's tables: a task on one dataset at one scramble type.

    >>> TaskConfig("scrqa", "dream", "kfl").name
    'scrqa/dream/kfl'
    >>> TaskConfig("aqua-cot", "aqua", "rs50", exemplar_rate=20).name
    'aqua-cot/aqua/rs50/exemplars-20'
    """

    task: str
    dataset: str
    scramble_type: str
    exemplar_rate: int | None = None

    def __post_init__(self) -> None:
        get_task(self.task).validate(self)

    @property
    def definition(self) -> Task:
        """The :class:`Task` this config is a cell of."""
        return get_task(self.task)

    @property
    def name(self) -> str:
        base = f"{self.task}/{self.dataset}/{self.scramble_type}"
        return base if self.exemplar_rate is None else f"{base}/exemplars-{self.exemplar_rate}"

    @property
    def data_config(self) -> str:
        """The dataset config holding its rows, as ``load_dataset(..., name)`` spells it."""
        return f"{self.dataset}_{self.scramble_type}"
