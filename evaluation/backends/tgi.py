"""A text-generation-inference (TGI) server through ``huggingface_hub.AsyncInferenceClient``: raw prompts
go to TGI's native ``/generate`` (``text_generation(details=True)``), chat prompts to its Messages API
(``chat_completion``, ``/v1/chat/completions``). The health check reads ``/info`` (model id, model sha,
TGI version), which also gives the backend its fingerprint.
"""

from __future__ import annotations

import importlib
import json
import os
from abc import abstractmethod
from typing import Any
from urllib.parse import urlsplit

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
    ContextTooLongError,
    EndpointConfig,
    Generation,
    GenerationRequest,
    backend_option,
)
from scrambled_bench.evaluation.backends.decoding import (
    chat_completion_parameters,
    text_generation_parameters,
)
from scrambled_bench.evaluation.backends.transport import AIOHTTP, HTTPX_POOL, fallback_message, warn_once
from scrambled_bench.redaction import redact

HEALTH_TIMEOUT_SECONDS = 10.0
# TGI names finish reasons its own way; records use the OpenAI words so reports can compare backends
_FINISH_REASONS = {"length": "length", "eos_token": "stop", "stop_sequence": "stop"}
_USER_ENDPOINT_ORIGINS: set[str] = set()
#: the transport huggingface_hub's async clients were given (None: not yet)
_installed_transport: str | None = None


def _origin(url: str) -> str:
    parts = urlsplit(str(url))
    return f"{parts.scheme}://{parts.netloc}".lower()


def install_async_client(base_url: str | None = None) -> str:
    """Give huggingface_hub's ``AsyncInferenceClient`` an HTTP client that sends through aiohttp, and let it
    reach the user's own endpoint (``base_url``) while ``HF_HUB_OFFLINE=1``; return the transport's name.

    huggingface_hub's default client is httpx's pool, several times the CPU per request at high
    concurrency (see :mod:`scrambled_bench.evaluation.backends.hf_transport`). Offline mode is meant to keep a
    run away from the Hugging Face Hub, but huggingface_hub blocks every request of its HTTP client,
    including those to a TGI server on the user's machine: requests to ``base_url`` skip that block, every
    other request keeps the library's hooks. Without aiohttp the default pool stays, and says so once.
    """
    global _installed_transport
    import huggingface_hub
    from huggingface_hub import constants

    if base_url is not None and constants.is_offline_mode():
        _USER_ENDPOINT_ORIGINS.add(_origin(base_url))
    if _installed_transport is not None:
        return _installed_transport

    def exempt(url: str) -> bool:
        return _origin(url) in _USER_ENDPOINT_ORIGINS

    try:  # hf_transport imports aiohttp, which is heavy and may be missing: only once a tgi client is made
        from scrambled_bench.evaluation.backends.hf_transport import hf_async_client
    except ImportError as exc:  # aiohttp missing: huggingface_hub's own pool, with the offline exemption
        warn_once(fallback_message("huggingface_hub", f"{exc.__class__.__name__}: {exc}"))
        from huggingface_hub.utils._http import default_async_client_factory

        def pooled() -> Any:
            client = default_async_client_factory()
            hooks = list(client.event_hooks.get("request", []))

            def skip_for_user_endpoints(hook: Any) -> Any:
                async def wrapped(request: Any) -> Any:
                    return None if exempt(str(request.url)) else await hook(request)

                return wrapped

            client.event_hooks["request"] = [skip_for_user_endpoints(hook) for hook in hooks]
            return client

        huggingface_hub.set_async_client_factory(pooled)
        _installed_transport = HTTPX_POOL
        return _installed_transport
    huggingface_hub.set_async_client_factory(lambda: hf_async_client(exempt))
    _installed_transport = AIOHTTP
    return _installed_transport


def _optional_module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def hf_error(exc: BaseException, secrets: tuple[str | None, ...]) -> BackendError:
    """Map a huggingface_hub / httpx2 failure to a :class:`BackendError` (retryable or not)."""
    from huggingface_hub.errors import (
        HfHubHTTPError,
        InferenceTimeoutError,
        OfflineModeIsEnabled,
        OverloadedError,
        TextGenerationError,
        ValidationError,
    )

    if isinstance(exc, InferenceTimeoutError):
        return BackendError("request timed out", retryable=True)
    if isinstance(exc, OfflineModeIsEnabled):
        return BackendError("HF_HUB_OFFLINE=1 blocks requests to the Hugging Face Hub", retryable=False)
    if isinstance(exc, TextGenerationError):
        response = getattr(exc.__cause__, "response", None)
        status = getattr(response, "status_code", None)
        message = redact(one_line(str(exc)), secrets)
        if isinstance(exc, ValidationError) and ("tokens" in message and "must be <=" in message):
            return ContextTooLongError(f"HTTP {status or 422}: {message}")
        if status is not None:
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            return error_for_status(status, message, retry_after=retry_after)
        return BackendError(message, retryable=isinstance(exc, OverloadedError))
    if isinstance(exc, HfHubHTTPError):
        response = exc.response
        body = ""
        try:
            payload = response.json()
            body = payload.get("error") if isinstance(payload, dict) else ""
            if isinstance(body, dict):
                body = body.get("message", "")
        except Exception:  # noqa: BLE001 - the body is only decoration for the message
            body = ""
        message = redact(one_line(str(body or exc)), secrets)
        return error_for_status(
            response.status_code, message, retry_after=parse_retry_after(response.headers.get("retry-after"))
        )
    # huggingface_hub sends with httpx (its transport here: hf_transport.AiohttpTransport), some releases
    # with httpx2: either's timeouts and transport errors
    modules = [module for module in (_optional_module("httpx"), _optional_module("httpx2")) if module]
    if isinstance(exc, tuple(module.TimeoutException for module in modules)):
        return BackendError("request timed out", retryable=True)
    if isinstance(exc, tuple(module.TransportError for module in modules)):
        return BackendError(
            f"connection failed ({exc.__class__.__name__}: {redact(one_line(exc), secrets)})",
            retryable=True,
            connection=True,
        )
    if isinstance(
        exc, (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, AttributeError, IndexError)
    ):
        # a 200 whose body is cut off or not the documented schema: worth another try
        return BackendError(f"malformed response ({exc.__class__.__name__})", retryable=True)
    if isinstance(exc, ValueError):
        # raised by the client before sending (unsupported provider/task, wrong kind of key): retrying cannot help
        return BackendError(f"request not sent: {redact(one_line(exc), secrets)}", retryable=False)
    return BackendError(f"{exc.__class__.__name__}: {redact(one_line(exc), secrets)}", retryable=False)


async def chat_through_inference_client(
    client: Any, model: str | None, request: GenerationRequest
) -> Generation:
    """The prompt as one user message through the Messages API (``AsyncInferenceClient.chat_completion``),
    which TGI servers and Inference Providers both speak. Errors propagate for :func:`hf_error` to classify."""
    reply = await client.chat_completion(
        [{"role": "user", "content": request.prompt}],
        model=model,
        **chat_completion_parameters(request.settings),
    )
    choice = reply.choices[0]
    usage = reply.usage
    return Generation(
        text=choice.message.content or "",
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        finish_reason=choice.finish_reason,
        fingerprint=getattr(reply, "system_fingerprint", None),
    )


class InferenceClientBackend(Backend):
    """A backend behind ``huggingface_hub.AsyncInferenceClient`` (``self._client``, keyed by
    ``self._api_key``): chat prompts through the Messages API, raw prompts by :meth:`_complete`, every
    failure classified by :func:`hf_error` with the key redacted."""

    _api_key: str | None
    _client: Any

    def _secrets(self) -> tuple[str | None, ...]:
        return (self._api_key,)

    @abstractmethod
    async def _complete(self, request: GenerationRequest) -> Generation:
        """A raw (non-chat) prompt; errors propagate for :func:`hf_error` to classify."""

    async def generate(self, request: GenerationRequest) -> Generation:
        try:
            if request.chat:
                return await chat_through_inference_client(self._client, self.model or None, request)
            return await self._complete(request)
        except BackendError:
            raise
        except Exception as exc:  # noqa: BLE001 - classified into retryable / not by hf_error
            raise hf_error(exc, self._secrets()) from None

    async def aclose(self) -> None:
        await self._client.close()


class TGIConfig(EndpointConfig):
    model: str | None = backend_option(None, "the model the server must be serving (default: what /info says)", identity=True, flag=True)  # fmt: skip

    @classmethod
    def api_path(cls, url: str) -> str:
        """TGI's native routes (``/generate``, ``/info``) live at the server's root, with no ``/v1``; the
        client adds ``/v1`` for chat itself.

        >>> TGIConfig.api_path("http://h:8080/v1"), TGIConfig.api_path("http://h:8080")
        ('http://h:8080', 'http://h:8080')
        """
        return url.removesuffix("/v1")


class TGIBackend(InferenceClientBackend):
    """``base_url`` is the server root (``http://host:port``, no ``/v1``). ``model`` defaults to the
    ``model_id`` in ``/info``."""

    kind = "tgi"
    description = (
        "a text-generation-inference server: native /generate for raw prompts, Messages API for chat; "
        "--base-url is the server root"
    )
    Config = TGIConfig
    #: the URL and what /info says it serves: the model's id and the revision (sha) of its weights
    endpoint_fields = ("backend", "base_url", "model", "model_id", "model_sha")

    def __init__(self, config: TGIConfig):
        base_url, request_timeout = config.base_url, config.request_timeout
        super().__init__(config.model or "")
        from huggingface_hub import AsyncInferenceClient

        self.base_url = base_url
        self._api_key = config.api_key or os.environ.get("HF_TOKEN")
        self.transport = install_async_client(base_url)
        # a URL as `model` is POSTed to as is: TGI's native route; `base_url` gets /v1/chat/completions appended
        self._generate_client = AsyncInferenceClient(
            model=base_url + "/generate",
            provider="hf-inference",
            api_key=self._api_key,
            timeout=request_timeout,
        )
        self._client = AsyncInferenceClient(
            base_url=base_url, provider="hf-inference", api_key=self._api_key, timeout=request_timeout
        )
        self._info: dict[str, Any] = {}

    @property
    def context_window(self) -> int | None:
        return self._info.get("max_total_tokens")

    async def health_check(self) -> dict[str, Any]:
        from huggingface_hub import AsyncInferenceClient

        probe = AsyncInferenceClient(
            model=self.base_url,
            provider="hf-inference",
            api_key=self._api_key,
            timeout=HEALTH_TIMEOUT_SECONDS,
        )
        try:
            info = await probe.get_endpoint_info()
        except Exception as exc:  # noqa: BLE001 - every failure becomes one line for the user
            error = hf_error(exc, self._secrets())
            status = getattr(getattr(exc, "response", None), "status_code", None)
            if status == 404:
                info = {}  # an OpenAI-style server without TGI's /info: the model is checked on the first request
            elif "connection failed" in str(error) or "timed out" in str(error):
                raise ScrambledBenchError(
                    f"cannot reach {redact(self.base_url)} ({error}); is the server running?"
                ) from None
            else:
                raise ScrambledBenchError(f"{redact(self.base_url)}/info failed: {error}") from None
        finally:
            await probe.close()
        if not isinstance(info, dict):
            raise ScrambledBenchError(f"{redact(self.base_url)}/info did not return a JSON object")
        self._info = info
        served = info.get("model_id")
        if not self.model:
            if not served:
                raise ScrambledBenchError(
                    f"{redact(self.base_url)} does not say which model it serves; pass --model"
                )
            self.model = served
        elif served and served != self.model:
            raise not_served(self.model, self.base_url, served)
        return server_facts(
            self.kind,
            self.base_url,
            self.model,
            model_id=served,
            **{key: info.get(key) for key in ("model_sha", "version", "sha", "max_total_tokens")},
        )

    async def _complete(self, request: GenerationRequest) -> Generation:
        """TGI's native ``/generate``, with the details that give token counts and the finish reason."""
        reply = await self._generate_client.text_generation(
            request.prompt,
            details=True,
            decoder_input_details=True,  # the prefill tokens: TGI's only report of the prompt's length
            **text_generation_parameters(request.settings),
        )
        details = reply.details
        finish = getattr(details, "finish_reason", None)
        prefill = getattr(details, "prefill", None)
        return Generation(
            text=reply.generated_text or "",
            prompt_tokens=len(prefill) if prefill else None,
            completion_tokens=getattr(details, "generated_tokens", None),
            finish_reason=_FINISH_REASONS.get(str(finish), finish) if finish else None,
        )

    async def aclose(self) -> None:
        await super().aclose()
        await self._generate_client.close()
