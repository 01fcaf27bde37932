"""``score --from HARNESS DIR``: a harness's log folder read back and scored, whichever harness wrote it.

Two kinds of task may be in the folder, told apart by the :class:`~.base.LoggedTask` records the harness
reads (:meth:`~.base.Harness.read_logs`):

- the Scrambled Bench's own exported tasks: each logged document carries the scoring metadata of ``run``'s
  request, so its raw output is scored again exactly as ``run`` scores its own, every score of
  results.json per config (ED, RR, Acc, RPG with its anchors, DREAM per category, intervals), through
  :func:`results.compute_results` (:func:`score_logged`). No harness can compute RPG (it pairs a scrambled
  config's samples with the ``original`` and ``sub`` configs' by id), and each computes its own
  aggregates: this is the one path from their logs to the paper's full table;
- scrambled variants of other tasks (``scramble HARNESS:SPEC``) and their canonical tasks: each variant is
  paired with its canonical task (:func:`~.pairing.compare_logged`), the ``scrambled_tasks`` section.

Either way the newest run of each task is read, and runs compared with each other must share their model,
endpoint and generation settings.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.results import FRACTION, ConfigSamples, compute_results, units
from scrambled_bench.evaluation.tasks import TaskConfig
from scrambled_bench.integrations.base import Harness, LoggedTask, RunIdentity, read_logs_checked
from scrambled_bench.integrations.exported import PREFIX, config_of, exported_tasks
from scrambled_bench.integrations.pairing import PairedFolder, compare_logged, unknown_endpoint_note
from scrambled_bench.integrations.registry import get_harness
from scrambled_bench.metrics.readers import DEFAULT_READER
from scrambled_bench.metrics.statistics import CompareSettings


@dataclass(frozen=True)
class LoggedSample:
    """One logged output of a bench task with the scoring metadata of its document; ``where`` names it in
    messages."""

    meta: Mapping[str, Any]
    output: str
    where: str

    @property
    def config(self) -> TaskConfig:
        return config_of(self.meta)


def bench_samples(tasks: Sequence[LoggedTask]) -> list[LoggedSample]:
    """The logged outputs of the bench's task runs, each with its document's scoring metadata."""
    return [
        LoggedSample(document.meta, document.output or "", document.where or f"{task.location}: {doc_id}")
        for task in tasks
        for doc_id, document in task.documents.items()
        if document.meta is not None
    ]


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

    >>> from scrambled_bench.integrations.exported import ExportedTask, document_meta
    >>> def logged(type_, output):
    ...     [doc] = ExportedTask(TaskConfig("scrqa", "dream", type_)).documents(
    ...         [{"id": "d1", "scrambled": "W: Hi.", "question": "Who?", "choices": ["W", "M", "N"], "answer": "A"}])
    ...     return LoggedSample(document_meta(doc), output, "test")
    >>> configs = score_logged([logged("original", "A"), logged("kfl", "A"), logged("sub", "B")])
    >>> configs["scrqa/dream/kfl"]["accuracy"]["value"], configs["scrqa/dream/kfl"]["relative_performance_gain"]["value"]
    (1.0, 1.0)
    """
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


def score_harness_output(
    harness_name: str,
    folder: Path,
    *,
    reader: str = DEFAULT_READER,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
    allow_unknown_endpoint: bool = False,
    allow_zero_loglikelihood: bool = False,
) -> dict[str, Any]:
    """The scores of a harness's log folder, as a document like results.json (fractions): ``configs`` for
    the bench's own tasks, ``scrambled_tasks`` for scrambled variants of other tasks paired with their
    canonical task (one shape for every harness), the runs they rest on, and the tasks left out. A folder
    that holds neither is a one-line error; so are runs compared whose logs do not tell their endpoint,
    unless ``allow_unknown_endpoint`` (the document then lists them under ``unknown_endpoints``), and tasks
    that logged a log-likelihood of exactly 0.0, unless ``allow_zero_loglikelihood`` (then recorded under
    ``zero_log_likelihoods_accepted``)."""
    harness = get_harness(harness_name)
    folder = Path(folder)
    settings = CompareSettings(n_resamples=n_resamples, confidence_level=confidence_level, seed=seed)
    paired = compare_logged(
        folder,
        read_logs_checked(harness, folder),
        settings,
        allow_unknown_endpoint=allow_unknown_endpoint,
        allow_zero_loglikelihood=allow_zero_loglikelihood,
    )
    check_scorable(harness, folder, paired)
    configs = None
    if paired.bench:
        configs = score_logged(
            bench_samples(paired.bench),
            reader=reader,
            confidence_level=confidence_level,
            n_resamples=n_resamples,
            seed=seed,
        )
    return scores_document(harness, folder, reader, paired, configs)


def check_scorable(harness: Harness, folder: Path, paired: PairedFolder) -> None:
    """A one-line error for a folder that holds neither one of the bench's own tasks nor a scrambled variant
    (naming the tasks it left out)."""
    if not paired.section and not paired.bench:
        named = f"; left out: {', '.join(paired.left_out)}" if paired.left_out else ""
        raise ScrambledBenchError(
            f"{folder}: no {PREFIX} task and no scrambled variant (made by `scrambled-bench scramble "
            f"{harness.name}:...`) among its {harness.layout.logs}{named}"
        )


def distinct_runs(runs: Sequence[RunIdentity]) -> list[dict[str, Any]]:
    """The runs' records, each once, in order.

    >>> distinct_runs([RunIdentity("m"), RunIdentity("m"), RunIdentity("n")])
    [{'model': 'm', 'endpoint': None, 'settings': {}, 'source': ''}, {'model': 'n', 'endpoint': None, 'settings': {}, 'source': ''}]
    """
    records = (run.as_record() for run in runs)
    return list({json.dumps(record, sort_keys=True, default=str): record for record in records}.values())


def scores_document(
    harness: Harness, folder: Path, reader: str, paired: PairedFolder, configs: dict[str, Any] | None
) -> dict[str, Any]:
    """``score --from``'s document: the harness, folder, reader, units and runs, then (where there are
    any) the tasks paired without a known endpoint, the bench's ``configs``, the ``scrambled_tasks``
    section, the tasks left out and the log-likelihoods of 0.0 accepted."""
    document: dict[str, Any] = {
        "source": harness.name,
        "folder": str(folder),
        "reader": reader,
        "units": units(FRACTION),
        "runs": distinct_runs(paired.runs),
    }
    if paired.unknown_endpoints:
        document["unknown_endpoints"] = paired.unknown_endpoints
    if configs is not None:
        document["configs"] = configs
    if paired.section:
        document["scrambled_tasks"] = paired.section
    if paired.left_out:
        document["left_out"] = paired.left_out
    if paired.zero_log_likelihoods:
        document["zero_log_likelihoods_accepted"] = [found.as_dict() for found in paired.zero_log_likelihoods]
    return document


def scores_notes(document: Mapping[str, Any]) -> list[str]:
    """The lines a ``score --from`` document asks to be told on stderr: the tasks paired without a known
    endpoint, and the tasks whose log-likelihoods of exactly 0.0 were accepted.

    >>> scores_notes({"zero_log_likelihoods_accepted": [{"task": "t", "zero_log_likelihoods": 2, "log_likelihoods": 8}]})
    ['warning: t: 2 of 8 log-likelihoods are exactly 0.0, accepted by --allow-zero-loglikelihood (recorded as zero_log_likelihoods_accepted)']
    """
    notes = (
        [unknown_endpoint_note(document["unknown_endpoints"])] if document.get("unknown_endpoints") else []
    )
    return notes + [
        f"warning: {found['task']}: {found['zero_log_likelihoods']} of {found['log_likelihoods']} "
        "log-likelihoods are exactly 0.0, accepted by --allow-zero-loglikelihood "
        "(recorded as zero_log_likelihoods_accepted)"
        for found in document.get("zero_log_likelihoods_accepted", [])
    ]


__all__ = [
    "LoggedSample",
    "bench_samples",
    "check_scorable",
    "distinct_runs",
    "score_harness_output",
    "score_logged",
    "scores_document",
    "scores_notes",
]
