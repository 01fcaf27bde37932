"""Fixtures of the builder tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness_support import offline_vars


@pytest.fixture
def harness_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A harness resolved in this process runs offline, with a datasets cache of the test's own."""
    for name, value in offline_vars(tmp_path).items():
        monkeypatch.setenv(name, value)
