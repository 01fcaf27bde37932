"""Every figure kind as a reviewer would print it, checked from the SVG it is saved as: the axes cover at
least 55% of the canvas, no legend overlaps an axes, no two legend entries share color and marker. Drawn
from real run folders (and a probe's result), without the paper's models, with some named, and with all
nineteen (a band and a median); then what each kind promises: runs dodged, the size figure's points with
a value named on one x range; and the edge cases: a run with no rs100 config (no size figure, and one line
saying why) and a run whose RR is -1,400% (the axis keeps the paper's range, the value is an arrow at the
edge with the number beside it)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from figure_checks import read_layout
from hypothesis import given
from hypothesis import strategies as st
from report_runs import PAPER_GRID, RECOVERY, skilled_run, write_run

from scrambled_bench.report import label_runs, load_run, plot_figures, select_paper_models
from scrambled_bench.report.params import ParameterCount

COVERAGE = 0.55
SIZES = {
    "big-model": ParameterCount(7_000_000_000, "--params"),
    "small-model": ParameterCount(10**9, "--params"),
}
SELECTIONS = {
    "none": None,
    # the paper's models that clashed before: GPT-4 and MPT-30b were both grey squares; the GPT models share
    # a family and an undisclosed size, Llama-2-7b and its chat model a size, Falcon-180b's two a size
    "named": "gpt-4,gpt-3.5-turbo,text-davinci-003,llama-2-7b,llama-2-7b-chat,mpt-30b,falcon-180b,falcon-180b-chat",
    "all": "all",
}
KINDS = {"scrrec", "scrqa", "dream_categories", "aqua", "scale", "letters"}


@pytest.fixture(scope="module")
def plotted(runs: list, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[Path]]]:
    """Every figure kind drawn once per selection of the paper's models, with the runs' sizes: the folder and
    the files written. The layout checks and the paper-band checks read the same files (drawing them is most
    of this module's time); ``sizes`` changes only the size figure, which the band checks do not read."""
    from scrambled_bench.probing.report import plot_probe

    probe = plot_probe(probe_result(), tmp_path_factory.mktemp("probe"))  # the same for every selection
    drawn = {}
    for selection, models in SELECTIONS.items():
        folder = tmp_path_factory.mktemp(f"figures-{selection}")
        drawn[selection] = (
            folder,
            plot_figures(runs, folder, paper=select_paper_models(models), sizes=SIZES) + probe,
        )
    return drawn


def probe_result():
    """A probe's result shaped like the run of docs/probing.md: seven settings, 31 layers, intervals per layer."""
    from scrambled_bench.probing.probes import LayerResult, ProbeResult, Score

    rng = random.Random(0)
    types = ("original", "rs20", "rs50", "rs100", "kf", "kfl", "sub")
    layers = []
    for layer in range(31):
        scores = {}
        for scramble_type in types:
            accuracy = min(0.9, max(0.1, 0.33 + 0.15 * rng.random()))
            scores[scramble_type] = Score(accuracy, accuracy - 0.12, accuracy + 0.12, 64)
        layers.append(LayerResult(layer, 1.0, scores))
    info = {"train": {"questions_per_type": 128}, "eval": {"questions_per_type": 64}}
    return ProbeResult("SmolLM2-135M-Instruct.Q4_1.gguf", types, layers, 1 / 3, info)


@pytest.mark.parametrize("selection", SELECTIONS)
def test_every_figure_kind_covers_its_canvas_keeps_legends_clear_and_tells_series_apart(
    plotted: dict[str, tuple[Path, list[Path]]], selection: str
) -> None:
    _, written = plotted[selection]
    svgs = [path for path in written if path.suffix == ".svg"]
    assert {path.stem for path in svgs} == KINDS | {"figure7", "figure8"}
    for path in svgs:
        layout = read_layout(path)
        assert layout.coverage >= COVERAGE, f"{path.stem}: the axes cover {layout.coverage:.0%} of the canvas"
        assert not layout.legend_overlaps(), f"{path.stem}: a legend overlaps an axes"
        assert not layout.shared_keys(), f"{path.stem}: drawn alike: {layout.shared_keys()}"
        assert layout.keys, f"{path.stem}: no legend"


def test_the_paper_models_are_a_band_by_default_and_distinct_series_when_named(
    plotted: dict[str, tuple[Path, list[Path]]],
) -> None:
    (every, _), (named_folder, _) = plotted["all"], plotted["named"]
    for name in ("scrqa", "scrrec", "letters"):
        band = dict(read_layout(every / f"{name}.svg").keys)
        assert {"paper (Cao et al. (2023)): range", "paper: median"} <= set(band), name
        assert not any(label.endswith("(paper)") for label in band), name
        named = read_layout(named_folder / f"{name}.svg").keys
        labels = [label for label, _ in named]
        assert "GPT-4 (paper)" in labels and "MPT-30b (paper)" in labels and "paper: median" not in labels
        # runs: filled circles, each its own color; the paper's models never a run's circle
        markers = {label: key for label, key in named}
        assert markers["big-model"][1] == markers["small-model"][1] != markers["GPT-4 (paper)"][1]
        assert markers["big-model"][0] != markers["small-model"][0]


@given(st.sets(st.sampled_from([m.name.lower() for m in select_paper_models("all")]), min_size=1))
def test_no_selection_of_the_paper_models_repeats_a_color_and_marker(names: set[str]) -> None:
    from scrambled_bench.report.figures.common import paper_look

    looks = [(paper_look(m)["color"], paper_look(m)["marker"]) for m in select_paper_models(",".join(names))]
    assert len(set(looks)) == len(looks) and all(marker != "o" for _, marker in looks)


def test_runs_at_the_same_type_are_dodged(runs: list) -> None:
    import matplotlib.pyplot as plt

    from scrambled_bench.report.figures import build_figures

    [scrqa] = [f for f in build_figures(runs) if f.name == "scrqa"]
    for ax in scrqa.figure.axes:
        by_type: dict[int, set[float]] = {}
        for line in ax.lines:
            if line.get_marker() == "o":  # the runs' points (no paper model drawn)
                for x in line.get_xdata():
                    by_type.setdefault(round(x), set()).add(round(float(x), 6))
        shared = [xs for xs in by_type.values() if len(xs) > 1]
        assert shared, "both runs have values at some type"
        assert all(len(xs) == 2 for xs in shared)  # two runs: two distinct x at each shared type
    plt.close("all")  # every figure build_figures opened, not only the one looked at


def test_the_size_figure_names_every_point_with_a_value_on_one_x_range(runs: list) -> None:
    import matplotlib.pyplot as plt

    from scrambled_bench.evaluation.tasks import TASKS
    from scrambled_bench.report.figures import SCALE_TYPE, build_figures
    from scrambled_bench.report.paper import models_in, paper_cell

    paper = select_paper_models("all")
    [scale] = [f for f in build_figures(runs, paper=paper, sizes=SIZES) if f.name == "scale"]
    axes = [ax for ax in scale.figure.axes if ax.get_visible()]
    assert len({ax.get_xlim() for ax in axes}) == 1
    panels = {ax.get_title(): ax for ax in axes}
    below_zero = 0
    for task in TASKS.values():
        for dataset in task.datasets:
            title = task.view.panel_titles[dataset]
            if title not in panels:
                continue
            table = task.view.paper_tables.get(dataset)
            metric = task.view.headline or task.metrics[-1]
            names = {text.get_text() for text in panels[title].texts}
            for model in models_in(table, paper):
                cell = paper_cell(table, model, metric.label, SCALE_TYPE)
                if cell is None or model.parameters is None:
                    continue
                below_zero += cell.below_zero
                # a "< 0" has no value to name: fifteen names at 0 would pile up (listed under the figure)
                assert (model.name in names) != cell.below_zero, (title, model.name)
                assert not any(name.endswith("(< 0)") for name in names)
    assert below_zero  # ScrRec's RR has "< 0" points, drawn unnamed
    notes = " ".join(text.get_text() for text in scale.figure.texts).replace("\n", " ")
    assert "below 0 in the paper (drawn at 0, not named): " in notes
    plt.close("all")


def no_rs100_run(root: Path) -> Path:
    """A run of the paper's ScrRec and ScrQA grid without any rs100 config (what `--types rs20,rs50,kf...`
    gives; AQuA, whose rates are the exemplars' and the question's, is left out)."""
    configs = [
        config for config in PAPER_GRID if config.scramble_type != "rs100" and config.task != "aqua-cot"
    ]
    return skilled_run(root / "no-rs100", "no-rs100-model", 0.7, configs=configs)


def outlier_run(root: Path) -> Path:
    """A run whose ScrRec outputs are the scrambled text and a long tail of junk: an RR of about -1,400%
    (the recovered text is 14 times further from the original than the scrambled text was)."""
    configs = [config for config in PAPER_GRID if config.task.startswith("scrrec")]
    outputs = {}
    for config in configs:
        rows = [
            {
                "id": f"r{i}",
                "original": f"{o} [{config.scramble_type} {i}]",
                "scrambled": f"{s} [{config.scramble_type} {i}]",
            }
            for i, (o, s) in enumerate(RECOVERY)
        ]
        # the scrambled text and 48 characters of junk: 14 times as many edits from the original as it had
        outputs[config] = [f"{row['scrambled']} {'x' * 48}" for row in rows]
    return write_run(root / "outlier", "outlier-model", outputs)


def test_a_run_without_rs100_draws_no_size_figure_and_says_why(tmp_path: Path) -> None:
    [run] = label_runs([load_run(no_rs100_run(tmp_path))])
    told: list[str] = []
    written = plot_figures(
        [run], tmp_path / "figures", paper=select_paper_models("all"), sizes=SIZES, notify=told.append
    )
    assert "scale" not in {path.stem for path in written}
    assert told == [
        "scale.png not drawn: no run has an rs100 config (the figure plots rs100 against parameter count)"
    ]
    for path in written:
        if path.suffix == ".svg":
            layout = read_layout(path)
            assert layout.coverage >= COVERAGE and not layout.legend_overlaps(), path.stem


def test_an_outlier_is_clipped_at_the_edge_with_its_value_not_stretching_the_axis(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    from scrambled_bench.report.figures import build_figures
    from scrambled_bench.report.figures.common import CLIPPED_NOTE, paper_range

    [run] = label_runs([load_run(outlier_run(tmp_path))])
    rr = [entry["recovery_rate"]["value"] for entry in run.results["configs"].values()]
    assert all(round(value) == -1400 for value in rr), rr  # percent
    built = {one.name: one for one in build_figures([run], paper=select_paper_models("all"))}
    figure = built["scrrec"].figure
    low, high = paper_range("table4_scrrec_realtimeqa_zeroshot", "RR")
    rr_axes = [ax for ax in figure.axes if ax.get_visible() and ax.get_ylabel().startswith("RR")]
    assert rr_axes
    for ax in rr_axes:
        bottom, top = ax.get_ylim()
        # the paper's range is in view, and the axis goes no further than the paper's own values need
        assert bottom <= low and top >= high and bottom > low - (high - low) / 2, (bottom, top)
        arrows = [text for text in ax.texts if text.arrow_patch is not None]
        # each clipped value written in full beside its arrow
        assert arrows and {text.get_text() for text in arrows} <= {f"{value:,.1f}" for value in rr}
    notes = " ".join(text.get_text() for text in figure.texts).replace("\n", " ")
    assert " ".join(CLIPPED_NOTE.split()[:6]) in notes
    # nothing else to keep in view (no paper, no other run): the axis shows the values as they are
    [alone] = [one.figure for one in build_figures([run]) if one.name == "scrrec"]
    assert all(
        ax.get_ylim()[0] < -1300 for ax in alone.axes if ax.get_visible() and ax.get_ylabel().startswith("RR")
    )
    plt.close("all")
    written = plot_figures([run], tmp_path / "figures", paper=select_paper_models("all"))
    for path in written:
        if path.suffix == ".svg":
            layout = read_layout(path)
            assert not layout.legend_overlaps(), path.stem
    assert read_layout(tmp_path / "figures" / "scrrec.svg").coverage >= COVERAGE
