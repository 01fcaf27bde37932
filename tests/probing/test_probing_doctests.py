"""Every runnable example in the probing package's docstrings is a test (the suite-wide doctest walk covers
the builder, metrics and CLI packages only)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

pytest.importorskip(
    "sklearn", reason="the probing examples need scikit-learn (pip install 'scrambled-bench[probe]')"
)
pytest.importorskip(
    "safetensors", reason="the probing examples need safetensors (pip install 'scrambled-bench[probe]')"
)
pytest.importorskip("torch", reason="the probing examples need torch (pip install 'scrambled-bench[local]')")

import scrambled_bench.probing

MODULES = sorted(
    ["scrambled_bench.probing"]
    + [
        info.name
        for info in pkgutil.walk_packages(scrambled_bench.probing.__path__, prefix="scrambled_bench.probing.")
    ]
)


def test_every_probing_module_is_walked() -> None:
    for name in ("data", "features", "probes", "figures", "run", "report"):
        assert f"scrambled_bench.probing.{name}" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_probing_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
