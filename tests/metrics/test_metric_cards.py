"""The metric cards' examples and the modules' docstring examples run as doctests."""

from __future__ import annotations

import doctest
import re
import sys
from pathlib import Path

import pytest

import scrambled_bench.metrics as metrics_package
from scrambled_bench.metrics import METRIC_NAMES, load, paper_reproduction, readers

REPO = Path(__file__).resolve().parents[2]
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
CARD_SECTIONS = (
    "# Metric Card for",
    "## Metric Description",
    "## How to Use",
    "### Inputs",
    "### Output Values",
    "### Examples",
    "## Limitations and Bias",
    "## Citation",
)


def _run_doctest(text: str, name: str) -> doctest.TestResults:
    test = doctest.DocTestParser().get_doctest(text, {}, name, name, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    return runner.summarize(verbose=False)


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_card_examples_run(name, monkeypatch):
    monkeypatch.chdir(REPO)  # the cards load "metrics/<name>", as a user in a checkout does
    card = (REPO / "metrics" / name / "README.md").read_text(encoding="utf-8")
    examples = "\n".join(PYTHON_BLOCK.findall(card))
    results = _run_doctest(examples, f"metrics/{name}/README.md")
    assert results.attempted >= 3
    assert results.failed == 0


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_card_has_the_evaluate_layout(name):
    card = (REPO / "metrics" / name / "README.md").read_text(encoding="utf-8")
    header = card.split("---")[1]
    for key in ("title:", "sdk: gradio", "app_file: app.py", "- evaluate", "- metric", "description:"):
        assert key in header, key
    positions = [card.index(section) for section in CARD_SECTIONS]
    assert positions == sorted(positions)
    assert "@inproceedings{cao-etal-2023-unnatural" in card


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_module_docstring_examples_run(name, monkeypatch):
    monkeypatch.chdir(REPO)
    module = sys.modules[type(load(name)).__module__]
    results = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert results.attempted >= 3 and results.failed == 0


@pytest.mark.parametrize("module", [readers, paper_reproduction, metrics_package])
def test_plain_module_docstring_examples_run(module):
    results = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert results.attempted >= 2 and results.failed == 0
