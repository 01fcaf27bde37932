"""Fixtures the report tests share."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_runs import skilled_run

from scrambled_bench.report import label_runs, load_run


@pytest.fixture(scope="module")
def run_paths(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two run folders of one suite, a strong model and a weak one (per test module)."""
    root = tmp_path_factory.mktemp("runs")
    return [
        skilled_run(root / "big", "big-model", 0.9),
        skilled_run(root / "small", "small-model", 0.5, seed=1),
    ]


@pytest.fixture(scope="module")
def runs(run_paths: list[Path]) -> list:
    """The two run folders read and labelled, as the report shows them."""
    return label_runs([load_run(p) for p in run_paths])
