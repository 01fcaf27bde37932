"""A local model run in-process by ``transformers`` (``AutoModelForCausalLM``), greedy, on the GPU when
there is one.

The engine sends requests one by one with bounded concurrency; this backend gathers the requests that
arrive together into batches (up to ``batch_size``, same decoding settings), left-pads them and runs one
``generate`` call per batch in a worker thread. ``model`` is a Hub id or local folder, or a ``.gguf`` file
(dequantised by transformers, which needs the ``gguf`` package). Needs ``torch`` (``pip install
scrambled-bench[local]``).
"""

from __future__ import annotations

import asyncio
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError, first_line
from scrambled_bench.harness.backends.base import (
    Backend,
    BackendConfig,
    BackendError,
    ContextTooLongError,
    Generation,
    GenerationRequest,
    GenerationSettings,
    backend_option,
)
from scrambled_bench.harness.backends.decoding import transformers_parameters

#: how long the batcher waits for more requests to join a batch that is not full yet
BATCH_WINDOW_SECONDS = 0.02


def cut_at_stop(text: str, stop: tuple[str, ...]) -> tuple[str, bool]:
    """``text`` up to the first stop sequence, and whether one was found.

    >>> cut_at_stop("Answer: B\\n\\nQuestion: next", ("\\n\\n",))
    ('Answer: B', True)
    >>> cut_at_stop("no stop here", ("###",))
    ('no stop here', False)
    """
    positions = [text.find(s) for s in stop if s and s in text]
    if not positions:
        return text, False
    return text[: min(positions)], True


def load_causal_lm(source: str, device: str | None = None) -> tuple[Any, Any, str]:
    """``(model, tokenizer, device)`` for a Hub id, a local folder or a ``.gguf`` file, ready for batches.

    The model is in eval mode on ``device`` (default: ``cuda`` when there is one, else ``cpu``), float16
    on CUDA and float32 on CPU; the tokenizer pads on the left, with the end-of-sequence token where the
    model has no pad token. Every failure is one :class:`ScrambledBenchError` line saying what to do:
    install torch (``scrambled-bench[local]``), a missing file, or a Hub model that is not in the local
    cache while offline (download it first, or allow downloads).

    >>> load_causal_lm("/no/such/model.gguf")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: model file not found: /no/such/model.gguf
    """
    path = Path(source).expanduser()
    load_from, extra = source, {}
    if path.suffix == ".gguf":
        if not path.is_file():
            raise ScrambledBenchError(f"model file not found: {path}")
        load_from, extra = str(path.parent), {"gguf_file": path.name}
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise ScrambledBenchError(
            f"the transformers backend needs torch ({exc}); pip install 'scrambled-bench[local]'"
        ) from None
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    try:
        tokenizer = AutoTokenizer.from_pretrained(load_from, **extra)
        model = AutoModelForCausalLM.from_pretrained(
            load_from, dtype=torch.float16 if device == "cuda" else torch.float32, **extra
        )
    except (OSError, ValueError, ImportError) as exc:
        message = first_line(exc)
        hint = ""
        if isinstance(exc, OSError) and not path.exists():
            # a Hub id that is neither cached nor downloadable: say how to get it, in the same line
            hint = f"; download it first (`hf download {source}` where there is internet)"
            if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
                hint += ", or set HF_HUB_OFFLINE=0 to let transformers download it"
        raise ScrambledBenchError(f"cannot load {source!r} with transformers: {message}{hint}") from None
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.to(device).eval()
    return model, tokenizer, device


@dataclass
class _Pending:
    request: GenerationRequest
    future: asyncio.Future[Generation]


class TransformersConfig(BackendConfig):
    model: str = backend_option(..., "a Hub id, a local folder or a .gguf file", identity=True, flag=True)  # fmt: skip
    # identity: left padding within a batch can change a greedy answer
    batch_size: int = backend_option(8, "requests decoded together in one generate() call (--concurrency caps it)", ge=1, identity=True)  # fmt: skip
    # identity: float16 on CUDA, float32 on CPU
    device: str | None = backend_option(None, "cpu, cuda, cuda:1... (default: cuda where there is one, in float16)", identity=True)  # fmt: skip


class TransformersBackend(Backend):
    kind = "transformers"
    description = (
        "a local transformers model in-process, batched, on the GPU where there is one (needs torch)"
    )
    Config = TransformersConfig
    in_process = True

    def __init__(self, config: TransformersConfig):
        model, batch_size, device = config.model, config.batch_size, config.device
        path = Path(model).expanduser()
        super().__init__(path.name if path.suffix == ".gguf" else model)
        self.model_source = model
        self.batch_size = batch_size
        self._device_request = device
        self._model: Any = None
        self._tokenizer: Any = None
        self._device: str = "cpu"
        self._load_lock = threading.Lock()
        self._queue: asyncio.Queue[_Pending] | None = None
        self._batcher: asyncio.Task[None] | None = None

    @property
    def max_concurrency(self) -> int:
        """One batch in flight: requests beyond it would wait for the running batch, and the engine's
        per-request timeout would be spent on that wait (a slow CPU batch timed out the queued ones)."""
        return self.batch_size

    # -- model ---------------------------------------------------------------------------------------------

    def _load(self) -> None:
        with self._load_lock:
            if self._model is not None:
                return
            self._model, self._tokenizer, self._device = load_causal_lm(
                self.model_source, self._device_request
            )

    @property
    def context_window(self) -> int | None:
        if self._model is None:
            return None
        return getattr(self._model.config, "max_position_embeddings", None)

    async def health_check(self) -> dict[str, Any]:
        await asyncio.to_thread(self._load)
        import torch
        import transformers

        return {
            "backend": self.kind,
            "model": self.model,
            "model_source": str(self.model_source),
            "commit": getattr(self._model.config, "_commit_hash", None),
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "device": self._device,
            "dtype": str(self._model.dtype),
        }

    def _prompt_text(self, request: GenerationRequest) -> str:
        if request.chat and getattr(self._tokenizer, "chat_template", None):
            return self._tokenizer.apply_chat_template(
                [{"role": "user", "content": request.prompt}], tokenize=False, add_generation_prompt=True
            )
        return request.prompt

    async def count_tokens(self, text: str) -> int | None:
        await asyncio.to_thread(self._load)
        return len(self._tokenizer(text)["input_ids"])

    async def count_request_tokens(self, request: GenerationRequest) -> int:
        """The prompt tokens ``generate`` will feed the model: chat prompts inside the chat template."""
        await asyncio.to_thread(self._load)
        return len(self._tokenizer(self._prompt_text(request), add_special_tokens=False)["input_ids"])

    # -- batching ------------------------------------------------------------------------------------------

    async def generate(self, request: GenerationRequest) -> Generation:
        await asyncio.to_thread(self._load)
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._batcher = asyncio.create_task(self._run_batches())
        future: asyncio.Future[Generation] = asyncio.get_running_loop().create_future()
        await self._queue.put(_Pending(request, future))
        return await future

    async def _run_batches(self) -> None:
        assert self._queue is not None
        held: list[_Pending] = []
        while True:
            first = held.pop(0) if held else await self._queue.get()
            # one generate() call decodes with one set of settings: requests held back earlier join first
            batch = [first] + [item for item in held if item.request.settings == first.request.settings]
            batch = batch[: self.batch_size]
            taken = {id(item) for item in batch}
            held = [item for item in held if id(item) not in taken]
            deadline = asyncio.get_running_loop().time() + BATCH_WINDOW_SECONDS
            while len(batch) < self.batch_size:
                timeout = deadline - asyncio.get_running_loop().time()
                if timeout <= 0:
                    break
                try:
                    item = await asyncio.wait_for(self._queue.get(), timeout)
                except asyncio.TimeoutError:
                    break
                if item.request.settings == first.request.settings:
                    batch.append(item)
                else:
                    held.append(item)
            live = [item for item in batch if not item.future.done()]  # the engine may have timed some out
            if not live:
                continue
            try:
                results = await asyncio.to_thread(self._generate_batch, [item.request for item in live])
            except Exception as exc:  # noqa: BLE001 - handed to every waiting request
                error = (
                    exc
                    if isinstance(exc, BackendError)
                    else BackendError(
                        f"transformers generate failed: {exc.__class__.__name__}: {exc}", retryable=False
                    )
                )
                for item in live:
                    if not item.future.done():
                        item.future.set_exception(error)
                continue
            for item, result in zip(live, results, strict=True):
                if item.future.done():
                    continue
                if isinstance(result, BaseException):
                    item.future.set_exception(result)
                else:
                    item.future.set_result(result)

    def _generate_batch(self, requests: list[GenerationRequest]) -> list[Generation | BaseException]:
        import torch

        settings: GenerationSettings = requests[0].settings
        tokenizer, model = self._tokenizer, self._model
        window = self.context_window
        texts = [self._prompt_text(request) for request in requests]
        lengths = [len(tokenizer(text, add_special_tokens=False)["input_ids"]) for text in texts]
        results: list[Generation | BaseException | None] = [None] * len(requests)
        runnable = []
        for index, length in enumerate(lengths):
            if window is not None and length >= window:
                results[index] = ContextTooLongError(
                    f"prompt of {length} tokens does not fit the context window of {window} tokens"
                )
            else:
                runnable.append(index)
        if runnable:
            encoded = tokenizer(
                [texts[i] for i in runnable], return_tensors="pt", padding=True, add_special_tokens=False
            ).to(self._device)
            max_new_tokens = settings.max_new_tokens
            if window is not None:
                max_new_tokens = max(1, min(max_new_tokens, window - encoded["input_ids"].shape[1]))
            options: dict[str, Any] = {
                "max_new_tokens": max_new_tokens,
                "pad_token_id": tokenizer.pad_token_id,
            }
            options.update(transformers_parameters(settings))
            if settings.seed is not None:
                torch.manual_seed(settings.seed)
            if settings.stop:
                options.update(stop_strings=list(settings.stop), tokenizer=tokenizer)
            with torch.inference_mode():
                output = model.generate(**encoded, **options)
            prompt_width = encoded["input_ids"].shape[1]
            eos_ids = _eos_ids(model, tokenizer)
            for row, index in enumerate(runnable):
                new_tokens = output[row, prompt_width:].tolist()
                generated = []
                hit_eos = False
                for token in new_tokens:
                    if token in eos_ids:
                        hit_eos = True
                        break
                    generated.append(token)
                text, hit_stop = cut_at_stop(
                    tokenizer.decode(generated, skip_special_tokens=True), settings.stop
                )
                results[index] = Generation(
                    text=text,
                    prompt_tokens=lengths[index],
                    completion_tokens=len(generated),
                    finish_reason="stop" if (hit_eos or hit_stop) else "length",
                )
        return results  # type: ignore[return-value]

    async def aclose(self) -> None:
        if self._batcher is not None:
            self._batcher.cancel()
            try:
                await self._batcher
            except asyncio.CancelledError:
                pass
            self._batcher = None
            self._queue = None
        self._model = None


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    ids = getattr(model.generation_config, "eos_token_id", None)
    if ids is None:
        ids = tokenizer.eos_token_id
    values = ids if isinstance(ids, (list, tuple)) else [ids]
    found = {int(v) for v in values if v is not None}
    if tokenizer.pad_token_id is not None:
        found.add(int(tokenizer.pad_token_id))
    return found
