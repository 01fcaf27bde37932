"""Suites: the paper's grid, the letters grid, the quick default and user selections."""

from __future__ import annotations

import pytest

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.suites import SUITES, default_limit, resolve_configs


def _names(configs) -> list[str]:
    return [c.name for c in configs]


def test_paper_suite_is_the_papers_grid() -> None:
    configs = resolve_configs("paper")
    by_task: dict[str, set] = {}
    for config in configs:
        by_task.setdefault((config.task, config.dataset), set()).add(
            (config.scramble_type, config.exemplar_rate)
        )
    scrrec = {(t, None) for t in ("rs20", "rs50", "rs100", "kf", "kfl")}
    scrqa = {(t, None) for t in ("original", "rs20", "rs50", "rs100", "kf", "kfl", "sub")}
    assert by_task[("scrrec-zero-shot", "realtimeqa")] == scrrec
    assert by_task[("scrrec-few-shot", "realtimeqa")] == scrrec
    assert by_task[("scrqa", "realtimeqa")] == scrqa
    assert by_task[("scrqa", "dream")] == scrqa
    assert by_task[("aqua-cot", "aqua")] == {
        (t, r) for t in ("original", "rs20", "rs50", "rs100") for r in (0, 20, 50, 100)
    }
    assert len(configs) == 10 + 14 + 16
    assert default_limit("paper") is None


def test_letters_suite_adds_appendix_a2_types() -> None:
    paper, letters = set(_names(resolve_configs("paper"))), set(_names(resolve_configs("letters")))
    added = letters - paper
    assert {name.rsplit("/", 1)[1] for name in added} == {"kfkr1", "klkr1", "kr2"}
    assert "scrqa/dream/klkr1" in added and "scrrec-few-shot/realtimeqa/kr2" in added


def test_quick_suite_is_small_and_has_rpg_anchors() -> None:
    names = _names(resolve_configs("quick"))
    assert "scrqa/realtimeqa/original" in names and "scrqa/realtimeqa/sub" in names
    assert len(names) * default_limit("quick") <= 40
    assert SUITES["quick"].default_limit == 8


def test_user_types_regrid_the_suite_and_scrqa_gets_its_anchors() -> None:
    names = _names(resolve_configs("paper", datasets=["dream"], types=["kr2"]))
    assert names == ["scrqa/dream/original", "scrqa/dream/kr2", "scrqa/dream/sub"]
    names = _names(resolve_configs("quick", tasks=["scrrec-few-shot"], types=["rs30,rs40"]))
    assert names == ["scrrec-few-shot/realtimeqa/rs30", "scrrec-few-shot/realtimeqa/rs40"]


def test_exemplar_rates_replace_aquas() -> None:
    names = _names(resolve_configs("paper", tasks=["aqua-cot"], exemplar_rates=[100]))
    assert names == [f"aqua-cot/aqua/{t}/exemplars-100" for t in ("original", "rs20", "rs50", "rs100")]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"suite": "nope"}, "unknown suite 'nope'"),
        ({"datasets": ["squad"]}, "unknown dataset 'squad'"),
        ({"types": ["rs5x"]}, "unknown scramble type 'rs5x'"),
        ({"tasks": ["translate"]}, "unknown task 'translate'"),
        ({"exemplar_rates": [30]}, "unknown exemplar rate 30"),
        ({"datasets": ["aqua"]}, "leaves nothing to run"),
        # the quick suite has no AQuA config: the rate used to be dropped without a word
        (
            {"exemplar_rates": [20]},
            "--exemplar-rate applies to the aqua-cot task, which this selection leaves out",
        ),
        (
            {"suite": "paper", "datasets": ["dream"], "exemplar_rates": [0]},
            "--exemplar-rate applies to the aqua-cot",
        ),
    ],
)
def test_bad_selections_are_one_line_errors(kwargs: dict, message: str) -> None:
    suite = kwargs.pop("suite", "quick")
    with pytest.raises(ScrambledBenchError, match=message) as caught:
        resolve_configs(suite, **kwargs)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("options", "suite", "types"),
    [
        # --tasks and --types name the whole grid: no suite shaped it
        (
            {"tasks": ["scrqa"], "datasets": ["dream"], "types": ["original,rs50", "sub"]},
            None,
            ["original", "rs50", "sub"],
        ),
        # --types alone re-grids the quick suite's own tasks and datasets
        ({"types": ["rs50"]}, "quick", ["rs50", "original", "sub"]),
    ],
)
def test_config_json_records_what_ran(options: dict, suite: str | None, types: list[str]) -> None:
    """config.json's selection: the suite only where it shaped the selection, and the names split, never one
    joined string (the run's settings record them split too)."""
    from pathlib import Path

    from scrambled_bench.evaluation.evaluate import plan_run
    from scrambled_bench.evaluation.settings import RunSettings

    settings = RunSettings(
        data=str(Path(__file__).parents[1] / "fixtures" / "tiny_build"), limit=1, **options
    )
    selection = plan_run(settings).selection()
    assert selection["suite"] == settings.suite_in_force == suite
    assert selection["types"] == types and selection["limit"] == 1
    assert settings.scrubbed()["types"] == (
        None if "types" not in options else [t for v in options["types"] for t in v.split(",")]
    )
