"""Any OpenAI-compatible server (OpenAI, vLLM, SGLang, llama.cpp, TGI's Messages API...): chat requests go
to ``/v1/chat/completions``, raw prompts to ``/v1/completions``, as JSON over one aiohttp session; the
health check lists ``/v1/models`` through the official ``openai`` client.

Requests skip the openai client's layers because at hundreds of requests a second the client's CPU is
what limits a run (benchmarks/bench_client_overhead.py). Nothing here retries: the engine retries, with
backoff and Retry-After, and counts what it does.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any
from urllib.parse import urlparse

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends._common import (
    error_for_status,
    not_served,
    one_line,
    parse_retry_after,
    server_facts,
)
from scrambled_bench.evaluation.backends.base import (
    Backend,
    BackendError,
    EndpointConfig,
    Generation,
    GenerationRequest,
    backend_option,
)
from scrambled_bench.evaluation.backends.decoding import openai_parameters
from scrambled_bench.evaluation.backends.transport import (
    AIOHTTP,
    IDLE_CONNECTION_SECONDS,
    openai_http_client,
)
from scrambled_bench.redaction import redact

#: sent when neither --api-key nor OPENAI_API_KEY is set: local servers need none, the client needs one
PLACEHOLDER_KEY = "sk-no-key-required"
HEALTH_TIMEOUT_SECONDS = 10.0


class OpenAIConfig(EndpointConfig):
    model: str = backend_option(..., "the name the server serves it under", identity=True, flag=True)  # fmt: skip

    @classmethod
    def api_path(cls, url: str) -> str:
        """A bare server root gets ``/v1``: every OpenAI-compatible server serves the API under it.

        >>> OpenAIConfig.api_path("http://h:8080"), OpenAIConfig.api_path("http://h:8080/api/v1")
        ('http://h:8080/v1', 'http://h:8080/api/v1')
        """
        return url + "/v1" if urlparse(url).path in ("", "/") else url


class OpenAICompatibleBackend(Backend):
    """``base_url`` is the API root including ``/v1`` (e.g. ``http://127.0.0.1:8080/v1``)."""

    kind = "openai"
    description = (
        "any OpenAI-compatible server (/v1/chat/completions, /v1/completions); --base-url ending in /v1"
    )
    Config = OpenAIConfig
    #: the URL, the model's id in /v1/models and the weights it names there (where it does); the
    #: ``system_fingerprint`` of each reply is recorded with each answer (it is known only once one comes)
    endpoint_fields = ("backend", "base_url", "model", "model_root")

    def __init__(self, config: OpenAIConfig):
        base_url, request_timeout = config.base_url, config.request_timeout
        super().__init__(config.model)
        import openai

        self.base_url = base_url
        self._api_key = config.api_key or os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_KEY
        # OpenAI's newer chat models reject max_tokens and want max_completion_tokens; most other servers
        # only know max_tokens. Start with the common one, switch once if the server says so.
        self._chat_length_field = "max_tokens"
        self._request_timeout = request_timeout
        self._session: Any = None  # an aiohttp.ClientSession, opened by the first request (in its loop)
        self._proxy: dict[str, Any] = {}
        #: generate() sends through aiohttp itself; the openai client (for /models) through its own
        self.transport = AIOHTTP
        http_client, self.client_transport = openai_http_client(request_timeout)
        self._client = openai.AsyncOpenAI(
            api_key=self._api_key,
            base_url=base_url,
            timeout=request_timeout,
            max_retries=0,
            http_client=http_client,
        )

    def _redact(self, text: str) -> str:
        return redact(text, (self._api_key,))

    async def health_check(self) -> dict[str, Any]:
        import openai

        client = self._client.with_options(timeout=HEALTH_TIMEOUT_SECONDS)
        root = None
        try:
            page = await client.models.list()
            served = [entry.id for entry in page.data]
            # the weights the server names for the model (vLLM's and SGLang's "root": a path or Hub id)
            root = next((getattr(e, "root", None) for e in page.data if e.id == self.model), None)
        except openai.APIConnectionError as exc:
            raise ScrambledBenchError(
                f"cannot reach {redact(self.base_url)} ({self._redact(one_line(_root_cause(exc)))}); is the server running?"
            ) from None
        except openai.APIStatusError as exc:
            if exc.status_code in (401, 403):
                raise ScrambledBenchError(
                    f"{redact(self.base_url)} refused the API key (HTTP {exc.status_code}); set --api-key or OPENAI_API_KEY"
                ) from None
            if exc.status_code == 404:
                served = []  # a server without /v1/models: the model is checked by the first request instead
            else:
                raise ScrambledBenchError(
                    f"{redact(self.base_url)}/models answered HTTP {exc.status_code}: {self._redact(one_line(exc.message))}"
                ) from None
        except (openai.APIError, ValueError) as exc:
            raise ScrambledBenchError(
                f"{redact(self.base_url)}/models gave an unreadable answer ({self._redact(one_line(exc))})"
            ) from None
        if served and self.model not in served:
            raise not_served(self.model, self.base_url, _listing(served))
        return server_facts(
            self.kind,
            self.base_url,
            self.model,
            model_root=root if isinstance(root, str) else None,
            served_models=served,
        )

    async def generate(self, request: GenerationRequest) -> Generation:
        import aiohttp

        try:
            if request.chat:
                field = self._chat_length_field
                status, headers, raw = await self._post(
                    "/chat/completions", chat_body(self.model, request, field)
                )
                if status == 400 and field == "max_tokens" and "max_completion_tokens" in _error_text(raw):
                    # OpenAI's newer chat models: switch once, for this and every later request
                    self._chat_length_field = field = "max_completion_tokens"
                    status, headers, raw = await self._post(
                        "/chat/completions", chat_body(self.model, request, field)
                    )
            else:
                body = {
                    "prompt": request.prompt,
                    "max_tokens": request.settings.max_new_tokens,
                    "model": self.model,
                    **openai_parameters(request.settings),
                }
                status, headers, raw = await self._post("/completions", body)
        except asyncio.TimeoutError:
            raise BackendError("request timed out", retryable=True) from None
        except (aiohttp.ClientError, OSError) as exc:  # refused, reset, dropped mid-body...
            raise BackendError(
                f"connection failed ({self._redact(one_line(_root_cause(exc)))})",
                retryable=True,
                connection=True,
            ) from None
        if status >= 400:
            retry_after = parse_retry_after(headers.get("retry-after"))
            raise error_for_status(status, self._redact(_error_text(raw)), retry_after=retry_after)
        try:
            reply = json.loads(raw)
            choice = reply["choices"][0]
            text = (choice["message"]["content"] if request.chat else choice["text"]) or ""
            if not isinstance(text, str):
                raise TypeError(f"the answer's text is {type(text).__name__}, not a string")
            usage = reply.get("usage") or {}
            return Generation(
                text=text,
                prompt_tokens=usage.get("prompt_tokens"),
                completion_tokens=usage.get("completion_tokens"),
                finish_reason=choice.get("finish_reason"),
                fingerprint=reply.get("system_fingerprint"),
            )
        except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
            # a 200 whose body is not the documented JSON (cut off, garbled): worth another try
            raise BackendError(
                f"malformed response ({exc.__class__.__name__}: {self._redact(one_line(exc, 120))})",
                retryable=True,
            ) from None

    async def _post(self, path: str, body: dict[str, Any]) -> tuple[int, Any, bytes]:
        """POST ``body`` as JSON to ``base_url + path`` through the backend's aiohttp session: the status,
        headers and raw body. Requests go straight to aiohttp, not through the openai client's layers
        (request options, httpx2 models, typed replies): those cost about half the client's CPU per
        request, and at hundreds of requests a second the client's CPU is what limits a run."""
        if self._session is None:
            import aiohttp

            self._session = aiohttp.ClientSession(
                # no cap on connections (the engine bounds the requests in flight); idle ones are closed
                # before uvicorn-based servers drop them
                connector=aiohttp.TCPConnector(limit=0, keepalive_timeout=IDLE_CONNECTION_SECONDS),
                headers={"Authorization": f"Bearer {self._api_key}", "Content-Type": "application/json"},
                timeout=aiohttp.ClientTimeout(total=self._request_timeout),
            )
            self._proxy = env_proxy(self.base_url)
        async with self._session.post(
            self.base_url + path, data=json.dumps(body).encode(), **self._proxy
        ) as response:
            return response.status, response.headers, await response.read()

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        await self._client.close()


def chat_body(model: str, request: GenerationRequest, length_field: str = "max_tokens") -> dict[str, Any]:
    """The JSON body of a chat request to ``/chat/completions``: the prompt as the user's one message, the
    decoding settings, and the length cap under ``length_field`` (``max_tokens``, or the
    ``max_completion_tokens`` OpenAI's newer chat models want).

    >>> from scrambled_bench.evaluation.backends.base import GenerationSettings
    >>> chat_body("m", GenerationRequest("Hi", chat=True, settings=GenerationSettings(max_new_tokens=4)))
    {'messages': [{'role': 'user', 'content': 'Hi'}], 'model': 'm', 'temperature': 0.0, 'seed': 0, 'max_tokens': 4}
    """
    return {
        "messages": [{"role": "user", "content": request.prompt}],
        "model": model,
        **openai_parameters(request.settings),
        length_field: request.settings.max_new_tokens,
    }


def env_proxy(url: str) -> dict[str, Any]:
    """The proxy arguments for aiohttp requests to ``url`` from ``HTTP(S)_PROXY``/``NO_PROXY`` (as the
    openai client honours them), read once per session.

    Not aiohttp's ``trust_env=True``: that reads the environment in a worker thread for every request,
    and ``~/.netrc`` in another, two thread hops that cost a fifth of the client's CPU per request at
    hundreds of requests a second (benchmarks/bench_client_overhead.py). The netrc login it would add
    is not wanted either: requests carry the API key's ``Authorization`` header.

    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"HTTP_PROXY": "http://proxy.example:3128", "NO_PROXY": "localhost"}):
    ...     env_proxy("http://10.0.0.7:8080/v1")["proxy"], env_proxy("http://localhost:8080/v1")
    (URL('http://proxy.example:3128'), {})
    """
    from aiohttp.helpers import get_env_proxy_for_url
    from yarl import URL

    try:
        proxy, proxy_auth = get_env_proxy_for_url(URL(url))
    except LookupError:  # no proxy for this scheme, or NO_PROXY names the host
        return {}
    return {"proxy": proxy, "proxy_auth": proxy_auth}


def _listing(names: list[str], limit: int = 20) -> str:
    """Names for a one-line message, the first ``limit`` of them (a hosted API serves hundreds).

    >>> _listing(["a", "b"]), _listing([str(i) for i in range(25)], limit=3)
    ('a, b', '0, 1, 2 and 22 more')
    """
    shown = ", ".join(names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit} more"


def _error_text(raw: bytes) -> str:
    """The server's own error text from an error reply's body (OpenAI's ``{"error": {"message"}}``, a bare
    ``{"message"}`` or ``{"error": "..."}``, else the body as text).

    >>> _error_text(b'{"error": {"message": "bad model", "type": "invalid_request_error"}}')
    'bad model'
    >>> _error_text(b'{"error": "overloaded"}'), _error_text(b"<html>502</html>")
    ('overloaded', '<html>502</html>')
    """
    text = raw.decode("utf-8", "replace")
    try:
        body = json.loads(text)
    except ValueError:
        return text
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, str) and inner:
            return inner
        message = (inner if isinstance(inner, dict) else body).get("message")
        if isinstance(message, str) and message:
            return message
    return text


def _root_cause(exc: BaseException) -> str:
    """The innermost exception's text, which names the real problem (refused, reset, DNS...)."""
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return f"{exc.__class__.__name__}: {exc}" if str(exc) else exc.__class__.__name__
