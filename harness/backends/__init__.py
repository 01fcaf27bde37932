"""Where a model runs: one class per backend, each with a typed config, all behind :class:`~.base.Backend`.

:data:`BACKENDS` is the one registry: it feeds ``--backend`` and its help, the run settings, and
:func:`create_backend`, which validates options with the backend's own config class, so an option a
backend does not take is a one-line error naming the option, never silently ignored. Each backend's heavy
client library is imported only when that backend is created, so ``scrambled-bench --help`` stays fast.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.harness.backends.base import Backend, BackendConfig
from scrambled_bench.harness.backends.inference_providers import InferenceProvidersBackend
from scrambled_bench.harness.backends.llama_cpp import LlamaCppBackend
from scrambled_bench.harness.backends.openai_compatible import OpenAICompatibleBackend
from scrambled_bench.harness.backends.tgi import TGIBackend
from scrambled_bench.harness.backends.transformers_local import TransformersBackend

BACKENDS: dict[str, type[Backend]] = {
    backend.kind: backend
    for backend in (
        LlamaCppBackend,
        OpenAICompatibleBackend,
        TGIBackend,
        InferenceProvidersBackend,
        TransformersBackend,
    )
}
"""Every backend by its ``--backend`` name, the embedded default first."""


def option_name(field: str) -> str:
    """The command-line option of a config field.

    >>> option_name("base_url")
    '--base-url'
    """
    return "--" + field.replace("_", "-")


def backends_help() -> str:
    """``--backend``'s help: each backend and what it is.

    >>> backends_help().splitlines()[0].startswith("llama-cpp: embedded default")
    True
    """
    return "\n".join(f"{kind}: {backend.description}" for kind, backend in BACKENDS.items())


def _config_error(backend: type[Backend], exc: ValidationError) -> str:
    """The first problem of a config, in one line naming the option as the command line spells it."""
    error = exc.errors()[0]
    field = str(error["loc"][0]) if error["loc"] else ""
    option = option_name(field)
    kind = backend.kind
    if error["type"] == "extra_forbidden":
        where = " (the model runs in-process)" if backend.in_process else ""
        takers = [name for name, other in BACKENDS.items() if field in other.Config.model_fields]
        applies = f"; {option} applies to --backend {' or '.join(takers)}" if takers else ""
        return f"{option} does not apply to the {kind} backend{where}{applies}"
    if error["type"] == "missing":
        description = backend.Config.model_fields[field].description
        return f"the {kind} backend needs {option}" + (f" ({description})" if description else "")
    if error["type"] == "value_error":
        return str(error["ctx"]["error"])
    return f"{option}: {error['msg'][0].lower()}{error['msg'][1:]}, got {error.get('input')!r}"


def create_config(kind: str, **options: Any) -> BackendConfig:
    """The typed config of backend ``kind`` from options as the command line names them; ``None`` means
    "not given".

    >>> create_config("openai", model="m", base_url="http://127.0.0.1:8080").base_url
    'http://127.0.0.1:8080/v1'
    >>> create_config("llama-cpp", base_url="http://127.0.0.1:8000/v1")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --base-url does not apply to the llama-cpp backend (the model runs in-process); --base-url applies to --backend openai or tgi
    """
    if kind not in BACKENDS:
        raise ScrambledBenchError(f"unknown backend {kind!r}; choose one of: {', '.join(BACKENDS)}")
    backend = BACKENDS[kind]
    try:
        return backend.Config(**{name: value for name, value in options.items() if value is not None})
    except ValidationError as exc:
        raise ScrambledBenchError(_config_error(backend, exc)) from None


def create_backend(kind: str, **options: Any) -> Backend:
    """Build the backend named ``kind``; nothing is contacted until ``health_check``.

    >>> create_backend("vllm")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: unknown backend 'vllm'; choose one of: llama-cpp, openai, tgi, hf, transformers
    >>> create_backend("openai", model="m", base_url="ftp://host/v1")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --base-url must be an http(s) URL, got 'ftp://host/v1'
    >>> create_backend("openai", base_url="http://127.0.0.1:8000/v1")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: the openai backend needs --model (the name the server serves it under)
    """
    config = create_config(kind, **options)
    return BACKENDS[kind](config)


__all__ = [
    "BACKENDS",
    "Backend",
    "BackendConfig",
    "backends_help",
    "create_backend",
    "create_config",
    "option_name",
]
