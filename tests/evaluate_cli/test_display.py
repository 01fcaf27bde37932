"""What the terminal tables print: an undefined score is n/a with a footnote saying why, in run's summary and
in the table of a harness's re-scored outputs alike (one formatter)."""

from __future__ import annotations

from scrambled_bench.evaluate_cli.display import console, print_config_scores
from scrambled_bench.harness.results import FRACTION, units

UNDEFINED = "original and substituted accuracy are equal (0.5000): the original context gained nothing"


def test_harness_scores_footnote_an_undefined_rpg(capsys) -> None:
    document = {
        "source": "lm-eval",
        "folder": "out",
        "reader": "careful",
        "units": units(FRACTION),
        "configs": {
            "scrqa/dream/kfl": {
                "n_scored": 4,
                "unparsed": 0,
                "accuracy": {"value": 0.5, "ci": None},
                "relative_performance_gain": {"value": None, "ci": None, "undefined": UNDEFINED},
            }
        },
    }
    print_config_scores(document, console())
    out = capsys.readouterr().out
    assert "50.0" in out and "n/a [1]" in out  # percent in the table; the reason below it
    assert f"[1] RPG undefined: {UNDEFINED}" in out
