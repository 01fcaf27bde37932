"""A config's scored samples to its scores in results.json, through the packaged metric modules.

Every number goes through the ``evaluate`` modules in ``metrics/`` (the files a user's
``evaluate.load("metrics/<name>")`` runs), so a run, ``scrambled-bench score`` and a user's own scoring
cannot disagree: accuracy and RPG come from ``relative_performance_gain`` (the package's one
implementation of accuracy; it also states when RPG is undefined), ED and RR from ``recovery_rate``.
The modules report fractions and so does results.json (its ``units`` say so); tables, figures and the
terminal show percent, as the paper's tables do (:func:`scrambled_bench.evaluation.results.scores_in`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from scrambled_bench.metrics import loaded
from scrambled_bench.metrics.chance import chance_level


@dataclass(frozen=True)
class Bootstrap:
    """The settings of every interval in a results file."""

    confidence_level: float = 0.95
    n_resamples: int = 1000
    seed: int = 0

    def options(self) -> dict[str, Any]:
        return asdict(self)


def metric(name: str) -> Any:
    """The packaged ``evaluate`` module, loaded once per process."""
    return loaded(name)


def fraction(value: Any) -> float | None:
    """A module's score as results.json stores it: a float, None for None or NaN, never -0.0.

    >>> fraction(0.125), fraction(None), fraction(-0.0), fraction(float("nan"))
    (0.125, None, 0.0, None)
    """
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value + 0.0  # + 0.0 turns -0.0 into 0.0


def scored(value: Any, scores: Mapping[str, Any], name: str, boot: Bootstrap) -> dict[str, Any]:
    """A score's entry in results.json: the value, its interval and how the interval was made, under the
    module's own names less the score's prefix (``accuracy_ci`` -> ``ci``, ``accuracy_ci_method`` ->
    ``ci_method``), and the interval's level (``ci_level``).

    >>> scored(0.5, {"accuracy_ci": (0.2, 0.8), "accuracy_ci_method": "wilson"}, "accuracy", Bootstrap())
    {'value': 0.5, 'ci': [0.2, 0.8], 'ci_method': 'wilson', 'ci_level': 0.95}
    """
    ci = interval(scores.get(f"{name}_ci"))
    entry: dict[str, Any] = {"value": fraction(value), "ci": ci}
    if ci is not None:
        entry["ci_method"] = scores.get(f"{name}_ci_method")
        entry["ci_level"] = boot.confidence_level
    return entry


def interval(bounds: Sequence[float] | None) -> list[float] | None:
    """An interval as results.json stores it: a list of two floats, or None.

    >>> interval((0.25, 0.5)), interval(None)
    ([0.25, 0.5], None)
    """
    return None if bounds is None else [float(bound) + 0.0 for bound in bounds]


def _letters(samples: Sequence[Mapping[str, Any]]) -> list[str]:
    return [sample["prediction"] or "" for sample in samples]


def accuracy_score(samples: Sequence[Mapping[str, Any]], boot: Bootstrap) -> dict[str, Any]:
    """Accuracy (a fraction) with its interval (an unanswered sample is wrong).

    >>> accuracy_score([{"prediction": "A", "answer": "A"}, {"prediction": None, "answer": "B"}], Bootstrap())["value"]
    0.5
    """
    if not samples:
        return {"value": None, "ci": None}
    scores = metric("relative_performance_gain").compute(
        predictions=_letters(samples), references=[s["answer"] for s in samples], **boot.options()
    )
    return scored(scores["accuracy"], scores, "accuracy", boot)


def gain_score(
    samples: Sequence[Mapping[str, Any]],
    original: Mapping[str, Mapping[str, Any]],
    substituted: Mapping[str, Mapping[str, Any]],
    boot: Bootstrap,
) -> dict[str, Any] | None:
    """RPG (a fraction) over the ids answered in this config and in both anchors, or None without any.

    Where the module says RPG is undefined, ``value`` is None and ``undefined`` says why; the formula's
    value, where one exists, is kept as ``formula`` (the module's ``relative_performance_gain_undefined``
    and ``relative_performance_gain_formula``, less the prefix, as every part of a score's entry).

    Where every sample's number of choices is known (``choices``, a list, or ``n_choices``), the entry also
    holds the ``chance`` level and the original accuracy's interval ``original_accuracy_ci`` (the module's
    accuracy interval at the run's level, over the same samples), from which
    :func:`scrambled_bench.metrics.chance.chance_note` says whether RPG means anything.
    """
    common = [s for s in samples if s["id"] in original and s["id"] in substituted]
    if not common:
        return None
    scores = metric("relative_performance_gain").compute(
        predictions=_letters(common),
        references=[s["answer"] for s in common],
        original_predictions=_letters([original[s["id"]] for s in common]),
        substituted_predictions=_letters([substituted[s["id"]] for s in common]),
        **boot.options(),
    )
    name = "relative_performance_gain"
    result: dict[str, Any] = {
        **scored(scores[name], scores, name, boot),
        "n": len(common),
        "original_accuracy": fraction(scores["original_accuracy"]),
        "substituted_accuracy": fraction(scores["substituted_accuracy"]),
    }
    chance = chance_level([_choice_count(s) for s in common])
    if chance is not None:
        anchor = metric("relative_performance_gain").compute(
            predictions=_letters([original[s["id"]] for s in common]),
            references=[s["answer"] for s in common],
            confidence_level=boot.confidence_level,
        )
        result["chance"] = chance
        result["original_accuracy_ci"] = interval(anchor["accuracy_ci"])
    if scores[name] is None:
        result["ci"] = None
        result.pop("ci_method", None)
        result.pop("ci_level", None)
        result["undefined"] = scores[f"{name}_undefined"]
        if scores.get(f"{name}_formula") is not None:
            result["formula"] = fraction(scores[f"{name}_formula"])
    return result


def _choice_count(sample: Mapping[str, Any]) -> int | None:
    choices = sample.get("choices")
    return len(choices) if isinstance(choices, list) else sample.get("n_choices")


def recovery_scores(samples: Sequence[Mapping[str, Any]], boot: Bootstrap) -> dict[str, Any]:
    """ED (mean character Levenshtein distance) and RR (a fraction), with intervals."""
    if not samples:
        return {"edit_distance": {"value": None, "ci": None}, "recovery_rate": {"value": None, "ci": None}}
    try:
        scores = metric("recovery_rate").compute(
            predictions=[s["prediction"] for s in samples],
            references=[s["original"] for s in samples],
            scrambled=[s["scrambled"] for s in samples],
            **boot.options(),
        )
    except ValueError as exc:  # nothing was scrambled: RR is undefined, and the module says why
        return {
            "edit_distance": {"value": None, "ci": None},
            "recovery_rate": {"value": None, "ci": None, "undefined": str(exc).splitlines()[0]},
        }
    return {
        "edit_distance": scored(scores["edit_distance"], scores, "edit_distance", boot),
        "scrambled_edit_distance": {"value": float(scores["scrambled_edit_distance"])},
        "recovery_rate": scored(scores["recovery_rate"], scores, "recovery_rate", boot),
    }


def category_scores(
    samples: Sequence[Mapping[str, Any]],
    original: Mapping[str, Mapping[str, Any]] | None,
    substituted: Mapping[str, Mapping[str, Any]] | None,
    boot: Bootstrap,
) -> dict[str, Any]:
    """Per question category (a question can have several): accuracy, and RPG where the anchors ran."""
    members: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for sample in samples:
        for category in sample.get("categories") or ["(none)"]:
            members[category].append(sample)
    scores = {}
    for category in sorted(members):
        group = members[category]
        item: dict[str, Any] = {"n": len(group), "accuracy": accuracy_score(group, boot)}
        if original is not None and substituted is not None:
            item["relative_performance_gain"] = gain_score(group, original, substituted, boot)
        scores[category] = item
    return scores
