"""Inspect AI logs read back (``score --from-inspect LOGDIR``), through ``inspect_ai.log``.

A log folder may hold, for one model, logs of three kinds of task, told apart by the task's metadata:

- the bench's own tasks (``scrambled_bench/<slug>``, :mod:`.inspect_tasks`): each sample's metadata is the
  scoring metadata of ``run``'s request, so its output is scored again as ``run`` scores it, RPG included
  (:func:`.logged_samples.score_logged`);
- scrambled variants made by ``scrambled_bench/scrambled`` (:mod:`.inspect_scrambled`): their metadata names
  the ``canonical_task``, the ``scramble_type``, the ``seed`` and the ``fields`` scrambled;
- the canonical tasks those variants name.

The newest log of each task is read (a folder re-run keeps the old logs), and only a run that ended
``success``. Anything else is a one-line error: no log, logs of several models, a log of a task that is
neither the bench's, nor a variant, nor a variant's canonical task.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrambled_bench.builder.scrambler import type_order
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.harness.exports.logged_samples import LoggedSample, logged_meta
from scrambled_bench.harness.exports.task_export import PREFIX
from scrambled_bench.harness.paired import DEFAULT_SETTINGS, CompareSettings, DocScore, paired_difference, rpg

BENCH_KEY = "scrambled_bench_config"
"""The metadata key of the bench's own tasks (the config's name)."""
VARIANT_KEYS = ("canonical_task", "scramble_type", "seed", "fields")
"""The metadata keys of a scrambled variant made by ``scrambled_bench/scrambled``."""


@dataclass(frozen=True)
class InspectLogs:
    """The newest successful log of each task in a folder, sorted into the three kinds."""

    bench: list[Any]
    variants: list[Any]
    canonical: dict[str, Any]
    """A variant's canonical task name -> its log."""


def is_variant(metadata: dict[str, Any] | None) -> bool:
    """Whether a task's metadata is a scrambled variant's (a variant of a bench task keeps the bench task's
    metadata beside its own, so this is asked first).

    >>> is_variant({"canonical_task": "t", "scramble_type": "kfl", "seed": 0, "fields": ["input"]})
    True
    >>> is_variant({"canonical_task": "scrambled_bench/scrqa_dream_original", "scramble_type": "kfl",
    ...             "scrambled_bench_config": "scrqa/dream/kfl"})
    False
    """
    metadata = metadata or {}
    return all(key in metadata for key in VARIANT_KEYS)


def _newest_headers(folder: Path) -> list[Any]:
    """The header of the newest log of each task under ``folder`` (any depth), checked: some, one model."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    if not folder.is_dir():
        raise ScrambledBenchError(f"{folder}: no such folder (give inspect eval's --log-dir)")
    newest: dict[str, Any] = {}
    for info in list_eval_logs(str(folder), recursive=True):
        header = read_eval_log(info, header_only=True)
        task = header.eval.task
        if task not in newest or header.eval.created > newest[task].eval.created:
            newest[task] = header
    if not newest:
        raise ScrambledBenchError(
            f"{folder}: no Inspect logs (.eval or .json); run inspect eval with --log-dir {folder}"
        )
    models = sorted({header.eval.model for header in newest.values()})
    if len(models) > 1:
        raise ScrambledBenchError(
            f"{folder} holds Inspect logs of several models ({', '.join(models)}); give one model's logs"
        )
    for header in newest.values():
        if header.status != "success":
            raise ScrambledBenchError(
                f"{header.location}: the run of {header.eval.task} ended '{header.status}', not 'success'; "
                "finish it (inspect eval-retry) before scoring"
            )
    return [newest[task] for task in sorted(newest)]


def read_inspect_logs(folder: Path) -> InspectLogs:
    """The logs under an ``inspect eval --log-dir`` folder, sorted into the bench's, the variants and their
    canonical tasks (full logs, samples included); a log of any other task is refused, naming it."""
    from inspect_ai.log import read_eval_log

    headers = _newest_headers(Path(folder))
    named_canonical = {
        header.eval.metadata["canonical_task"] for header in headers if is_variant(header.eval.metadata)
    }
    bench, variants, canonical, others = [], [], {}, []
    for header in headers:
        metadata = header.eval.metadata or {}
        if is_variant(metadata):
            variants.append(header)
            continue
        if header.eval.task in named_canonical:  # a bench task can be a variant's canonical task too
            canonical[header.eval.task] = header
        if BENCH_KEY in metadata and header.eval.task.startswith(f"{PREFIX}/"):
            bench.append(header)
        elif header.eval.task not in named_canonical:
            others.append(header.eval.task)
    if others:
        raise ScrambledBenchError(
            f"{folder}: log(s) of {', '.join(others)}, neither a {PREFIX} task nor a scrambled variant "
            f"(inspect eval {PREFIX}/scrambled -T task=...) nor the canonical task of one; give a folder "
            "without them"
        )
    full = {header.location: read_eval_log(header.location) for header in headers}
    return InspectLogs(
        bench=[full[h.location] for h in bench],
        variants=[full[h.location] for h in variants],
        canonical={task: full[h.location] for task, h in canonical.items()},
    )


def bench_samples(logs: Sequence[Any]) -> list[LoggedSample]:
    """The logged outputs of the bench's tasks, with the scoring metadata each sample carries."""
    samples = []
    for log in logs:
        for sample in log.samples or []:
            where = f"{log.location}: sample {sample.id}"
            completion = sample.output.completion if sample.output is not None else ""
            samples.append(
                LoggedSample(logged_meta({"meta": sample.metadata}, where), completion or "", where)
            )
    return samples


def sample_scores(log: Any) -> dict[str, dict[Hashable, DocScore]]:
    """Each scorer's per-sample values in a log, as numbers (Inspect's own ``value_to_float``: C/I as 1/0),
    keyed by (sample id, epoch), with the sample's target to check pairs by (and its number of choices, where
    it has choices: RPG's chance level). A sample a scorer did not
    score (an error) is left out; a value that is not a number (a dict) too, naming nothing."""
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
    scores: dict[str, dict[Hashable, DocScore]] = {}
    for sample in log.samples or []:
        for name, score in (sample.scores or {}).items():
            if isinstance(score.value, dict | list):
                continue
            scores.setdefault(name, {})[(sample.id, sample.epoch)] = DocScore(
                to_float(score.value), sample.target, len(sample.choices) if sample.choices else None
            )
    return scores


def native_metrics(log: Any) -> dict[str, dict[str, float]]:
    """Inspect's own metrics per scorer, as its log reports them (``accuracy``, ``stderr``...)."""
    results = log.results.scores if log.results is not None else []
    return {score.name: {key: metric.value for key, metric in score.metrics.items()} for score in results}


def _scorer_summary(log: Any, scores: dict[str, dict[Hashable, DocScore]]) -> dict[str, dict[str, Any]]:
    metrics = native_metrics(log)
    return {
        name: {
            "value": sum(doc.score for doc in docs.values()) / len(docs) if docs else None,
            "n": len(docs),
            "inspect_metrics": metrics.get(name, {}),
        }
        for name, docs in scores.items()
    }


def compare_variants(logs: InspectLogs, settings: CompareSettings = DEFAULT_SETTINGS) -> dict[str, Any]:
    """The ``scrambled_tasks`` section, shaped as lm-eval's derived tasks give it (``metrics`` per scorer, ``types``
    per scramble type). Per canonical task: its scorers' values and, per scramble type, the variant's, each paired with the
    canonical run's over the same sample ids (:func:`~scrambled_bench.harness.paired.paired_difference`: the
    difference, its bootstrap interval, McNemar for 0/1 scores) and RPG where the ``sub`` variant ran (0/1
    scores). Fractions, as results.json; a variant whose canonical run is not in the folder is an error."""
    by_canonical: dict[str, dict[str, Any]] = {}
    for log in logs.variants:
        metadata = log.eval.metadata
        canonical = metadata["canonical_task"]
        if canonical not in logs.canonical:
            raise ScrambledBenchError(
                f"{log.location}: {log.eval.task} is a variant of {canonical}, whose log is not in the folder; "
                f"run {canonical} too (inspect eval-set with the canonical task and its variants)"
            )
        by_canonical.setdefault(canonical, {})[metadata["scramble_type"]] = log
    compared: dict[str, Any] = {}
    for canonical, variants in sorted(by_canonical.items()):
        canonical_log = logs.canonical[canonical]
        canonical_scores = sample_scores(canonical_log)
        sub_scores = sample_scores(variants["sub"]) if "sub" in variants else None
        entry: dict[str, Any] = {
            "task": canonical,
            "log": canonical_log.location,
            "metrics": _scorer_summary(canonical_log, canonical_scores),
            "types": {},
        }
        for scramble_type, log in sorted(variants.items(), key=lambda item: type_order(item[0])):
            scores = sample_scores(log)
            scorers = _scorer_summary(log, scores)
            for name, summary in scorers.items():
                base = canonical_scores.get(name, {})
                summary.update(paired_difference(base, scores[name], settings))
                if sub_scores is not None and scramble_type != "sub" and name in sub_scores:
                    gain = rpg(base, scores[name], sub_scores[name], settings)
                    if gain is not None:
                        summary["relative_performance_gain"] = gain
            metadata = log.eval.metadata
            entry["types"][scramble_type] = {
                "task": log.eval.task,
                "log": log.location,
                "seed": metadata["seed"],
                "fields": metadata["fields"],
                "metrics": scorers,
            }
        compared[canonical] = entry
    return compared
