"""Where a model runs: one class per backend, each with a typed config, all behind :class:`~.base.Backend`.

:data:`BACKENDS` is the one registry: it feeds ``--backend`` and its help, the listing of every backend's
options (``run --help``), the run settings, and :func:`create_backend`, which validates options with the
backend's own config class, so an option a backend does not take is a one-line error naming the option and
the backend's options, never silently ignored. Each backend's heavy client library is imported only when
that backend is created, so ``scrambled-bench --help`` stays fast.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args, get_origin

from pydantic import TypeAdapter, ValidationError

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends.base import Backend, BackendConfig, EndpointConfig, option_marks
from scrambled_bench.evaluation.backends.inference_providers import InferenceProvidersBackend
from scrambled_bench.evaluation.backends.llama_cpp import LlamaCppBackend
from scrambled_bench.evaluation.backends.openai_compatible import OpenAICompatibleBackend
from scrambled_bench.evaluation.backends.tgi import TGIBackend
from scrambled_bench.evaluation.backends.transformers_local import TransformersBackend

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

ENGINE_OPTIONS = frozenset(BackendConfig.model_fields)
"""The options every backend's config has from :class:`~.base.BackendConfig`: the engine sets them
(``request_timeout``, from ``EngineSettings``), so they are never a ``--backend-option`` nor listed."""


def option_name(field: str) -> str:
    """The command-line option of a config field.

    >>> option_name("base_url")
    '--base-url'
    """
    return "--" + field.replace("_", "-")


def spelled(config: type[BackendConfig], name: str) -> str:
    """How a user gives option ``name``: its own flag where ``run`` has one, else ``--backend-option``.

    >>> spelled(BACKENDS["llama-cpp"].Config, "n_ctx"), spelled(BACKENDS["llama-cpp"].Config, "n_threads")
    ('--n-ctx', '--backend-option n_threads')
    """
    info = config.model_fields.get(name)
    return (
        option_name(name) if info is not None and option_marks(info)["flag"] else f"--backend-option {name}"
    )


def backends_help() -> str:
    """``--backend``'s help: each backend and what it is.

    >>> backends_help().splitlines()[0].startswith("llama-cpp: embedded default")
    True
    """
    return "\n".join(f"{kind}: {backend.description}" for kind, backend in BACKENDS.items())


def _value_name(annotation: Any) -> str:
    """The metavar of an option's type: ``int | None`` -> ``INT``; a ``Literal`` lists its values."""
    if get_origin(annotation) is Literal:
        return "|".join(map(str, get_args(annotation)))
    kinds = [kind for kind in (get_args(annotation) or (annotation,)) if kind is not type(None)]
    names = {int: "INT", float: "NUMBER", bool: "BOOL", str: "TEXT"}
    return "|".join(names.get(kind, getattr(kind, "__name__", str(kind)).upper()) for kind in kinds)


def backend_options(kind: str) -> dict[str, str]:
    """The options of backend ``kind`` a user gives, as ``run`` spells each, with what it is.

    >>> backend_options("transformers")["--backend-option batch_size=INT"]
    'requests decoded together in one generate() call (--concurrency caps it); default 8; names the run'
    """
    listing = {}
    for name, info in BACKENDS[kind].Config.model_fields.items():
        if name in ENGINE_OPTIONS:
            continue
        marks = option_marks(info)
        how = (
            option_name(name) if marks["flag"] else f"--backend-option {name}={_value_name(info.annotation)}"
        )
        about = [info.description or ""]
        if info.is_required():
            about.append("required")
        elif info.default is not None:
            about.append(f"default {info.default}")
        if marks["identity"]:
            about.append("names the run")
        listing[how] = "; ".join(about)
    return listing


def backend_options_help() -> str:
    """``run --help``'s listing of every backend's options, generated from their configs.

    >>> print(backend_options_help().split("\\n\\n")[0])
    \b
    llama-cpp:
      --model: a .gguf file (default: the embedded SmolLM2-135M-Instruct); names the run
      --n-ctx: the context window in tokens (default: the model's own); longer prompts are counted skips; names the run
      --backend-option n_threads=INT: CPU threads, prompts included (default: OMP_NUM_THREADS, else every core of a small machine)
    """
    blocks = []
    for kind in BACKENDS:
        lines = [f"  {how}: {about}" for how, about in backend_options(kind).items()]
        blocks.append("\b\n" + f"{kind}:\n" + "\n".join(lines))
    return "\n\n".join(blocks)


def _config_error(backend: type[Backend], error: Mapping[str, Any]) -> str:
    """A problem of a config (one of pydantic's errors), in one line naming the option as the command line
    spells it (and, for an option the backend does not take or a value of the wrong type, the options it
    takes)."""
    field = str(error["loc"][0]) if error["loc"] else ""
    kind = backend.kind
    takes = f"; the {kind} backend takes {', '.join(backend_options(kind))}"
    if error["type"] == "extra_forbidden":
        takers = [name for name, other in BACKENDS.items() if field in other.Config.model_fields]
        option = spelled(BACKENDS[takers[0]].Config, field) if takers else f"--backend-option {field}"
        where = " (the model runs in-process)" if backend.in_process else ""
        applies = f"; {option} applies to --backend {' or '.join(takers)}" if takers else ""
        return f"{option} does not apply to the {kind} backend{where}{applies}{takes}"
    option = spelled(backend.Config, field)
    if error["type"] == "missing":
        description = backend.Config.model_fields[field].description
        return f"the {kind} backend needs {option}" + (f" ({description})" if description else "")
    if error["type"] == "value_error":
        return str(error["ctx"]["error"])
    return f"{option}: {error['msg'][0].lower()}{error['msg'][1:]}, got {error.get('input')!r}{takes}"


def create_config(kind: str, **options: Any) -> BackendConfig:
    """The typed config of backend ``kind`` from options as the command line names them; ``None`` means
    "not given".

    >>> create_config("openai", model="m", base_url="http://127.0.0.1:8080").base_url
    'http://127.0.0.1:8080/v1'
    >>> create_config("llama-cpp", base_url="http://127.0.0.1:8000/v1")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --base-url does not apply to the llama-cpp backend (the model runs in-process); --base-url applies to --backend openai or tgi; the llama-cpp backend takes --model, --n-ctx, --backend-option n_threads=INT
    """
    if kind not in BACKENDS:
        raise ScrambledBenchError(f"unknown backend {kind!r}; choose one of: {', '.join(BACKENDS)}")
    backend = BACKENDS[kind]
    try:
        return backend.Config(**{name: value for name, value in options.items() if value is not None})
    except ValidationError as exc:
        raise ScrambledBenchError(_config_error(backend, exc.errors()[0])) from None


def given_options(kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options given for backend ``kind`` (``None``: not given), each as its field's type (the
    command line's ``"32"`` is ``32``), once the backend's config accepts each (a required one may still be
    missing: :func:`create_backend` asks for it); otherwise a one-line error naming the backend's options.
    A base URL is the one the backend sends to (:meth:`~.base.EndpointConfig.endpoint_url`): the forms of one
    server's URL name one run folder, and config.json records the URL that was used.

    >>> given_options("transformers", {"model": "m", "batch_size": "32", "device": None})
    {'model': 'm', 'batch_size': 32}
    >>> [given_options(kind, {"base_url": url})["base_url"] for kind, url in
    ...  (("openai", "http://127.0.0.1:8080"), ("openai", "http://127.0.0.1:8080/v1/"), ("tgi", "http://h:80/v1"))]
    ['http://127.0.0.1:8080/v1', 'http://127.0.0.1:8080/v1', 'http://h']
    >>> given_options("transformers", {"model": "m", "batch_size": "many"})
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --backend-option batch_size: input should be a valid integer, unable to parse string as an integer, got 'many'; the transformers backend takes --model, --backend-option batch_size=INT, --backend-option device=TEXT, --backend-option dtype=auto|float32|float16|bfloat16, --backend-option compile=BOOL
    >>> given_options("transformers", {"model": "m", "request_timeout": 5})
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: request_timeout is the engine's setting, not a backend option: give --request-timeout
    """
    if kind not in BACKENDS:
        raise ScrambledBenchError(f"unknown backend {kind!r}; choose one of: {', '.join(BACKENDS)}")
    backend = BACKENDS[kind]
    given = {name: value for name, value in options.items() if value is not None}
    for name in sorted(ENGINE_OPTIONS & set(given)):
        raise ScrambledBenchError(
            f"{name} is the engine's setting, not a backend option: give {option_name(name)}"
        )
    try:
        backend.Config(**given)
    except ValidationError as exc:
        # an option still missing is the backend's to ask for when it is created: settings that only plan
        # requests (a dry run's counts, a benchmark) need no server
        problems = [error for error in exc.errors() if error["type"] != "missing"]
        if problems:
            raise ScrambledBenchError(_config_error(backend, problems[0])) from None
    fields = backend.Config.model_fields
    typed = {
        name: TypeAdapter(fields[name].annotation).validate_python(value) for name, value in given.items()
    }
    if "base_url" in typed and issubclass(backend.Config, EndpointConfig):
        typed["base_url"] = backend.Config.endpoint_url(typed["base_url"])
    return typed


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
    "ENGINE_OPTIONS",
    "Backend",
    "BackendConfig",
    "backend_options",
    "backend_options_help",
    "backends_help",
    "create_backend",
    "create_config",
    "given_options",
    "option_name",
    "spelled",
]
