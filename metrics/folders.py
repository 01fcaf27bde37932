"""Each metric folder's ``scrambled_bench_shared.py``, generated from :mod:`scrambled_bench.metrics.shared`.

The helpers the metric modules share have one home, ``metrics/shared.py``. A metric folder must stay
self-contained (``evaluate.load(folder)`` copies a script's relative imports beside it, and the folder is
pushed as a Hub Space as it is), so it carries a copy under the name its script imports: the shared module's
text after a header that says it is generated, from what, and how to regenerate it. ``python
scripts/sync_metric_folders.py`` writes the copies; a test and ``push-metrics`` refuse a folder whose copy
differs from what would be written now.
"""

from __future__ import annotations

from pathlib import Path

from scrambled_bench.io import atomic_write_text
from scrambled_bench.metrics import METRIC_NAMES

SHARED_SOURCE = "shared.py"
"""The one home of the shared helpers, in the metrics folder."""
SHARED_COPY = "scrambled_bench_shared.py"
"""The name of its copy in each metric folder (what the metric scripts import: ``from .scrambled_bench_shared
import ...``)."""
SYNC_COMMAND = "python scripts/sync_metric_folders.py"
"""What regenerates the copies, from the repository root."""

HEADER = f"""\
# Generated: do not edit. This is scrambled_bench.metrics.shared (metrics/{SHARED_SOURCE} in the scrambled-bench
# repository), copied into this metric folder so that the folder is self-contained for evaluate.load and its
# Hugging Face Space. To change it, edit metrics/{SHARED_SOURCE}, then run `{SYNC_COMMAND}`.
"""

METRICS_FOLDER = Path(__file__).resolve().parent
"""The package's own metrics folder (a checkout's ``metrics/`` under an editable install)."""


def shared_copy(source: str) -> str:
    """The text of a metric folder's copy of the shared module whose text is ``source``: the header, then
    ``source`` unchanged.

    >>> copy = shared_copy("import numpy as np" + chr(10))
    >>> copy.startswith("# Generated: do not edit."), copy.endswith(chr(10) + "import numpy as np" + chr(10))
    (True, True)
    """
    return HEADER + source


def expected_copy(metrics_folder: Path = METRICS_FOLDER) -> str:
    """What every metric folder's copy must hold now: :func:`shared_copy` of ``metrics_folder/shared.py``."""
    return shared_copy((metrics_folder / SHARED_SOURCE).read_text(encoding="utf-8"))


def copy_paths(metrics_folder: Path = METRICS_FOLDER) -> list[Path]:
    """The copy of every metric folder in ``METRIC_NAMES``, whether it exists or not.

    >>> [path.parent.name for path in copy_paths()]
    ['recovery_rate', 'relative_performance_gain', 'edit_distance']
    """
    return [metrics_folder / name / SHARED_COPY for name in METRIC_NAMES]


def stale_copies(metrics_folder: Path = METRICS_FOLDER) -> list[Path]:
    """The copies that are missing or differ from :func:`expected_copy` (none, when the folders are in sync).

    >>> stale_copies()
    []
    """
    expected = expected_copy(metrics_folder)
    return [
        path
        for path in copy_paths(metrics_folder)
        if not path.is_file() or path.read_text(encoding="utf-8") != expected
    ]


def write_copies(metrics_folder: Path = METRICS_FOLDER) -> list[Path]:
    """Write every stale copy (:func:`stale_copies`), each atomically, and return them; a copy already in sync
    is not touched."""
    expected = expected_copy(metrics_folder)
    stale = stale_copies(metrics_folder)
    for path in stale:
        atomic_write_text(path, expected)
    return stale
