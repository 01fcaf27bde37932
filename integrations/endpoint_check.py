"""``check-endpoint``: which task types an OpenAI-compatible endpoint can serve, asked before a long run.

Two requests, each the one a harness sends:

- **log-likelihood tasks** (multiple choice scored by each choice's log-probability: ARC, MMLU, HellaSwag
  through lm-eval's ``local-completions``): the request lm-eval sends per choice, ``/v1/completions`` with
  ``echo``, ``logprobs: 1``, ``max_tokens: 1``. lm-eval takes the choice's log-probabilities as
  ``token_logprobs[ctxlen:-1]``: it needs the echoed tokens to cover the prompt AND the generated token
  after it, each with its log-probability. An endpoint that echoes the prompt alone (llama-cpp-python's
  server: ``['Answer', ':', ' yeast']`` for the prompt ``Answer: yeast``, while its usage counts one
  completion token) loses each choice's last token, and a single-token choice gets log-likelihood 0.0:
  the task scores at chance, silently. The log-likelihood guard of ``score --from`` catches the 0.0 after
  the fact (:mod:`.loglikelihood`); this check is the protection before it, and the only one where every
  choice is several tokens long (the logs then show no sign of the lost token).
- **generation tasks** (``generate_until`` tasks, chat: what ``run``, lm-eval's
  ``local-chat-completions``, lighteval's litellm and Inspect send): a ``/v1/chat/completions`` request,
  which must answer with a message.

The judging is pure (:func:`judge_log_likelihood`, :func:`judge_generation`); :func:`check_endpoint` sends
the requests (standard library HTTP, the environment's proxies) and gives an :class:`EndpointReport`, whose
``exit_status`` the command returns: 0 both served, 4 log-likelihood tasks not served, 5 only generation
not served (bad input, an unreachable endpoint or a refused key: a one-line error, exit 2).
"""

from __future__ import annotations

import json
import math
import os
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.redaction import redact

PROBE_PROMPT = "Answer: yeast"
"""The log-likelihood probe's prompt (plain ASCII, several tokens in every tokenizer)."""
GENERATION_PROMPT = "Say yes."
EXIT_BOTH = 0
EXIT_NO_LOG_LIKELIHOOD = 4
"""The endpoint cannot serve log-likelihood tasks (whatever it does with generation)."""
EXIT_NO_GENERATION = 5
"""The endpoint serves log-likelihood tasks but not generation (chat) tasks."""
DEFAULT_TIMEOUT_SECONDS = 120.0
LOG_LIKELIHOOD = "log-likelihood tasks"
GENERATION = "generation tasks"

Post = Callable[[str, Mapping[str, Any] | None], tuple[int, Any]]
"""``(url, JSON body or None for a GET) -> (HTTP status, parsed JSON reply)``; raises on no answer."""


def api_root(base_url: str) -> str:
    """The OpenAI API root (``.../v1``) of what a user may give: the root itself, the server's root (every
    OpenAI-compatible server serves the API under ``/v1``), or one of its routes as lm-eval's ``base_url``
    names it (``.../v1/completions``, ``.../v1/chat/completions``). A one-line error where it is no http(s)
    URL.

    >>> api_root("http://127.0.0.1:8080"), api_root("http://127.0.0.1:8080/v1/")
    ('http://127.0.0.1:8080/v1', 'http://127.0.0.1:8080/v1')
    >>> api_root("http://h:8000/v1/completions"), api_root("https://api.example.org/v1/chat/completions")
    ('http://h:8000/v1', 'https://api.example.org/v1')
    >>> api_root("127.0.0.1:8080")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --base-url '127.0.0.1:8080' is not an http(s) URL (e.g. http://127.0.0.1:8080/v1)
    """
    parsed = urlparse(base_url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ScrambledBenchError(
            f"--base-url {redact(base_url)!r} is not an http(s) URL (e.g. http://127.0.0.1:8080/v1)"
        )
    root = base_url.strip().rstrip("/")
    for route in ("/chat/completions", "/completions"):
        if root.endswith(route):
            root = root[: -len(route)]
            break
    return root + "/v1" if urlparse(root).path in ("", "/") else root


def log_likelihood_request(model: str, prompt: str = PROBE_PROMPT) -> dict[str, Any]:
    """The body lm-eval's ``local-completions`` sends to score one continuation (lm-eval 0.4.13's
    ``LocalCompletionsAPI._create_payload`` for log-likelihood requests).

    >>> log_likelihood_request("m")
    {'model': 'm', 'prompt': 'Answer: yeast', 'temperature': 0, 'max_tokens': 1, 'logprobs': 1, 'seed': 1234, 'echo': True}
    """
    return {
        "model": model,
        "prompt": prompt,
        "temperature": 0,
        "max_tokens": 1,
        "logprobs": 1,
        "seed": 1234,
        "echo": True,
    }


def generation_request(model: str) -> dict[str, Any]:
    """A short greedy chat request, as a generation task sends one."""
    return {
        "model": model,
        "messages": [{"role": "user", "content": GENERATION_PROMPT}],
        "max_tokens": 4,
        "temperature": 0,
    }


def _count(usage: Any, key: str) -> int | None:
    value = usage.get(key) if isinstance(usage, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def judge_log_likelihood(prompt: str, reply: Any) -> tuple[bool, str]:
    """Whether an echo reply (to :func:`log_likelihood_request`) lets a harness score log-likelihoods, and
    why: the echoed tokens must spell the prompt and go on past it by the generated token (by the reply's
    usage counts where it gives them, else by the text), every token but the first with a log-probability.

    >>> prompt = "Answer: yeast"
    >>> def reply(tokens, values, usage=None):
    ...     return {"choices": [{"logprobs": {"tokens": tokens, "token_logprobs": values}}], "usage": usage}
    >>> judge_log_likelihood(prompt, reply(["Answer", ":", " yeast", ","], [None, -12.2, -6.2, -1.3]))[0]
    True
    >>> truncated = reply(["Answer", ":", " yeast"], [None, -12.2, -6.2], {"prompt_tokens": 3, "completion_tokens": 1})
    >>> judge_log_likelihood(prompt, truncated)
    (False, "the echoed tokens cover the prompt (3 tokens) but not the generated token: lm-eval's local-completions cuts a choice's log-probabilities as token_logprobs[ctxlen:-1], so every choice would lose its last token and a single-token choice would score log-likelihood 0.0")
    >>> judge_log_likelihood(prompt, {"choices": [{"text": "Answer: yeast,"}]})
    (False, 'the reply has no log-probabilities (logprobs with echo is not supported)')
    """
    choices = reply.get("choices") if isinstance(reply, Mapping) else None
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], Mapping) else {}
    logprobs = first.get("logprobs")
    if not isinstance(logprobs, Mapping):
        return False, "the reply has no log-probabilities (logprobs with echo is not supported)"
    tokens, values = logprobs.get("tokens"), logprobs.get("token_logprobs")
    if (
        not isinstance(tokens, list)
        or not isinstance(values, list)
        or not tokens
        or len(tokens) != len(values)
    ):
        return False, "the reply's logprobs list no tokens with their log-probabilities"
    text = "".join(tokens) if all(isinstance(token, str) for token in tokens) else None
    start = text.find(prompt) if text is not None else -1
    if text is not None and start < 0:
        return False, (
            f"the echoed tokens do not spell the prompt ({json.dumps(text[:80])} for {json.dumps(prompt)}): "
            "echo is not honoured"
        )
    prompt_tokens = _count(reply.get("usage"), "prompt_tokens")
    if prompt_tokens is not None:
        past = len(tokens) > prompt_tokens
    else:
        past = text is not None and len(text) > start + len(prompt)
    if not past:
        counted = prompt_tokens if prompt_tokens is not None else len(tokens)
        return False, (
            f"the echoed tokens cover the prompt ({counted} tokens) but not the generated token: lm-eval's "
            "local-completions cuts a choice's log-probabilities as token_logprobs[ctxlen:-1], so every choice "
            "would lose its last token and a single-token choice would score log-likelihood 0.0"
        )
    missing = [index for index, value in enumerate(values) if index and not _is_number(value)]
    if missing:
        return False, f"the echoed tokens lack log-probabilities (at token positions {missing[:5]})"
    return True, (
        f"the echoed tokens cover the prompt and the generated token ({len(tokens)} tokens), each with its "
        "log-probability"
    )


def judge_generation(reply: Any) -> tuple[bool, str]:
    """Whether a chat reply answers with a message, and what it said.

    >>> judge_generation({"choices": [{"message": {"role": "assistant", "content": "Yes"}}]})
    (True, "/v1/chat/completions answered ('Yes')")
    >>> judge_generation({"choices": []})
    (False, '/v1/chat/completions gave no message')
    """
    choices = reply.get("choices") if isinstance(reply, Mapping) else None
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], Mapping) else {}
    message = first.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if not isinstance(content, str):
        return False, "/v1/chat/completions gave no message"
    return True, f"/v1/chat/completions answered ({content[:40]!r})"


@dataclass(frozen=True)
class Verdict:
    """One task type: whether the endpoint can serve it, why, and the request and reply it rests on."""

    task_type: str
    supported: bool
    reason: str
    url: str
    request: Mapping[str, Any]
    status: int | None = None
    reply: Any = None

    def line(self) -> str:
        """The one-line verdict.

        >>> Verdict(GENERATION, True, "/v1/chat/completions answered ('Yes')", "u", {}).line()
        "generation tasks: yes: /v1/chat/completions answered ('Yes')"
        """
        return f"{self.task_type}: {'yes' if self.supported else 'no'}: {self.reason}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "supported": self.supported,
            "reason": self.reason,
            "url": self.url,
            "request": dict(self.request),
            "status": self.status,
            "reply": self.reply,
        }


@dataclass(frozen=True)
class EndpointReport:
    """What :func:`check_endpoint` found: the endpoint, the model, the two verdicts, the served models."""

    base_url: str
    model: str
    log_likelihood: Verdict
    generation: Verdict
    served: list[str] = field(default_factory=list)

    @property
    def exit_status(self) -> int:
        """0 both served, :data:`EXIT_NO_LOG_LIKELIHOOD` without log-likelihood tasks,
        :data:`EXIT_NO_GENERATION` without generation tasks only."""
        if not self.log_likelihood.supported:
            return EXIT_NO_LOG_LIKELIHOOD
        return EXIT_BOTH if self.generation.supported else EXIT_NO_GENERATION

    def lines(self) -> list[str]:
        """The verdicts, one line each, the log-likelihood one first."""
        return [self.log_likelihood.line(), self.generation.line()]

    def as_dict(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url,
            "model": self.model,
            "served_models": self.served,
            "log_likelihood": self.log_likelihood.as_dict(),
            "generation": self.generation.as_dict(),
            "exit_status": self.exit_status,
        }


def http_post(api_key: str | None, timeout: float) -> Post:
    """A :data:`Post` over urllib: JSON in and out, the key as a bearer token where one is given. An HTTP
    error status comes back as ``(status, its JSON or text)``; no answer at all raises ``OSError``."""

    def post(url: str, body: Mapping[str, Any] | None) -> tuple[int, Any]:
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        data = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(body).encode()
        request = urllib.request.Request(
            url, data=data, headers=headers, method="GET" if body is None else "POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        text = raw.decode("utf-8", errors="replace")
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    return post


def _server_message(reply: Any) -> str:
    """A server's error message, on one line."""
    if isinstance(reply, Mapping):
        error = reply.get("error", reply.get("detail", reply))
        if isinstance(error, Mapping):
            error = error.get("message", error)
        reply = error
    text = reply if isinstance(reply, str) else json.dumps(reply, default=str)
    text = " ".join(text.split())
    return text if len(text) <= 200 else text[:197] + "..."


def _send(
    post: Post, url: str, body: Mapping[str, Any] | None, api_key: str | None, timeout: float
) -> tuple[int, Any]:
    """One request; an endpoint that does not answer, or refuses the key, is a one-line error."""
    try:
        status, reply = post(url, body)
    except TimeoutError:
        raise ScrambledBenchError(
            f"{redact(url)} did not answer within {timeout:g} s (--timeout); is the server up and the model loaded?"
        ) from None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ScrambledBenchError(
            f"cannot reach {redact(url)} ({redact(str(reason), (api_key,))}); is the server running?"
        ) from None
    if status in (401, 403):
        raise ScrambledBenchError(
            f"{redact(url)} refused the API key (HTTP {status}); set --api-key or OPENAI_API_KEY"
        )
    return status, reply


def check_endpoint(
    base_url: str,
    model: str,
    *,
    api_key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    post: Post | None = None,
) -> EndpointReport:
    """Ask the endpoint at ``base_url`` (the API root, the server's root or one of its routes) for
    ``model``'s log-likelihoods and for a chat answer, and judge both. The models the endpoint lists
    (``/v1/models``, where it has the route) must include ``model``. ``api_key``: else ``OPENAI_API_KEY``,
    else none (a local server needs none)."""
    if not model.strip():
        raise ScrambledBenchError("--model is empty: give the name the server serves the model under")
    root = api_root(base_url)
    api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
    post = post or http_post(api_key, timeout)

    status, listing = _send(post, f"{root}/models", None, api_key, timeout)
    served: list[str] = []
    if status == 200 and isinstance(listing, Mapping) and isinstance(listing.get("data"), list):
        served = [str(entry.get("id")) for entry in listing["data"] if isinstance(entry, Mapping)]
        if served and model not in served:
            raise ScrambledBenchError(
                f"model {model!r} is not served at {redact(root)}; served: {', '.join(served[:10])}"
            )

    verdicts = []
    for task_type, route, body, judge in (
        (LOG_LIKELIHOOD, "/completions", log_likelihood_request(model), lambda r: judge_log_likelihood(PROBE_PROMPT, r)),
        (GENERATION, "/chat/completions", generation_request(model), judge_generation),
    ):  # fmt: skip
        url = f"{root}{route}"
        status, reply = _send(post, url, body, api_key, timeout)
        if status != 200:
            supported, reason = False, f"{url} answered HTTP {status}: {_server_message(reply)}"
        else:
            supported, reason = judge(reply)
        verdicts.append(
            Verdict(task_type, supported, redact(reason, (api_key,)), redact(url), body, status, reply)
        )
    return EndpointReport(redact(root), model, verdicts[0], verdicts[1], served)


__all__ = [
    "EXIT_BOTH",
    "EXIT_NO_GENERATION",
    "EXIT_NO_LOG_LIKELIHOOD",
    "EndpointReport",
    "Verdict",
    "api_root",
    "check_endpoint",
    "generation_request",
    "http_post",
    "judge_generation",
    "judge_log_likelihood",
    "log_likelihood_request",
]
