"""What the tests of ``scramble lm-eval:``/``scramble lighteval:`` share: skipping where a harness is not
installed, the offline environment they run in, reading the one error line a bad input gives, the
scramble types' invariants on a prompt's words, and the paired scores of a task's variants."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest


def require(module: str) -> None:
    """Skip unless ``module`` is installed; ``find_spec``, not an import (litellm fetches a price list from
    the network when imported)."""
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"needs {module}: pip install -e '.[harness]'")


def offline_vars(tmp_path: Path) -> dict[str, str]:
    """What a harness runs with here: the Hub and datasets offline, a datasets cache of the test's own,
    litellm's bundled price list, and transformers quiet (set in this process by ``harness_offline``)."""
    return {**_OFFLINE, "HF_DATASETS_CACHE": str(tmp_path / "datasets_cache")}


def offline_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a harness command started as its own process: this one's with :func:`offline_vars`."""
    return {**os.environ, **offline_vars(tmp_path)}


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The one ``error:`` line a bad input gives, with no traceback (a harness's and datasets' chatter may
    precede it)."""
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in err, err
    return errors[0]


def check_words(original: str, scrambled: str, scramble_type: str) -> None:
    """The type's invariants, word by word: same letters (kfl also the first and last), or, for sub, same
    word lengths."""
    before, after = original.split(), scrambled.split()
    assert len(before) == len(after), (original, scrambled)
    for word, other in zip(before, after):
        if scramble_type == "sub":
            assert len(word) == len(other)
        else:
            assert sorted(word) == sorted(other), (word, other)
        if scramble_type == "kfl" and len(word) > 3 and word.isalpha():
            assert (word[0], word[-1]) == (other[0], other[-1]), (word, other)


def check_variant_scores(
    section: Mapping[str, Any],
    metric: str,
    types: Sequence[str],
    native: Mapping[str, Mapping[str, float]],
    per_doc: Callable[[str], list[float]],
    name: Callable[[str], str] = lambda task: task,
) -> None:
    """``score --from-<harness>``'s ``scrambled_tasks`` section for the canonical task ``planets`` and its
    variants ``planets_<type>``, against the harness's own numbers: each value as the harness reported it
    (``native[name(task)][metric]``) and as the mean of its per-document scores (``per_doc(task)``), paired
    over every canonical document, the difference of the means with an interval, McNemar's p, and RPG
    wherever ``sub`` ran."""

    def mean(task: str) -> float:
        return sum(per_doc(task)) / len(per_doc(task))

    assert section["metrics"][metric]["value"] == native[name("planets")][metric]
    for scramble_type in types:
        task = f"planets_{scramble_type}"
        entry = section["types"][scramble_type]["metrics"][metric]
        assert entry["value"] == native[name(task)][metric]
        assert entry["value"] == pytest.approx(mean(task))
        assert entry["n_paired"] == len(per_doc("planets")) and entry["n_unpaired"] == 0
        assert entry["difference"] == pytest.approx(mean(task) - mean("planets"))
        assert len(entry["ci"]) == 2 and entry["method"].startswith("Tango's score interval")
        assert 0.0 <= entry["mcnemar_p"] <= 1.0
        assert (entry["ci"][0] > 0 or entry["ci"][1] < 0) == (entry["mcnemar_p"] < 0.05)
        assert entry["underpowered"] is (entry["n_paired"] < entry["underpowered_below"])
        assert ("relative_performance_gain" in entry) == (scramble_type != "sub")


_OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "TRANSFORMERS_VERBOSITY": "error",
}
