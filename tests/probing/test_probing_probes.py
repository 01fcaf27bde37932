"""The probes on synthetic features with a known answer, their Wilson intervals, the result document, the figures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrambled_bench.probing.probes import (
    LayerData,
    LayerResult,
    ProbeResult,
    Score,
    fit_layer,
    fit_layer_torch,
    fit_probes,
    score_of,
)

pytestmark = pytest.mark.usefixtures("probe_fitting")

CHANCE = 1 / 3


def planted_label_features(
    n_samples: int,
    hidden_size: int,
    n_layers: int,
    planted_layer: int,
    *,
    strength: float = 3.0,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic ``[layers, n, hidden]`` features whose labels (three classes) show in ``planted_layer`` only.

    The check that the probe finds what is there and nothing else: the label shifts the mean of one
    direction per class in that layer; every other layer is independent noise.

    >>> features, labels = planted_label_features(30, 8, 3, 1)
    >>> features.shape, labels.shape
    ((3, 30, 8), (30,))
    """
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, size=n_samples)
    features = rng.normal(size=(n_layers, n_samples, hidden_size)).astype(np.float32)
    directions = np.eye(3, hidden_size, dtype=np.float32) * strength
    features[planted_layer] += directions[labels]
    return features, labels


def _loader(features: np.ndarray, labels: np.ndarray, n_train: int):
    def load(layer: int) -> LayerData:
        x = features[layer]
        return LayerData(x[:n_train], labels[:n_train], {"planted": (x[n_train:], labels[n_train:])})

    return load


def test_a_label_planted_in_one_layer_is_found_there_and_nowhere_else() -> None:
    n_layers, planted = 6, 3
    features, labels = planted_label_features(900, 32, n_layers, planted, seed=7)
    results = fit_probes(range(n_layers), _loader(features, labels, 600), seed=0)

    assert [r.layer for r in results] == list(range(n_layers))
    by_layer = {r.layer: r.scores["planted"] for r in results}
    assert by_layer[planted].accuracy > 0.9
    assert by_layer[planted].low > 0.85
    for layer, score in by_layer.items():
        if layer == planted:
            continue
        # 300 evaluation questions: chance +- 3 standard deviations (about 0.08)
        assert abs(score.accuracy - CHANCE) < 0.09, (layer, score)
        assert score.low < CHANCE + 0.05 and score.n == 300


def test_standardisation_is_fitted_on_the_training_features_only() -> None:
    # evaluation features far from the training ones: a scaler refitted on them would hide the shift and
    # score perfectly; one fitted on training data only pushes every shifted row into one class
    features, labels = planted_label_features(600, 8, 1, 0, strength=4.0, seed=1)
    x = features[0]
    shifted = x[300:] + 1000.0
    _, correct, _ = fit_layer(
        LayerData(
            x[:300], labels[:300], {"same": (x[300:], labels[300:]), "shifted": (shifted, labels[300:])}
        )
    )
    assert correct["same"].mean() > 0.9
    assert correct["shifted"].mean() < 0.6


@pytest.mark.parametrize("strength", [0.3, 1.0, 3.0])
def test_the_torch_fitter_agrees_with_scikit_learn_on_the_same_features(strength: float) -> None:
    """The same standardisation and objective: the two fitters' accuracies within a point, and their
    predictions the same on nearly every question, from a weak signal (near chance) to a clear one."""
    pytest.importorskip("torch", reason="the torch fitter needs torch (pip install 'scrambled-bench[local]')")
    features, labels = planted_label_features(1500, 64, 1, 0, strength=strength, seed=11)
    x = features[0] * 7.0 + 3.0  # unstandardised, as hidden states are
    data = LayerData(x[:1000], labels[:1000], {"held-out": (x[1000:], labels[1000:])})
    sk_train, sk_correct, sk_converged = fit_layer(data)
    torch_train, torch_correct, torch_converged = fit_layer_torch(data)
    assert sk_converged and torch_converged
    assert abs(sk_train - torch_train) <= 0.01
    assert abs(sk_correct["held-out"].mean() - torch_correct["held-out"].mean()) <= 0.01
    assert (sk_correct["held-out"] == torch_correct["held-out"]).mean() >= 0.98


def test_fit_probes_with_the_torch_fitter_finds_the_planted_layer() -> None:
    pytest.importorskip("torch", reason="the torch fitter needs torch (pip install 'scrambled-bench[local]')")
    features, labels = planted_label_features(600, 16, 3, 2, seed=5)
    results = fit_probes(range(3), _loader(features, labels, 400), fitter="torch", device="cpu")
    assert [r.scores["planted"].accuracy > 0.9 for r in results] == [False, False, True]
    again = fit_probes(range(3), _loader(features, labels, 400), fitter="torch", device="cpu")
    assert [r.scores for r in again] == [r.scores for r in results]


def test_probes_and_intervals_are_deterministic() -> None:
    features, labels = planted_label_features(300, 16, 2, 1, strength=1.0, seed=3)
    first = fit_probes([0, 1], _loader(features, labels, 200), seed=5)
    second = fit_probes([0, 1], _loader(features, labels, 200), seed=5)
    assert [r.scores for r in first] == [r.scores for r in second]
    correct = np.arange(50) % 3 == 0
    score = score_of(correct, confidence_level=0.9)
    assert score.low < correct.mean() < score.high


@given(n=st.integers(1, 400), data=st.data(), level=st.floats(0.5, 0.999))
def test_every_probe_interval_has_positive_width_and_holds_its_accuracy(n: int, data, level: float) -> None:
    """0 of n and n of n included: a percentile bootstrap of a constant sample gave [0, 0] and [1, 1]."""
    hits = data.draw(st.integers(0, n))
    correct = np.arange(n) < hits
    score = score_of(correct, confidence_level=level)
    assert score.low < score.high
    assert score.low <= score.accuracy <= score.high
    narrower = score_of(correct, confidence_level=level / 2)
    assert score.low <= narrower.low and narrower.high <= score.high


def _result() -> ProbeResult:
    layers = [
        LayerResult(
            layer,
            0.5 + layer / 10,
            {"original": Score(0.3 + layer / 10, 0.2, 0.6, 12), "kfl": Score(0.33, 0.1, 0.5, 12)},
        )
        for layer in range(4)
    ]
    info = {
        "train": {"questions_per_type": 24},
        "eval": {"questions_per_type": 12},
        "interval": {"method": "wilson", "confidence_level": 0.9},
    }
    return ProbeResult("SmolLM2", ("original", "kfl"), layers, CHANCE, info)


def test_the_result_document_round_trips_through_json() -> None:
    result = _result()
    document = json.loads(json.dumps(result.to_dict()))
    assert document["best_layer"] == {"original": 3, "kfl": 0}
    again = ProbeResult.from_dict(document)
    assert again.to_dict() == result.to_dict()
    assert again.accuracy("original") == pytest.approx([0.3, 0.4, 0.5, 0.6])
    with pytest.raises(ValueError):
        ProbeResult.from_dict({**document, "kind": "something else"})


def test_the_report_table_and_figures(tmp_path: Path) -> None:
    from scrambled_bench.errors import ScrambledBenchError
    from scrambled_bench.probing.report import load_probe, plot_probe, probe_table

    result = _result()
    table = probe_table(result)
    assert table.columns == ["layer", "Ori", "KFL", "train"]
    assert len(table.rows) == 4 and all(len(row) == 4 for row in table.rows)
    assert table.rows[0][0] == "0 (embeddings)" and table.rows[3][1] == "60.0 [20.0, 60.0]"
    assert "chance 33.3%" in table.title
    assert probe_table(result, ci=False).rows[3][1] == "60.0"

    written = plot_probe(result, tmp_path)
    assert sorted(p.name for p in written) == ["figure7.png", "figure7.svg", "figure8.png", "figure8.svg"]
    for path in written:
        head = path.read_bytes()[:200]
        assert head.startswith(b"\x89PNG") if path.suffix == ".png" else b"<svg" in path.read_bytes()

    assert load_probe(tmp_path) is None
    (tmp_path / "probe.json").write_text(json.dumps(result.to_dict()))
    loaded = load_probe(tmp_path)
    assert loaded is not None and loaded.to_dict() == result.to_dict()
    (tmp_path / "probe.json").write_text('{"kind": "scrambled-bench probe", "format": 1}')
    with pytest.raises(ScrambledBenchError, match="not a readable probe result"):
        load_probe(tmp_path / "probe.json")


def test_report_shows_a_probe_run_beside_evaluation_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`scrambled-bench report` reads a probe run folder (its probe.json): the table in every format, its
    figures under --plot, and inline in the HTML page; a folder with neither file is still a one-line error."""
    from scrambled_bench.evaluate_cli.main import main
    from scrambled_bench.probing.report import plot_probe

    folder = tmp_path / "probe-SmolLM2-abc"
    folder.mkdir()
    result = _result()
    (folder / "probe.json").write_text(json.dumps(result.to_dict()))
    plot_probe(result, folder)  # what the probe command leaves beside probe.json

    assert main(["report", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "Hidden-state probe on DREAM" in out and "| 0 (embeddings) |" in out

    assert main(["report", str(folder), "--plot", str(tmp_path / "figs")]) == 0
    assert (tmp_path / "figs" / folder.name / "figure7.png").stat().st_size > 1000

    page = tmp_path / "report.html"
    assert main(["report", str(folder), "--format", "html", "-o", str(page)]) == 0
    html = page.read_text()
    assert "figure-probe-figure7" in html and "figure-probe-figure8" in html and "<?xml" not in html

    capsys.readouterr()
    assert main(["report", str(tmp_path / "figs")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
