"""Helpers shared by the backends: HTTP-status classification and one-line messages."""

from __future__ import annotations

from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends.base import BackendError, ContextTooLongError
from scrambled_bench.redaction import redact

_CONTEXT_PHRASES = (
    "context length",
    "context window",
    "context_length",
    "maximum context",
    "too many tokens",
    "input validation error: `inputs` tokens",
    "must be <=",
    "exceed context",
    "prompt is too long",
)


def server_facts(kind: str, base_url: str, model: str, **facts: Any) -> dict[str, Any]:
    """What a server backend's health check records: the backend, the base URL and the model first (the
    identity that keeps two servers' runs apart, the same keys for every server backend), then what the
    server itself said.

    >>> server_facts("tgi", "http://127.0.0.1:8080", "smollm2", model_sha=None)
    {'backend': 'tgi', 'base_url': 'http://127.0.0.1:8080', 'model': 'smollm2', 'model_sha': None}
    """
    return {"backend": kind, "base_url": base_url, "model": model, **facts}


def not_served(model: str, base_url: str, served: str) -> ScrambledBenchError:
    """The one line for a server that serves another model than the one asked for.

    >>> str(not_served("a", "http://127.0.0.1:8080/v1", "b"))
    "model 'a' is not served at http://127.0.0.1:8080/v1; served: b"
    """
    return ScrambledBenchError(f"model {model!r} is not served at {redact(base_url)}; served: {served}")


def one_line(text: str, limit: int = 300) -> str:
    """Collapse whitespace so a server's message fits one line, and cut it to ``limit`` characters.

    >>> one_line("bad\\n  request   body")
    'bad request body'
    """
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds form; HTTP dates are rare from inference servers).

    >>> parse_retry_after("2"), parse_retry_after("1.5"), parse_retry_after(None), parse_retry_after("soon")
    (2.0, 1.5, None, None)
    """
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        from datetime import datetime, timezone
        from email.utils import parsedate_to_datetime

        try:
            moment = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, (moment - datetime.now(timezone.utc)).total_seconds())
    return max(0.0, seconds)


def looks_like_context_overflow(message: str) -> bool:
    """Whether a 400/413/422 message says the prompt is longer than the model's window.

    >>> looks_like_context_overflow("This model's maximum context length is 4096 tokens")
    True
    >>> looks_like_context_overflow("invalid temperature")
    False
    """
    lowered = message.lower()
    return any(phrase in lowered for phrase in _CONTEXT_PHRASES)


def error_for_status(status: int, message: str, *, retry_after: float | None = None) -> BackendError:
    """The :class:`BackendError` for an HTTP status: 408/409/425/429/5xx retryable; a context overflow
    is :class:`ContextTooLongError`; other 4xx are not retried.

    >>> error_for_status(503, "busy").retryable, error_for_status(401, "no").retryable
    (True, False)
    >>> type(error_for_status(400, "maximum context length is 2048")).__name__
    'ContextTooLongError'
    """
    text = f"HTTP {status}: {one_line(message)}"
    if status in (400, 413, 422) and looks_like_context_overflow(message):
        return ContextTooLongError(text)
    if status == 401 or status == 403:
        return BackendError(f"HTTP {status}: authentication failed, check the API key", retryable=False)
    retryable = status in (408, 409, 425, 429) or status >= 500
    return BackendError(text, retryable=retryable, retry_after=retry_after)
