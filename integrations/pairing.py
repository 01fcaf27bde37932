"""A scrambled variant against its canonical task over the same documents: the paired comparison, for
every harness alike.

:func:`compare_logged` takes what a harness read from a folder of its logs (:class:`~.base.LoggedTask`
records) and gives ``score``'s ``scrambled_tasks`` section and the bench's own samples:

- the newest run of each task is read (a folder re-run keeps the old logs), whichever invocation or file
  it came from, so the canonical task and its variants may be run by separate commands into one folder;
- a variant is paired with its canonical task document by document, by id, targets checked; documents
  only one of them logged are counted (``n_unpaired``) and left out;
- the two runs must share their identity (model, endpoint, generation settings): a chat run's canonical
  task against a completions run's variants is refused in one line naming both runs and what differs; a
  run whose log does not tell its endpoint is refused too, unless the caller accepts it
  (``allow_unknown_endpoint``: ``--allow-unknown-endpoint``);
- a canonical task with no document, or a variant whose canonical run is missing, is refused: never a
  blank canonical;
- a task that logged a log-likelihood of exactly 0.0 (what an endpoint that truncates its echo gives every
  single-token choice) is refused, unless accepted (:mod:`.loglikelihood`).

A harness (lm-eval, lighteval, Inspect) scores every document of a canonical task and of each scrambled
variant of it; the variant's documents are the canonical ones with some columns scrambled, under the same
ids. What scrambling costs is then measured per document: :func:`paired_difference` pairs the two runs'
per-document scores by id (after checking that each pair shares its target, else they are not the same
document), and gives the mean difference (variant minus canonical, so a drop is negative) with its interval:
where every score is 0 or 1, Tango's score interval for paired proportions with the McNemar score test it
inverts (the two never contradict) and a flag where too few documents are paired to detect a 10-point
difference; otherwise a paired bootstrap interval. :func:`rpg` gives the paper's relative performance gain
where the fully substituted variant (``sub``) ran too.

Pure functions over the :class:`~.base.LoggedTask` records every harness's reader gives (lm-eval's,
lighteval's, Inspect's and any registered harness's) and plain mappings, no I/O. The statistics are
:mod:`scrambled_bench.metrics.statistics`' (``paired_proportions``, ``paired_bootstrap``), as
``report --compare``'s, and RPG is the packaged ``relative_performance_gain`` module's (through
``evaluation.aggregate.gain_score``), so a paired drop here and one in ``report --compare`` or ``results.json``
cannot disagree. Every value is a fraction, as results.json stores them.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scrambled_bench.builder.scrambler import type_order
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.aggregate import Bootstrap, gain_score
from scrambled_bench.integrations.base import NO_TARGET, LoggedTask, RunIdentity
from scrambled_bench.integrations.loglikelihood import ZeroLogLikelihoods, check_log_likelihoods
from scrambled_bench.metrics.statistics import (
    DEFAULT_SETTINGS,
    CompareSettings,
    mean_interval,
    paired_bootstrap,
    paired_proportions,
    resampled_mean,
)

__all__ = [
    "CompareSettings",
    "DocScore",
    "PairedFolder",
    "compare_logged",
    "is_binary",
    "newest_per_task",
    "paired_difference",
    "rpg",
    "unknown_endpoint_note",
    "variants_by_canonical",
]

SUB = "sub"
"""The fully substituted type: RPG's lower anchor."""


@dataclass(frozen=True)
class DocScore:
    """One document's score under one task, and its target (to check that paired documents match).

    ``target`` is whatever the harness logged as the gold answer (a string, an index, a list); leave it
    out where the harness logs none. ``choices`` is the document's number of choices where it is a
    multiple-choice document (RPG then states the chance level); None where it is not known.
    """

    score: float
    target: Any = NO_TARGET
    choices: int | None = None


Scores = Mapping[Hashable, "DocScore | float"]
"""Document id -> its score: a :class:`DocScore`, or a bare number (no target to check)."""


def _as_doc_score(value: DocScore | float) -> DocScore:
    return value if isinstance(value, DocScore) else DocScore(float(value))


def is_binary(*runs: Scores) -> bool:
    """Whether every score of every run is 0 or 1 (a right/wrong metric: Tango's interval, McNemar's test
    and RPG apply).

    >>> is_binary({1: 1.0, 2: 0}, {1: DocScore(1.0, "A")}), is_binary({1: 0.5})
    (True, False)
    """
    return all(_as_doc_score(v).score in (0.0, 1.0) for run in runs for v in run.values())


def _paired_ids(canonical: Mapping[Hashable, DocScore], variant: Mapping[Hashable, DocScore]) -> list:
    """The ids both runs scored, in the canonical run's order; a pair whose targets differ is refused."""
    ids = [doc_id for doc_id in canonical if doc_id in variant]
    for doc_id in ids:
        original, other = canonical[doc_id].target, variant[doc_id].target
        if original is not NO_TARGET and other is not NO_TARGET and original != other:
            raise ScrambledBenchError(
                f"document {doc_id!r}: the canonical target {original!r} differs from the variant's {other!r}; "
                "paired documents must share their target (was the target column scrambled?)"
            )
    return ids


def _method(settings: CompareSettings, binary: bool, interval: str = "bca") -> str:
    """How a paired record was computed: for 0/1 scores Tango's interval and the test it inverts; else the
    bootstrap, ``interval`` its method (BCa, or percentile where BCa is undefined).

    >>> _method(CompareSettings(), True)
    "Tango's score interval for paired proportions (0.95), with the McNemar score test (chi-square, no continuity correction) it inverts"
    """
    if binary:
        return (
            f"Tango's score interval for paired proportions ({settings.confidence_level:g}), with the McNemar "
            "score test (chi-square, no continuity correction) it inverts"
        )
    return (
        f"paired bootstrap over document ids ({settings.n_resamples} resamples, "
        f"{settings.confidence_level:g} {interval} interval, seed {settings.seed})"
    )


PAIRED_NUMBERS = (
    "canonical", "variant", "difference", "ci", "method", "mcnemar_p", "discordant", "underpowered",
    "underpowered_below", "n_paired", "n_unpaired",
)  # fmt: skip
"""The keys of a paired difference's record (:func:`paired_difference`), in order."""


def paired_difference(
    canonical: Scores, variant: Scores, settings: CompareSettings = DEFAULT_SETTINGS
) -> dict[str, Any]:
    """The variant's mean score minus the canonical's over the documents both scored, with its interval.

    Returns ``canonical`` and ``variant`` (the two means over the paired documents), ``difference``
    (variant minus canonical), ``ci`` (``[low, high]``), ``method`` (in words), ``mcnemar_p``,
    ``discordant``, ``underpowered`` and ``underpowered_below``, ``n_paired`` and ``n_unpaired`` (documents
    only one run scored). Where every score is 0 or 1, ``ci`` is Tango's score interval for paired
    proportions and ``mcnemar_p`` the McNemar score test it inverts (so ``ci`` excludes 0 exactly when
    ``mcnemar_p`` < 1 - level), ``discordant`` counts the documents the canonical got right and the variant
    wrong (``lost``) and the reverse (``gained``), and ``underpowered`` says whether fewer than
    ``underpowered_below`` documents are paired (:func:`~scrambled_bench.metrics.statistics.underpowered_below`).
    Otherwise ``ci`` is a paired bootstrap (the same resampled ids for both) and those three are None. With
    no document in common the numbers are None. Raises :class:`ScrambledBenchError` when a pair's targets
    differ.

    >>> canonical = {0: DocScore(1, "A"), 1: DocScore(1, "B"), 2: DocScore(0, "C"), 3: DocScore(1, "D")}
    >>> variant = {0: DocScore(0, "A"), 1: DocScore(1, "B"), 2: DocScore(0, "C"), 4: DocScore(1, "E")}
    >>> record = paired_difference(canonical, variant, CompareSettings(n_resamples=200))
    >>> record["difference"], record["n_paired"], record["n_unpaired"], round(record["mcnemar_p"], 4)
    (-0.3333333333333333, 3, 2, 0.3173)
    >>> [round(bound, 4) for bound in record["ci"]], record["discordant"], record["underpowered"]
    ([-0.7923, 0.4153], {'lost': 1, 'gained': 0}, True)
    >>> paired_difference({0: 0.5}, {0: 0.25})["mcnemar_p"] is None
    True
    >>> paired_difference({0: DocScore(1, "A")}, {0: DocScore(1, "B")})
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: document 0: the canonical target 'A' differs from the variant's 'B'; paired documents must share their target (was the target column scrambled?)
    """
    canonical_run = {doc_id: _as_doc_score(v) for doc_id, v in canonical.items()}
    variant_run = {doc_id: _as_doc_score(v) for doc_id, v in variant.items()}
    ids = _paired_ids(canonical_run, variant_run)
    binary = is_binary(canonical_run, variant_run)
    record: dict[str, Any] = dict.fromkeys(PAIRED_NUMBERS)
    record.update(
        method=_method(settings, binary),
        n_paired=len(ids),
        n_unpaired=len(canonical_run) + len(variant_run) - 2 * len(ids),
    )
    if not ids:
        return record
    base = np.array([canonical_run[i].score for i in ids], dtype=float)
    other = np.array([variant_run[i].score for i in ids], dtype=float)
    record.update(
        canonical=float(base.mean()) + 0.0,
        variant=float(other.mean()) + 0.0,
        difference=float(other.mean() - base.mean()) + 0.0,
    )
    record.update(
        _binary_interval(base, other, settings) if binary else _bootstrap_interval(base, other, settings)
    )
    return record


def _binary_interval(base: np.ndarray, other: np.ndarray, settings: CompareSettings) -> dict[str, Any]:
    """For 0/1 scores: Tango's interval of the difference, the McNemar score test it inverts, the discordant
    documents (lost: right under the canonical task, wrong under the variant; gained: the reverse) and
    whether too few documents are paired to detect a 10-point difference."""
    found = paired_proportions(base.astype(bool), other.astype(bool), settings)
    lost, gained = found["discordant"]
    return {
        "ci": [float(bound) + 0.0 for bound in found["interval"]],
        "mcnemar_p": found["p_value"],
        "discordant": {"lost": lost, "gained": gained},
        "underpowered": found["underpowered"],
        "underpowered_below": found["underpowered_below"],
    }


def _bootstrap_interval(base: np.ndarray, other: np.ndarray, settings: CompareSettings) -> dict[str, Any]:
    """For other scores: the paired bootstrap interval of the difference of means (the same resampled ids
    for both runs) and its method; nothing where it is undefined."""
    found = paired_bootstrap(resampled_mean, base, other, settings)
    interval = found["interval"]
    if interval is None:
        return {}
    return {
        "method": _method(settings, False, found["method"]),
        "ci": [float(interval[0]) + 0.0, float(interval[1]) + 0.0],
    }


def rpg(
    canonical: Scores, variant: Scores, sub: Scores, settings: CompareSettings = DEFAULT_SETTINGS
) -> dict[str, Any] | None:
    """RPG = (Acc_variant - Acc_sub) / (Acc_canonical - Acc_sub) over the documents all three scored.

    The packaged ``relative_performance_gain`` module computes it (with its interval and its rule for when
    RPG is undefined), as for the bench's own tasks: ``value``, ``ci``, ``n``, ``original_accuracy``,
    ``substituted_accuracy``, and ``undefined`` (why) where ``value`` is None. None where a score is not 0
    or 1 (RPG is defined on accuracies) or no document is in all three runs. Targets are checked as in
    :func:`paired_difference`.

    >>> canonical = {i: DocScore(1, i) for i in range(4)}
    >>> variant = {0: 1, 1: 1, 2: 1, 3: 0}
    >>> sub = {0: 1, 1: 0, 2: 0, 3: 0}
    >>> gain = rpg(canonical, variant, sub, CompareSettings(n_resamples=200))
    >>> round(gain["value"], 4), gain["n"], gain["original_accuracy"], gain["substituted_accuracy"]
    (0.6667, 4, 1.0, 0.25)
    >>> rpg({0: 1}, {0: 1}, {0: 1})["undefined"]
    'original and substituted accuracy are equal (1.0000): the original context gained nothing'
    >>> rpg({0: 0.5}, {0: 1}, {0: 0}) is None
    True
    """
    runs = [{doc_id: _as_doc_score(v) for doc_id, v in run.items()} for run in (canonical, variant, sub)]
    if not is_binary(*runs):
        return None
    canonical_run, variant_run, sub_run = runs
    _paired_ids(canonical_run, variant_run)
    _paired_ids(canonical_run, sub_run)

    def as_samples(run: Mapping[Hashable, DocScore]) -> dict[Hashable, dict[str, Any]]:
        # the module scores letters: "1" against the reference "1" is right, "" (unanswered) is wrong
        return {
            doc_id: {
                "id": doc_id,
                "prediction": "1" if doc.score else "",
                "answer": "1",
                "n_choices": doc.choices,
            }
            for doc_id, doc in run.items()
        }

    samples: Sequence[dict[str, Any]] = list(as_samples(variant_run).values())
    boot = Bootstrap(settings.confidence_level, settings.n_resamples, settings.seed)
    common = [s for s in samples if s["id"] in canonical_run and s["id"] in sub_run]
    return gain_score(common, as_samples(canonical_run), as_samples(sub_run), boot)


# --------------------------------------------------------------------------------------------------
# A folder of logs: the newest run of each task, variants paired with their canonical task
# --------------------------------------------------------------------------------------------------


def newest_per_task(tasks: Sequence[LoggedTask]) -> list[LoggedTask]:
    """The newest run of each task (by ``created``), in name order.

    >>> from scrambled_bench.integrations.base import RunIdentity
    >>> run = RunIdentity("m")
    >>> old, new = LoggedTask("t", run, "2026-01-01", {}), LoggedTask("t", run, "2026-01-02", {})
    >>> [task.created for task in newest_per_task([new, old, LoggedTask("a", run, "2025", {})])]
    ['2025', '2026-01-02']
    """
    newest: dict[str, LoggedTask] = {}
    for task in tasks:
        if task.name not in newest or task.created > newest[task.name].created:
            newest[task.name] = task
    return [newest[name] for name in sorted(newest)]


UNKNOWN_ENDPOINT_OPTION = "--allow-unknown-endpoint"
"""The option of ``score --from`` and ``report --from`` that accepts runs whose logs do not tell their
endpoint."""


def unknown_endpoint_note(tasks: Sequence[str]) -> str:
    """The one line that says which task runs were paired although their logs do not tell their endpoint.

    >>> unknown_endpoint_note(["t", "t_kfl"])
    'note: t, t_kfl paired without a known endpoint, as --allow-unknown-endpoint asks: runs against two endpoints would not be told apart'
    """
    return (
        f"note: {', '.join(tasks)} paired without a known endpoint, as {UNKNOWN_ENDPOINT_OPTION} asks: runs "
        "against two endpoints would not be told apart"
    )


def check_same_run(
    folder: Any, first: LoggedTask, other: LoggedTask, *, allow_unknown_endpoint: bool = False
) -> None:
    """Refuse two task runs to be compared whose identities differ, in one line naming both runs and what
    differs; and a run whose log does not tell its endpoint (it cannot be told from a run against another
    endpoint), unless ``allow_unknown_endpoint``.

    >>> from scrambled_bench.integrations.base import RunIdentity
    >>> known = LoggedTask("t", RunIdentity("m", "http://127.0.0.1:8080/v1", source="a.json"), "1", {})
    >>> blind = LoggedTask("t_kfl", RunIdentity("m", source="b.json", endpoint_unknown="not logged"), "2", {})
    >>> check_same_run("out", known, blind)
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: out: t_kfl (run b.json) records no endpoint (not logged), so it cannot be told from a run against another endpoint; pass --allow-unknown-endpoint to pair it anyway
    >>> check_same_run("out", known, blind, allow_unknown_endpoint=True)

    >>> from scrambled_bench.integrations.base import RunIdentity
    >>> chat = LoggedTask("t", RunIdentity("m", settings={"chat": True}, source="a.json"), "1", {})
    >>> plain = LoggedTask("t_kfl", RunIdentity("m", settings={"chat": False}, source="b.json"), "2", {})
    >>> check_same_run("out", chat, plain)
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: out: t (run a.json) and t_kfl (run b.json) come from runs that differ in chat True vs False; run them with the same model, endpoint and generation settings
    """
    for task in (first, other):
        if task.run.endpoint_unknown and not allow_unknown_endpoint:
            raise ScrambledBenchError(
                f"{folder}: {task.name} (run {task.run.source or task.location}) records no endpoint "
                f"({task.run.endpoint_unknown}), so it cannot be told from a run against another endpoint; "
                f"pass {UNKNOWN_ENDPOINT_OPTION} to pair it anyway"
            )
    differences = first.run.differences(other.run)
    if differences:
        raise ScrambledBenchError(
            f"{folder}: {first.name} (run {first.run.source or first.location}) and {other.name} "
            f"(run {other.run.source or other.location}) come from runs that differ in "
            f"{'; '.join(differences)}; run them with the same model, endpoint and generation settings"
        )


@dataclass(frozen=True)
class PairedFolder:
    """What a folder of a harness's logs gives: the ``scrambled_tasks`` section (per canonical task, its
    variants paired with it), the bench's own task runs (scored as ``run`` scores, by the caller), the
    runs the section and the bench rest on, and the tasks left out (neither the bench's, nor a variant,
    nor a variant's canonical task)."""

    section: dict[str, Any]
    bench: list[LoggedTask]
    runs: list[RunIdentity]
    left_out: list[str]
    groups: dict[str, dict[str, LoggedTask]] = field(default_factory=dict)
    """Canonical task name -> scramble type -> its variant's run (in the section's order)."""
    tasks: dict[str, LoggedTask] = field(default_factory=dict)
    """The newest run of every task, by name."""
    unknown_endpoints: list[str] = field(default_factory=list)
    """The tasks compared whose logs do not tell their endpoint (accepted by ``allow_unknown_endpoint``)."""
    zero_log_likelihoods: list[ZeroLogLikelihoods] = field(default_factory=list)
    """The tasks compared whose log-likelihoods of exactly 0.0 the caller accepted (else they are refused)."""


def compare_logged(
    folder: Any,
    tasks: Sequence[LoggedTask],
    settings: CompareSettings = DEFAULT_SETTINGS,
    *,
    allow_unknown_endpoint: bool = False,
    allow_zero_loglikelihood: bool = False,
) -> PairedFolder:
    """Sort a folder's logged task runs into the bench's own and the canonical tasks with their variants,
    and pair each variant with its canonical task (:func:`pair_task`). Runs compared with each other must
    share their identity, and tell their endpoint unless ``allow_unknown_endpoint`` (:func:`check_same_run`).
    A task compared that logged a log-likelihood of exactly 0.0 is refused in one line
    (:func:`~.loglikelihood.check_log_likelihoods`), or with ``allow_zero_loglikelihood`` listed in
    ``zero_log_likelihoods``.

    >>> from scrambled_bench.integrations.base import LoggedDocument, RunIdentity
    >>> run = RunIdentity("m", source="results.json")
    >>> def logged(name, scores, **marks):
    ...     docs = {i: LoggedDocument(i, {"acc": s}, target=str(i)) for i, s in enumerate(scores)}
    ...     return LoggedTask(name, run, "2026", docs, **marks)
    >>> found = compare_logged("out", [logged("t", [1, 1, 0, 1]), logged("t_kfl", [0, 1, 0, 1],
    ...     canonical="t", scramble_type="kfl"), logged("other", [1])], CompareSettings(n_resamples=50))
    >>> found.section["t"]["types"]["kfl"]["metrics"]["acc"]["difference"], found.left_out
    (-0.25, ['other'])
    """
    newest = newest_per_task(tasks)
    by_name = {task.name: task for task in newest}
    grouped = variants_by_canonical(folder, newest)
    bench = [task for task in newest if task.bench and not task.is_variant]
    left_out = [task.name for task in newest if not (task.bench or task.is_variant or task.name in grouped)]
    compared = [task for name in grouped for task in (by_name[name], *grouped[name].values())]
    zeros = check_log_likelihoods(folder, [*compared, *bench], allow=allow_zero_loglikelihood)
    section: dict[str, Any] = {}
    for name in grouped:
        for variant in grouped[name].values():
            check_same_run(folder, by_name[name], variant, allow_unknown_endpoint=allow_unknown_endpoint)
        section[name] = pair_task(folder, by_name[name], grouped[name], settings)
    for task in bench[1:]:
        check_same_run(folder, bench[0], task, allow_unknown_endpoint=allow_unknown_endpoint)
    runs = [by_name[name].run for name in grouped] + ([bench[0].run] if bench else [])
    checked = [*compared, *(bench if len(bench) > 1 else [])]
    unknown = sorted({task.name for task in checked if task.run.endpoint_unknown})
    groups = {name: {t: grouped[name][t] for t in sorted(grouped[name], key=_type_order)} for name in grouped}
    return PairedFolder(
        section, bench, runs, left_out, groups, by_name, unknown_endpoints=unknown, zero_log_likelihoods=zeros
    )


def variants_by_canonical(folder: Any, newest: Sequence[LoggedTask]) -> dict[str, dict[str, LoggedTask]]:
    """The variants among a folder's newest task runs, by canonical task (sorted by name) and type (in the
    order found); a one-line error for a variant whose canonical run is not in the folder, or two variants of
    one type of one canonical task.

    >>> run = RunIdentity("m")
    >>> tasks = [LoggedTask("t", run, "1", {}), LoggedTask("t_kfl", run, "1", {}, canonical="t", scramble_type="kfl")]
    >>> {name: {kind: task.name for kind, task in types.items()} for name, types in variants_by_canonical("out", tasks).items()}
    {'t': {'kfl': 't_kfl'}}
    """
    names = {task.name for task in newest}
    grouped: dict[str, dict[str, LoggedTask]] = {}
    for variant in newest:
        marks = variant.variant_of
        if marks is None:
            continue
        canonical, scramble_type = marks
        if canonical not in names:
            raise ScrambledBenchError(
                f"{folder}: {variant.name} is a variant of {canonical}, whose run is not in the folder; "
                f"run {canonical} too (into the same folder)"
            )
        types = grouped.setdefault(canonical, {})
        if scramble_type in types:
            raise ScrambledBenchError(
                f"{folder}: {types[scramble_type].name} and {variant.name} are both the {scramble_type} variant "
                f"of {canonical}; keep one of them in the folder"
            )
        types[scramble_type] = variant
    return {name: grouped[name] for name in sorted(grouped)}


def _type_order(scramble_type: str) -> Any:
    """A scramble type's place in the paper's order; a type the scrambler does not know goes last."""
    try:
        return (0, type_order(scramble_type))
    except (ValueError, ScrambledBenchError):
        return (1, scramble_type)


def _doc_scores(task: LoggedTask, metric: str) -> dict[Hashable, DocScore]:
    return {
        doc_id: DocScore(
            float(document.scores[metric]),
            document.target,
            len(document.choices) if document.choices else None,
        )
        for doc_id, document in task.documents.items()
        if metric in document.scores
    }


def _metric_record(
    task: LoggedTask, metric: str, scores: Mapping[Hashable, DocScore], settings: CompareSettings
) -> dict[str, Any]:
    """A task's metric: the harness's own value (else the mean of the per-document scores, said so), its
    stderr, the documents it rests on, and the interval of the mean (Wilson for 0/1 scores, else bootstrap)."""
    recorded = task.metrics.get(metric)
    values = [doc.score for doc in scores.values()]
    record: dict[str, Any] = {
        "value": recorded.value if recorded is not None else None,
        "stderr": recorded.stderr if recorded is not None else None,
        "n": len(scores),
    }
    if record["value"] is None and values:
        record["value"] = float(np.mean(values)) + 0.0
        record["value_from"] = (
            "the mean of the logged per-document scores (the harness recorded no aggregate)"
        )
    found = mean_interval(values, settings)
    record["interval"], record["interval_method"] = found["interval"], found["method"]
    return record


def pair_task(
    folder: Any, canonical: LoggedTask, variants: Mapping[str, LoggedTask], settings: CompareSettings
) -> dict[str, Any]:
    """One canonical task's entry of ``scrambled_tasks``: its metrics and, per type, the variant's, each
    paired with the canonical task's where it is a mean of per-document scores (:func:`paired_difference`),
    with RPG where ``sub`` ran (0/1 metrics); ``n_unpaired``: documents only one of the two logged, over
    every type. A canonical task without a logged document is refused."""
    keys = canonical.metric_keys()
    if not canonical.documents or not keys:
        raise ScrambledBenchError(
            f"{folder}: the canonical task {canonical.name} ({canonical.location}) logged no scored document; "
            "its variants cannot be paired with it"
        )
    entry: dict[str, Any] = {
        "task": canonical.name,
        "log": canonical.location,
        "run": _run_record(canonical.run),
        "metrics": {},
        "types": {},
        "n_unpaired": 0,
    }
    base = {key: _doc_scores(canonical, key) for key in keys}
    for key in keys:
        entry["metrics"][key] = _metric_record(canonical, key, base[key], settings)
    sub = variants.get(SUB)
    for scramble_type in sorted(variants, key=_type_order):
        variant = variants[scramble_type]
        metrics: dict[str, Any] = {}
        for key in variant.metric_keys():
            scores = _doc_scores(variant, key)
            metrics[key] = _metric_record(variant, key, scores, settings)
            if not (canonical.pairable(key) and variant.pairable(key)) or not base.get(key) or not scores:
                metrics[key]["note"] = "not a mean of per-document scores: no paired difference"
                continue
            try:
                metrics[key].update(paired_difference(base[key], scores, settings))
                if sub is not None and scramble_type != SUB:
                    sub_scores = _doc_scores(sub, key)
                    gain = rpg(base[key], scores, sub_scores, settings) if sub_scores else None
                    if gain is not None:
                        metrics[key]["relative_performance_gain"] = gain
            except ScrambledBenchError as exc:
                raise ScrambledBenchError(
                    f"{folder}: {variant.name} against {canonical.name}, {key}: {exc}"
                ) from None
        unpaired = set(canonical.documents) ^ set(variant.documents)
        entry["n_unpaired"] += len(unpaired)
        entry["types"][scramble_type] = {
            "task": variant.name,
            "log": variant.location,
            **dict(variant.details),
            "n_unpaired": len(unpaired),
            "metrics": metrics,
        }
    return entry


def _run_record(run: RunIdentity) -> dict[str, Any]:
    """A run's identity as ``score``'s document records it."""
    return run.as_record()
