"""The runnable examples in the builder's docstrings are tests too."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "scrambled_bench.builder.scrambler",
    "scrambled_bench.builder.build",
    "scrambled_bench.builder.card",
    "scrambled_bench.builder.hub",
    "scrambled_bench.builder.recipes",
    "scrambled_bench.builder.scramble.variants",
    "scrambled_bench.builder.scramble.sources",
    "scrambled_bench.builder.scramble.columns",
    "scrambled_bench.builder.scramble.shards",
    "scrambled_bench.builder.scramble.card",
    "scrambled_bench.builder.scramble.pipeline",
    "scrambled_bench.builder.datatrove_step",
    "scrambled_bench.builder.sources.fetch",
    "scrambled_bench.builder.sources.common",
    "scrambled_bench.builder.sources.realtimeqa",
    "scrambled_bench.builder.sources.dream",
    "scrambled_bench.builder.sources.aqua",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
