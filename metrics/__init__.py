"""Metric modules in the layout of huggingface/evaluate, one self-contained folder per metric.

- ``recovery_rate/``: RR of the scrambled sentence recovery task (ScrRec), with mean edit distances.
- ``relative_performance_gain/``: RPG of the scrambled question answering task (ScrQA), with accuracies.
- ``edit_distance/``: mean, median and normalised character-level Levenshtein distance.

Each folder ships inside the package (a sub-package, so that import-linter sees its modules), so :func:`load`
runs the very same scripts a user gets from ``evaluate.load("metrics/<name>")`` in a checkout or from the
Hub: the CLI and a user's own ``evaluate.load`` cannot disagree. What the scripts share lives once, in
``shared`` (citation, input checks, edit distances, the interval functions); each folder carries a copy
generated from it (``folders``: ``python scripts/sync_metric_folders.py``), as a folder must stand alone.
Plain modules beside them: ``statistics`` (every paired comparison, on ``shared``'s intervals), ``readers``
(model text to a letter or a sentence: the paper's reader and the careful one), ``score_files``
(``scrambled-bench score``), ``paper_reproduction`` (the paper's tables from the authors' outputs) and
``spaces`` (``scrambled-bench push-metrics``).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

METRIC_NAMES = ("recovery_rate", "relative_performance_gain", "edit_distance")


def metric_path(name: str) -> Path:
    """The folder of a packaged metric module.

    >>> metric_path("recovery_rate").joinpath("recovery_rate.py").is_file()
    True
    """
    if name not in METRIC_NAMES:
        raise ValueError(f"unknown metric {name!r}; choose one of {', '.join(METRIC_NAMES)}")
    return Path(__file__).resolve().parent / name


def load(name: str, **kwargs: Any):
    """``evaluate.load`` on the packaged folder of ``name``, offline; ``kwargs`` go to ``evaluate.load``.

    >>> load("edit_distance").compute(predictions=["kitten"], references=["sitting"])["edit_distance"]
    3.0
    """
    import evaluate  # heavy (pulls in datasets); only needed once a metric is actually loaded

    return evaluate.load(str(metric_path(name)), **kwargs)


@functools.cache
def loaded(name: str) -> Any:
    """:func:`load` once per process: loading a module costs a second or two, scoring with it milliseconds.

    >>> loaded("edit_distance") is loaded("edit_distance")
    True
    """
    return load(name)
