"""Named grids of task configs: ``paper`` (the paper's Tables 1 and 3-6 for one model), ``letters`` (adds
Appendix A.2's letter-position types), ``quick`` (the README's first command), and user selections.

The help of ``run --suite`` and the suites listed in docs/evaluate.md are both made from :data:`SUITES`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scrambled_bench.builder.scrambler import FAMILIES, type_order, types_in
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.tasks import (
    DATASETS,
    TASKS,
    Task,
    TaskConfig,
    check_dataset,
    configs_from,
    get_task,
)
from scrambled_bench.names import split_names

SCRQA_TYPES = types_in("paper", tables=True)
"""The paper's main types (Tables 5-8), its RPG anchors (``original``, ``sub``) among them."""
SCRREC_TYPES = tuple(name for name in SCRQA_TYPES if name not in get_task("scrqa").anchors)
"""Tables 3-4: the paper's types that scramble (no unchanged text to recover, no substituted letters)."""
AQUA_TYPES = ("original", *FAMILIES["rs"].type_names(tables=True))
"""Table 1: AQuA-RAT at the tables' RS rates, beside the original."""
#: Appendix A.2: which letters keep their place (keep first and last, first only, last and one random...)
LETTER_TYPES = ("kfl", *types_in("letters"))


@dataclass(frozen=True)
class Suite:
    """A named grid; ``default_limit`` caps samples per config unless ``--limit`` says otherwise."""

    name: str
    description: str
    configs: tuple[TaskConfig, ...]
    default_limit: int | None = None


def _paper_configs(extra_types: Sequence[str] = ()) -> list[TaskConfig]:
    scrrec_types = list(dict.fromkeys([*SCRREC_TYPES, *extra_types]))
    scrqa_types = list(dict.fromkeys([*SCRQA_TYPES, *extra_types]))
    return [
        *configs_from(["scrrec-zero-shot", "scrrec-few-shot"], None, scrrec_types),
        *configs_from(["scrqa"], None, scrqa_types),
        *configs_from(["aqua-cot"], None, AQUA_TYPES),
    ]


SUITES: dict[str, Suite] = {
    "quick": Suite(
        "quick",
        "a taste in minutes on a laptop CPU: ScrRec zero-shot at rs50 and ScrQA on RealtimeQA at "
        "original/rs50/sub, 8 samples each",
        (
            TaskConfig("scrrec-zero-shot", "realtimeqa", "rs50"),
            *configs_from(["scrqa"], ["realtimeqa"], ["original", "rs50", "sub"]),
        ),
        default_limit=8,
    ),
    "paper": Suite(
        "paper",
        "the paper's Tables 1 and 3-8: ScrRec zero- and few-shot at rs20/rs50/rs100/kf/kfl; ScrQA on RealtimeQA "
        "and DREAM at original/rs20/rs50/rs100/kf/kfl/sub; AQuA few-shot CoT at every question and exemplar rate",
        tuple(_paper_configs()),
    ),
    "letters": Suite(
        "letters",
        "the paper's grid plus Appendix A.2's kfkr1, klkr1 and kr2 for ScrRec and ScrQA",
        tuple(_paper_configs(LETTER_TYPES)),
    ),
}


def suites_help() -> str:
    """One line per suite, for ``run --help`` and docs/evaluate.md.

    >>> suites_help().splitlines()[0].startswith("quick: a taste in minutes")
    True
    """
    return "\n".join(f"{suite.name}: {suite.description}" for suite in SUITES.values())


def get_suite(name: str) -> Suite:
    if name not in SUITES:
        raise ScrambledBenchError(f"unknown suite {name!r}; choose from {', '.join(SUITES)}")
    return SUITES[name]


def resolve_configs(
    suite: str = "quick",
    *,
    tasks: Sequence[str] | None = None,
    datasets: Sequence[str] | None = None,
    types: Sequence[str] | None = None,
    exemplar_rates: Sequence[int] | None = None,
) -> list[TaskConfig]:
    """The configs a ``run`` evaluates: a suite, narrowed by ``tasks``/``datasets``, re-gridded by ``types``.

    Naming ``types`` runs the suite's tasks at exactly those types (a task with paired anchors, ScrQA's
    ``original`` and ``sub``, always gets them too, so RPG comes out of the same run); ``exemplar_rates``
    replaces AQuA's exemplar rates. Names may be comma-separated.

    >>> [c.name for c in resolve_configs("quick", types=["kf"])]
    ['scrrec-zero-shot/realtimeqa/kf', 'scrqa/realtimeqa/original', 'scrqa/realtimeqa/kf', 'scrqa/realtimeqa/sub']
    >>> len(resolve_configs("paper"))
    40
    """
    names = _Selection(suite, split_names(tasks), split_names(datasets), split_names(types), exemplar_rates)
    return names.configs()


@dataclass(frozen=True)
class _Selection:
    """A ``run``'s selection (a suite and the names given, comma-separated ones split), resolved to configs
    by :meth:`configs` in named steps."""

    suite: str
    tasks: list[str] | None
    datasets: list[str] | None
    types: list[str] | None
    exemplar_rates: Sequence[int] | None

    def configs(self) -> list[TaskConfig]:
        """The configs selected: the suite's, narrowed by the tasks and datasets, re-gridded by the types."""
        base = list(get_suite(self.suite).configs)
        self._check_names()
        chosen = self._chosen_tasks(base)
        configs = [c for c in base if c.task in chosen] if self.types is None else self._regrid(base, chosen)
        if self.exemplar_rates is not None:
            configs = self._at_exemplar_rates(configs, self.exemplar_rates)
        configs = self._narrowed(configs, base)
        self._check_selected(configs)
        return configs

    def _check_names(self) -> None:
        """A one-line error for a task, a dataset or an exemplar rate that no task knows."""
        for task in self.tasks or ():
            get_task(task)
        for dataset in self.datasets or ():
            check_dataset(dataset)
        rated = _rated_tasks()
        for rate in self.exemplar_rates or ():
            if not any(rate in task.exemplar_rates for task in rated):
                known = sorted({r for task in rated for r in task.exemplar_rates})
                raise ScrambledBenchError(
                    f"unknown exemplar rate {rate}; choose from {', '.join(map(str, known))}"
                )

    def _chosen_tasks(self, base: Sequence[TaskConfig]) -> list[str]:
        """The tasks that run: those named, else the suite's."""
        if self.tasks is None and self.datasets is not None and self.types is not None:
            # naming datasets and types without tasks means "every task on those datasets"
            return list(TASKS)
        if self.tasks is None:
            return list(dict.fromkeys(c.task for c in base))
        if self.types is None and not any(c.task in self.tasks for c in base):
            raise ScrambledBenchError(
                f"suite {self.suite!r} has no config of task(s) {', '.join(self.tasks)}; name --types too"
            )
        return self.tasks

    def _regrid(self, base: Sequence[TaskConfig], chosen: Sequence[str]) -> list[TaskConfig]:
        """The chosen tasks at exactly the types named; a task with paired anchors (ScrQA's ``original`` and
        ``sub``) gets them too, so that RPG comes out of the same run."""
        configs = []
        for name in chosen:
            task = get_task(name)
            anchors = task.anchors
            task_types = sorted(set(self.types) | set(anchors), key=type_order) if anchors else self.types
            # AQuA named without its rates: the suite's own, else the first (unscrambled exemplars)
            rates = self.exemplar_rates or sorted({c.exemplar_rate for c in base if c.task == name} - {None})
            rates = rates or list(task.exemplar_rates[:1])
            configs.extend(task.configs(None, task_types, rates))
        return configs

    @staticmethod
    def _at_exemplar_rates(configs: Sequence[TaskConfig], rates: Sequence[int]) -> list[TaskConfig]:
        """``configs`` with the configs of each task that takes exemplar rates (AQuA) at exactly ``rates``."""
        kept = [c for c in configs if not c.definition.exemplar_rates]
        for task in _rated_tasks():
            task_types = list(dict.fromkeys(c.scramble_type for c in configs if c.task == task.name))
            kept.extend(
                TaskConfig(task.name, dataset, scramble_type, rate)
                for dataset in task.datasets
                for scramble_type in task_types
                for rate in rates
            )
        return kept

    def _narrowed(self, configs: Sequence[TaskConfig], base: Sequence[TaskConfig]) -> list[TaskConfig]:
        """``configs`` on the datasets named, each once."""
        if self.datasets is not None:
            configs = [c for c in configs if c.dataset in self.datasets]
        elif self.types is not None and self.tasks is None:
            # re-gridding keeps the suite's own (task, dataset) pairs: quick stays on RealtimeQA
            pairs = {(c.task, c.dataset) for c in base}
            configs = [c for c in configs if (c.task, c.dataset) in pairs]
        return list(dict.fromkeys(configs))

    def _check_selected(self, configs: Sequence[TaskConfig]) -> None:
        """A one-line error where the selection leaves nothing to run, or names rates that change nothing."""
        if (
            configs
            and self.exemplar_rates is not None
            and not any(c.definition.exemplar_rates for c in configs)
        ):
            # an option that changes nothing would still move the run to another folder, and hide the mistake
            raise ScrambledBenchError(
                f"--exemplar-rate applies to the aqua-cot task, which this selection leaves out (suite "
                f"{self.suite!r}); add --tasks aqua-cot --types original or use --suite paper"
            )
        if not configs:
            raise ScrambledBenchError(
                "the selection of suite, --tasks, --datasets and --types leaves nothing to run "
                f"(suite {self.suite!r}, tasks {self.tasks}, datasets {self.datasets}, types {self.types})"
            )


def _rated_tasks() -> list[Task]:
    """The tasks that take exemplar rates (AQuA's few-shot CoT)."""
    return [task for task in TASKS.values() if task.exemplar_rates]


def default_limit(suite: str) -> int | None:
    """The suite's per-config sample cap when ``--limit`` is not given."""
    return get_suite(suite).default_limit


__all__ = ["DATASETS", "SUITES", "Suite", "default_limit", "get_suite", "resolve_configs", "suites_help"]
