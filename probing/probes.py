"""One logistic-regression probe per layer, and the result document (``probe.json``).

Per layer: the features standardised by the training mixture's mean and deviation only (every setting's
training features together), then a multinomial logistic regression with an L2 penalty (``C``) on them,
fitted by one of two fitters that minimise the same objective: scikit-learn's
:class:`~sklearn.preprocessing.StandardScaler` and :class:`~sklearn.linear_model.LogisticRegression`
(L-BFGS, fixed ``random_state``) on the CPU, or :func:`fit_layer_torch`, the same model fitted by
``torch.optim.LBFGS`` on the probe's device (a GPU fits 31 layers of the full probe in seconds where
scikit-learn takes minutes). Each evaluation setting is scored separately, with the
Wilson interval of its accuracy over its questions (the same function as ``run``'s accuracies: never of
zero width at 0 of n or n of n, which a percentile bootstrap of a constant sample would claim). Layers are fitted one at a time from a
``load_layer(layer)`` callable, so only one layer's features are in memory at once.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.metrics.statistics import wilson_interval

#: probe.json's layout version
RESULT_FORMAT = 1
#: how probe.json's accuracy intervals are made
INTERVAL_METHOD = "wilson"
#: the logistic regression's inverse regularisation strength and iteration cap
DEFAULT_C = 1.0
DEFAULT_MAX_ITER = 1000
#: the fitters: scikit-learn on the CPU, or the same regression in torch on the probe's device
FITTERS = ("sklearn", "torch")
#: the torch fitter stops where the largest gradient entry of its (per-sample) objective is below this, as
#: scikit-learn's L-BFGS does with its default ``tol``
TORCH_GRADIENT_TOLERANCE = 1e-4


@dataclass(frozen=True)
class LayerData:
    """One layer's features: the training mixture and, per setting, the evaluation questions."""

    train_features: np.ndarray
    train_labels: np.ndarray
    eval_sets: Mapping[str, tuple[np.ndarray, np.ndarray]]
    """Setting -> (features ``[n, hidden]``, labels ``[n]``)."""


@dataclass(frozen=True)
class Score:
    """An accuracy (a fraction) with its Wilson interval over ``n`` questions."""

    accuracy: float
    low: float
    high: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.accuracy, "interval": [self.low, self.high], "n": self.n}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Score:
        low, high = data["interval"]
        return cls(accuracy=float(data["value"]), low=float(low), high=float(high), n=int(data["n"]))


@dataclass(frozen=True)
class LayerResult:
    """One layer's probe: training accuracy and the score of each evaluation setting."""

    layer: int
    train_accuracy: float
    scores: Mapping[str, Score]
    converged: bool = True
    fit_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "train_accuracy": self.train_accuracy,
            "converged": self.converged,
            "fit_seconds": round(self.fit_seconds, 4),
            "accuracy": {name: score.to_dict() for name, score in self.scores.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LayerResult:
        return cls(
            layer=int(data["layer"]),
            train_accuracy=float(data["train_accuracy"]),
            scores={name: Score.from_dict(score) for name, score in data["accuracy"].items()},
            converged=bool(data.get("converged", True)),
            fit_seconds=float(data.get("fit_seconds", 0.0)),
        )


def fit_layer(
    data: LayerData, *, seed: int = 0, C: float = DEFAULT_C, max_iter: int = DEFAULT_MAX_ITER
) -> tuple[float, dict[str, np.ndarray], bool]:
    """Fit one layer's probe: ``(training accuracy, setting -> correct per question, converged)``.

    The scaler sees the training features only; the evaluation features are only transformed.

    >>> rng = np.random.default_rng(0)
    >>> labels = np.arange(60) % 3
    >>> features = rng.normal(size=(60, 4)) + np.eye(3, 4)[labels] * 5
    >>> accuracy, correct, converged = fit_layer(LayerData(features, labels, {"x": (features, labels)}))
    >>> accuracy, bool(correct["x"].all()), converged
    (1.0, True, True)
    """
    # deferred: scikit-learn is the optional `probe` extra, imported only where a probe is fitted
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    train = np.asarray(data.train_features, dtype=np.float32)
    scaler = StandardScaler().fit(train)
    classifier = LogisticRegression(C=C, max_iter=max_iter, random_state=seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        classifier.fit(scaler.transform(train), data.train_labels)
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    train_accuracy = float(classifier.score(scaler.transform(train), data.train_labels))
    correct = {
        name: classifier.predict(scaler.transform(np.asarray(features, dtype=np.float32)))
        == np.asarray(labels)
        for name, (features, labels) in data.eval_sets.items()
    }
    return train_accuracy, correct, converged


def fit_layer_torch(
    data: LayerData, *, device: str = "cpu", C: float = DEFAULT_C, max_iter: int = DEFAULT_MAX_ITER
) -> tuple[float, dict[str, np.ndarray], bool]:
    """:func:`fit_layer`'s probe fitted with torch on ``device``: the same standardisation (the training
    mixture's mean and population deviation, a constant feature left unscaled) and the same objective as
    scikit-learn's multinomial ``LogisticRegression`` (the mean cross-entropy plus ``||W||^2 / (2 C n)``,
    intercept unpenalised), minimised by L-BFGS with a strong-Wolfe line search until the largest gradient
    entry is below :data:`TORCH_GRADIENT_TOLERANCE` (converged) or after ``max_iter`` iterations.

    >>> rng = np.random.default_rng(0)
    >>> labels = np.arange(60) % 3
    >>> features = rng.normal(size=(60, 4)) + np.eye(3, 4)[labels] * 5
    >>> data = LayerData(features, labels, {"x": (features, labels)})
    >>> (accuracy, correct, converged), by_sklearn = fit_layer_torch(data), fit_layer(data)
    >>> accuracy, bool(correct["x"].all()), converged, accuracy == by_sklearn[0]
    (1.0, True, True, True)
    """
    import torch  # deferred: torch is the optional `local` extra, which the sklearn fitter does without

    train = torch.as_tensor(np.asarray(data.train_features, dtype=np.float32), device=device)
    labels = torch.as_tensor(np.asarray(data.train_labels), device=device, dtype=torch.long)
    classes = torch.unique(labels)
    mean = train.mean(dim=0)
    scale = train.std(dim=0, unbiased=False)
    scale = torch.where(scale == 0, torch.ones_like(scale), scale)  # as StandardScaler does

    def standardise(values: Any) -> Any:
        return (values - mean) / scale

    weights, bias, converged = _minimise_torch(
        standardise(train), torch.searchsorted(classes, labels), len(classes), C=C, max_iter=max_iter
    )

    def predict(values: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            features = torch.as_tensor(np.asarray(values, dtype=np.float32), device=device)
            chosen = (standardise(features) @ weights + bias).argmax(dim=1)
            return classes[chosen].cpu().numpy()

    train_accuracy = float(np.mean(predict(data.train_features) == np.asarray(data.train_labels)))
    correct = {
        name: predict(features) == np.asarray(labels_) for name, (features, labels_) in data.eval_sets.items()
    }
    return train_accuracy, correct, converged


def _minimise_torch(
    x: Any, targets: Any, n_classes: int, *, C: float, max_iter: int
) -> tuple[Any, Any, bool]:
    """``(weights, bias, converged)`` minimising scikit-learn's multinomial objective on the standardised
    ``x`` (torch, on its device) and the class indices ``targets``, by L-BFGS with a strong-Wolfe line
    search; converged where the largest gradient entry where it stopped is within the tolerance."""
    import torch  # deferred: torch is the optional `local` extra, which the sklearn fitter does without

    n, width = x.shape
    weights = torch.zeros((width, n_classes), device=x.device, requires_grad=True)
    bias = torch.zeros(n_classes, device=x.device, requires_grad=True)
    penalty = 1.0 / (2.0 * C * n)
    optimizer = torch.optim.LBFGS(
        [weights, bias],
        lr=1.0,
        max_iter=max_iter,
        tolerance_grad=TORCH_GRADIENT_TOLERANCE,
        tolerance_change=0.0,
        history_size=10,
        line_search_fn="strong_wolfe",
    )

    def objective() -> Any:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(x @ weights + bias, targets)
        loss = loss + penalty * (weights * weights).sum()
        loss.backward()
        return loss

    with torch.enable_grad():
        optimizer.step(objective)
        objective()  # the gradient where it stopped: converged is what LBFGS itself stops on
    gradient = torch.cat([weights.grad.flatten(), bias.grad.flatten()])
    return weights, bias, bool(gradient.abs().max() <= TORCH_GRADIENT_TOLERANCE)


def score_of(correct: np.ndarray, *, confidence_level: float) -> Score:
    """Accuracy of ``correct`` (booleans) with its Wilson interval.

    >>> score_of(np.array([True, False, True, True]), confidence_level=0.95)
    Score(accuracy=0.75, low=0.300642, high=0.954413, n=4)
    >>> score_of(np.array([False] * 6), confidence_level=0.95)  # 0 of 6: not a certain zero
    Score(accuracy=0.0, low=0.0, high=0.390334, n=6)
    """
    if not correct.size:
        return Score(accuracy=float("nan"), low=float("nan"), high=float("nan"), n=0)
    low, high = wilson_interval(int(np.sum(correct)), int(correct.size), confidence_level)
    return Score(
        accuracy=round(float(np.mean(correct)), 6),
        low=round(low, 6),
        high=round(high, 6),
        n=int(correct.size),
    )


def fit_probes(
    layers: Iterable[int],
    load_layer: Callable[[int], LayerData],
    *,
    seed: int = 0,
    confidence_level: float = 0.95,
    C: float = DEFAULT_C,
    max_iter: int = DEFAULT_MAX_ITER,
    fitter: str = "sklearn",
    device: str = "cpu",
    on_layer: Callable[[LayerResult], None] | None = None,
) -> list[LayerResult]:
    """A probe per layer, each layer's features loaded only while it is fitted, by ``fitter``
    (``sklearn``, or ``torch`` on ``device``).

    >>> rng = np.random.default_rng(1)
    >>> labels = np.arange(90) % 3
    >>> def load(layer):  # the label is only in layer 1
    ...     x = rng.normal(size=(90, 8)) + (np.eye(3, 8)[labels] * 4 if layer == 1 else 0)
    ...     return LayerData(x[:60], labels[:60], {"ori": (x[60:], labels[60:])})
    >>> [r.scores["ori"].accuracy > 0.9 for r in fit_probes([0, 1], load)]
    [False, True]
    """
    if fitter not in FITTERS:
        raise ScrambledBenchError(f"the probe's fitter is one of {', '.join(FITTERS)}, not {fitter!r}")
    results = []
    for layer in layers:
        started = time.perf_counter()
        data = load_layer(layer)
        if len(np.unique(data.train_labels)) < 2:
            raise ScrambledBenchError(
                "the probe's training data holds a single answer class; raise the limit"
            )
        if fitter == "torch":
            train_accuracy, correct, converged = fit_layer_torch(data, device=device, C=C, max_iter=max_iter)
        else:
            train_accuracy, correct, converged = fit_layer(data, seed=seed, C=C, max_iter=max_iter)
        scores = {name: score_of(hits, confidence_level=confidence_level) for name, hits in correct.items()}
        result = LayerResult(
            layer=layer,
            train_accuracy=round(train_accuracy, 6),
            scores=scores,
            converged=converged,
            fit_seconds=time.perf_counter() - started,
        )
        results.append(result)
        if on_layer is not None:
            on_layer(result)
    return results


@dataclass
class ProbeResult:
    """A whole probe: per layer, per setting accuracy with intervals, and how it was made (``info``).

    ``info`` holds everything else ``probe.json`` records (template, limits, counts, seeds, timing,
    versions); :meth:`to_dict` and :meth:`from_dict` round-trip the document.
    """

    model: str
    types: tuple[str, ...]
    layers: list[LayerResult]
    chance: float
    info: dict[str, Any] = field(default_factory=dict)

    def accuracy(self, scramble_type: str) -> list[float]:
        """The setting's accuracy (a fraction) at every probed layer, in layer order."""
        return [layer.scores[scramble_type].accuracy for layer in self.layers]

    def best_layers(self) -> dict[str, int]:
        """Setting -> the layer whose probe scores highest (the earliest on a tie)."""
        return {
            name: max(self.layers, key=lambda layer: (layer.scores[name].accuracy, -layer.layer)).layer
            for name in self.types
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "scrambled-bench probe",
            "format": RESULT_FORMAT,
            "model": self.model,
            "types": list(self.types),
            "layers": [layer.layer for layer in self.layers],
            "chance": self.chance,
            **self.info,
            "best_layer": self.best_layers() if self.layers else {},
            "results": [layer.to_dict() for layer in self.layers],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProbeResult:
        """Read a ``probe.json`` document; a ``KeyError``/``ValueError`` means it is not one."""
        if data.get("kind") != "scrambled-bench probe":
            raise ValueError("not a scrambled-bench probe document")
        if data.get("format") != RESULT_FORMAT:
            raise ValueError(f"probe.json format {data.get('format')!r}, this version reads {RESULT_FORMAT}")
        layers = [LayerResult.from_dict(entry) for entry in data["results"]]
        types = tuple(data["types"])
        for layer in layers:
            if set(layer.scores) != set(types):
                raise ValueError(
                    f"layer {layer.layer} scores {sorted(layer.scores)}, not the types {list(types)}"
                )
        reserved = {"kind", "format", "model", "types", "layers", "chance", "best_layer", "results"}
        return cls(
            model=str(data["model"]),
            types=types,
            layers=layers,
            chance=float(data["chance"]),
            info={key: value for key, value in data.items() if key not in reserved},
        )


def summarise(results: Sequence[LayerResult], types: Sequence[str]) -> str:
    """One line per setting: its best layer and accuracy there (for the CLI's closing lines).

    >>> first = LayerResult(0, 0.5, {"kfl": Score(0.4, 0.3, 0.5, 10)})
    >>> print(summarise([first, LayerResult(1, 0.9, {"kfl": Score(0.7, 0.6, 0.8, 10)})], ["kfl"]))
    kfl: best layer 1, accuracy 70.0% [60.0, 80.0]
    """
    lines = []
    for name in types:
        best = max(results, key=lambda layer: (layer.scores[name].accuracy, -layer.layer))
        score = best.scores[name]
        lines.append(
            f"{name}: best layer {best.layer}, accuracy {score.accuracy * 100:.1f}% "
            f"[{score.low * 100:.1f}, {score.high * 100:.1f}]"
        )
    return "\n".join(lines)
