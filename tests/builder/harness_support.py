"""What the tests of ``scramble lm-eval:``/``scramble lighteval:`` share: skipping where a harness is not
installed, the offline environment they run in, reading the one error line a bad input gives, and the
scramble types' invariants on a prompt's words."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest


def require(module: str) -> None:
    """Skip unless ``module`` is installed; ``find_spec``, not an import (litellm fetches a price list from
    the network when imported)."""
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"needs {module}: pip install -e '.[harness]'")


def offline_env(tmp_path: Path) -> dict[str, str]:
    """The environment a harness command runs in here: the Hub and datasets offline, a datasets cache of the
    test's own, litellm's bundled price list, and transformers quiet."""
    return {**os.environ, **_OFFLINE, "HF_DATASETS_CACHE": str(tmp_path / "datasets_cache")}


def set_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """:func:`offline_env` for commands run in this process."""
    for name, value in _OFFLINE.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "datasets_cache"))


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


_OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "TRANSFORMERS_VERBOSITY": "error",
}
