"""Outputs logged by lm-eval (``--log_samples``), lighteval (``--save-details``) or Inspect (its logs) on the
exported tasks, read back and scored exactly as ``run`` scores its own: every score of results.json per
config (ED, RR, Acc, RPG with its anchors, DREAM per category, bootstrap intervals), through
:func:`results.compute_results`.

No harness can compute RPG (it pairs a scrambled config's samples with the ``original`` and ``sub``
configs' by id), and each computes its own aggregates; this is the one path from their logs to the
paper's full table, and the check that a harness's numbers are ``run``'s. Each logged document carries the
scoring metadata (``meta`` in lm-eval's ``doc``, ``doc.specific`` in lighteval's details, the sample's
``metadata`` in Inspect's log), so nothing but the raw output is taken from the harness.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.harness.exports.task_export import PREFIX, config_of, document_meta, exported_tasks
from scrambled_bench.harness.tasks import TaskConfig
from scrambled_bench.metrics.readers import DEFAULT_READER

if TYPE_CHECKING:
    from scrambled_bench.harness.paired import CompareSettings

#: lm-eval names its per-task logs samples_<task>_<date>.jsonl (date like 2026-11-23T13-22-33.501500)
LM_EVAL_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d.-]+)\.jsonl$")
#: lighteval: details_<task>|<shots>_<date>.parquet
LIGHTEVAL_DETAILS = re.compile(r"^details_(?P<task>.+)\|\d+_(?P<date>\d{4}-\d{2}-\d{2}T[\d.-]+)\.parquet$")


@dataclass(frozen=True)
class LoggedSample:
    """One logged output with the scoring metadata of its document; ``where`` names it in messages."""

    meta: Mapping[str, Any]
    output: str
    where: str

    @property
    def config(self) -> TaskConfig:
        return config_of(self.meta)


def exported_logs(files: Iterable[Path], pattern: re.Pattern[str]) -> list[Path]:
    """The log files among ``files`` that belong to exported tasks (named by ``pattern``)."""
    return [path for path in files if (match := pattern.match(path.name)) and is_exported(match["task"])]


def newest_per_task(
    files: Iterable[Path], pattern: re.Pattern[str], wanted: Callable[[str], bool] | None = None
) -> dict[str, Path]:
    """The newest log file of each task among ``files`` (a folder re-run keeps the old logs), by the date
    in its name (``pattern``'s ``task`` and ``date`` groups); other files, and tasks ``wanted`` refuses, are
    left out. The one place lm-eval's samples files and lighteval's details files are picked.

    >>> files = [Path("m/samples_scrambled_bench_scrqa_dream_kfl_2026-01-02T10-00-00.1.jsonl"),
    ...          Path("m/samples_scrambled_bench_scrqa_dream_kfl_2026-01-03T09-00-00.1.jsonl"),
    ...          Path("m/samples_hellaswag_2026-01-03T09-00-00.1.jsonl")]
    >>> {task: path.name[-27:] for task, path in newest_per_task(files, LM_EVAL_SAMPLES, is_exported).items()}
    {'scrambled_bench_scrqa_dream_kfl': '2026-01-03T09-00-00.1.jsonl'}
    >>> sorted(newest_per_task(files, LM_EVAL_SAMPLES))
    ['hellaswag', 'scrambled_bench_scrqa_dream_kfl']
    """
    newest: dict[str, tuple[str, Path]] = {}
    for path in files:
        match = pattern.match(path.name)
        if match is None or (wanted is not None and not wanted(match["task"])):
            continue
        task, date = match["task"], match["date"]
        if task not in newest or date > newest[task][0]:
            newest[task] = (date, path)
    return {task: path for task, (_, path) in sorted(newest.items())}


def is_exported(task: str) -> bool:
    """Whether a harness task name is one of the bench's own exported tasks.

    >>> is_exported("scrambled_bench_scrqa_dream_kfl"), is_exported("arc_easy_kfl")
    (True, False)
    """
    return task.startswith(PREFIX)


def _one_model(folder: Path, files: Sequence[Path], depth: int) -> None:
    """Refuse a folder whose logs come from several models: their samples must not be pooled."""
    models = sorted({str(path.parents[depth].relative_to(folder)) for path in files})
    if len(models) > 1:
        raise ScrambledBenchError(
            f"{folder} holds logs of several models ({', '.join(models)}); give one model's folder"
        )


@dataclass(frozen=True)
class _LogLayout:
    """Where a harness writes its per-task logs, what they are named, and the options that write them."""

    harness: str
    output_option: str
    log_option: str
    logs: str
    """What the harness calls its logs, in messages."""
    named: str
    """How the logs of exported tasks are named, in messages."""
    glob: str
    pattern: re.Pattern[str]
    model_depth: int
    """How many folders below its model's folder a log lies."""

    def newest_logs(self, folder: Path) -> list[Path]:
        """The newest log of each exported task under ``folder``, at any depth; a one-line error for a
        missing folder, a folder without logs of an exported task, or one with logs of several models."""
        if not folder.is_dir():
            raise ScrambledBenchError(
                f"{folder}: no such folder (give {self.harness}'s {self.output_option})"
            )
        logs = exported_logs(folder.rglob(self.glob), self.pattern)
        if not logs:
            raise ScrambledBenchError(
                f"{folder}: no {self.logs} of a {PREFIX} task ({self.named}); "
                f"run {self.harness} with {self.log_option} {self.output_option} {folder}"
            )
        _one_model(folder, logs, self.model_depth)
        return list(newest_per_task(logs, self.pattern).values())


#: lm-eval writes <output_path>/<model>/samples_*.jsonl
LM_EVAL_LOGS = _LogLayout(
    harness="lm_eval", output_option="--output_path", log_option="--log_samples", logs="logged samples",
    glob="samples_*.jsonl", named=f"samples_{PREFIX}_*.jsonl", pattern=LM_EVAL_SAMPLES, model_depth=0,
)  # fmt: skip
#: lighteval writes details/<provider>/<model>/<date>/details_*.parquet
LIGHTEVAL_LOGS = _LogLayout(
    harness="lighteval", output_option="--output-dir", log_option="--save-details", logs="details",
    glob="details_*.parquet", named=f"details_{PREFIX}:*.parquet", pattern=LIGHTEVAL_DETAILS, model_depth=1,
)  # fmt: skip


def lm_eval_samples(folder: Path) -> list[LoggedSample]:
    """The logged samples of the exported tasks under an lm-eval ``--output_path`` folder (any depth: lm-eval
    writes into a folder per model). Raw outputs (``resps``) are taken, before lm-eval's filters."""
    samples = []
    for path in LM_EVAL_LOGS.newest_logs(Path(folder)):
        from scrambled_bench.io import read_jsonl

        for line, row in read_jsonl(path, required=("doc", "resps")):
            where = f"{path}:{line}"
            samples.append(
                LoggedSample(logged_meta(row["doc"], where), _first_text(row["resps"], where), where)
            )
    return samples


def lighteval_details(folder: Path) -> list[LoggedSample]:
    """The details of the exported tasks under a lighteval ``--output-dir`` folder (``--save-details``)."""
    import pyarrow.parquet as pq

    samples = []
    for path in LIGHTEVAL_LOGS.newest_logs(Path(folder)):
        for index, row in _in_dataset_order(pq.read_table(path).to_pylist()):
            where = f"{path}: row {index}"
            doc, response = row.get("doc") or {}, row.get("model_response") or {}
            samples.append(
                LoggedSample(
                    logged_meta({"meta": doc.get("specific")}, where),
                    _first_text(response.get("text"), where),
                    where,
                )
            )
    return samples


def _in_dataset_order(rows: Sequence[Mapping[str, Any]]) -> list[tuple[int, Mapping[str, Any]]]:
    """lighteval's detail rows (with their row numbers in the file) in dataset order, as ``run`` scores them.

    lighteval writes its details in the order its model client answered (it sorts requests by length); its
    ``Doc.id`` is the document's index in the dataset split. Bootstrap intervals resample by position, so
    the order matters; rows without a numeric id keep their place after the numbered ones.

    >>> rows = [{"doc": {"id": "3"}}, {"doc": {"id": "0"}}, {"doc": {"id": "12"}}]
    >>> [index for index, _ in _in_dataset_order(rows)]
    [1, 0, 2]
    """

    def dataset_index(item: tuple[int, Mapping[str, Any]]) -> tuple[int, int]:
        identifier = str((item[1].get("doc") or {}).get("id", ""))
        return (0, int(identifier)) if identifier.isdigit() else (1, item[0])

    return sorted(enumerate(rows), key=dataset_index)


def logged_meta(doc: Any, where: str) -> dict[str, Any]:
    """The scoring metadata of a logged document (``doc["meta"]``, a JSON string or a mapping), checked: a
    one-line error naming ``where`` when it is missing or unreadable."""
    if not isinstance(doc, Mapping) or not doc.get("meta"):
        raise ScrambledBenchError(
            f"{where}: the logged document has no scoring metadata ('meta'); is it a {PREFIX} task?"
        )
    try:
        meta = document_meta(doc)
        config_of(meta)
    except (ValueError, KeyError, TypeError, ScrambledBenchError) as exc:
        raise ScrambledBenchError(f"{where}: unreadable scoring metadata ({exc})") from None
    # parquet gives every row of a struct column all of its fields; a field absent from the row is None
    return {key: value for key, value in meta.items() if value is not None}


def _first_text(value: Any, where: str) -> str:
    """The first generation of a logged response: lm-eval logs ``[[text]]``, lighteval ``[text]``."""
    while isinstance(value, list) and value:
        value = value[0]
    if value is None or value == []:
        return ""
    if not isinstance(value, str):
        raise ScrambledBenchError(f"{where}: the logged response is not text: {json.dumps(value)[:60]}")
    return value


def score_logged(
    samples: Sequence[LoggedSample],
    *,
    reader: str = DEFAULT_READER,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """results.json's ``configs`` section for the logged samples (fractions, as results.json), in the paper
    suite's order, read with the answer ``reader`` as ``run`` reads a chat answer.

    >>> from scrambled_bench.harness.exports.task_export import ExportedTask
    >>> def logged(type_, output):
    ...     [doc] = ExportedTask(TaskConfig("scrqa", "dream", type_)).documents(
    ...         [{"id": "d1", "scrambled": "W: Hi.", "question": "Who?", "choices": ["W", "M", "N"], "answer": "A"}])
    ...     return LoggedSample(document_meta(doc), output, "test")
    >>> configs = score_logged([logged("original", "A"), logged("kfl", "A"), logged("sub", "B")])
    >>> configs["scrqa/dream/kfl"]["accuracy"]["value"], configs["scrqa/dream/kfl"]["relative_performance_gain"]["value"]
    (1.0, 1.0)
    """
    from scrambled_bench.harness.results import ConfigSamples, compute_results

    by_config: dict[TaskConfig, list[LoggedSample]] = defaultdict(list)
    for sample in samples:
        by_config[sample.config].append(sample)
    order = {task.config: index for index, task in enumerate(exported_tasks("letters"))}
    collected = {}
    for config in sorted(by_config, key=lambda c: (order.get(c, len(order)), c)):
        seen: dict[str, str] = {}
        config_samples = ConfigSamples(config)
        for sample in by_config[config]:
            identifier = str(sample.meta["id"])
            if identifier in seen:
                raise ScrambledBenchError(
                    f"{sample.where}: sample {identifier!r} of {config.name} is logged twice (first at {seen[identifier]})"
                )
            seen[identifier] = sample.where
            scored = config.definition.score(sample.meta, sample.output, chat=True, reader=reader)
            config_samples.scored.append({**sample.meta, "output": sample.output, **scored})
        collected[config] = config_samples
    return compute_results(collected, confidence_level=confidence_level, n_resamples=n_resamples, seed=seed)


def inspect_samples(folder: Path) -> list[LoggedSample]:
    """The samples of the bench's tasks in the Inspect logs under ``folder`` (:mod:`.inspect_logs`)."""
    return inspect_output(folder).samples


@dataclass(frozen=True)
class HarnessLogs:
    """What ``score`` reads in a harness's output folder: the bench's logged samples and, where the folder
    holds scrambled variants of other tasks, their comparison with the canonical runs (``scrambled_tasks``)."""

    samples: list[LoggedSample]
    tasks: dict[str, Any] | None = None


def inspect_output(folder: Path, settings: CompareSettings | None = None) -> HarnessLogs:
    """An Inspect log folder: the bench's samples, and the variants paired with their canonical tasks."""
    from scrambled_bench.harness.exports.inspect_logs import (
        bench_samples,
        compare_variants,
        read_inspect_logs,
    )
    from scrambled_bench.harness.paired import DEFAULT_SETTINGS

    logs = read_inspect_logs(Path(folder))
    tasks = compare_variants(logs, settings or DEFAULT_SETTINGS) if logs.variants else None
    return HarnessLogs(bench_samples(logs.bench), tasks)


def _samples_only(read: Callable[[Path], list[LoggedSample]]) -> Callable[..., HarnessLogs]:
    def read_logs(folder: Path, settings: CompareSettings | None = None) -> HarnessLogs:
        return HarnessLogs(read(folder))

    return read_logs


SOURCES: dict[str, Callable[..., HarnessLogs]] = {
    "lm-eval": _samples_only(lm_eval_samples),
    "lighteval": _samples_only(lighteval_details),
    "inspect": inspect_output,
}
"""Each harness's output folder reader: ``read(folder, settings)`` (the settings of paired comparisons)."""


def score_harness_output(
    source: str,
    folder: Path,
    *,
    reader: str = DEFAULT_READER,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """The scores of a harness's logged output folder, as a document like results.json (fractions): the
    bench's configs, and a ``scrambled_tasks`` section for scrambled variants of other tasks where there are some
    (lm-eval's derived tasks, Inspect's wrapped ones: one shape, the paired records of :mod:`~.paired`)."""
    from scrambled_bench.harness.paired import CompareSettings
    from scrambled_bench.harness.results import FRACTION, units

    folder = Path(folder)
    settings = CompareSettings(n_resamples=n_resamples, confidence_level=confidence_level, seed=seed)
    document: dict[str, Any] = {
        "source": source,
        "folder": str(folder),
        "reader": reader,
        "units": units(FRACTION),
    }
    # derived tasks of `scramble lm-eval:TASK` / `lighteval:SPEC` (a `scrambled_tasks` section); the bench's own configs where
    # the folder logs them too, or where it holds nothing else (then their reader names what is missing)
    derived = scrambled_tasks_section(source, folder, settings) if folder.is_dir() else {}
    layout = {"lm-eval": LM_EVAL_LOGS, "lighteval": LIGHTEVAL_LOGS}.get(source)
    if not derived or (layout is not None and exported_logs(folder.rglob(layout.glob), layout.pattern)):
        logs = SOURCES[source](folder, settings)
        document["configs"] = score_logged(
            logs.samples, reader=reader, confidence_level=confidence_level, n_resamples=n_resamples, seed=seed
        )
        derived = {**derived, **(logs.tasks or {})}
    if derived:
        document["scrambled_tasks"] = derived
    return document


def scrambled_tasks_section(source: str, folder: Path, settings: CompareSettings) -> dict[str, Any]:
    """The ``scrambled_tasks`` section of an lm-eval folder (``harness.exports.derived_scores``) or a
    lighteval one (``harness.exports.lighteval_variants``): empty where its results name no derived task
    (Inspect's wrapped tasks come with its logs)."""
    if source == "lighteval":
        from scrambled_bench.harness.exports.lighteval_variants import score_lighteval_derived

        return score_lighteval_derived(folder, settings)
    if source != "lm-eval":
        return {}
    from scrambled_bench.harness.exports.derived_scores import newest_results, score_derived

    results = newest_results(folder)
    if results is None:
        return {}
    return score_derived(
        folder, newest_per_task(folder.rglob(LM_EVAL_LOGS.glob), LM_EVAL_SAMPLES), results, settings
    )
