"""Helpers the Scrambled Bench metric modules share: input checks, edit distances, bootstrap intervals.

Every metric folder carries an identical copy of this file, the way evaluate's ``bleu`` carries
``tokenizer_13a.py``, so each folder stays self-contained and can be pushed as a Hub Space as it is
(``evaluate.load`` copies a script's relative imports beside it). A test keeps the copies identical.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from rapidfuzz.distance import Levenshtein


def edit_distances(references: Sequence[str], others: Sequence[str]) -> list[int]:
    """Character-level Levenshtein distance (all edits cost 1) of each pair, surrounding whitespace stripped.

    >>> edit_distances(["kitten", "flaw "], ["sitting", " lawn"])
    [3, 2]
    """
    distance = Levenshtein.distance
    return [distance(reference.strip(), other.strip()) for reference, other in zip(references, others)]


def check_strings(name: str, values: object, *, allow_none: bool = False) -> list:
    """``values`` as a list after checking that it is a list of strings (or None, where allowed).

    >>> check_strings("references", ["A", None])
    Traceback (most recent call last):
    ...
    ValueError: references[1] must be a string, got NoneType: None
    """
    if values is None or isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise ValueError(f"{name} must be a list of strings, got {type(values).__name__}")
    values = list(values)
    for index, value in enumerate(values):
        if value is None and allow_none:
            continue
        if not isinstance(value, str):
            raise ValueError(f"{name}[{index}] must be a string, got {type(value).__name__}: {value!r:.60}")
    return values


def check_same_length(columns: dict[str, list]) -> None:
    """Every column holds the same samples, and there is at least one.

    >>> check_same_length({"predictions": ["a"], "references": ["a", "b"]})
    Traceback (most recent call last):
    ...
    ValueError: the inputs must have the same length (the same samples), got predictions=1, references=2
    """
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{name}={length}" for name, length in lengths.items())
        raise ValueError(f"the inputs must have the same length (the same samples), got {listed}")
    if not any(lengths.values()):
        raise ValueError(f"{', '.join(columns)} are empty: there is nothing to score")


def check_bootstrap_options(confidence_level: object, n_resamples: object) -> None:
    """Reject a confidence level outside (0, 1) or a resample count below 1.

    >>> check_bootstrap_options(1.5, 100)
    Traceback (most recent call last):
    ...
    ValueError: confidence_level must be a number between 0 and 1 (exclusive), got 1.5
    """
    if confidence_level is not None and (
        isinstance(confidence_level, bool)
        or not isinstance(confidence_level, (int, float))
        or not 0 < confidence_level < 1
    ):
        raise ValueError(
            f"confidence_level must be a number between 0 and 1 (exclusive), got {confidence_level!r}"
        )
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")


def bootstrap_interval(
    statistic: Callable[[np.ndarray], np.ndarray],
    n_samples: int,
    confidence_level: float,
    n_resamples: int,
    seed: int,
) -> tuple[list[float] | None, int]:
    """Percentile-bootstrap interval of ``statistic`` over resampled sample indices.

    ``statistic`` maps an ``(n_resamples, n_samples)`` index array to one value per resample, NaN where
    the statistic is undefined for that resample; those are left out and counted. The interval is None
    when no resample has a defined value.

    >>> values = np.array([0.0, 1.0, 1.0, 1.0])
    >>> (low, high), undefined = bootstrap_interval(lambda idx: values[idx].mean(axis=1), 4, 0.9, 200, 0)
    >>> 0.0 <= low <= 0.75 <= high <= 1.0, undefined
    (True, 0)
    """
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, n_samples, size=(n_resamples, n_samples))
    values = np.asarray(statistic(indices), dtype=float)
    defined = values[~np.isnan(values)]
    if defined.size == 0:
        return None, int(values.size)
    tail = (1.0 - confidence_level) / 2.0
    low, high = np.quantile(defined, [tail, 1.0 - tail])
    return [float(low), float(high)], int(values.size - defined.size)


def computes_in_memory(module: Any) -> bool:
    """Whether ``module.compute(**inputs)`` may score ``inputs`` directly.

    evaluate's own ``compute`` writes every column to an Arrow cache file and reads it back before
    scoring, which costs far more than the arithmetic here. That round trip only matters when batches
    were added earlier (``add_batch``) or several processes share the metric; otherwise the result is
    the same without it.
    """
    return getattr(module, "num_process", 1) == 1 and getattr(module, "writer", None) is None
