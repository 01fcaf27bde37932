"""A scrambled variant against its canonical task over the same documents: the paired comparison.

A harness (lm-eval, lighteval, Inspect) scores every document of a canonical task and of each scrambled
variant of it; the variant's documents are the canonical ones with some columns scrambled, under the same
ids. What scrambling costs is then measured per document: :func:`paired_difference` pairs the two runs'
per-document scores by id (after checking that each pair shares its target, else they are not the same
document), and gives the mean difference (variant minus canonical, so a drop is negative) with a paired
bootstrap interval, plus McNemar's exact test where every score is 0 or 1. :func:`rpg` gives the paper's
relative performance gain where the fully substituted variant (``sub``) ran too.

Pure functions over plain mappings, no I/O: the lm-eval and Inspect readers share them. The statistics are
``harness.report.compare``'s (``paired_bootstrap``, ``mcnemar_exact``) and RPG is the packaged
``relative_performance_gain`` module's (through ``harness.aggregate.gain_score``), so a paired drop here and
one in ``report --compare`` or ``results.json`` cannot disagree. Every value is a fraction, as results.json
stores them.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.harness.report.compare import CompareSettings, mcnemar_exact, paired_bootstrap

__all__ = ["CompareSettings", "DocScore", "is_binary", "paired_difference", "rpg"]

DEFAULT_SETTINGS = CompareSettings()
"""1000 resamples, a 0.95 BCa interval (percentile where BCa is undefined), seed 0: ``report --compare``'s defaults."""
NO_TARGET = object()
"""The target of a document whose harness did not log one: never compared."""


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
    """Whether every score of every run is 0 or 1 (a right/wrong metric: McNemar and RPG apply).

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
    """How a paired record was computed; ``interval`` is the bootstrap's method (BCa, or percentile where
    BCa is undefined)."""
    method = (
        f"paired bootstrap over document ids ({settings.n_resamples} resamples, "
        f"{settings.confidence_level:g} {interval} interval, seed {settings.seed})"
    )
    return method + "; McNemar exact test" if binary else method


def _mean_over(values: np.ndarray, indices: np.ndarray) -> np.ndarray:
    return values[indices].mean(axis=-1)


def paired_difference(
    canonical: Scores, variant: Scores, settings: CompareSettings = DEFAULT_SETTINGS
) -> dict[str, Any]:
    """The variant's mean score minus the canonical's over the documents both scored, with its interval.

    Returns ``canonical`` and ``variant`` (the two means over the paired documents), ``difference``
    (variant minus canonical), ``ci`` (``[low, high]`` of a paired bootstrap: the same resampled ids for
    both), ``method`` (in words), ``mcnemar_p`` (McNemar's exact test where every score is 0 or 1, else
    None), ``n_paired`` and ``n_unpaired`` (documents only one run scored). With no document in common the
    numbers are None. Raises :class:`ScrambledBenchError` when a pair's targets differ.

    >>> canonical = {0: DocScore(1, "A"), 1: DocScore(1, "B"), 2: DocScore(0, "C"), 3: DocScore(1, "D")}
    >>> variant = {0: DocScore(0, "A"), 1: DocScore(1, "B"), 2: DocScore(0, "C"), 4: DocScore(1, "E")}
    >>> record = paired_difference(canonical, variant, CompareSettings(n_resamples=200))
    >>> record["difference"], record["n_paired"], record["n_unpaired"], record["mcnemar_p"]
    (-0.3333333333333333, 3, 2, 1.0)
    >>> low, high = record["ci"]
    >>> low <= record["difference"] <= high <= 0.0
    True
    >>> paired_difference({0: 0.5}, {0: 0.25})["mcnemar_p"] is None
    True
    >>> paired_difference({0: DocScore(1, "A")}, {0: DocScore(1, "B")})
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: document 0: the canonical target 'A' differs from the variant's 'B'; paired documents must share their target (was the target column scrambled?)
    """
    canonical = {doc_id: _as_doc_score(v) for doc_id, v in canonical.items()}
    variant = {doc_id: _as_doc_score(v) for doc_id, v in variant.items()}
    ids = _paired_ids(canonical, variant)
    n_unpaired = len(canonical) + len(variant) - 2 * len(ids)
    binary = is_binary(canonical, variant)
    record: dict[str, Any] = {
        "canonical": None,
        "variant": None,
        "difference": None,
        "ci": None,
        "method": _method(settings, binary),
        "mcnemar_p": None,
        "n_paired": len(ids),
        "n_unpaired": n_unpaired,
    }
    if not ids:
        return record
    base = np.array([canonical[i].score for i in ids], dtype=float)
    other = np.array([variant[i].score for i in ids], dtype=float)
    found = paired_bootstrap(_mean_over, base, other, settings)
    interval = found["interval"]
    if interval is not None:
        record["method"] = _method(settings, binary, found["method"])
    record.update(
        canonical=float(base.mean()) + 0.0,
        variant=float(other.mean()) + 0.0,
        difference=float(other.mean() - base.mean()) + 0.0,
        ci=None if interval is None else [float(interval[0]) + 0.0, float(interval[1]) + 0.0],
    )
    if binary:
        record["mcnemar_p"], _ = mcnemar_exact(base.astype(bool), other.astype(bool))
    return record


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
    from scrambled_bench.harness.aggregate import Bootstrap, gain_score

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
