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

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.harness.exports.logged_samples import LoggedSample, logged_meta
from scrambled_bench.harness.exports.task_export import PREFIX

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
    """Whether a task's metadata is a scrambled variant's (and not a bench task's).

    >>> is_variant({"canonical_task": "t", "scramble_type": "kfl", "seed": 0, "fields": ["input"]})
    True
    >>> is_variant({"canonical_task": "scrambled_bench/scrqa_dream_original", "scramble_type": "kfl",
    ...             "scrambled_bench_config": "scrqa/dream/kfl"})
    False
    """
    metadata = metadata or {}
    return BENCH_KEY not in metadata and all(key in metadata for key in VARIANT_KEYS)


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
        if BENCH_KEY in metadata and header.eval.task.startswith(f"{PREFIX}/"):
            bench.append(header)
        elif is_variant(metadata):
            variants.append(header)
        elif header.eval.task in named_canonical:
            canonical[header.eval.task] = header
        else:
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
