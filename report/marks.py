"""What a report marks beside its numbers: incomplete configs (requests failed or unanswered), and the
intervals' level and the method each interval recorded beside itself.

Every interval of the package comes from the metric modules' shared helpers
(:mod:`scrambled_bench.metrics.shared`): Wilson's score interval for accuracy (a proportion), the BCa
bootstrap for ED, RR and RPG (a mean and two ratios), and the percentile bootstrap where BCa is undefined.
results.json stores each interval with its ``ci_method`` and ``ci_level``, and the whole file's bootstrap
settings under ``intervals``; a report says which it shows, and marks a percentile fallback.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from scrambled_bench.evaluation.results import incompleteness

DEFAULT_INTERVALS = {"confidence_level": 0.95, "n_resamples": 1000, "seed": 0}
"""The interval settings of ``run`` and ``report`` when none is given."""

METHOD_NAMES = {
    "wilson": "Wilson score interval",
    "bca": "BCa bootstrap",
    "percentile": "percentile bootstrap",
}
"""Each interval method, as a note names it (the keys are what results.json records as ``ci_method``)."""

#: the method of an interval that recorded none: results.json files from before methods were recorded
#: held percentile-bootstrap intervals only
UNRECORDED_METHOD = "percentile"


def incomplete_mark(entry: Mapping[str, Any] | None, notes: Any) -> str:
    """`` [k]`` after a cell of an incomplete config (requests failed or unanswered), with a footnote
    saying what it lacks; "" for a complete one.

    >>> from scrambled_bench.report.tables import Footnotes
    >>> notes = Footnotes()
    >>> incomplete_mark({"n_requests": 4, "n_scored": 3, "n_failed": 1, "complete": False}, notes), notes.lines()
    (' [1]', ['[1] incomplete: 3 of 4 requests scored: 1 failed after their retries; rerun its `run` command'])
    >>> incomplete_mark({"complete": True}, notes)
    ''
    """
    lacking = incompleteness(entry) if entry else ""
    return f" {notes.mark(f'incomplete: {lacking}; rerun its `run` command')}" if lacking else ""


def incomplete_caption(per_run: Sequence[tuple[Any, Sequence[Mapping[str, Any]]]]) -> str:
    """A caption naming the runs whose rows rest on incomplete configs ("" where none does).

    >>> from pathlib import Path
    >>> from scrambled_bench.report.runs import Run
    >>> run = Run(Path("runs/a"), {"configs": {}}, {}, label="m")
    >>> incomplete_caption([(run, [{"scramble_type": "rs50", "complete": False}])])
    'Incomplete: m (rs50) rests on fewer samples than it asked for (marked cells); do not cite it before rerunning.'
    """
    named = []
    for run, entries in per_run:
        lacking = [e for e in entries if incompleteness(e)]
        if lacking:
            which = ", ".join(
                dict.fromkeys(
                    str(e.get("scramble_type"))
                    + (f"@{e['exemplar_rate']}%" if e.get("exemplar_rate") is not None else "")
                    for e in lacking
                )
            )
            named.append(f"{run.label} ({which})")
    if not named:
        return ""
    verb = "rests" if len(named) == 1 else "rest"
    return (
        f"Incomplete: {'; '.join(named)} {verb} on fewer samples than it asked for (marked cells); "
        "do not cite it before rerunning."
    )


def level_label(confidence_level: float) -> str:
    """A confidence level as a table labels its intervals.

    >>> level_label(0.95), level_label(0.5), level_label(0.975)
    ('95%', '50%', '97.5%')
    """
    return f"{round(confidence_level * 100, 6):g}%"


def stored_intervals(results: Mapping[str, Any], settings: Mapping[str, Any]) -> dict[str, Any]:
    """The interval settings a results document was computed with: its own ``intervals``, else the run's
    recorded settings (config.json), else the defaults.

    >>> stored_intervals({"intervals": {"confidence_level": 0.9, "n_resamples": 200, "seed": 1}}, {})
    {'confidence_level': 0.9, 'n_resamples': 200, 'seed': 1}
    >>> stored_intervals({}, {"confidence_level": 0.8})
    {'confidence_level': 0.8, 'n_resamples': 1000, 'seed': 0}
    """
    recorded = results.get("intervals") or {}
    return {key: recorded.get(key, settings.get(key, default)) for key, default in DEFAULT_INTERVALS.items()}


def method_of(score: Mapping[str, Any]) -> str:
    """The method a stored interval was made with.

    >>> method_of({"ci": [0.1, 0.2], "ci_method": "wilson"}), method_of({"ci": [0.1, 0.2]})
    ('wilson', 'percentile')
    """
    return str(score.get("ci_method") or UNRECORDED_METHOD)


def percentile_note(score: Mapping[str, Any] | None) -> str | None:
    """The footnote of a bootstrap interval that fell back from BCa to the percentile interval (None for
    any other interval).

    >>> percentile_note({"ci": [0.1, 0.3], "ci_method": "percentile"})
    'percentile bootstrap interval: BCa is undefined here (resamples that leave the score undefined, or all alike)'
    >>> percentile_note({"ci": [0.1, 0.3], "ci_method": "bca"}) is None
    True
    """
    if not score or not score.get("ci") or score.get("ci_method") != "percentile":
        return None
    return (
        "percentile bootstrap interval: BCa is undefined here (resamples that leave the score undefined, "
        "or all alike)"
    )


def interval_note(scores: Iterable[tuple[str, Mapping[str, Any] | None]], settings: Mapping[str, Any]) -> str:
    """The note that labels a table's intervals: their level(s), and which method each metric's took.

    ``scores`` are (metric label, stored score) pairs of the table's cells; ``settings`` the bootstrap's
    resamples and seed. Empty where no cell has an interval.

    >>> print(interval_note([("Acc", {"ci": [0.1, 0.2], "ci_method": "wilson", "ci_level": 0.5}),
    ...     ("RPG", {"ci": [0.1, 0.9], "ci_method": "bca", "ci_level": 0.5})], {"n_resamples": 1000, "seed": 0}))
    Intervals [low, high]: 50%; Acc: Wilson score interval; RPG: BCa bootstrap (1000 resamples, seed 0).
    """
    levels: dict[str, None] = {}
    methods: dict[str, dict[str, None]] = {}
    for label, score in scores:
        if not score or not score.get("ci"):
            continue
        if score.get("ci_level") is not None:
            levels[level_label(float(score["ci_level"]))] = None
        elif settings.get("confidence_level") is not None:
            levels[level_label(float(settings["confidence_level"]))] = None
        method = method_of(score)
        methods.setdefault(label, {})[METHOD_NAMES.get(method, method)] = None
    if not methods and not levels:
        return ""
    resampling = (
        f" ({settings['n_resamples']} resamples, seed {settings.get('seed')})"
        if settings.get("n_resamples") is not None
        else ""
    )
    parts = [
        f"{label}: " + " or ".join(name + (resampling if "bootstrap" in name else "") for name in names)
        for label, names in methods.items()
    ]
    return f"Intervals [low, high]: {', '.join(levels) or 'level not recorded'}; " + "; ".join(parts) + "."
