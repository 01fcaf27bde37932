"""Relative performance gain (RPG) of the Scrambled Bench (Cao et al., EMNLP 2023).

Self-contained ``evaluate`` module: it imports nothing from scrambled_bench, only its sibling file
``scrambled_bench_shared.py`` (the citation, input checks, bootstrap intervals), so the folder can be pushed
as a Hub Space as is. The arithmetic lives in plain functions (``is_correct``, ``gain_verdict``) that the
``evaluate`` class only wires up. It is also the package's one implementation of accuracy: without the two
anchor conditions it reports accuracy alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import evaluate
import numpy as np

from .scrambled_bench_shared import (
    WILSON,
    CheckedMetric,
    bootstrap_intervals,
    check_same_length,
    check_strings,
    metric_info,
    resampled_mean,
    wilson_interval,
)

_DESCRIPTION = """\
Relative performance gain (RPG) of the Scrambled Question Answering task (ScrQA): where a model's accuracy
on scrambled contexts lies between its accuracy on the original contexts and on contexts whose letters were
all substituted (which carry no usable information):
RPG = (Acc_scr - Acc_sub) / (Acc_ori - Acc_sub), over the same samples in the three conditions.
1 means the scrambling cost nothing, 0 that the scrambled context helped no more than a useless one.
RPG is undefined when the original context gained nothing over the substituted one (Acc_ori <= Acc_sub):
it is then None, with the reason and, where the ratio exists, the formula's value kept apart.
An answer that could not be parsed (None or "") counts as wrong, as the paper's evaluation does.
Without original_predictions and substituted_predictions the module reports accuracy alone.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str` or None): answer letters on the scrambled contexts.
    references (`list` of `str`): gold answer letters.
    original_predictions (`list` of `str` or None, optional): answer letters of the same samples, original
        contexts. Give both anchors or neither (accuracy alone).
    substituted_predictions (`list` of `str` or None, optional): the same, letter-substituted contexts.
    confidence_level (`float`, optional): e.g. 0.95 to add intervals: Wilson's score interval for accuracy
        (a proportion: never of zero width at 0 or all correct), a bootstrap for RPG (samples resampled
        jointly across the three conditions; BCa, or the percentile interval where resamples leave RPG
        undefined).
    n_resamples (`int`, default 1000): bootstrap resamples.
    seed (`int`, default 0): seed of the bootstrap.
Returns:
    accuracy (`float`): a fraction in [0, 1]; num_samples (`int`); unanswered (`int`): predictions that
        are None or "".
    With the anchors: relative_performance_gain (`float` or None): RPG as a fraction, usually in [0, 1];
        None when undefined, with relative_performance_gain_undefined (the reason) and, when
        Acc_ori < Acc_sub, relative_performance_gain_formula (the ratio the formula gives);
        original_accuracy, substituted_accuracy (`float`).
    With `confidence_level`: accuracy_ci and, with the anchors, relative_performance_gain_ci
        (`[low, high]`, None when no resample defines RPG), each with its method beside it
        (accuracy_ci_method "wilson"; relative_performance_gain_ci_method "bca" or "percentile"),
        confidence_level, n_resamples and undefined_resamples (resamples with Acc_ori <= Acc_sub, left
        out of RPG's interval).
Examples:
    >>> import evaluate
    >>> rpg = evaluate.load("metrics/relative_performance_gain")  # from a checkout; "ORG/..." from the Hub
    >>> rpg.compute(predictions=["A", "B", "C", "A"], references=["A", "B", "C", "D"],
    ...             original_predictions=["A", "B", "C", "D"], substituted_predictions=["A", None, "", "B"])
    {'accuracy': 0.75, 'num_samples': 4, 'unanswered': 0, 'relative_performance_gain': 0.6666666666666666, 'original_accuracy': 1.0, 'substituted_accuracy': 0.25}
    >>> rpg.compute(predictions=["A", "B", None], references=["A", "B", "C"])
    {'accuracy': 0.6666666666666666, 'num_samples': 3, 'unanswered': 1}
"""

ANCHORS = ("original_predictions", "substituted_predictions")


def is_correct(predictions: Sequence[str | None], references: Sequence[str]) -> np.ndarray:
    """Per-sample correctness; an unparsed answer (None or "") is wrong.

    >>> is_correct(["A", None, "", "c"], ["A", "B", "C", "C"]).tolist()
    [True, False, False, False]
    """
    return np.array([bool(p) and p == r for p, r in zip(predictions, references)], dtype=bool)


def gain_verdict(
    scrambled_accuracy: float, original_accuracy: float, substituted_accuracy: float
) -> dict[str, Any]:
    """RPG = (Acc_scr - Acc_sub) / (Acc_ori - Acc_sub), or None with the reason it is undefined.

    RPG is the share of the original context's gain over a useless (substituted) one that survives
    scrambling. Without such a gain (a model at chance, say) the ratio is not a share of anything: equal
    accuracies divide by zero, and an original accuracy below the substituted one flips the ratio's sign
    (Acc 12.5 at rs50 against 0 original and 25 substituted would read as RPG 0.5). The formula's value
    is kept apart, under ``relative_performance_gain_formula``.

    >>> gain_verdict(0.9, 1.0, 0.5)
    {'relative_performance_gain': 0.8}
    >>> gain_verdict(0.5, 0.5, 0.5)["relative_performance_gain_undefined"]
    'original and substituted accuracy are equal (0.5000): the original context gained nothing'
    >>> verdict = gain_verdict(0.125, 0.0, 0.25)
    >>> verdict["relative_performance_gain"], verdict["relative_performance_gain_formula"]
    (None, 0.5)
    """
    spread = original_accuracy - substituted_accuracy
    if spread == 0:
        return {
            "relative_performance_gain": None,
            "relative_performance_gain_undefined": (
                f"original and substituted accuracy are equal ({original_accuracy:.4f}): "
                "the original context gained nothing"
            ),
        }
    ratio = (scrambled_accuracy - substituted_accuracy) / spread
    if spread < 0:
        return {
            "relative_performance_gain": None,
            "relative_performance_gain_undefined": (
                f"original accuracy {original_accuracy:.4f} is below the substituted {substituted_accuracy:.4f}: "
                "no gain to recover"
            ),
            "relative_performance_gain_formula": ratio,
        }
    return {"relative_performance_gain": ratio}


def relative_performance_gain(
    scrambled_accuracy: float, original_accuracy: float, substituted_accuracy: float
) -> float | None:
    """RPG as a number, or None where :func:`gain_verdict` says it is undefined.

    >>> relative_performance_gain(1.0, 1.0, 0.5), relative_performance_gain(0.7, 0.5, 0.5)
    (1.0, None)
    """
    return gain_verdict(scrambled_accuracy, original_accuracy, substituted_accuracy)[
        "relative_performance_gain"
    ]


def check_inputs(
    predictions: object,
    references: object,
    original_predictions: object = None,
    substituted_predictions: object = None,
) -> dict[str, list]:
    """The input columns as lists ("" for an unanswered None), after rejecting what would give a wrong
    score, with a message naming the argument and index. The anchors come both or not at all.

    >>> check_inputs(["A"], [None], ["A"], ["B"])
    Traceback (most recent call last):
    ...
    ValueError: references[0] must be a string, got NoneType: None
    >>> check_inputs(["A", None], ["A", "B"])
    {'predictions': ['A', ''], 'references': ['A', 'B']}
    """
    given = {"original_predictions": original_predictions, "substituted_predictions": substituted_predictions}
    missing = [name for name, values in given.items() if values is None]
    if len(missing) == 1:
        raise ValueError(
            f"{missing[0]} is missing: RPG needs the same samples' answers on original and substituted contexts "
            "(give neither for accuracy alone)"
        )
    references = check_strings("references", references)
    for index, reference in enumerate(references):
        if not reference.strip():
            raise ValueError(f"references[{index}] is empty: every sample needs its gold answer")
    columns = {
        "predictions": check_strings("predictions", predictions, allow_none=True),
        "references": references,
    }
    if not missing:
        columns.update({name: check_strings(name, values, allow_none=True) for name, values in given.items()})
    check_same_length(columns)
    # evaluate's Arrow encoding rejects a None in first position; both mean "no answer"
    return {name: ["" if value is None else value for value in values] for name, values in columns.items()}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class RelativePerformanceGain(CheckedMetric, evaluate.Metric):
    """The ScrQA relative performance gain, with the accuracies it is built from."""

    extra_columns = ANCHORS
    bootstrap = True
    check_inputs = staticmethod(check_inputs)

    def _info(self) -> evaluate.MetricInfo:
        return metric_info(_DESCRIPTION, _KWARGS_DESCRIPTION, ["predictions", "references", *ANCHORS])

    def _compute(
        self,
        predictions,
        references,
        original_predictions=None,
        substituted_predictions=None,
        confidence_level=None,
        n_resamples=1000,
        seed=0,
    ):
        scrambled = is_correct(predictions, references)
        result: dict[str, Any] = {
            "accuracy": float(scrambled.mean()),
            "num_samples": len(predictions),
            "unanswered": sum(1 for p in predictions if not p),
        }
        anchored = original_predictions is not None and substituted_predictions is not None
        if anchored:
            original = is_correct(original_predictions, references)
            substituted = is_correct(substituted_predictions, references)
            result.update(
                gain_verdict(float(scrambled.mean()), float(original.mean()), float(substituted.mean()))
            )
            result["original_accuracy"] = float(original.mean())
            result["substituted_accuracy"] = float(substituted.mean())
        if confidence_level is None:
            return result
        accuracy_interval = {
            "accuracy_ci": wilson_interval(int(scrambled.sum()), len(predictions), confidence_level),
            "accuracy_ci_method": WILSON,
        }
        statistics = {}
        if anchored:

            def resampled_gain(indices: np.ndarray) -> np.ndarray:
                scr, ori, sub = (resampled_mean(c, indices) for c in (scrambled, original, substituted))
                with np.errstate(divide="ignore", invalid="ignore"):
                    gains = (scr - sub) / (ori - sub)
                # the same rule as the point estimate: no gain of the original over the substituted, no RPG
                return np.where(ori <= sub, np.nan, gains)

            statistics["relative_performance_gain_ci"] = resampled_gain
        result.update(accuracy_interval)
        result.update(bootstrap_intervals(statistics, len(predictions), confidence_level, n_resamples, seed))
        return result
