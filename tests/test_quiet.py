"""quiet_libraries() (``--no-progress``) in a fresh interpreter, where what is imported can be seen."""

from __future__ import annotations

import subprocess
import sys

import pytest

INSIDE = """
import os, sys
from scrambled_bench.quiet import quiet_libraries
os.environ.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)
with quiet_libraries():
    # entering imports none of the libraries: a llama.cpp run never pays for transformers
    assert not {"transformers", "huggingface_hub", "datasets"} & set(sys.modules), sys.modules.keys()
    import huggingface_hub.utils as hub  # imported inside: it reads the environment set for the block
    assert hub.are_progress_bars_disabled()
assert "HF_HUB_DISABLE_PROGRESS_BARS" not in os.environ  # the environment is put back
print("ok")
"""
BEFORE = """
import os
os.environ.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)
import huggingface_hub.utils as hub
from scrambled_bench.quiet import quiet_libraries
assert not hub.are_progress_bars_disabled()
with quiet_libraries():  # already imported: switched off through its own API, and on again leaving
    assert hub.are_progress_bars_disabled()
assert not hub.are_progress_bars_disabled()
print("ok")
"""


@pytest.mark.parametrize("script", [INSIDE, BEFORE], ids=["imported-inside", "imported-before"])
def test_quiet_libraries_imports_nothing_and_switches_back_what_was_on(script: str) -> None:
    pytest.importorskip("huggingface_hub")
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
