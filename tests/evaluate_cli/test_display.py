"""What the terminal tables print: an undefined score is n/a with a footnote saying why, in run's summary and
in the table of a harness's re-scored outputs alike (one formatter)."""

from __future__ import annotations

from scrambled_bench.evaluate_cli.display import console, print_config_scores
from scrambled_bench.harness.results import FRACTION, units

UNDEFINED = "original and substituted accuracy are equal (0.5000): the original context gained nothing"


def harness_scores(configs: dict) -> dict:
    """A harness's re-scored outputs, as ``score --from-lm-eval`` gives them (fractions)."""
    return {
        "source": "lm-eval",
        "folder": "out",
        "reader": "careful",
        "units": units(FRACTION),
        "configs": configs,
    }


def test_harness_scores_footnote_an_undefined_rpg(capsys) -> None:
    document = harness_scores(
        {
            "scrqa/dream/kfl": {
                "n_scored": 4,
                "unparsed": 0,
                "accuracy": {"value": 0.5, "ci": None},
                "relative_performance_gain": {"value": None, "ci": None, "undefined": UNDEFINED},
            }
        }
    )
    print_config_scores(document, console())
    out = capsys.readouterr().out
    assert "50.0" in out and "n/a [1]" in out  # percent in the table; the reason below it
    assert f"[1] RPG undefined: {UNDEFINED}" in out


def test_an_rpg_over_an_original_accuracy_no_better_than_chance_is_footnoted(capsys) -> None:
    """The issue's case: 23.3 % on a 4-way task, whose interval holds chance (25 %): RPG is shown with a
    footnote that it means nothing there; a clearly better original accuracy gets none."""
    near = {"value": 1 / 3, "ci": [-1.0, 2.18], "original_accuracy": 7 / 30, "substituted_accuracy": 0.2,
            "chance": 0.25, "original_accuracy_ci": [0.118, 0.409]}  # fmt: skip
    clear = {**near, "original_accuracy": 0.9, "original_accuracy_ci": [0.74, 0.97]}
    document = harness_scores(
        {
            "scrqa/dream/kfl": {
                "n_scored": 30,
                "unparsed": 0,
                "accuracy": {"value": 0.2},
                "relative_performance_gain": near,
            },
            "scrqa/dream/rs50": {
                "n_scored": 30,
                "unparsed": 0,
                "accuracy": {"value": 0.8},
                "relative_performance_gain": clear,
            },
        }
    )
    print_config_scores(document, console())
    out = capsys.readouterr().out
    assert "33.3 [1]" in out and "[2]" not in out
    assert "[1] RPG not meaningful: original accuracy 23.3% [11.8%, 40.9%] contains chance (25.0%)" in out
