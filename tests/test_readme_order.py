"""The README's steps in order: after the Quick start, `./scrambled_bench` (the data folder) sits in the
repository root, and the test suite's subprocesses start Python there (``python -c``/``-m`` put the working
directory first on ``sys.path``). The package must still import: the strict editable install is a real
``sys.path`` entry, so a data folder of the same name cannot shadow it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def build_in_the_repository_root(source_mirror: Path):
    """``./scrambled_bench`` in the repository root, as the Quick start leaves it (a small real build; an
    existing one is used as it is and kept)."""
    folder = ROOT / "scrambled_bench"
    made = not folder.exists()
    if made:
        subprocess.run(
            [str(Path(sys.executable).with_name("scrambled-bench")), "build", "--out", str(folder), "--sources", "aqua",
             "--types", "original", "--source-dir", str(source_mirror)],
            check=True, capture_output=True, timeout=300,
        )  # fmt: skip
    yield folder
    if made:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize(
    "argv",
    [
        ["-c", "import scrambled_bench; print(scrambled_bench.__version__)"],
        ["-m", "scrambled_bench.evaluate_cli.main", "--version"],
        ["-c", "from scrambled_bench.builder.build import build_dataset; print('ok')"],
    ],
)
def test_the_package_imports_from_the_root_beside_its_data_folder(build_in_the_repository_root, argv) -> None:
    assert (build_in_the_repository_root / "manifest.json").is_file()
    result = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "ImportError" not in result.stderr and result.stdout.strip()
