"""tests/worker_report.py: a pytest-xdist worker whose session ends with tests it was handed unrun is
explained at the very end of the output (the shape of CI's ``assert not crashitem`` of 94113a1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).parent

CONFTEST = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
from scheduling import make_scheduler
pytest_plugins = ("worker_report",)
def pytest_xdist_make_scheduler(config, log):
    return make_scheduler(config, log)
"""


def _run(folder: Path) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-n",
        "2",
        "--dist",
        "loadscope",
        "-p",
        "no:cacheprovider",
        "-q",
    ]
    # both streams in one pipe, as a CI log holds them, so that "last" means last in that log
    return subprocess.run(
        command,
        check=False,
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )


def test_a_worker_that_ends_its_session_early_is_explained_last(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_ends.py").write_text(
        "import pytest\n"
        "def test_first(): pass\n"
        "def test_ends_the_session(): pytest.exit('ended', returncode=3)\n"
        "def test_never_run(): pass\n"
    )
    (tmp_path / "test_other.py").write_text("def test_other(): pass\n")
    done = _run(tmp_path)
    assert done.returncode == 3, done.stdout
    before, heading, after = done.stdout.partition("=== xdist workers that ended early")
    assert heading, done.stdout
    assert "assert not crashitem" in before  # xdist's own INTERNALERROR, unchanged, and above the report
    assert " passed" in before  # pytest's summary line too
    report = heading + after
    assert (
        "ended with 2 test(s) it was handed unrun (first: ['test_ends.py::test_ends_the_session'])" in report
    )
    assert "  exitstatus: 3\n" in report
    assert "  last_started: test_ends.py::test_ends_the_session\n" in report
    assert "  last_finished: test_ends.py::test_first\n" in report
    assert "_pytest.outcomes.Exit: ended" in report  # the exception that ended its loop, with its traceback
    assert "INTERNALERROR" not in report and " passed" not in report  # nothing of pytest's comes after it


def test_workers_that_end_normally_add_nothing(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_plain.py").write_text("def test_a(): pass\ndef test_b(): pass\n")
    (tmp_path / "test_more.py").write_text("def test_c(): pass\n")
    done = _run(tmp_path)
    assert done.returncode == 0, done.stdout
    assert "3 passed" in done.stdout
    assert "ended early" not in done.stdout
