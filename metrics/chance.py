"""Chance level: where a multiple-choice task's original accuracy is no better than answering at random, RPG
divides by noise (``RPG = (Acc_scr - Acc_sub) / (Acc_ori - Acc_sub)``: a model at 23 % on a 4-way task gets RPG
33 % or 67 % from one answer more or less). ``run``, ``score`` and ``report`` mark such an RPG with
:func:`chance_note`, as they mark an undefined one. Pure functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def chance_level(choice_counts: Sequence[int | None]) -> float | None:
    """The accuracy of answering at random: the mean of ``1 / choices`` over the samples, or None where a
    sample's number of choices is not known (a generated answer, say).

    >>> chance_level([4, 4, 2]), chance_level([4, None]), chance_level([])
    (0.3333333333333333, None, None)
    """
    if not choice_counts or any(
        isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in choice_counts
    ):
        return None
    return sum(1 / n for n in choice_counts) / len(choice_counts)


def chance_note(score: Mapping[str, Any] | None, *, scale: float = 1.0, unit: str = "") -> str | None:
    """Why an RPG is not meaningful, where the interval of its original accuracy contains the chance level:
    the original context then shows nothing above guessing for the scrambled one to recover. None otherwise,
    and for a score without the chance level or that interval (RPG's entry holds ``chance`` and
    ``original_accuracy_ci`` where the task's number of choices is known). The numbers are shown times
    ``scale`` with ``unit`` (``scale=100, unit="%"`` for fractions shown in percent).

    >>> entry = {"value": 0.33, "original_accuracy": 0.233, "original_accuracy_ci": [0.118, 0.409], "chance": 0.25}
    >>> chance_note(entry, scale=100, unit="%")
    'RPG not meaningful: original accuracy 23.3% [11.8%, 40.9%] contains chance (25.0%)'
    >>> chance_note({**entry, "original_accuracy_ci": [0.3, 0.5]}) is None, chance_note({"value": 1.0}) is None
    (True, True)
    """
    if not score:
        return None
    chance, interval = score.get("chance"), score.get("original_accuracy_ci")
    accuracy = score.get("original_accuracy")
    if chance is None or not interval or accuracy is None:
        return None
    low, high = interval
    if not low <= chance <= high:
        return None

    def shown(value: float) -> str:
        return f"{value * scale:.1f}{unit}" if unit == "%" else f"{value * scale:.3f}{unit}"

    return (
        f"RPG not meaningful: original accuracy {shown(accuracy)} [{shown(low)}, {shown(high)}] contains "
        f"chance ({shown(chance)})"
    )
