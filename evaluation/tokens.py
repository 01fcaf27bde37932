"""Prompt tokens before anything is sent (``run --dry-run``), counted by the model's own tokenizer.

A token estimate decides what a paid run costs, and scrambled text takes more tokens than the same words
in order (the paper's own finding), so characters / 4 was a fifth to a half low on the quick suite, and
blind to the scramble type.
:func:`choose_token_counter` takes the first of, in order:

1. the tokenizer the user names (``--tokenizer``): a ``.gguf`` file (llama.cpp's own tokenizer and the
   GGUF's chat template), a local tokenizer folder or a Hub id (``transformers``, from the local cache
   when offline);
2. the server's tokenize endpoint: llama-cpp-python's ``/extras/tokenize``, vLLM's and llama.cpp's
   ``/tokenize``, TGI's ``/tokenize``. vLLM, TGI (``/chat_tokenize``) and llama.cpp (``/apply-template``)
   apply their own chat template to chat prompts; llama-cpp-python's tokenizes raw text, so the client
   applies the chat template of the served model's file where the model name is one (else the count is a
   stated lower bound);
3. the model itself: an in-process backend counts exactly; a served model named by a local ``.gguf`` or
   folder is counted with that file's tokenizer, one named by a Hub id with its tokenizer where it is in
   the local Hugging Face cache (never downloaded);
4. ``tiktoken`` for OpenAI model names (its encodings need a download; offline, litellm's cached copies
   are used where installed);
5. only then characters / 4, labelled rough.

Each step that cannot be had says why in :attr:`TokenCounter.notes`, once; the counter that counts says
what it is (:attr:`TokenCounter.method`, :attr:`TokenCounter.source`).
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from scrambled_bench.builder.scrambler import type_order
from scrambled_bench.errors import ScrambledBenchError, first_line
from scrambled_bench.evaluation.backends.base import Backend, GenerationRequest
from scrambled_bench.evaluation.backends.gguf_chat import gguf_request_tokens, render_gguf_chat, user_message
from scrambled_bench.evaluation.backends.transport import IDLE_CONNECTION_SECONDS
from scrambled_bench.hub import is_repo_id
from scrambled_bench.redaction import redact

#: the rough estimate's characters per token (English prose in a BPE vocabulary)
ROUGH_CHARS_PER_TOKEN = 4.0
#: tokenize calls in flight at once against a server
SERVER_CONCURRENCY = 8
SERVER_TIMEOUT_SECONDS = 30.0
#: OpenAI's chat framing of one user message (its cookbook's num_tokens_from_messages): 3 per message,
#: the role's tokens, 3 that prime the reply
OPENAI_TOKENS_PER_MESSAGE = 3
OPENAI_REPLY_PRIMING_TOKENS = 3


class TokenCounter(ABC):
    """Counts the prompt tokens the model will be fed for a request."""

    #: how it counts, recorded and printed: tokenizer, server, model, tiktoken or rough
    method: ClassVar[str] = ""
    #: False for an estimate or a lower bound: the printed total says so
    exact: bool = True

    def __init__(self, source: str):
        self.source = source
        """What counts, in words (printed after "counted by")."""
        self.notes: list[str] = []
        """The steps of the order that could not be had, each once, in order."""

    @abstractmethod
    async def count(self, request: GenerationRequest) -> int:
        """Prompt tokens of one request."""

    async def count_all(self, requests: Sequence[GenerationRequest]) -> list[int]:
        """Prompt tokens of each request, in order."""
        return [await self.count(request) for request in requests]

    async def aclose(self) -> None:
        """Release what the counter holds (an HTTP client)."""


# -- tokenizers held in this process ------------------------------------------------------------------


def load_gguf_vocabulary(path: Path) -> Any:
    """llama.cpp's tokenizer of a ``.gguf`` file, without its weights.

    >>> load_gguf_vocabulary(Path("/no/such.gguf"))
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: tokenizer file not found: /no/such.gguf
    """
    if not path.is_file():
        raise ScrambledBenchError(f"tokenizer file not found: {path}")
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise ScrambledBenchError(f"a .gguf tokenizer needs llama-cpp-python ({exc})") from None
    try:
        from llama_cpp._utils import suppress_stdout_stderr
    except ImportError:  # a llama-cpp-python without it: its one context warning shows
        from contextlib import nullcontext as suppress_stdout_stderr
    try:
        # llama.cpp warns, even when not verbose, that the vocabulary's context has no training length
        with suppress_stdout_stderr(disable=False):
            return Llama(model_path=str(path), vocab_only=True, verbose=False)
    except (ValueError, RuntimeError) as exc:
        raise ScrambledBenchError(f"cannot read the tokenizer of {path}: {first_line(exc)}") from None


class LocalTokenizer(TokenCounter):
    """A tokenizer held in this process, with the chat template that goes with it."""

    method = "tokenizer"

    @abstractmethod
    def render(self, prompt: str) -> str | None:
        """``prompt`` as one user message inside the chat template (for a server that tokenizes raw
        text), or None where there is no template."""


class GGUFCounter(LocalTokenizer):
    """llama.cpp's tokenizer of a ``.gguf`` file and its chat template: the count a llama.cpp server of
    the same file reports."""

    def __init__(self, path: str | Path, source: str | None = None):
        path = Path(path).expanduser()
        super().__init__(source or f"llama.cpp's tokenizer of {path.name}")
        self.llama = load_gguf_vocabulary(path)

    async def count(self, request: GenerationRequest) -> int:
        return gguf_request_tokens(self.llama, request)

    def render(self, prompt: str) -> str | None:
        rendered = render_gguf_chat(self.llama, prompt)
        return None if rendered is None else rendered[0]

    async def aclose(self) -> None:
        self.llama.close()


def load_transformers_tokenizer(source: str, *, cached_only: bool = False) -> Any:
    """The ``transformers`` tokenizer of a local folder or a Hub id (from the local cache when offline, or
    with ``cached_only``: never downloaded).

    >>> load_transformers_tokenizer("/no/such/folder")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: tokenizer folder not found: /no/such/folder
    """
    path = Path(source).expanduser()
    if (path.is_absolute() or source.startswith(".")) and not path.exists():
        raise ScrambledBenchError(f"tokenizer folder not found: {path}")
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(
            str(path) if path.exists() else source, local_files_only=cached_only
        )
    except (OSError, ValueError, ImportError) as exc:
        hint = (
            "" if path.exists() else "; download it first (`hf download ID`) or give a local folder or .gguf"
        )
        raise ScrambledBenchError(f"cannot load tokenizer {source!r}: {first_line(exc)}{hint}") from None


class TransformersCounter(LocalTokenizer):
    """A ``transformers`` tokenizer: chat prompts through its chat template, as vLLM and TGI build them
    (special tokens from the template), raw prompts with the tokenizer's special tokens."""

    def __init__(self, source: str, label: str | None = None, *, cached_only: bool = False):
        super().__init__(label or f"the transformers tokenizer of {source}")
        self.tokenizer = load_transformers_tokenizer(source, cached_only=cached_only)
        if not getattr(self.tokenizer, "chat_template", None):
            self.notes.append(f"{source} has no chat template: chat prompts are counted as bare text")

    def render(self, prompt: str) -> str | None:
        if not getattr(self.tokenizer, "chat_template", None):
            return None
        return self.tokenizer.apply_chat_template(
            user_message(prompt), tokenize=False, add_generation_prompt=True
        )

    async def count(self, request: GenerationRequest) -> int:
        rendered = self.render(request.prompt) if request.chat else None
        if rendered is None:
            return len(self.tokenizer(request.prompt)["input_ids"])
        return len(self.tokenizer(rendered, add_special_tokens=False)["input_ids"])


def local_counter(source: str, label: str | None = None) -> LocalTokenizer:
    """The counter of a ``.gguf`` file, a tokenizer folder or a Hub id (``--tokenizer``)."""
    if source.lower().endswith(".gguf"):
        return GGUFCounter(source, label)
    return TransformersCounter(source, label)


class BackendCounter(TokenCounter):
    """An in-process backend counts the prompt it will feed its own model."""

    method = "model"

    def __init__(self, backend: Backend):
        super().__init__(f"the {backend.kind} backend's own tokenizer")
        self.backend = backend

    async def count(self, request: GenerationRequest) -> int:
        counted = await self.backend.count_request_tokens(request)
        if counted is None:  # an in-process backend always can; a new one that cannot must say so
            raise ScrambledBenchError(f"the {self.backend.kind} backend cannot count tokens")
        return counted


# -- a server's tokenize endpoint ---------------------------------------------------------------------


@dataclass(frozen=True)
class TokenizeEndpoint:
    """One server family's tokenize route: the body it wants for raw text and how its answer counts.

    ``chat_path``/``chat_body``: where the server applies its own chat template to messages; the answer
    there is read by ``chat_count`` as a count, or as the templated text to tokenize (llama.cpp's
    ``/apply-template``)."""

    server: str
    path: str
    text_body: Callable[[str, str], dict[str, Any]]
    """``(model, text) -> body``"""
    read_count: Callable[[Any], int]
    chat_path: str | None = None
    chat_body: Callable[[str, list[dict[str, str]]], dict[str, Any]] | None = None
    chat_count: Callable[[Any], int | str] | None = None


def _token_list(reply: Any, key: str | None = "tokens") -> int:
    tokens = reply[key] if key is not None else reply
    if not isinstance(tokens, list):
        raise TypeError("not a token list")
    return len(tokens)


TOKENIZE_ENDPOINTS: tuple[TokenizeEndpoint, ...] = (
    TokenizeEndpoint(
        "llama-cpp-python",
        "/extras/tokenize",
        lambda model, text: {"input": text, "model": model},
        _token_list,
    ),
    TokenizeEndpoint(
        "vLLM",
        "/tokenize",
        lambda model, text: {"model": model, "prompt": text, "add_special_tokens": True},
        lambda reply: int(reply["count"]),
        "/tokenize",
        lambda model, messages: {"model": model, "messages": messages, "add_generation_prompt": True},
        lambda reply: int(reply["count"]),
    ),
    TokenizeEndpoint(
        "llama.cpp",
        "/tokenize",
        lambda model, text: {"content": text, "add_special": True},
        _token_list,
        "/apply-template",
        lambda model, messages: {"messages": messages},
        lambda reply: str(reply["prompt"]),
    ),
    TokenizeEndpoint(
        "TGI",
        "/tokenize",
        lambda model, text: {"inputs": text},
        lambda reply: _token_list(reply, None),
        "/chat_tokenize",
        lambda model, messages: {"model": model, "messages": messages},
        lambda reply: _token_list(reply, "tokenize_response"),
    ),
)
"""The tokenize routes tried, in order; the first that answers a probe counts."""


def server_root(base_url: str) -> str:
    """The server's root, where the tokenize routes live (an OpenAI API root ends in ``/v1``).

    >>> server_root("http://127.0.0.1:8080/v1"), server_root("http://127.0.0.1:8080/")
    ('http://127.0.0.1:8080', 'http://127.0.0.1:8080')
    """
    root = base_url.rstrip("/")
    return root.removesuffix("/v1")


class ServerCounter(TokenCounter):
    """A server's tokenize endpoint; chat prompts inside the server's own chat template, else inside
    ``template``'s (a tokenizer of the served model), else bare: then a stated lower bound."""

    method = "server"

    def __init__(
        self,
        client: Any,
        root: str,
        endpoint: TokenizeEndpoint,
        model: str,
        template: LocalTokenizer | None = None,
    ):
        super().__init__(f"{endpoint.server}'s {endpoint.path} at {redact(root)}")
        self.client = client
        self.root = root
        self.endpoint = endpoint
        self.model = model
        self.template = template
        self._limit = asyncio.Semaphore(SERVER_CONCURRENCY)

    async def _post(self, path: str, body: dict[str, Any]) -> Any:
        async with self._limit:
            reply = await self.client.post(self.root + path, json=body)
        reply.raise_for_status()
        return reply.json()

    async def count_text(self, text: str) -> int:
        """Tokens of raw text by the server's tokenizer (special tokens parsed, BOS where the model adds one)."""
        return self.endpoint.read_count(
            await self._post(self.endpoint.path, self.endpoint.text_body(self.model, text))
        )

    async def count(self, request: GenerationRequest) -> int:
        endpoint = self.endpoint
        if not request.chat:
            return await self.count_text(request.prompt)
        if (
            endpoint.chat_path is not None
            and endpoint.chat_body is not None
            and endpoint.chat_count is not None
        ):
            counted = endpoint.chat_count(
                await self._post(
                    endpoint.chat_path, endpoint.chat_body(self.model, user_message(request.prompt))
                )
            )
            return counted if isinstance(counted, int) else await self.count_text(counted)
        # the client applies the served model's template; a model whose tokenizer adds a BOS token may then
        # count one token more than the server, which adds none to a template that writes its own
        rendered = self.template.render(request.prompt) if self.template is not None else None
        return await self.count_text(request.prompt if rendered is None else rendered)

    async def count_all(self, requests: Sequence[GenerationRequest]) -> list[int]:
        import httpx

        try:
            return list(await asyncio.gather(*(self.count(request) for request in requests)))
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            raise ScrambledBenchError(
                f"{self.endpoint.server}'s tokenize endpoint at {redact(self.root)} failed: {first_line(exc)}"
            ) from None

    async def aclose(self) -> None:
        await self.client.aclose()
        if self.template is not None:
            await self.template.aclose()


async def probe_tokenize_endpoint(
    client: Any, root: str, model: str
) -> tuple[TokenizeEndpoint | None, list[str]]:
    """The first of :data:`TOKENIZE_ENDPOINTS` that counts a probe text at ``root``, and what each one
    before it answered (for the note that says why it was passed over)."""
    import httpx

    tried = []
    for endpoint in TOKENIZE_ENDPOINTS:
        try:
            reply = await client.post(root + endpoint.path, json=endpoint.text_body(model, "Hello world"))
        except httpx.TransportError as exc:  # nothing answers there: no other route will either
            return None, [f"cannot reach it: {first_line(exc)}"]
        if reply.status_code != 200:
            tried.append(f"{endpoint.path} ({endpoint.server}): HTTP {reply.status_code}")
            continue
        try:
            if endpoint.read_count(reply.json()) > 0:
                return endpoint, tried
        except (ValueError, KeyError, TypeError):
            pass
        tried.append(f"{endpoint.path} ({endpoint.server}): not its answer")
    return None, tried


# -- tiktoken and the rough estimate -------------------------------------------------------------------


def tiktoken_cache_dir() -> str | None:
    """A folder of cached tiktoken encodings that needs no download: litellm ships cl100k_base, p50k_base
    and o200k_base under tiktoken's own cache file names."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    return str(folder) if folder.is_dir() else None


def load_tiktoken_encoding(model: str) -> tuple[Any | None, str]:
    """``(encoding, why_not)``: tiktoken's encoding of an OpenAI model name, or None and the reason.

    >>> load_tiktoken_encoding("smollm2")[1]
    "tiktoken does not know the model 'smollm2'"
    """
    try:
        import tiktoken
    except ImportError:
        return None, "tiktoken is not installed (pip install tiktoken)"
    name = model.rsplit("/", 1)[-1]
    try:
        encoding_name = tiktoken.encoding_name_for_model(name)
    except KeyError:
        return None, f"tiktoken does not know the model {model!r}"
    cache = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    fallback = None if cache else tiktoken_cache_dir()
    try:
        if fallback is not None:
            os.environ["TIKTOKEN_CACHE_DIR"] = fallback
        return tiktoken.get_encoding(encoding_name), ""
    except Exception as exc:  # noqa: BLE001 - a download refused offline surfaces as any of several errors
        return None, f"tiktoken cannot load {encoding_name} ({first_line(exc)}; offline and not cached)"
    finally:
        if fallback is not None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)


class TiktokenCounter(TokenCounter):
    """tiktoken's encoding of an OpenAI model; a chat prompt adds OpenAI's framing of one user message."""

    method = "tiktoken"

    def __init__(self, model: str, encoding: Any):
        framing = OPENAI_TOKENS_PER_MESSAGE + len(encoding.encode("user")) + OPENAI_REPLY_PRIMING_TOKENS
        super().__init__(
            f"tiktoken's {encoding.name} for OpenAI's {model} (a chat prompt: {framing} more for its framing)"
        )
        self.encoding = encoding
        self.framing = framing

    async def count(self, request: GenerationRequest) -> int:
        tokens = len(self.encoding.encode(request.prompt, disallowed_special=()))
        return tokens + (self.framing if request.chat else 0)


class RoughCounter(TokenCounter):
    """Characters / 4: the last resort, blind to the scramble type and labelled rough wherever it shows.

    >>> asyncio.run(RoughCounter().count(GenerationRequest("x" * 10, chat=True)))
    2
    """

    method = "rough"
    exact = False

    def __init__(self) -> None:
        super().__init__(f"characters / {ROUGH_CHARS_PER_TOKEN:g}")

    async def count(self, request: GenerationRequest) -> int:
        return max(1, round(len(request.prompt) / ROUGH_CHARS_PER_TOKEN))


# -- the order ------------------------------------------------------------------------------------------


def _local_model(model: str) -> str | None:
    """The served model's name where it is a local ``.gguf`` file or tokenizer folder (llama-cpp-python's
    server names a model by its path unless given an alias)."""
    path = Path(model).expanduser()
    if path.suffix == ".gguf" and path.is_file():
        return str(path)
    if path.is_dir() and (path / "tokenizer_config.json").is_file():
        return str(path)
    return None


async def choose_token_counter(
    backend: Backend, *, tokenizer: str | None = None, chat: bool = True
) -> TokenCounter:
    """The first counter of the order in the module's docstring that can be had for ``backend``; the
    steps passed over are in its ``notes``. ``tokenizer`` (``--tokenizer``) that cannot be loaded is an
    error, not a fallback: the user asked for it."""
    if tokenizer is not None:
        return local_counter(tokenizer, f"the tokenizer {tokenizer}")
    if backend.in_process:
        return BackendCounter(backend)
    notes: list[str] = []
    local = _local_model(backend.model)
    base_url = getattr(backend, "base_url", None)
    if base_url:
        counter = await _server_counter(backend, base_url, local, chat, notes)
        if counter is not None:
            counter.notes[:0] = notes
            return counter
    counter = local_counter(local, f"the tokenizer of {local}") if local is not None else None
    if counter is None:
        notes.append(f"{backend.model!r} is not a local model file or folder")
        counter = _cached_hub_tokenizer(backend.model, notes)
    if counter is None:
        encoding, why_not = load_tiktoken_encoding(backend.model)
        if encoding is not None:
            counter = TiktokenCounter(backend.model, encoding)
        else:
            notes.append(why_not)
            counter = RoughCounter()
    counter.notes[:0] = notes
    return counter


def _cached_hub_tokenizer(model: str, notes: list[str]) -> TransformersCounter | None:
    """The tokenizer of a Hub model id already in the local Hugging Face cache (nothing is downloaded)."""
    if not is_repo_id(model):
        return None
    try:
        return TransformersCounter(
            model, f"the transformers tokenizer of {model} (Hugging Face cache)", cached_only=True
        )
    except ScrambledBenchError:
        notes.append(f"no tokenizer of {model} in the Hugging Face cache (--tokenizer {model} downloads one)")
        return None


async def _server_counter(
    backend: Backend, base_url: str, local: str | None, chat: bool, notes: list[str]
) -> ServerCounter | None:
    import httpx

    root = server_root(base_url)
    # the key the backend sends (an option or its environment variable), to a server that wants one
    api_key = getattr(backend, "_api_key", None)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    # idle connections kept no longer than the backends keep theirs, under uvicorn's 5 s (httpx's default)
    limits = httpx.Limits(keepalive_expiry=IDLE_CONNECTION_SECONDS)
    client = httpx.AsyncClient(headers=headers, timeout=SERVER_TIMEOUT_SECONDS, limits=limits)
    endpoint, tried = await probe_tokenize_endpoint(client, root, backend.model)
    if endpoint is None:
        await client.aclose()
        notes.append(f"no tokenize endpoint at {redact(root)} ({'; '.join(tried)})")
        return None
    template: LocalTokenizer | None = None
    if chat and endpoint.chat_path is None:
        # the endpoint tokenizes raw text: the chat template comes from the served model's own tokenizer
        template = local_counter(local) if local is not None else _cached_hub_tokenizer(backend.model, notes)
    counter = ServerCounter(client, root, endpoint, backend.model, template)
    if chat and endpoint.chat_path is None:
        if template is not None:
            counter.source += f", inside the chat template of {local or backend.model}"
        else:
            counter.exact = False
            counter.source += (
                " on the bare prompt: the server applies a chat template it does not expose, so this is a "
                "lower bound (--tokenizer with the model's .gguf or tokenizer folder counts it)"
            )
    return counter


# -- the dry run's figures ------------------------------------------------------------------------------


def tokens_by_type(summary: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Prompt tokens per scramble type, summed over its configs, with the mean per request and the token
    inflation: the mean over the mean of the same tasks' ``original`` configs (each config names its
    counterpart in ``original``), None where the run has no such counterpart.

    >>> rows = tokens_by_type([
    ...     {"config": "qa/o", "scramble_type": "original", "original": "qa/o", "to_send": 2, "prompt_tokens": 200},
    ...     {"config": "qa/r", "scramble_type": "rs50", "original": "qa/o", "to_send": 2, "prompt_tokens": 260},
    ...     {"config": "rec/r", "scramble_type": "rs50", "original": "rec/o", "to_send": 1, "prompt_tokens": 90},
    ... ])
    >>> [(row["type"], row["requests"], row["per_request"], row["vs_original"]) for row in rows]
    [('original', 2, 100.0, 1.0), ('rs50', 3, 116.7, 1.3)]
    """
    by_config = {item["config"]: item for item in summary}
    grouped: dict[str, dict[str, Any]] = {}
    for item in summary:
        row = grouped.setdefault(
            item["scramble_type"],
            {"type": item["scramble_type"], "requests": 0, "prompt_tokens": 0, "_pairs": [0, 0, 0, 0]},
        )
        row["requests"] += item["to_send"]
        row["prompt_tokens"] += item["prompt_tokens"]
        original = by_config.get(item.get("original") or "")
        if original is not None and item["to_send"] and original["to_send"]:
            pairs = row["_pairs"]  # tokens and requests of the scrambled configs, then of their originals
            pairs[0] += item["prompt_tokens"]
            pairs[1] += item["to_send"]
            pairs[2] += original["prompt_tokens"]
            pairs[3] += original["to_send"]
    for row in grouped.values():
        tokens, requests, original_tokens, original_requests = row.pop("_pairs")
        row["per_request"] = round(row["prompt_tokens"] / row["requests"], 1) if row["requests"] else None
        row["vs_original"] = (
            round((tokens / requests) / (original_tokens / original_requests), 3)
            if requests and original_tokens
            else None
        )
    return sorted(grouped.values(), key=lambda row: type_order(row["type"]))
