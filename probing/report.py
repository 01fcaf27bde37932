"""What ``scrambled-bench report`` shows of a probe run folder: a table as data and Figures 7 and 8.

- :func:`load_probe`: a run folder's (or a ``probe.json``'s) :class:`ProbeResult`, ``None`` where the folder
  holds no probe;
- :func:`probe_table`: accuracy per layer and setting as a report table;
- :func:`plot_probe`: Figures 7 and 8 as PNG and SVG;
- :func:`probe_svgs`: the SVG figures a probe run wrote, for the HTML report;
- :class:`ProbeRun`: all three for one folder, as the report takes a run folder of another kind than an
  evaluation run (the command hands these to the report: the report does not import probing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.io import read_json
from scrambled_bench.probing.figures import FIGURE7, FIGURE8, plot_figure7, plot_figure8, type_label
from scrambled_bench.probing.probes import ProbeResult
from scrambled_bench.tables import ReportTable

RESULT_FILE = "probe.json"


def load_probe(run_dir: str | Path) -> ProbeResult | None:
    """The probe in ``run_dir`` (a folder or its ``probe.json``); ``None`` where there is none.

    A ``probe.json`` that cannot be read as a probe is a one-line :class:`ScrambledBenchError`.

    >>> import tempfile
    >>> load_probe(tempfile.mkdtemp()) is None
    True
    """
    path = Path(run_dir)
    if path.is_dir():
        path = path / RESULT_FILE
    if not path.is_file():
        return None
    document = read_json(path)
    try:
        return ProbeResult.from_dict(document)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ScrambledBenchError(f"{path}: not a readable probe result ({exc})") from None


@dataclass(frozen=True)
class ProbeRun:
    """A probe run folder as the report shows it beside evaluation runs: its table, its figures inline
    (HTML) and as files (``--plot``). ``made_by`` names the command whose settings its intervals keep."""

    folder: Path
    result: ProbeResult
    made_by: str = "probe"

    def table(self, *, ci: bool) -> ReportTable:
        return probe_table(self.result, ci=ci)

    def svgs(self) -> list[tuple[str, str, str]]:
        return probe_svgs(self.folder, self.result)

    def plot(self, out_dir: Path) -> list[Path]:
        return plot_probe(self.result, Path(out_dir) / self.folder.name)


def probe_runs(folders: Sequence[str | Path]) -> tuple[list[ProbeRun], list[Path]]:
    """:func:`split_probe_runs` as :class:`ProbeRun` records, and the other folders."""
    probes, runs = split_probe_runs(folders)
    return [ProbeRun(folder, result) for folder, result in probes.items()], runs


def split_probe_runs(folders: Sequence[str | Path]) -> tuple[dict[Path, ProbeResult], list[Path]]:
    """The probe run folders among ``folders`` (those holding a ``probe.json``), with their results, and
    the other folders, for the report to read as evaluation runs.

    >>> import tempfile
    >>> probes, runs = split_probe_runs([tempfile.gettempdir()])
    >>> probes, len(runs)
    ({}, 1)
    """
    probes: dict[Path, ProbeResult] = {}
    runs: list[Path] = []
    for folder in map(Path, folders):
        result = load_probe(folder)
        if result is None:
            runs.append(folder)
        else:
            probes[folder] = result
    return probes, runs


def _cell(accuracy: float, low: float, high: float, *, ci: bool) -> str:
    text = f"{accuracy * 100:.1f}"
    return f"{text} [{low * 100:.1f}, {high * 100:.1f}]" if ci else text


def probe_table(result: ProbeResult, *, ci: bool = True) -> ReportTable:
    """Accuracy % per layer (rows) and setting (columns), the training accuracy beside them.

    >>> from scrambled_bench.probing.probes import LayerResult, Score
    >>> layer = LayerResult(0, 0.5, {"original": Score(0.4, 0.3, 0.5, 9)})
    >>> r = ProbeResult("m", ("original",), [layer], 1 / 3)
    >>> table = probe_table(r)
    >>> table.columns, table.rows
    (['layer', 'Ori', 'train'], [['0 (embeddings)', '40.0 [30.0, 50.0]', '50.0']])
    """
    evaluation = result.info.get("eval", {})
    train = result.info.get("train", {})
    title = (
        f"Hidden-state probe on DREAM (cf. Figure 7): accuracy % per layer, {result.model}; "
        f"chance {result.chance * 100:.1f}%"
    )
    if evaluation.get("questions_per_type") is not None and train.get("questions_per_type") is not None:
        title += (
            f"; trained on {train['questions_per_type']} questions x {len(result.types)} settings, "
            f"evaluated on {evaluation['questions_per_type']} per setting"
        )
    rows = [
        [
            f"{layer.layer} (embeddings)" if layer.layer == 0 else str(layer.layer),
            *(
                _cell(layer.scores[t].accuracy, layer.scores[t].low, layer.scores[t].high, ci=ci)
                for t in result.types
            ),
            f"{layer.train_accuracy * 100:.1f}",
        ]
        for layer in result.layers
    ]
    return ReportTable(
        key=f"probe-{result.model}",
        title=title,
        columns=["layer", *(type_label(t) for t in result.types), "train"],
        rows=rows,
    )


def plot_probe(result: ProbeResult, out_dir: str | Path) -> list[Path]:
    """Figures 7 and 8 into ``out_dir`` (``figure7.png``/``.svg``, ``figure8.png``/``.svg``); the files."""
    out = Path(out_dir)
    return [*plot_figure7(result, out), *plot_figure8(result, out)]


FIGURE_TITLES = {
    FIGURE7: "Probe accuracy per layer and setting (cf. Figure 7)",
    FIGURE8: "Probe accuracy gained per layer (cf. Figure 8)",
}


def probe_svgs(run_dir: str | Path, result: ProbeResult) -> list[tuple[str, str, str]]:
    """``(name, title, svg)`` of each figure the probe run wrote into ``run_dir`` (the report's HTML page
    inlines them); the XML prolog is cut, as an inline SVG has none."""
    figures = []
    for name, title in FIGURE_TITLES.items():
        path = Path(run_dir) / f"{name}.svg"
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            figures.append((f"probe-{name}", f"{title}: {result.model}", text[text.index("<svg") :]))
    return figures
