"""A local model run in-process by ``transformers`` (``AutoModelForCausalLM``), greedy, on the GPU when
there is one.

The engine sends requests one by one with bounded concurrency; this backend gathers the requests that
arrive together into batches (up to ``batch_size``, same decoding settings), tokenizes each prompt once,
cuts the batch into the fewest groups in which padding is at most half (:func:`length_groups`),
left-pads each group and runs one ``generate`` call per group in a worker thread. Stop strings are turned
into transformers' ``StopStringCriteria`` once per stop tuple, not per call (building one scans the whole
vocabulary). ``model`` is a Hub id or local folder, or a ``.gguf`` file, de-quantised by transformers once
and then read from the user's cache (:mod:`~scrambled_bench.evaluation.backends.gguf_cache`). Needs ``torch``
(``pip install scrambled-bench[local]``).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import os
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from scrambled_bench.errors import ScrambledBenchError, first_line
from scrambled_bench.evaluation.backends import gguf_cache
from scrambled_bench.evaluation.backends.base import (
    Backend,
    BackendConfig,
    BackendError,
    ContextTooLongError,
    Generation,
    GenerationRequest,
    GenerationSettings,
    backend_option,
)
from scrambled_bench.evaluation.backends.decoding import transformers_parameters
from scrambled_bench.io import file_sha256

#: how long the batcher waits for more requests to join a batch that is not full yet
BATCH_WINDOW_SECONDS = 0.02
#: a group of a batch is padded to at most this many times its prompts' own tokens (padding at most half at 2)
MAX_PADDING_RATIO = 2.0
#: with the compile option, prompts are padded to a multiple of this many tokens: torch.compile specialises
#: on shapes, and every new prompt width (hence static-cache length) would cost a recompilation
COMPILED_WIDTH_MULTIPLE = 64
DTYPES = ("auto", "float32", "float16", "bfloat16")
Dtype = Literal["auto", "float32", "float16", "bfloat16"]


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


def length_groups(lengths: Sequence[int], max_ratio: float = MAX_PADDING_RATIO) -> list[list[int]]:
    """Indices of prompts grouped by length, so padding does not dominate a batch, in as few groups as can be.

    Each group is one ``generate`` call, a whole decoding loop (launch-bound on a GPU, a fixed cost per step
    on a CPU), so the batch is split only where padding would outweigh the prompts: in a group, its size
    times its longest prompt is at most ``max_ratio`` times its prompts' own tokens (a group of one is
    always allowed). Prompts are taken longest first and cut into consecutive groups; of the fewest groups
    that keep that bound, the one with the least padding is chosen (a few short prompts ride along with long
    ones, but a batch of mostly short prompts is not padded to one long one).

    >>> length_groups([100, 480, 120, 500, 450])
    [[3, 1, 4, 2, 0]]
    >>> length_groups([600, 100, 90, 80])
    [[0], [1, 2, 3]]
    >>> length_groups([7, 7, 7])
    [[0, 1, 2]]
    >>> length_groups([])
    []
    """
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    sizes = [max(lengths[i], 1) for i in order]
    prefix = list(itertools.accumulate(sizes, initial=0))
    # best[j]: (groups, padded tokens, where the last group starts) for the first j prompts in that order
    best: list[tuple[int, int, int]] = [(0, 0, 0)]
    for end in range(1, len(sizes) + 1):
        choices = [
            (best[start][0] + 1, best[start][1] + (end - start) * sizes[start], start)
            for start in range(end)
            if end - start == 1 or (end - start) * sizes[start] <= max_ratio * (prefix[end] - prefix[start])
        ]
        best.append(min(choices))
    groups: list[list[int]] = []
    end = len(sizes)
    while end:
        start = best[end][2]
        groups.append(order[start:end])
        end = start
    return groups[::-1]


def resolve_dtype(requested: str, device_type: str, model_dtype: str | None, bf16_native: bool) -> str:
    """The dtype a model runs in: ``requested`` unless it is ``auto``, which means float32 on a CPU and, on a
    GPU, the model's own half precision (``model_dtype``, from its config), or bfloat16 for a float32 model
    (a de-quantised GGUF among them) where the GPU has native bfloat16, float32 where it has not. bfloat16
    asked of a GPU without it is an error, never a silent float16 (models trained in bfloat16 can overflow
    there).

    >>> resolve_dtype("auto", "cpu", "bfloat16", False)
    'float32'
    >>> resolve_dtype("auto", "cuda", "float32", True), resolve_dtype("auto", "cuda", None, False)
    ('bfloat16', 'float32')
    >>> resolve_dtype("auto", "cuda", "float16", True), resolve_dtype("auto", "cuda", "bfloat16", False)
    ('float16', 'float32')
    >>> resolve_dtype("bfloat16", "cuda", "float32", False)
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --backend-option dtype=bfloat16, but this GPU has no native bfloat16 (compute capability below 8.0); use dtype=float16 or float32
    """
    if requested not in DTYPES:
        raise ScrambledBenchError(
            f"--backend-option dtype must be one of {', '.join(DTYPES)}, got {requested!r}"
        )
    on_gpu = device_type == "cuda"
    if requested == "bfloat16" and on_gpu and not bf16_native:
        raise ScrambledBenchError(
            "--backend-option dtype=bfloat16, but this GPU has no native bfloat16 (compute capability "
            "below 8.0); use dtype=float16 or float32"
        )
    if requested != "auto":
        return requested
    if not on_gpu:
        return "float32"
    if model_dtype == "float16":
        return "float16"
    return "bfloat16" if bf16_native else "float32"


def resolve_device(device: str | None) -> tuple[str, str, bool]:
    """``(device, its type, native bfloat16)`` for a device string (``None``: ``cuda`` where there is one,
    else ``cpu``): ``cuda:1`` is a CUDA device like ``cuda``. A device torch cannot name, or a CUDA device
    it does not see, is a one-line error."""
    import torch

    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        parsed = torch.device(device)
    except (RuntimeError, ValueError):
        raise ScrambledBenchError(
            f"--backend-option device={device}: not a device torch knows (cpu, cuda, cuda:1, mps...)"
        ) from None
    if parsed.type != "cuda":
        return device, parsed.type, False
    if not torch.cuda.is_available():
        raise ScrambledBenchError(f"--backend-option device={device}, but torch sees no CUDA device")
    index = parsed.index if parsed.index is not None else torch.cuda.current_device()
    if index >= torch.cuda.device_count():
        raise ScrambledBenchError(
            f"--backend-option device={device}, but torch sees {torch.cuda.device_count()} CUDA device(s)"
        )
    # native bfloat16 is Ampere (8.0) or later; ROCm GPUs torch runs on all have it. Asked per device, not of
    # the current one (torch.cuda.is_bf16_supported), so that cuda:1 is judged by cuda:1
    bf16_native = bool(torch.version.hip) or torch.cuda.get_device_capability(index) >= (8, 0)
    return device, "cuda", bf16_native


@dataclass
class LoadedCausalLM:
    """A model ready for batches, with what a run records about how it was loaded."""

    model: Any
    tokenizer: Any
    device: str
    dtype: str
    facts: dict[str, Any] = field(default_factory=dict)
    """``dtype_requested``, the model's own dtype, and for a GGUF its sha256 and the cache entry used."""


def _config_dtype(config: Any) -> str | None:
    value = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
    return str(value).removeprefix("torch.") if value is not None else None


def _load_error(source: str, path: Path, exc: Exception) -> ScrambledBenchError:
    message = first_line(exc)
    hint = ""
    if isinstance(exc, OSError) and not path.exists():
        # a Hub id that is neither cached nor downloadable: say how to get it, in the same line
        hint = f"; download it first (`hf download {source}` where there is internet)"
        if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
            hint += ", or set HF_HUB_OFFLINE=0 to let transformers download it"
    return ScrambledBenchError(f"cannot load {source!r} with transformers: {message}{hint}")


@contextmanager
def _gguf_bar_follows_transformers() -> Iterator[None]:
    """transformers' GGUF reader draws its de-quantisation bar with tqdm itself, past transformers' own
    progress-bar switch; while that switch is off (``--no-progress``), so is this bar."""
    from transformers.utils import logging as transformers_logging

    try:
        import transformers.modeling_gguf_pytorch_utils as reader
    except ImportError:
        reader = None
    if transformers_logging.is_progress_bar_enabled() or not hasattr(reader, "tqdm"):
        yield
        return
    drawn = reader.tqdm
    reader.tqdm = functools.partial(drawn, disable=True)
    try:
        yield
    finally:
        reader.tqdm = drawn


#: one de-quantisation at a time: :func:`_gguf_read_once` swaps two attributes of the ``gguf`` module
_GGUF_PATCH_LOCK = threading.Lock()


@contextmanager
def _gguf_read_once() -> Iterator[None]:
    """Within one de-quantisation, one ``GGUFReader`` per file and one tensor-name map per architecture.

    transformers reads the GGUF from scratch three times (for the config, the tokenizer and the weights:
    each ``GGUFReader`` parses every metadata field, SmolLM2's 49,152-token vocabulary included) and builds
    gguf's tensor-name map once per module (397 times for SmolLM2). Those were two thirds of a cold
    de-quantisation's CPU (cProfile, 38 s). The file does not change during the load and neither object
    is written to by transformers, so the first reader and map serve every later call: the same objects
    transformers would have built, made once (``benchmarks/bench_dequantise.py`` prints the time and checks
    every tensor equal). Both are looked up on the ``gguf`` module when transformers calls them, so only
    that module's two attributes are swapped, and put back on leaving.
    """
    try:
        import gguf
    except ImportError:  # _dequantise then fails with transformers' own message
        yield
        return
    if not (
        callable(getattr(gguf, "GGUFReader", None)) and callable(getattr(gguf, "get_tensor_name_map", None))
    ):
        yield
        return
    with _GGUF_PATCH_LOCK:
        stock_reader, stock_map = gguf.GGUFReader, gguf.get_tensor_name_map
        readers: dict[tuple[str, str], Any] = {}

        def reader_once(path: Any, mode: str = "r") -> Any:
            key = (os.fspath(path), mode)
            if key not in readers:
                readers[key] = stock_reader(path, mode)
            return readers[key]

        gguf.GGUFReader, gguf.get_tensor_name_map = reader_once, functools.cache(stock_map)
        try:
            yield
        finally:
            gguf.GGUFReader, gguf.get_tensor_name_map = stock_reader, stock_map


def _dequantise(path: Path) -> tuple[Any, Any]:
    """A GGUF's model, every weight de-quantised by transformers to float32, and its tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    # every weight de-quantised to a dense float32 tensor, also where transformers could keep GGUF blocks
    # with the `kernels` package: the same numbers whatever is installed, and a checkpoint that can be saved
    with _gguf_read_once():
        tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
        with _gguf_bar_follows_transformers():
            model = AutoModelForCausalLM.from_pretrained(
                path.parent,
                gguf_file=path.name,
                dtype=torch.float32,
                quantization_config=GgufConfig(dequantize=True),
            )
    if getattr(model, "hf_quantizer", None) is not None:
        # dense now: what still marks the model quantized would refuse save_pretrained and a cast
        model.hf_quantizer.remove_quantization_config(model)
    return model, tokenizer


def _load_gguf(path: Path, dtype: Any) -> tuple[Any, Any, dict[str, Any]]:
    """A GGUF's model (in ``dtype``) and tokenizer: from its de-quantised cache entry, else de-quantised by
    transformers (float32) and stored as that entry first."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    digest = file_sha256(path)
    facts: dict[str, Any] = {"gguf_sha256": digest}
    entry, problem = gguf_cache.find_entry(digest)
    unreadable = False
    if entry is not None:
        try:
            tokenizer = AutoTokenizer.from_pretrained(entry.folder)
            model = AutoModelForCausalLM.from_pretrained(entry.folder, dtype=dtype)
        except (OSError, ValueError) as exc:
            problem, unreadable = f"unreadable ({first_line(exc)})", True
        else:
            facts["gguf_cache"] = {"entry": str(entry.folder), "state": "reused"}
            return model, tokenizer, facts
    if problem is not None:
        gguf_cache.say(
            f"the de-quantised cache of {path.name} is not usable ({problem}); de-quantising it again"
        )
    model, tokenizer = _dequantise(path)
    try:
        stored = gguf_cache.store_entry(digest, path.name, model, tokenizer, replace=unreadable)
    except OSError as exc:  # a full or read-only cache costs the next load its time, not this run
        gguf_cache.say(
            f"could not cache the de-quantised {path.name} ({first_line(exc)}); the next load de-quantises again"
        )
        facts["gguf_cache"] = {"entry": None, "state": f"not stored: {first_line(exc)}"}
    else:
        facts["gguf_cache"] = {"entry": str(stored.folder), "state": "rebuilt" if problem else "created"}
    return model.to(dtype), tokenizer, facts


def dequantised_checkpoint(gguf: Path) -> tuple[Path, str]:
    """The folder of a GGUF's de-quantised transformers checkpoint (float32 weights as safetensors, config,
    generation config, tokenizer), which ``from_pretrained`` and lm-eval's ``hf`` model load as they load
    any local model, and how it was had: ``reused`` (the cache entry the transformers backend and the probe
    keep, :mod:`~.gguf_cache`), ``created`` or ``rebuilt`` (de-quantised now, once). A missing file, a file
    that is not a GGUF, torch or gguf not installed, or a cache that cannot be written is one line.

    >>> dequantised_checkpoint(Path("/no/such/model.gguf"))
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: model file not found: /no/such/model.gguf
    """
    gguf = Path(gguf).expanduser()
    if not gguf.is_file():
        raise ScrambledBenchError(f"model file not found: {gguf}")
    if gguf.suffix != ".gguf":
        raise ScrambledBenchError(f"{gguf}: not a .gguf file")
    try:
        import gguf as _gguf  # noqa: F401
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        raise ScrambledBenchError(
            f"de-quantising a GGUF needs torch and gguf ({exc}); pip install 'scrambled-bench[local]'"
        ) from None
    digest = file_sha256(gguf)
    entry, problem = gguf_cache.find_entry(digest)
    if entry is not None:
        return entry.folder, "reused"
    if problem is not None:
        gguf_cache.say(
            f"the de-quantised cache of {gguf.name} is not usable ({problem}); de-quantising it again"
        )
    try:
        model, tokenizer = _dequantise(gguf)
    except (OSError, ValueError) as exc:
        raise ScrambledBenchError(f"cannot de-quantise {gguf} with transformers: {first_line(exc)}") from None
    try:
        stored = gguf_cache.store_entry(digest, gguf.name, model, tokenizer, replace=problem is not None)
    except OSError as exc:
        raise ScrambledBenchError(
            f"cannot write the de-quantised checkpoint of {gguf.name} under {gguf_cache.cache_root()} "
            f"({first_line(exc)}); point XDG_CACHE_HOME at a writable folder"
        ) from None
    return stored.folder, "rebuilt" if problem is not None else "created"


#: the models this process holds, by (source, device, dtype): a second backend of the same model (the
#: benchmark's batch sizes, a notebook's second run) shares the first one's weights while either holds them
_HELD: weakref.WeakValueDictionary[tuple[str, str, str], LoadedCausalLM] = weakref.WeakValueDictionary()
_HELD_LOCK = threading.Lock()


def load_causal_lm(source: str, device: str | None = None, dtype: str = "auto") -> LoadedCausalLM:
    """A Hub id, a local folder or a ``.gguf`` file, in eval mode on ``device``, ready for batches; the
    same object while this process still holds one of the same model, device and dtype.

    ``device``: ``cpu``, ``cuda``, ``cuda:1``... (default: ``cuda`` where there is one, else ``cpu``).
    ``dtype``: as :func:`resolve_dtype` says (``auto``: float32 on a CPU, the model's own half precision
    or bfloat16 on a GPU). A ``.gguf`` is de-quantised once and then loaded from the user's cache. The
    tokenizer pads on the left, with the end-of-sequence token where the model has no pad token. Every
    failure is one :class:`ScrambledBenchError` line saying what to do: install torch
    (``scrambled-bench[local]``), a missing file, a device torch does not see, or a Hub model that is not
    in the local cache while offline (download it first, or allow downloads).

    >>> load_causal_lm("/no/such/model.gguf")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: model file not found: /no/such/model.gguf
    """
    path = Path(source).expanduser()
    is_gguf = path.suffix == ".gguf"
    if is_gguf and not path.is_file():
        raise ScrambledBenchError(f"model file not found: {path}")
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        raise ScrambledBenchError(
            f"the transformers backend needs torch ({exc}); pip install 'scrambled-bench[local]'"
        ) from None
    device, device_type, bf16_native = resolve_device(device)
    key = (str(path.resolve()) if path.exists() else source, device, dtype)
    with _HELD_LOCK:
        held = _HELD.get(key)
        if held is None:
            held = _HELD[key] = _load(source, path, device, device_type, bf16_native, dtype)
    return held


def _load(
    source: str, path: Path, device: str, device_type: str, bf16_native: bool, dtype: str
) -> LoadedCausalLM:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    is_gguf = path.suffix == ".gguf"
    try:
        if is_gguf:
            # de-quantised, a GGUF is a float32 checkpoint: its "own" dtype is float32
            own_dtype = "float32"
            chosen = resolve_dtype(dtype, device_type, own_dtype, bf16_native)
            model, tokenizer, facts = _load_gguf(path, getattr(torch, chosen))
        else:
            own_dtype = _config_dtype(AutoConfig.from_pretrained(source))
            chosen = resolve_dtype(dtype, device_type, own_dtype, bf16_native)
            tokenizer = AutoTokenizer.from_pretrained(source)
            model = AutoModelForCausalLM.from_pretrained(source, dtype=getattr(torch, chosen))
            facts = {}
    except (OSError, ValueError, ImportError) as exc:
        raise _load_error(source, path, exc) from None
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.to(device).eval()
    facts = {"dtype_requested": dtype, "model_dtype": own_dtype, **facts}
    return LoadedCausalLM(model, tokenizer, device, chosen, facts)


def left_pad(rows: Sequence[Sequence[int]], pad_id: int, multiple: int = 1) -> tuple[Any, Any]:
    """``(input_ids, attention_mask)`` tensors of token rows padded on the left, as the tokenizer pads, to a
    width that is a ``multiple`` of tokens (a compiled model meets fewer shapes).

    >>> ids, mask = left_pad([[5, 6, 7], [8]], pad_id=0)
    >>> ids.tolist(), mask.tolist()
    ([[5, 6, 7], [0, 0, 8]], [[1, 1, 1], [0, 0, 1]])
    >>> left_pad([[5, 6, 7]], pad_id=0, multiple=4)[0].tolist()
    [[0, 5, 6, 7]]
    """
    import torch

    width = -(-max(len(row) for row in rows) // multiple) * multiple
    input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for position, row in enumerate(rows):
        if row:
            input_ids[position, width - len(row) :] = torch.tensor(row, dtype=torch.long)
            mask[position, width - len(row) :] = 1
    return input_ids, mask


def static_cache_and_compile(device: str) -> dict[str, Any]:
    """``generate``'s options for a static KV cache, with which transformers compiles the decoding step
    (``torch.compile``, mode ``reduce-overhead``: CUDA graphs on a GPU); on a device other than a GPU
    transformers compiles only when told to compile on every device."""
    from transformers import CompileConfig

    config = CompileConfig()
    if not device.startswith("cuda"):
        config._compile_all_devices = True  # transformers' own switch for it (a class attribute, not a field)
    return {"cache_implementation": "static", "compile_config": config}


@dataclass
class _Pending:
    request: GenerationRequest
    future: asyncio.Future[Generation]


class TransformersConfig(BackendConfig):
    model: str = backend_option(..., "a Hub id, a local folder or a .gguf file (de-quantised once, then read from the user's cache)", identity=True, flag=True)  # fmt: skip
    # identity: left padding within a batch can change a greedy answer
    batch_size: int = backend_option(8, "requests decoded together in one generate() call (--concurrency caps it)", ge=1, identity=True)  # fmt: skip
    # identity: the dtype auto resolves to depends on the device
    device: str | None = backend_option(None, "cpu, cuda, cuda:1... (default: cuda where there is one)", identity=True)  # fmt: skip
    # identity: float16, bfloat16 and float32 can give different greedy answers
    dtype: Dtype = backend_option("auto", "auto (float32 on a CPU; on a GPU the model's own half precision, bfloat16 for float32 models and GGUFs where supported), float32, float16 or bfloat16", identity=True)  # fmt: skip
    # identity: compiled kernels round differently from eager ones
    compile: bool = backend_option(False, "a static KV cache with torch.compile for the decoding steps (compiles per batch shape; for a GPU)", identity=True)  # fmt: skip


class TransformersBackend(Backend):
    kind = "transformers"
    description = (
        "a local transformers model in-process, batched, on the GPU where there is one (needs torch)"
    )
    Config = TransformersConfig
    in_process = True

    def __init__(self, config: TransformersConfig):
        path = Path(config.model).expanduser()
        super().__init__(path.name if path.suffix == ".gguf" else config.model)
        self.model_source = config.model
        self.batch_size = config.batch_size
        self.compile = config.compile
        self._device_request = config.device
        self._dtype_request = config.dtype
        self._loaded: LoadedCausalLM | None = None
        self._stop_criteria: dict[tuple[str, ...], Any] = {}
        self._load_lock = threading.Lock()
        self._queue: asyncio.Queue[_Pending] | None = None
        self._batcher: asyncio.Task[None] | None = None

    @property
    def max_concurrency(self) -> int:
        """One batch in flight: requests beyond it would wait for the running batch, and the engine's
        per-request timeout would be spent on that wait (a slow CPU batch timed out the queued ones)."""
        return self.batch_size

    # -- model ---------------------------------------------------------------------------------------------

    def _load(self) -> LoadedCausalLM:
        with self._load_lock:
            if self._loaded is None:
                self._loaded = load_causal_lm(self.model_source, self._device_request, self._dtype_request)
            return self._loaded

    async def _ensure_loaded(self) -> LoadedCausalLM:
        # no thread hop once loaded: every request would otherwise pay one before it can join a batch
        return self._loaded if self._loaded is not None else await asyncio.to_thread(self._load)

    @property
    def context_window(self) -> int | None:
        if self._loaded is None:
            return None
        return getattr(self._loaded.model.config, "max_position_embeddings", None)

    async def health_check(self) -> dict[str, Any]:
        loaded = await self._ensure_loaded()
        import torch
        import transformers

        return {
            "backend": self.kind,
            "model": self.model,
            "model_source": str(self.model_source),
            "commit": getattr(loaded.model.config, "_commit_hash", None),
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "device": loaded.device,
            "dtype": str(loaded.model.dtype).removeprefix("torch."),
            "compile": self.compile,
            **loaded.facts,
        }

    def _prompt_text(self, request: GenerationRequest) -> str:
        assert self._loaded is not None
        tokenizer = self._loaded.tokenizer
        if request.chat and getattr(tokenizer, "chat_template", None):
            return tokenizer.apply_chat_template(
                [{"role": "user", "content": request.prompt}], tokenize=False, add_generation_prompt=True
            )
        return request.prompt

    async def count_tokens(self, text: str) -> int | None:
        loaded = await self._ensure_loaded()
        return len(loaded.tokenizer(text)["input_ids"])

    async def count_request_tokens(self, request: GenerationRequest) -> int:
        """The prompt tokens ``generate`` will feed the model: chat prompts inside the chat template."""
        loaded = await self._ensure_loaded()
        return len(loaded.tokenizer(self._prompt_text(request), add_special_tokens=False)["input_ids"])

    # -- batching ------------------------------------------------------------------------------------------

    async def generate(self, request: GenerationRequest) -> Generation:
        await self._ensure_loaded()
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

    def _stopping_criteria(self, stop: tuple[str, ...]) -> Any:
        """transformers' criteria for ``stop``, built once per stop tuple: building one reads, sorts and
        hashes the whole vocabulary (about 0.25 s a call when ``generate`` is given ``stop_strings``)."""
        if stop not in self._stop_criteria:
            from transformers import StoppingCriteriaList, StopStringCriteria

            assert self._loaded is not None
            criteria = StopStringCriteria(tokenizer=self._loaded.tokenizer, stop_strings=list(stop))
            self._stop_criteria[stop] = StoppingCriteriaList([criteria])
        return self._stop_criteria[stop]

    def generate_options(self, settings: GenerationSettings, max_new_tokens: int) -> dict[str, Any]:
        """The keyword arguments of one ``generate`` call for ``settings`` (besides the inputs)."""
        assert self._loaded is not None
        options: dict[str, Any] = {
            "max_new_tokens": max_new_tokens,
            "pad_token_id": self._loaded.tokenizer.pad_token_id,
            **transformers_parameters(settings),
        }
        if settings.stop:
            options["stopping_criteria"] = self._stopping_criteria(settings.stop)
        if self.compile:
            options.update(static_cache_and_compile(self._loaded.device))
        return options

    def _generate_batch(self, requests: list[GenerationRequest]) -> list[Generation | BaseException]:
        import torch

        assert self._loaded is not None
        settings: GenerationSettings = requests[0].settings
        tokenizer, model = self._loaded.tokenizer, self._loaded.model
        window = self.context_window
        texts = [self._prompt_text(request) for request in requests]
        # tokenized once: the lengths that group the batch are the rows that are fed
        rows = tokenizer(texts, add_special_tokens=False)["input_ids"]
        results: list[Generation | BaseException | None] = [None] * len(requests)
        runnable = []
        for index, row in enumerate(rows):
            if window is not None and len(row) >= window:
                results[index] = ContextTooLongError(
                    f"prompt of {len(row)} tokens does not fit the context window of {window} tokens"
                )
            else:
                runnable.append(index)
        eos_ids = _eos_ids(model, tokenizer)
        for group in length_groups([len(rows[i]) for i in runnable]):
            indices = [runnable[g] for g in group]
            multiple = COMPILED_WIDTH_MULTIPLE if self.compile else 1
            input_ids, mask = left_pad([rows[i] for i in indices], tokenizer.pad_token_id, multiple)
            width = input_ids.shape[1]
            max_new_tokens = settings.max_new_tokens
            if window is not None:
                max_new_tokens = max(1, min(max_new_tokens, window - width))
            if settings.seed is not None:
                torch.manual_seed(settings.seed)
            with torch.inference_mode():
                output = model.generate(
                    input_ids=input_ids.to(self._loaded.device),
                    attention_mask=mask.to(self._loaded.device),
                    **self.generate_options(settings, max_new_tokens),
                )
            for index, new_tokens in zip(indices, output[:, width:].tolist(), strict=True):
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
                    prompt_tokens=len(rows[index]),
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
        self._loaded = None
        self._stop_criteria.clear()


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    ids = getattr(model.generation_config, "eos_token_id", None)
    if ids is None:
        ids = tokenizer.eos_token_id
    values = ids if isinstance(ids, (list, tuple)) else [ids]
    found = {int(v) for v in values if v is not None}
    if tokenizer.pad_token_id is not None:
        found.add(int(tokenizer.pad_token_id))
    return found
