"""Every runnable example in the package's docstrings is a test (the builder's, metrics', CLI's and engine's)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import scrambled_bench


def _all_modules() -> list[str]:
    names = []
    # walk_packages imports every package it finds; the deprecated alias of scrambled_bench.evaluation (no
    # examples of its own: tests/test_harness_alias.py) warns when imported, so its name is left out first
    for info in pkgutil.iter_modules(scrambled_bench.__path__, prefix="scrambled_bench."):
        if info.name == "scrambled_bench.harness":
            continue
        names.append(info.name)
        if info.ispkg:
            package = importlib.import_module(info.name)
            names += [sub.name for sub in pkgutil.walk_packages(package.__path__, prefix=f"{info.name}.")]
    # walk_packages follows __path__, which holds only src/scrambled_bench; the mapped folders are
    # sub-packages of their own, so walk them too
    for package_name in (
        "scrambled_bench.builder",
        "scrambled_bench.metrics",
        "scrambled_bench.evaluation",
        "scrambled_bench.evaluate_cli",
        "scrambled_bench.probing",
    ):
        package = importlib.import_module(package_name)
        names.append(package_name)
        names += [info.name for info in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}.")]
    return sorted(set(names))


MODULES = _all_modules()
#: modules that exist to be imported by an optional harness (the `harness` extra); skipped where it is absent
OPTIONAL = {
    "scrambled_bench.integrations.lighteval.bench": "lighteval",
    "scrambled_bench.integrations.lighteval.cli": "lighteval",
    "scrambled_bench.integrations.lighteval.tasks_source": "lighteval",
    "scrambled_bench.integrations.inspect.bench": "inspect_ai",
    "scrambled_bench.integrations.inspect.scrambled": "inspect_ai",
}


def test_the_walk_finds_every_part_of_the_package():
    for expected in (
        "scrambled_bench.builder.scrambler",
        "scrambled_bench.builder.sources.dream",
        "scrambled_bench.metrics.readers",
        "scrambled_bench.evaluation.engine",
        "scrambled_bench.evaluation.backends.base",
        "scrambled_bench.io",
    ):
        assert expected in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    if name in OPTIONAL:
        pytest.importorskip(
            OPTIONAL[name], reason=f"{name} needs the harness extra: pip install -e '.[harness]'"
        )
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_the_package_has_examples_to_run():
    # counted, not run: test_docstring_examples_run runs every one of them (it ran them all a second time here)
    finder = doctest.DocTestFinder()
    examples = sum(
        len(test.examples)
        for name in MODULES
        if name not in OPTIONAL
        for test in finder.find(importlib.import_module(name))
    )
    assert examples >= 100
