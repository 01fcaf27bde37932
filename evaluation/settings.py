"""The settings of a run, one dataclass: which fields define its folder, which are the backend's options,
which are secret.

A field marked ``identity`` changes what is sent or what it is scored against, so it is part of the hash
that names the run folder (``runs/<model>-<hash>``): the same command lands in the same folder and resumes.
A new setting must declare whether it is identity; it can no longer share a run folder by omission.

The backend's options are not restated here: ``backend_options`` holds those given, and each backend's
config (``evaluation/backends``) declares them, marking which are identity. An identity option enters the hash
only where it is given, so a new option leaves every existing run folder where it was.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from scrambled_bench.builder.manifest import DEFAULT_BUILD_DIR
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends import BACKENDS, given_options
from scrambled_bench.evaluation.backends.base import option_marks
from scrambled_bench.metrics.readers import get_reader
from scrambled_bench.names import split_names
from scrambled_bench.redaction import redact

DEFAULT_RUNS = Path("runs")
DEFAULT_DATA = f"./{DEFAULT_BUILD_DIR}"
PROMPT_MODES = ("chat", "completion")


# What a setting is. Identity: it changes which requests are sent or how they are scored, so it is part of
# the run's identity (its folder). Selection: it picks the configs, the sample limit or the data, and enters
# the identity as what it resolves to (the configs' names, the limit in force, the hashes of the data files it reads),
# so `--types rs20,kf` and `--types rs20 --types kf`, or the same build at two paths, are the same run.
# Backend: the backend's options, which its config marks identity or secret (never written anywhere).
IDENTITY = {"identity": True, "selection": False, "backend": False}
SELECTION = {"identity": False, "selection": True, "backend": False}
BACKEND = {"identity": False, "selection": False, "backend": True}
PLAIN = {"identity": False, "selection": False, "backend": False}
"""Neither: how intervals are computed; recomputed from the samples, never part of the folder."""

ALWAYS_RECORDED = ("base_url", "provider", "api_key", "n_ctx")
"""The backend options that were fields of ``RunSettings`` before each backend's config declared its own.
config.json's settings record each, None where not given; the identity ones among them (``base_url``,
``provider``, ``n_ctx``) enter every run's hash, None where not given, whatever the backend, so that every
run folder made before keeps its name. Every other option enters the hash only where given."""


@dataclass(frozen=True)
class RunSettings:
    """Everything that defines a run (the engine's pacing lives in ``EngineSettings``).

    ``backend_options`` are the backend's options beyond the model (``base_url``, ``batch_size``...), as
    its config declares them; they are checked here, and kept as given, each as its type.

    >>> RunSettings(model="m", backend="openai", backend_options={"base_url": "http://h", "api_key": "sk-x"}).scrubbed()["api_key_given"]
    True
    >>> RunSettings(backend="transformers", model="m", backend_options={"batch_size": "32"}).backend_options
    {'batch_size': 32}
    """

    backend: str = field(default="llama-cpp", metadata=IDENTITY)
    model: str | None = field(default=None, metadata=IDENTITY)
    """The model; in the identity, the name the backend resolved it to (a GGUF's file name)."""
    backend_options: Mapping[str, Any] = field(default_factory=dict, metadata=BACKEND)
    suite: str = field(default="quick", metadata=SELECTION)
    tasks: list[str] | None = field(default=None, metadata=SELECTION)
    datasets: list[str] | None = field(default=None, metadata=SELECTION)
    types: list[str] | None = field(default=None, metadata=SELECTION)
    exemplar_rates: list[int] | None = field(default=None, metadata=SELECTION)
    limit: int | None = field(default=None, metadata=SELECTION)
    seed: int = field(default=0, metadata=IDENTITY)
    max_new_tokens: int = field(default=256, metadata=IDENTITY)
    prompt_mode: str = field(default="chat", metadata=IDENTITY)
    parser: str = field(default="careful", metadata=IDENTITY)
    """The answer reader (``careful`` or ``paper``, see ``scrambled_bench.metrics.readers``). The code calls
    it a reader everywhere else; this field keeps the name config.json records and every run folder's hash
    was made with (``--parser`` stays the flag)."""
    data: str = field(default=DEFAULT_DATA, metadata=SELECTION)
    revision: str | None = field(default=None, metadata=SELECTION)
    build_missing: bool | None = field(default=None, metadata=PLAIN)
    """Build the data when ``data`` is a folder that does not exist (None: only the default folder)."""
    confidence_level: float = field(default=0.95, metadata=PLAIN)
    n_resamples: int = field(default=1000, metadata=PLAIN)

    def __post_init__(self) -> None:
        options = dict(self.backend_options)
        if "model" in options:
            if self.model is not None:
                raise ScrambledBenchError(
                    f"--backend-option model={options['model']} together with --model {self.model}: "
                    "name the model once"
                )
            object.__setattr__(self, "model", options.pop("model"))
        options = given_options(self.backend, {"model": self.model, **options})
        options.pop("model", None)
        object.__setattr__(self, "backend_options", options)

        get_reader(self.parser)
        if self.prompt_mode not in PROMPT_MODES:
            raise ScrambledBenchError(
                f"unknown prompt mode {self.prompt_mode!r}; choose {' or '.join(PROMPT_MODES)}"
            )
        if not 0 < self.confidence_level < 1:
            raise ScrambledBenchError(
                f"--confidence-level must be between 0 and 1 (exclusive), got {self.confidence_level}"
            )
        # "--types original,rs50" and "--types original --types rs50" are one list of names, recorded split
        for name in ("tasks", "datasets", "types"):
            object.__setattr__(self, name, split_names(getattr(self, name)))

    @property
    def suite_in_force(self) -> str | None:
        """The suite the selection was drawn from; None where ``tasks`` and ``types`` name the whole grid
        (the suite then contributes no config, only its default sample limit).

        >>> RunSettings(tasks=["scrqa"], types=["rs50,sub"]).suite_in_force, RunSettings(types=["kf"]).suite_in_force
        (None, 'quick')
        >>> RunSettings(types=["rs50,sub"]).types
        ['rs50', 'sub']
        """
        return None if self.tasks is not None and self.types is not None else self.suite

    @property
    def chat(self) -> bool:
        return self.prompt_mode == "chat"

    def options(self) -> dict[str, Any]:
        """The options to create the backend with: the model and the options given.

        >>> RunSettings(backend="llama-cpp", backend_options={"n_threads": 2}).options()
        {'model': None, 'n_threads': 2}
        """
        return {"model": self.model, **self.backend_options}

    def identity_options(self) -> dict[str, Any]:
        """The backend options that name the run: those its config marks identity, where given, and
        the identity ones of :data:`ALWAYS_RECORDED` (None where not given).

        >>> RunSettings().identity_options()
        {'base_url': None, 'provider': None, 'n_ctx': None}
        >>> RunSettings(backend="transformers", model="m", backend_options={"batch_size": 32}).identity_options()
        {'base_url': None, 'provider': None, 'n_ctx': None, 'batch_size': 32}
        """
        config = BACKENDS[self.backend].Config.model_fields
        named = {name: self.backend_options.get(name) for name in ALWAYS_RECORDED if name in IDENTITY_OPTIONS}
        named.update(
            (name, value)
            for name, value in self.backend_options.items()
            if option_marks(config[name])["identity"]
        )
        return named

    def identity(self, model: str, *, configs: Sequence[str], limit: int | None, data: str) -> dict[str, Any]:
        """What names the run folder: the identity settings and backend options, the model the backend
        resolved, and what the selection settings resolved to: the configs' names, the sample limit in force
        and the data's identity (the sha256 of each data file it reads from a build, or a Hub id and revision)."""
        identity = {f.name: getattr(self, f.name) for f in fields(self) if f.metadata["identity"]}
        identity.update(self.identity_options())
        identity.update(model=model, configs=list(configs), limit=limit, data=data)
        return identity

    def selection(self) -> dict[str, Any]:
        """The selection settings as given (config.json records them beside what they resolved to)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.metadata["selection"]}

    def scrubbed(self) -> dict[str, Any]:
        """The settings safe to write into config.json, the backend options given among them (and those of
        :data:`ALWAYS_RECORDED`, None where not given): a secret becomes whether it was given, URLs lose any
        credentials."""
        settings: dict[str, Any] = {}
        for setting in fields(self):
            if setting.metadata["backend"]:
                settings.update({name: self.backend_options.get(name) for name in ALWAYS_RECORDED})
                settings.update(self.backend_options)
            else:
                settings[setting.name] = getattr(self, setting.name)
        return scrub(settings)


def identity_hash(identity: Mapping[str, Any]) -> str:
    """The short hash that names a run folder and marks which settings a results.json was computed with.

    >>> len(identity_hash({"model": "m"}))
    10
    """
    payload = json.dumps(identity, sort_keys=True, default=str).encode("utf-8")
    return hashlib.sha256(payload).hexdigest()[:10]


def run_dir_for(identity: Mapping[str, Any], root: Path = DEFAULT_RUNS) -> Path:
    """``runs/<model-slug>-<hash of the run's identity>``: the same run lands in the same folder.

    >>> run_dir_for({"model": "org/gpt-4o", "seed": 0}).name.startswith("gpt-4o-")
    True
    """
    return Path(root) / f"{model_slug(str(identity['model']))}-{identity_hash(identity)}"


IDENTITY_OPTIONS = frozenset(
    name
    for backend in BACKENDS.values()
    for name, info in backend.Config.model_fields.items()
    if option_marks(info)["identity"]
)
"""Every backend option some backend's config marks identity."""

SECRET_SETTINGS = frozenset(
    name
    for backend in BACKENDS.values()
    for name, info in backend.Config.model_fields.items()
    if option_marks(info)["secret"]
) | {"token", "hf_token"}


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
