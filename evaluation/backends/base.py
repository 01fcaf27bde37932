"""The one small async interface every backend implements.

The evaluation engine (``evaluation/engine.py``) only ever talks to :class:`Backend`; tasks and prompts
(``evaluation/tasks/``) only ever produce :class:`GenerationRequest`. Retries, rate limits and
resumption live in the engine, so a backend does one request and classifies its failure.

A backend's options are declared once, as the fields of its :class:`BackendConfig`, each made with
:func:`backend_option`, which also says what the option is to a run: whether it names the run folder
(``identity``), whether ``run`` has a flag of its own for it, whether it is a secret.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.fields import FieldInfo

from scrambled_bench.redaction import redact


@dataclass(frozen=True)
class GenerationSettings:
    """Decoding settings; greedy by default, as in the paper."""

    max_new_tokens: int = 256
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    seed: int | None = 0

    def as_dict(self) -> dict[str, Any]:
        """The settings as JSON-ready fields (``stop`` a list), in field order; built field by field, not
        with ``dataclasses.asdict``, whose deep copy cost a tenth of the client's CPU per request.

        >>> GenerationSettings(max_new_tokens=8, stop=("\\n",)).as_dict()
        {'max_new_tokens': 8, 'temperature': 0.0, 'stop': ['\\n'], 'seed': 0}
        """
        values = {name: getattr(self, name) for name in _SETTINGS_FIELDS}
        values["stop"] = list(self.stop)
        return values


_SETTINGS_FIELDS = tuple(entry.name for entry in fields(GenerationSettings))


@dataclass(frozen=True)
class GenerationRequest:
    """One prompt to send. ``chat`` prompts go as one user message, others as a raw completion prompt.

    ``meta`` carries what the task needs back (sample id, config, gold answer...); it is not part of the key.
    """

    prompt: str
    chat: bool
    settings: GenerationSettings = GenerationSettings()
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def key(self, model: str) -> str:
        """The resume key: a hash of (model, prompt, chat, generation settings).

        >>> GenerationRequest("hi", chat=True).key("m") == GenerationRequest("hi", chat=True).key("m")
        True
        """
        payload = json.dumps(
            {"model": model, "prompt": self.prompt, "chat": self.chat, "settings": self.settings.as_dict()},
            sort_keys=True,
            ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


@dataclass
class Generation:
    """A backend's answer. Token counts are ``None`` where the server does not report usage."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    fingerprint: str | None = None


class BackendError(Exception):
    """A failed request. ``retryable`` failures (429, 5xx, timeouts, dropped connections, malformed
    responses) are retried by the engine with backoff; others (400, 401, 404...) are not.
    ``retry_after`` is the server's Retry-After in seconds, when it sent one. ``connection``: the endpoint
    could not be reached or dropped the connection (refused, reset, unreachable), as opposed to an answer
    it gave (any HTTP status) or a timeout; the engine stops a run whose endpoint does nothing else for long
    (``EngineSettings.dead_after``)."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        retry_after: float | None = None,
        connection: bool = False,
    ):
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.connection = connection


class ContextTooLongError(BackendError):
    """The prompt does not fit the model's context window. Never retried: the engine records the sample as
    a counted skip (``error_type: "context_too_long"``), reported beside the scores."""

    def __init__(self, message: str):
        super().__init__(message, retryable=False)


OPTION_MARKS = ("identity", "flag", "secret")
"""What :func:`backend_option` says of every option (each defaults to False)."""


def backend_option(
    default: Any,
    description: str,
    *,
    identity: bool,
    flag: bool = False,
    secret: bool = False,
    **constraints: Any,
) -> Any:
    """A backend config's field: a pydantic ``Field`` (``...`` as the default: required) with its
    description, marked with what the option is to a run.

    ``identity``: the option can change the numbers (which requests are sent or what comes back: a model,
    a context window, fp16 on a GPU, a batch's padding), so, where given, it enters the hash that names the
    run folder; an option that cannot (threads, timeouts) is not, and changing it resumes the same run.
    ``flag``: ``run`` has a flag of its own for it (``--n-ctx``); the others are reached with
    ``--backend-option KEY=VALUE``. ``secret``: never written anywhere (config.json records only whether
    it was given). A config lists its options as a table, one per line (``# fmt: skip``), as a command
    lists its flags.

    >>> class Config(BackendConfig):
    ...     batch_size: int = backend_option(8, "a batch", ge=1, identity=True)
    >>> option_marks(Config.model_fields["batch_size"])
    {'identity': True, 'flag': False, 'secret': False}
    """
    marks = {"identity": identity, "flag": flag, "secret": secret}
    return Field(default, description=description, json_schema_extra=marks, **constraints)


def option_marks(info: FieldInfo) -> dict[str, bool]:
    """What :func:`backend_option` marked a config field with (all False for a field it did not make).

    >>> option_marks(BackendConfig.model_fields["request_timeout"])
    {'identity': False, 'flag': True, 'secret': False}
    """
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    return {mark: bool(extra.get(mark, False)) for mark in OPTION_MARKS}


class BackendConfig(BaseModel):
    """The options of a backend. Each backend declares its own subclass with exactly the fields it takes:
    an option it does not take is rejected by the config (``extra="forbid"``), not by hand-written checks.
    Every field is made with :func:`backend_option`, so it says whether it names the run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    request_timeout: float = backend_option(120.0, "seconds before one attempt is abandoned", gt=0, identity=False, flag=True)  # fmt: skip
    """Network clients pass it to their HTTP client; the engine enforces it for every backend. It is the
    engine's setting (``EngineSettings.request_timeout``, ``--request-timeout``), never a ``--backend-option``."""


class EndpointConfig(BackendConfig):
    """A backend that talks to a server at ``base_url`` (an http(s) URL).

    The URL is kept in one form per endpoint (:meth:`endpoint_url`), the one the backend sends to: the
    forms a user may type for one server (``http://127.0.0.1:8080`` and ``http://127.0.0.1:8080/v1/`` for an
    OpenAI-compatible one) name one endpoint, one run folder and one set of answers."""

    base_url: str = backend_option(..., "the server's URL, e.g. http://127.0.0.1:8080", identity=True, flag=True)  # fmt: skip
    api_key: str | None = backend_option(None, "the key the endpoint wants; never written anywhere", identity=False, flag=True, secret=True)  # fmt: skip

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return cls.endpoint_url(value)

    @classmethod
    def endpoint_url(cls, value: str) -> str:
        """``value`` as this backend sends to it: the scheme and host in lower case, no default port, no
        ``/`` at the end; a backend adds what its API needs (:meth:`api_path`). A URL that is not http(s)
        is a ``ValueError``.

        >>> EndpointConfig.endpoint_url("HTTP://LocalHost:80/v1/")
        'http://localhost/v1'
        >>> EndpointConfig.endpoint_url("https://user:Secret@Host.example:8443/api/")
        'https://user:Secret@host.example:8443/api'
        """
        parsed = urlparse(value)
        scheme = parsed.scheme.lower()
        if scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"--base-url must be an http(s) URL, got {redact(value)!r}")
        credentials, at, host = parsed.netloc.rpartition("@")
        host = host.lower()
        default_port = ":80" if scheme == "http" else ":443"
        host = host.removesuffix(default_port)
        url = f"{scheme}://{credentials}{at}{host}{parsed.path}".rstrip("/")
        if parsed.query:
            url += f"?{parsed.query}"
        return cls.api_path(url)

    @classmethod
    def api_path(cls, url: str) -> str:
        """The URL a server's API is reached at, from the URL a user gave (no ``/`` at its end)."""
        return url


class Backend(ABC):
    """A place a model runs, registered by its :attr:`kind` (the ``--backend`` name) with its typed
    :attr:`Config`. Implementations: ``llama-cpp``, ``openai``, ``tgi``, ``hf``, ``transformers``."""

    #: the backend kind as named on the command line
    kind: ClassVar[str] = ""
    #: one line for ``--backend``'s help
    description: ClassVar[str] = ""
    #: the options it takes
    Config: ClassVar[type[BackendConfig]] = BackendConfig
    #: whether the model runs inside this process (no server, no URL)
    in_process: ClassVar[bool] = False
    #: requests the engine may have in flight with this backend at once (None: as many as --concurrency)
    max_concurrency: int | None = None
    #: the HTTP transport a network backend sends with ("aiohttp", or "httpx" when it fell back to httpx's
    #: slower pool), recorded in config.json; None for an in-process backend
    transport: str | None = None
    #: the fields of :meth:`health_check`'s fingerprint that say which endpoint answers (:meth:`endpoint_of`)
    endpoint_fields: ClassVar[tuple[str, ...]] = ("backend", "base_url", "model")

    @classmethod
    def endpoint_of(cls, fingerprint: Mapping[str, Any]) -> dict[str, Any]:
        """Which endpoint answers, from :meth:`health_check`'s fingerprint: those of :attr:`endpoint_fields`
        it gives. Every answer records it, and a stored answer is reused only for the endpoint that gave it
        (``evaluation/store.py``), so it holds what tells two endpoints serving one model name apart (a URL, a
        provider, the weights' revision) and nothing that changes between two health checks of one server.
        A backend without an override (an in-process one) is identified by its kind and model.

        >>> Backend.endpoint_of({"backend": "openai", "base_url": "http://h/v1", "model": "m", "served_models": ["m"]})
        {'backend': 'openai', 'base_url': 'http://h/v1', 'model': 'm'}
        """
        return {name: fingerprint[name] for name in cls.endpoint_fields if fingerprint.get(name) is not None}

    def __init__(self, model: str):
        self.model = model

    @abstractmethod
    async def health_check(self) -> dict[str, Any]:
        """Fail fast with a one-line :class:`scrambled_bench.errors.ScrambledBenchError` on an unreachable
        endpoint or unknown model; return the backend's fingerprint (for ``config.json``, never a key)."""

    @abstractmethod
    async def generate(self, request: GenerationRequest) -> Generation:
        """Send one request; raise :class:`BackendError` on failure."""

    async def count_tokens(self, text: str) -> int | None:
        """Tokens in ``text`` by the model's own tokenizer where the backend can tell (``--dry-run``)."""
        return None

    async def count_request_tokens(self, request: GenerationRequest) -> int | None:
        """The prompt tokens the model will be fed for ``request`` (``--dry-run``), None where the backend
        cannot tell offline. In-process backends count chat prompts inside the chat template; the default
        counts the bare prompt text."""
        return await self.count_tokens(request.prompt)

    @property
    def context_window(self) -> int | None:
        """The model's context length in tokens, where known."""
        return None

    async def aclose(self) -> None:
        """Release connections or the in-process model."""
