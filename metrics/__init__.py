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
import sys
from pathlib import Path
from typing import Any

METRIC_NAMES = ("recovery_rate", "relative_performance_gain", "edit_distance")

#: set by :func:`claim_process`: this Python process is the ``scrambled-bench`` program's own
_PROGRAM_OWNS_THE_PROCESS = False


def claim_process() -> None:
    """Say that this process is the ``scrambled-bench`` program's own, not a user's: the program calls it
    first (``evaluate_cli.main.console``), and so may import ``evaluate`` without its evaluator's pipelines.

    ``import evaluate`` imports ``evaluate.evaluator``, which imports ``transformers.pipelines``, and with it
    torch, wherever transformers is installed: 4 of the 6 s of CPU the import takes on the 2-core development
    machine, paid by every ``run``, ``score`` and ``report`` before its first request or number. The program
    never uses ``evaluate.evaluator``, so in its own process ``transformers.pipelines`` is kept out while
    ``evaluate`` is imported (the evaluator then believes transformers absent) and let in again at once, for
    the transformers backend or anything else that imports it later. In a user's process (a notebook, a test
    calling ``main([...])``) the import is ``evaluate``'s own, evaluator and all. The metric modules are the
    same either way: they do not use the evaluator.
    """
    global _PROGRAM_OWNS_THE_PROCESS
    _PROGRAM_OWNS_THE_PROCESS = True


def _import_evaluate() -> Any:
    """``evaluate``, imported as :func:`claim_process` says."""
    pipelines = "transformers.pipelines"
    keep_out = _PROGRAM_OWNS_THE_PROCESS and "evaluate" not in sys.modules and pipelines not in sys.modules
    if keep_out:
        sys.modules[pipelines] = None  # importing it raises ImportError, which evaluate catches
    try:
        import evaluate
    finally:
        if keep_out and pipelines in sys.modules and sys.modules[pipelines] is None:
            del sys.modules[pipelines]
    return evaluate


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
    evaluate = _import_evaluate()  # heavy (pulls in datasets); only needed once a metric is actually loaded
    return evaluate.load(str(metric_path(name)), **kwargs)


@functools.cache
def loaded(name: str) -> Any:
    """:func:`load` once per process: loading a module costs a second or two, scoring with it milliseconds.

    >>> loaded("edit_distance") is loaded("edit_distance")
    True
    """
    return load(name)
