"""The settings of a run, one dataclass: which fields define its folder, which go to the backend, which
are secret.

A field marked ``identity`` changes what is sent or what it is scored against, so it is part of the hash
that names the run folder (``runs/<model>-<hash>``): the same command lands in the same folder and resumes.
A new setting must declare whether it is identity; it can no longer share a run folder by omission.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from scrambled_bench.builder.manifest import DEFAULT_BUILD_DIR

from scrambled_bench.redaction import redact

DEFAULT_RUNS = Path("runs")
DEFAULT_DATA = f"./{DEFAULT_BUILD_DIR}"
PROMPT_MODES = ("chat", "completion")


# what a setting is: part of the run's identity (its folder), an option of the backend, a secret
IDENTITY = {"identity": True, "backend": False, "secret": False}
BACKEND_IDENTITY = {"identity": True, "backend": True, "secret": False}
BACKEND_SECRET = {"identity": False, "backend": True, "secret": True}
PLAIN = {"identity": False, "backend": False, "secret": False}
"""Neither: how many samples, how intervals are computed; never part of the folder."""


@dataclass(frozen=True)
class RunSettings:
    """Everything that defines a run (the engine's pacing lives in ``EngineSettings``).

    >>> RunSettings(model="m", api_key="sk-secret").scrubbed()["api_key_given"]
    True
    """

    backend: str = field(default="llama-cpp", metadata=IDENTITY)
    model: str | None = field(default=None, metadata=BACKEND_IDENTITY)
    base_url: str | None = field(default=None, metadata=BACKEND_IDENTITY)
    provider: str | None = field(default=None, metadata=BACKEND_IDENTITY)
    api_key: str | None = field(default=None, metadata=BACKEND_SECRET)
    n_ctx: int | None = field(default=None, metadata=BACKEND_IDENTITY)
    suite: str = field(default="quick", metadata=IDENTITY)
    tasks: list[str] | None = field(default=None, metadata=IDENTITY)
    datasets: list[str] | None = field(default=None, metadata=IDENTITY)
    types: list[str] | None = field(default=None, metadata=IDENTITY)
    exemplar_rates: list[int] | None = field(default=None, metadata=IDENTITY)
    limit: int | None = field(default=None, metadata=PLAIN)
    seed: int = field(default=0, metadata=IDENTITY)
    max_new_tokens: int = field(default=256, metadata=IDENTITY)
    prompt_mode: str = field(default="chat", metadata=IDENTITY)
    data: str = field(default=DEFAULT_DATA, metadata=IDENTITY)
    revision: str | None = field(default=None, metadata=IDENTITY)
    confidence_level: float = field(default=0.95, metadata=PLAIN)
    n_resamples: int = field(default=1000, metadata=PLAIN)

    @property
    def chat(self) -> bool:
        return self.prompt_mode == "chat"

    def backend_options(self) -> dict[str, Any]:
        """The options the backend's config takes, as given (None: not given)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.metadata["backend"]}

    def identity(self, model: str) -> dict[str, Any]:
        """The settings that name the run folder, with the model the backend resolved."""
        identity = {f.name: getattr(self, f.name) for f in fields(self) if f.metadata["identity"]}
        identity["model"] = model
        return identity

    def run_dir(self, model: str, root: Path = DEFAULT_RUNS) -> Path:
        """``runs/<model-slug>-<hash of the run's identity>``: the same command lands in the same folder.

        >>> RunSettings(backend="openai").run_dir("gpt-4o").name.startswith("gpt-4o-")
        True
        """
        payload = json.dumps(self.identity(model), sort_keys=True, default=str).encode("utf-8")
        return root / f"{model_slug(model)}-{hashlib.sha256(payload).hexdigest()[:10]}"

    def scrubbed(self) -> dict[str, Any]:
        """The settings safe to write into config.json: a secret becomes whether it was given, URLs lose
        any credentials."""
        return scrub({f.name: getattr(self, f.name) for f in fields(self)})


SECRET_SETTINGS = frozenset(f.name for f in fields(RunSettings) if f.metadata["secret"]) | {
    "token",
    "hf_token",
}


def scrub(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings safe to write: keys are dropped, only whether one was given is kept; strings are redacted.

    >>> scrub({"model": "m", "api_key": "sk-secret", "base_url": "https://u:p@host/v1"})
    {'model': 'm', 'api_key_given': True, 'base_url': 'https://***@host/v1'}
    """
    clean: dict[str, Any] = {}
    for name, value in settings.items():
        if name in SECRET_SETTINGS:
            clean[f"{name}_given"] = bool(value)
        elif isinstance(value, str):
            clean[name] = redact(value)
        else:
            clean[name] = value
    return clean


def model_slug(model: str) -> str:
    """A folder-safe short name for a model id or file.

    >>> model_slug("HuggingFaceTB/SmolLM2-135M-Instruct")
    'SmolLM2-135M-Instruct'
    >>> model_slug("/models/smollm2-135m-instruct.Q8_0.gguf")
    'smollm2-135m-instruct.Q8_0'
    """
    import re

    name = model.rstrip("/").rsplit("/", 1)[-1]
    name = name.removesuffix(".gguf")
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "model"
