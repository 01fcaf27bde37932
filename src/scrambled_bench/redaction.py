"""The one redactor: no API key, token or URL credential leaves the package in a message or a file.

Everything the package writes or prints that may carry a secret (error lines, ``config.json``, the
backend fingerprint) goes through :func:`redact`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# token shapes of OpenAI ("sk-..."), Hugging Face ("hf_...") and bearer headers, masked or not
_TOKEN_PATTERNS = re.compile(r"(sk-[A-Za-z0-9_*\-]{4,}|hf_[A-Za-z0-9_*]{4,}|Bearer\s+\S+)")
# credentials written into a URL: "user:key@" and key-like query parameters
_URL_USERINFO = re.compile(r"(https?://)[^/@\s]+@")
_URL_KEY_PARAMETER = re.compile(
    r"([?&](?:api[-_]?key|key|token|access_token|sig|signature|code)=)[^&\s#]+", re.IGNORECASE
)


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every given secret and anything shaped like a key or a URL credential replaced by ``***``.

    >>> redact("401: Incorrect API key provided: sk-abc*****wxyz", ("sk-abcdefwxyz",))
    '401: Incorrect API key provided: ***'
    >>> redact("token my-secret-value rejected", ("my-secret-value",))
    'token *** rejected'
    >>> redact("cannot reach https://me:pw@gw.example.org/v1?api-key=abc&x=1")
    'cannot reach https://***@gw.example.org/v1?api-key=***&x=1'
    >>> redact("http://127.0.0.1:8080/v1"), redact("gpt-4o")
    ('http://127.0.0.1:8080/v1', 'gpt-4o')
    """
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    text = _URL_USERINFO.sub(r"\1***@", text)
    text = _URL_KEY_PARAMETER.sub(r"\1***", text)
    return _TOKEN_PATTERNS.sub("***", text)
