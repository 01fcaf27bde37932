"""Scramble any dataset ``datasets`` can load: chosen text columns, one config per type or recipe.

Output layout (a folder ``load_dataset(folder, config)`` reads, and the Hub repository's layout)::

    README.md                                      dataset card: source, revision, types, seed, licence
    manifest.json                                  what was done, and the sha256 of every output file
    data/{config}/{split}-00000-of-00002.parquet   one config per type (``rs50``) or recipe (``ft-rs``)

Columns: every source column in its place, each chosen column ``<column>`` holding the scrambled text with
``<column>_original`` right after it, then ``scramble_type`` (the type applied), ``scrambled`` (whether the
row was chosen: always true unless a sample rate or recipe leaves rows unchanged) and, for a recipe,
``recipe``. Other columns are copied unchanged.

Determinism: a row's output depends only on (text, type, seed, row key). The row key is the value of
``id_column`` when given, else the row's index in its split (as a string); whether a row is chosen under a
sample rate depends only on (seed, row key). Neither depends on ``num_proc``, streaming or the batch size,
and the parquet files are written in fixed row groups and shards, so the bytes do not either.

Everything is written to a temporary folder beside ``out`` and renamed into place at the end, as ``build``
does: a failure leaves no partial output, and a previous output is replaced only once the new one is whole.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
import os
import shlex
import shutil
import tempfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from scrambled_bench.builder.build import check_output_folder, library_versions, swap_into_place
from scrambled_bench.builder.card import markdown_table
from scrambled_bench.builder.manifest import MANIFEST_NAME, Manifest
from scrambled_bench.builder.nested_columns import check_path, column_path, is_list_of_text, map_row, roots
from scrambled_bench.builder.recipes import check_sample_rate, get_recipe, row_selected
from scrambled_bench.builder.scrambler import parse_type, scramble, type_description
from scrambled_bench.errors import ScrambledBenchError, first_line
from scrambled_bench.hub import check_repo_id, hub_error, require_token
from scrambled_bench.io import file_sha256

CARD_NAME = "README.md"
TEMPLATE_NAME = "scrambled_copy.md"
MANIFEST_KIND = "scramble"
"""``manifest.json``'s ``kind``: what marks a folder as a previous output this command may replace."""
ORIGINAL_SUFFIX = "_original"
ADDED_COLUMNS = ("scramble_type", "scrambled", "recipe")
ROWS_PER_GROUP = 1_000
"""Rows per parquet row group (fixed: the bytes of the files depend on it), and the default batch size."""
ROWS_PER_SHARD = 100_000
"""Rows per parquet file (a whole number of row groups)."""
FILE_BUILDERS = {
    ".parquet": "parquet",
    ".json": "json",
    ".jsonl": "json",
    ".ndjson": "json",
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "text",
    ".arrow": "arrow",
}
"""Packaged ``datasets`` builder for a data file, by extension (read through ``.gz``, ``.zst``, ``.bz2``, ``.xz``)."""
COMPRESSIONS = (".gz", ".zst", ".bz2", ".xz")


# --------------------------------------------------------------------------------------------------
# What to do to each row (pure)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    """One output config: a scramble type applied to the chosen columns of the rows a sample rate picks."""

    config: str
    """The output config's name: the type (``rs50``) or the recipe (``ft-rs``)."""
    scramble_type: str
    sample_rate: float = 100.0
    """Percent of the rows scrambled; the others keep their text (``scrambled`` false)."""
    recipe: str | None = None


@dataclass(frozen=True)
class ScrambleJob:
    """What every row of every split goes through: the chosen columns, the output variants, the seed and the
    row key's column (``None``: the row's index in its split)."""

    columns: tuple[str, ...]
    variants: tuple[Variant, ...]
    seed: int = 0
    id_column: str | None = None
    kept_splits: frozenset[str] = frozenset()
    """Splits copied with their text unchanged (``scrambled`` false): a harness task's demonstrations."""

    def for_split(self, split: str) -> ScrambleJob:
        """The job for one split: a kept split goes through every variant at a sample rate of 0.

        >>> job = ScrambleJob(("text",), (Variant("kfl", "kfl"),), kept_splits=frozenset({"train"}))
        >>> job.for_split("train").variants[0].sample_rate, job.for_split("test").variants[0].sample_rate
        (0.0, 100.0)
        """
        if split not in self.kept_splits:
            return self
        return replace(self, variants=tuple(replace(v, sample_rate=0.0) for v in self.variants))

    def scramble_keyed(
        self,
        batch: Mapping[str, Sequence[Any]],
        keys: Sequence[str],
        variant: Variant,
        column_order: Sequence[str],
    ) -> dict[str, list[Any]]:
        """One keyed batch under one of the job's variants (:func:`scramble_batch` with the job's columns and
        seed): the map and the streamed path alike."""
        return scramble_batch(
            batch, keys, columns=self.columns, variant=variant, seed=self.seed, column_order=column_order
        )


def variants_for(
    types: Sequence[str] | None, recipe: str | None, sample_rate: float | None
) -> tuple[Variant, ...]:
    """The output configs of a request: one per type, or the recipe's one; one-line errors otherwise.

    >>> [v.config for v in variants_for(["kfl", "rs50", "kfl"], None, None)]
    ['kfl', 'rs50']
    >>> variants_for(None, "ft-kf-adj", None)
    (Variant(config='ft-kf-adj', scramble_type='adj30', sample_rate=60.0, recipe='ft-kf-adj'),)
    >>> variants_for(["kfl"], "ft-rs", None)
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: give --types or --recipe, not both
    """
    if types and recipe:
        raise ScrambledBenchError("give --types or --recipe, not both")
    if recipe:
        if sample_rate is not None:
            raise ScrambledBenchError(
                f"--sample-rate is set by the recipe ({recipe!r}); use --types with --sample-rate instead"
            )
        chosen = get_recipe(recipe)
        return (Variant(chosen.name, chosen.scramble_type, float(chosen.sample_rate), chosen.name),)
    if not types:
        raise ScrambledBenchError("give --types (e.g. kfl,rs50) or --recipe (ft-rs, ft-kf-adj, ft-ori)")
    rate = 100.0 if sample_rate is None else check_sample_rate(sample_rate)
    names = list(dict.fromkeys(types))
    for name in names:
        parse_type(name)
    return tuple(Variant(name, name, rate) for name in names)


def apply_variant(text: str | None, row_key: str, variant: Variant, *, seed: int) -> tuple[str | None, bool]:
    """(output text, whether the row is chosen) for one value: what the command and the datatrove step share.

    A row a sample rate leaves out keeps its text; a missing value (``None``) stays missing.

    >>> apply_variant("The quick brown fox", "7", Variant("kfl", "kfl"), seed=0)
    ('The qucik bworn fox', True)
    >>> apply_variant("The quick brown fox", "7", Variant("ft-ori", "original", 0.0, "ft-ori"), seed=0)
    ('The quick brown fox', False)
    """
    chosen = row_selected(row_key, seed=seed, sample_rate=variant.sample_rate)
    return (_scrambled_text(text, row_key, variant, seed) if chosen else text), chosen


def _scrambled_text(text: str | None, row_key: str, variant: Variant, seed: int) -> str | None:
    if text is None:
        return None
    if not isinstance(text, str):
        raise ScrambledBenchError(f"row {row_key}: can only scramble text, got {type(text).__name__}")
    return scramble(text, variant.scramble_type, seed=seed, sample_id=row_key)


def row_keys(batch: Mapping[str, Sequence[Any]], indices: Sequence[int], id_column: str | None) -> list[str]:
    """The row keys of a batch: ``id_column``'s values as strings, else the rows' indices in the split.

    >>> row_keys({"id": ["a", 7]}, [0, 1], "id"), row_keys({"id": ["a", 7]}, [40, 41], None)
    (['a', '7'], ['40', '41'])
    """
    if id_column is None:
        return [str(index) for index in indices]
    keys = []
    for index, value in zip(indices, batch[id_column]):
        if value is None:
            raise ScrambledBenchError(
                f"--id-column {id_column}: row {index} has no value; every row needs a key"
            )
        keys.append(str(value))
    return keys


def scramble_batch(
    batch: Mapping[str, Sequence[Any]],
    keys: Sequence[str],
    *,
    columns: Sequence[str],
    variant: Variant,
    seed: int,
    column_order: Sequence[str] | None = None,
) -> dict[str, list[Any]]:
    """The output columns of one batch under one variant (pure): chosen columns scrambled beside their
    originals, the other columns as they were, then ``scramble_type``, ``scrambled`` (and ``recipe``).

    >>> out = scramble_batch({"id": [1], "text": ["Hello there"]}, ["1"], columns=["text"], variant=Variant("kf", "kf"), seed=0)
    >>> out
    {'id': [1], 'text': ['Holle trhee'], 'text_original': ['Hello there'], 'scramble_type': ['kf'], 'scrambled': [True]}
    """
    rows = len(keys)
    chosen = [row_selected(key, seed=seed, sample_rate=variant.sample_rate) for key in keys]
    paths = [column_path(column, batch) for column in columns]
    scrambled: dict[str, list[Any]] = {root: [] for root in roots(paths)}
    for index, (key, selected) in enumerate(zip(keys, chosen)):
        row = {root: batch[root][index] for root in scrambled}
        if selected:  # nested columns (`choices.text`) change only the strings they name
            row = map_row(row, paths, lambda text, key=key: _scrambled_text(text, key, variant, seed))
        for root, value in row.items():
            scrambled[root].append(value)
    out: dict[str, list[Any]] = {}
    for name in column_order or list(batch):
        if name in scrambled:
            out[name] = scrambled[name]
            out[name + ORIGINAL_SUFFIX] = list(batch[name])
        else:
            out[name] = list(batch[name])
    out["scramble_type"] = [variant.scramble_type] * rows
    out["scrambled"] = chosen
    if variant.recipe is not None:
        out["recipe"] = [variant.recipe] * rows
    return out


def _map_batch(
    batch: Mapping[str, Sequence[Any]],
    indices: Sequence[int],
    *,
    job: ScrambleJob,
    variant: Variant,
    column_order: Sequence[str],
) -> dict[str, list[Any]]:
    """``Dataset.map``'s function (top level, so that its worker processes can import it)."""
    return job.scramble_keyed(batch, row_keys(batch, indices, job.id_column), variant, column_order)


def _scramble_streamed_batch(
    work: tuple[dict[str, list[Any]], int, ScrambleJob, list[str]],
) -> list[dict[str, list[Any]]]:
    """One streamed batch (its rows, the index of its first row) under every variant; top level, for the
    worker processes of ``--num-proc``."""
    batch, first_index, job, column_order = work
    rows = len(next(iter(batch.values()))) if batch else 0
    keys = row_keys(batch, range(first_index, first_index + rows), job.id_column)  # once for all variants
    return [job.scramble_keyed(batch, keys, variant, column_order) for variant in job.variants]


# --------------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------------


@dataclass
class LoadedSource:
    """The splits to scramble and what the card and the manifest say about where they came from."""

    splits: dict[str, Any]
    """split name -> ``datasets.Dataset`` (or ``IterableDataset`` when streaming)."""
    description: dict[str, Any]
    license: str | None = None
    license_name: str | None = None
    files: dict[str, str] = field(default_factory=dict)
    """Local input file -> sha256 (empty for a Hub dataset)."""


def _data_suffix(path: Path) -> str:
    """The data file's own extension, read through a compression suffix: ``rows.jsonl.gz`` -> ``.jsonl``.

    >>> _data_suffix(Path("rows.JSONL.gz")), _data_suffix(Path("notes"))
    ('.jsonl', '')
    """
    suffixes = [suffix.lower() for suffix in path.suffixes]
    while suffixes and suffixes[-1] in COMPRESSIONS:
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


def _license_of_card(card_path_or_repo: str, *, repo: bool) -> tuple[str | None, str | None]:
    """The ``license`` (and ``license_name``) of a dataset card, best effort: ``(None, None)`` when there is
    no readable card (offline, no README, no YAML header)."""
    from huggingface_hub import DatasetCard

    try:
        card = (
            DatasetCard.load(card_path_or_repo, repo_type="dataset")
            if repo
            else DatasetCard.load(card_path_or_repo)
        )
    except Exception:  # noqa: BLE001 - a missing or unreadable card only means no licence to carry over
        return None, None
    licence = card.data.get("license")
    if isinstance(licence, list):
        licence = ", ".join(str(item) for item in licence)
    return (str(licence) if licence else None), card.data.get("license_name")


def _local_license(folder: Path) -> tuple[str | None, str | None]:
    card = folder / CARD_NAME
    return _license_of_card(str(card), repo=False) if card.is_file() else (None, None)


def _local_files(path: Path, pattern: str | None) -> list[Path]:
    """The files of a local source: a glob's matches, the file, or every file under the folder (not hidden ones)."""
    if pattern is not None:
        import glob

        matches = glob.glob(os.path.expanduser(pattern), recursive=True)
        return sorted(Path(match) for match in matches if os.path.isfile(match))
    if path.is_file():
        return [path]
    return sorted(
        file
        for file in path.rglob("*")
        if file.is_file() and not any(part.startswith(".") for part in file.relative_to(path).parts)
    )


def _load_files(
    source: str, files: Sequence[Path], split_arg: list[str] | None, streaming: bool, cache_dir: str | None
):
    """Data files through the packaged ``datasets`` builder of their extension."""
    import datasets

    if not files:
        raise ScrambledBenchError(f"cannot load dataset {source!r}: no file matches")
    builders = {FILE_BUILDERS.get(_data_suffix(file)) for file in files}
    if len(builders) != 1 or None in builders:
        known = ", ".join(sorted(FILE_BUILDERS))
        raise ScrambledBenchError(
            f"cannot load dataset {source!r}: expected files of one kind ({known}, optionally compressed)"
        )
    builder = builders.pop()
    extra = {"delimiter": "\t"} if all(_data_suffix(file) == ".tsv" for file in files) else {}
    data_files = [str(file) for file in files]
    return builder, datasets.load_dataset(
        builder, data_files=data_files, split=split_arg, streaming=streaming, cache_dir=cache_dir, **extra
    )


def _load_saved(source: str, path: Path, split_arg: list[str] | None, streaming: bool):
    """A ``save_to_disk`` folder (a Dataset or a DatasetDict)."""
    import datasets

    loaded = datasets.load_from_disk(str(path))
    if isinstance(loaded, datasets.Dataset):
        if split_arg:
            raise ScrambledBenchError(f"{source} is a single saved split: leave out --split")
        parts = {"train": loaded}
    else:
        for name in split_arg or []:
            if name not in loaded:
                raise ScrambledBenchError(f"{source} has no split {name!r} (splits: {', '.join(loaded)})")
        parts = {name: loaded[name] for name in (split_arg or list(loaded))}
    return {name: part.to_iterable_dataset() if streaming else part for name, part in parts.items()}


def load_source(
    source: str,
    *,
    config: str | None = None,
    splits: Sequence[str] | None = None,
    revision: str | None = None,
    streaming: bool = False,
    cache_dir: str | None = None,
) -> LoadedSource:
    """Load ``source``: a data file or glob (parquet, JSON Lines, CSV, text, arrow), a local folder (a
    ``datasets`` repository layout, or a ``save_to_disk`` folder), or a Hub dataset id. Any failure is a
    one-line error naming the source.
    """
    import datasets

    path = Path(source).expanduser()
    pattern = source if any(char in source for char in "*?[") else None
    local = pattern is not None or path.exists()
    if local and revision is not None:
        raise ScrambledBenchError(f"--revision applies to a Hub dataset id, not to the local {source}")
    description: dict[str, Any] = {"source": source, "config": config}
    licence: tuple[str | None, str | None] = (None, None)
    split_arg = list(splits) if splits else None
    try:
        if pattern is not None or path.is_file():
            builder, loaded = _load_files(
                source, _local_files(path, pattern), split_arg, streaming, cache_dir
            )
            description["kind"] = f"{builder} files"
        elif path.is_dir() and ((path / "state.json").is_file() or (path / "dataset_dict.json").is_file()):
            loaded = _load_saved(source, path, split_arg, streaming)
            description["kind"] = "save_to_disk folder"
            licence = _local_license(path)
        elif path.is_dir():
            loaded = datasets.load_dataset(
                str(path), config, split=split_arg, streaming=streaming, cache_dir=cache_dir
            )
            description["kind"] = "local folder"
            licence = _local_license(path)
        else:
            loaded = datasets.load_dataset(
                source, config, split=split_arg, revision=revision, streaming=streaming, cache_dir=cache_dir
            )
            description.update(
                kind="Hub dataset", revision=revision or "main", commit=_hub_commit(source, revision)
            )
            licence = _license_of_card(source, repo=True)
    except ScrambledBenchError:
        raise
    except Exception as exc:  # noqa: BLE001 - every loader failure (offline included) becomes one line
        raise ScrambledBenchError(f"cannot load dataset {source!r}: {first_line(exc)}") from None

    if isinstance(loaded, list):  # load_dataset(split=[...]) returns the splits in the order asked
        chosen = dict(zip(split_arg or [], loaded))
    elif isinstance(loaded, datasets.Dataset | datasets.IterableDataset):
        chosen = {split_arg[0] if split_arg else str(loaded.split or "train"): loaded}
    else:
        chosen = dict(loaded)
    if not chosen:
        raise ScrambledBenchError(f"cannot load dataset {source!r}: it has no splits")
    files = {}
    if local:
        for file in _local_files(path, pattern):
            files[str(file.relative_to(path)) if path.is_dir() else str(file)] = file_sha256(file)
    return LoadedSource(chosen, description, licence[0], licence[1], files)


def _hub_commit(repo_id: str, revision: str | None) -> str | None:
    """The commit a Hub revision points at, best effort (``None`` offline)."""
    try:
        from huggingface_hub import HfApi

        return HfApi().dataset_info(repo_id, revision=revision).sha
    except Exception:  # noqa: BLE001 - the commit is recorded where it can be known
        return None


# --------------------------------------------------------------------------------------------------
# Columns and types
# --------------------------------------------------------------------------------------------------


def _features_of(split: str, dataset: Any) -> Any:
    """The split's ``datasets.Features``; a streamed source that does not declare them has them inferred
    from its first rows."""
    import datasets
    import pyarrow as pa

    features = dataset.features
    if features is None:
        first = next(iter(dataset.iter(batch_size=ROWS_PER_GROUP)), None)
        if first is None:
            raise ScrambledBenchError(f"split {split!r} is empty and declares no columns")
        features = datasets.Features.from_arrow_schema(pa.Table.from_pydict(first).schema)
    return features


def _is_text(feature: Any) -> bool:
    from datasets import Value

    return isinstance(feature, Value) and feature.dtype in ("string", "large_string")


def check_columns(
    split: str, features: Mapping[str, Any], columns: Sequence[str], id_column: str | None
) -> None:
    """One-line errors for chosen columns that are missing or not text, and for names the output would clash on.

    >>> from datasets import Features, Value
    >>> check_columns("train", Features({"id": Value("int64"), "text": Value("string")}), ["txt"], None)
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: split 'train' has no column 'txt' (columns: id, text)
    >>> check_columns("train", Features({"id": Value("int64"), "text": Value("string")}), ["id"], None)
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: column 'id' of split 'train' is not text (int64); text columns: text
    """
    names = list(features)
    if not columns:
        raise ScrambledBenchError(f"give --columns to scramble (columns: {', '.join(names)})")
    for column in columns:
        path = column_path(column, features)
        if path.field is not None or is_list_of_text(features.get(column)):
            check_path(split, features, path)  # a list of strings, or a field inside a nested column
            column = path.root
        elif column not in features:
            raise ScrambledBenchError(
                f"split {split!r} has no column {column!r} (columns: {', '.join(names)})"
            )
        elif not _is_text(features[column]):
            kind = getattr(features[column], "dtype", type(features[column]).__name__)
            text_columns = ", ".join(name for name in names if _is_text(features[name])) or "none"
            raise ScrambledBenchError(
                f"column {column!r} of split {split!r} is not text ({kind}); text columns: {text_columns}"
            )
        if column + ORIGINAL_SUFFIX in features:
            raise ScrambledBenchError(
                f"split {split!r} already has a column {column + ORIGINAL_SUFFIX!r}, where the original "
                f"{column!r} would go; rename it first"
            )
    for name in ADDED_COLUMNS:
        if name in features:
            raise ScrambledBenchError(
                f"split {split!r} already has a column {name!r}, which the output adds; rename it first"
            )
    if id_column is not None and id_column not in features:
        raise ScrambledBenchError(
            f"--id-column: split {split!r} has no column {id_column!r} (columns: {', '.join(names)})"
        )


def output_features(features: Mapping[str, Any], columns: Sequence[str], variant: Variant) -> Any:
    """The output's ``datasets.Features``: ``<column>_original`` after each chosen column, then the added ones.

    >>> from datasets import Features, Value
    >>> list(output_features(Features({"text": Value("string"), "n": Value("int64")}), ["text"], Variant("kf", "kf")))
    ['text', 'text_original', 'n', 'scramble_type', 'scrambled']
    """
    from datasets import Features, Value

    items: dict[str, Any] = {}
    originals = roots([column_path(column, features) for column in columns])
    for name, feature in features.items():
        items[name] = feature
        if name in originals:
            items[name + ORIGINAL_SUFFIX] = feature
    items["scramble_type"] = Value("string")
    items["scrambled"] = Value("bool")
    if variant.recipe is not None:
        items["recipe"] = Value("string")
    return Features(items)


# --------------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------------


class ShardWriter:
    """Parquet files of one config and split, in row groups of exactly ``rows_per_group`` rows and files of
    ``rows_per_shard`` rows, whatever the sizes of the tables handed to it: the same rows give the same bytes.

    Files are written as ``{split}-{index:05d}.parquet.partial`` and named ``{split}-{index:05d}-of-{count:05d}.parquet``
    once the count is known (:meth:`close`).
    """

    def __init__(self, folder: Path, split: str, schema: Any, *, rows_per_group: int, rows_per_shard: int):
        self.folder, self.split, self.schema = folder, split, schema
        self.rows_per_group = rows_per_group
        self.rows_per_shard = max(rows_per_group, rows_per_shard // rows_per_group * rows_per_group)
        self.pending: list[Any] = []
        self.pending_rows = 0
        self.partials: list[tuple[Path, int]] = []
        self.writer: Any = None
        self.rows_in_file = 0
        folder.mkdir(parents=True, exist_ok=True)

    def write(self, table: Any) -> None:
        """Queue ``table`` (any length); whole row groups are written as they fill."""
        table = table.select(self.schema.names).cast(self.schema)
        if table.num_rows:
            self.pending.append(table)
            self.pending_rows += table.num_rows
        while self.pending_rows >= self.rows_per_group:
            self._write_group(self._take(self.rows_per_group))

    def _take(self, count: int) -> Any:
        import pyarrow as pa

        combined = pa.concat_tables(self.pending)
        head, rest = combined.slice(0, count), combined.slice(count)
        self.pending = [rest] if rest.num_rows else []
        self.pending_rows = rest.num_rows
        return head

    def _open(self) -> None:
        import pyarrow.parquet as pq

        path = self.folder / f"{self.split}-{len(self.partials):05d}.parquet.partial"
        self.writer = pq.ParquetWriter(path, self.schema, compression="zstd", compression_level=3)
        self.partials.append((path, 0))
        self.rows_in_file = 0

    def _write_group(self, group: Any) -> None:
        if self.writer is None:
            self._open()
        self.writer.write_table(group, row_group_size=max(group.num_rows, 1))
        self.rows_in_file += group.num_rows
        path, _ = self.partials[-1]
        self.partials[-1] = (path, self.rows_in_file)
        if self.rows_in_file >= self.rows_per_shard:
            self.writer.close()
            self.writer = None

    def close(self) -> list[tuple[Path, int]]:
        """Write what is left, name the files with their count, and return (path, rows) per file."""
        if self.pending_rows:
            self._write_group(self._take(self.pending_rows))
        if not self.partials:  # an empty split still gets a file, so that the config and split exist
            self._open()
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        count = len(self.partials)
        named = []
        for index, (partial, rows) in enumerate(self.partials):
            final = self.folder / f"{self.split}-{index:05d}-of-{count:05d}.parquet"
            os.replace(partial, final)
            named.append((final, rows))
        return named

    def abort(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def _ordered_parallel_map(
    function: Callable[[Any], Any], items: Iterable[Any], workers: int
) -> Iterator[Any]:
    """``map(function, items)`` on ``workers`` processes, in order, with at most ``2 * workers`` items in
    flight, so that memory stays flat on an input larger than memory (``Pool.imap`` reads ahead without bound)."""
    if workers <= 1:
        yield from map(function, items)
        return
    # fork where there is one, as datasets.map does: spawn re-runs the parent's __main__ in every worker,
    # which fails for code read from stdin or a notebook; the workers run only pure functions
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        window: deque[Any] = deque()
        for item in items:
            window.append(pool.submit(function, item))
            if len(window) >= 2 * workers:
                yield window.popleft().result()
        while window:
            yield window.popleft().result()


# --------------------------------------------------------------------------------------------------
# The command
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScrambleResult:
    """What a scramble wrote: the folder (``None`` when only pushed), the Hub URL, and rows per config/split."""

    out: Path | None
    url: str | None
    rows: dict[str, dict[str, int]]


def is_scramble_output(folder: Path) -> bool:
    """Whether ``folder`` holds a previous ``scramble`` output (its manifest says so).

    >>> import tempfile, pathlib
    >>> is_scramble_output(pathlib.Path(tempfile.mkdtemp()))
    False
    """
    if not Manifest.exists(folder):
        return False
    try:
        return Manifest.read(folder).data.get("kind") == MANIFEST_KIND
    except ScrambledBenchError:
        return False


def scramble_dataset(
    source: str,
    *,
    columns: Sequence[str],
    types: Sequence[str] | None = None,
    recipe: str | None = None,
    out: Path | None = None,
    push: str | None = None,
    splits: Sequence[str] | None = None,
    config: str | None = None,
    revision: str | None = None,
    seed: int = 0,
    num_proc: int = 1,
    streaming: bool = False,
    id_column: str | None = None,
    sample_rate: float | None = None,
    private: bool = False,
    batch_size: int = ROWS_PER_GROUP,
    rows_per_shard: int = ROWS_PER_SHARD,
    cache_dir: str | None = None,
    api: Any | None = None,
    command: str | None = None,
    loaded: LoadedSource | None = None,
    kept_splits: Sequence[str] = (),
    extra_outputs: Callable[[Path], Mapping[str, Any]] | None = None,
) -> ScrambleResult:
    """Scramble ``columns`` of ``source`` with each of ``types`` (one config each) or with ``recipe``, into
    ``out`` and/or the Hub dataset repository ``push``. See the module docstring for the layout and columns.

    ``batch_size`` (rows per batch handed to the scrambler) changes neither the rows nor the bytes written;
    ``rows_per_shard`` sets the size of the parquet files.
    ``api`` replaces ``huggingface_hub.HfApi`` for ``push`` (tests).
    ``loaded`` is a source already loaded (a harness task's dataset, ``builder.harness_tasks``) in place of
    ``source``; ``kept_splits`` are copied with their text unchanged; ``extra_outputs(folder)`` writes more
    files into the output before it is moved into place and returns what the manifest adds about them.

    >>> scramble_dataset("x.jsonl", columns=["text"], types=["kfl"], out=None)
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: give --out DIR, --push ORG/NAME or both
    """
    if out is None and push is None:
        raise ScrambledBenchError("give --out DIR, --push ORG/NAME or both")
    columns = list(dict.fromkeys(columns))
    variants = variants_for(types, recipe, sample_rate)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ScrambledBenchError(f"--seed must be a non-negative integer, got {seed!r}")
    if isinstance(num_proc, bool) or not isinstance(num_proc, int) or num_proc < 1:
        raise ScrambledBenchError(f"--num-proc must be at least 1, got {num_proc!r}")
    if push is not None:
        check_repo_id(push, "--push")
    if out is not None:
        out = Path(out).expanduser()
        check_output_folder(
            out,
            replaceable=is_scramble_output,
            refusal=f"output folder {out} exists and is not a previous `scramble` output; refusing to replace it",
        )
    if push is not None and api is None:
        require_token()

    if loaded is None:
        loaded = load_source(
            source, config=config, splits=splits, revision=revision, streaming=streaming, cache_dir=cache_dir
        )
    features = {name: _features_of(name, dataset) for name, dataset in loaded.splits.items()}
    for name, split_features in features.items():
        check_columns(name, split_features, columns, id_column)

    parent = out.parent if out is not None else Path(tempfile.gettempdir())
    name = out.name if out is not None else "scrambled"
    try:
        tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{name}.tmp-"))
    except OSError as exc:
        raise ScrambledBenchError(
            f"cannot write to the output folder {parent}: {exc.strerror or exc}"
        ) from None
    try:
        job = ScrambleJob(tuple(columns), variants, seed, id_column, frozenset(kept_splits))
        rows = _write_splits(
            tmp, loaded, features, job, num_proc=num_proc, streaming=streaming, batch_size=batch_size,
            rows_per_shard=rows_per_shard,
        )  # fmt: skip
        if command is None:
            command = _command_line(
                source,
                columns,
                types,
                recipe,
                out,
                push,
                splits,
                config,
                revision,
                seed,
                id_column,
                sample_rate,
            )
        repo_hint = push or (str(out) if out is not None else ".")
        extra = extra_outputs(tmp) if extra_outputs is not None else {}
        _write_card_and_manifest(
            tmp, loaded, features, rows, job, command=command, repo_hint=repo_hint, extra=extra
        )
        url = None
        if push is not None:
            url = push_scrambled(tmp, push, private=private, api=api)
        if out is not None:
            swap_into_place(tmp, out)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return ScrambleResult(out=out, url=url, rows=rows)


def _write_splits(
    tmp: Path,
    loaded: LoadedSource,
    features: Mapping[str, Any],
    job: ScrambleJob,
    *,
    num_proc: int,
    streaming: bool,
    batch_size: int,
    rows_per_shard: int,
) -> dict[str, dict[str, int]]:
    """Write every split under every variant into ``tmp/data``; rows per config and split."""
    rows: dict[str, dict[str, int]] = {variant.config: {} for variant in job.variants}
    scratch = Path(tempfile.mkdtemp(dir=tmp.parent, prefix=f"{tmp.name}.cache-"))
    try:
        for split, dataset in loaded.splits.items():
            writers = [
                ShardWriter(
                    tmp / "data" / variant.config,
                    split,
                    output_features(features[split], job.columns, variant).arrow_schema,
                    rows_per_group=ROWS_PER_GROUP,
                    rows_per_shard=rows_per_shard,
                )
                for variant in job.variants
            ]
            try:
                split_job = job.for_split(split)
                if streaming:
                    _stream_split(dataset, writers, split_job, list(features[split]), num_proc, batch_size)
                else:
                    for variant, writer in zip(split_job.variants, writers):
                        cache_file = scratch / f"{split}-{variant.config}.arrow"
                        _map_split(
                            dataset,
                            writer,
                            split_job,
                            variant,
                            features[split],
                            cache_file,
                            num_proc,
                            batch_size,
                        )
            except BaseException:
                for writer in writers:
                    writer.abort()
                raise
            for variant, writer in zip(job.variants, writers):
                rows[variant.config][split] = sum(count for _, count in writer.close())
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return rows


def _stream_split(
    dataset: Any,
    writers: Sequence[ShardWriter],
    job: ScrambleJob,
    column_order: list[str],
    num_proc: int,
    batch_size: int,
) -> None:
    """Read a streamed split batch by batch, scramble each batch under every variant (on ``num_proc``
    processes, in order) and hand the outputs to the variants' writers."""
    import pyarrow as pa

    def work() -> Iterator[tuple[dict[str, list[Any]], int, ScrambleJob, list[str]]]:
        first = 0
        for batch in dataset.iter(batch_size=batch_size):
            yield batch, first, job, column_order
            first += len(next(iter(batch.values()))) if batch else 0

    for outputs in _ordered_parallel_map(_scramble_streamed_batch, work(), num_proc):
        for writer, output in zip(writers, outputs):
            writer.write(pa.Table.from_pydict(output, schema=writer.schema))


@contextlib.contextmanager
def _environment_kept() -> Iterator[None]:
    """Keep ``os.environ`` the same object with the same contents across ``Dataset.map(num_proc > 1)``.

    For its workers, datasets sets ``TOKENIZERS_PARALLELISM=false`` and then rebinds ``os.environ`` to a
    copy of the previous mapping; code that captured ``os.environ`` before (rich's console reads ``COLUMNS``
    through it) would stop seeing the environment. Bind the original back, with its previous value.
    """
    environ = os.environ
    previous = environ.get("TOKENIZERS_PARALLELISM")
    try:
        yield
    finally:
        os.environ = environ  # noqa: B003 - rebinding the original object is the point, not clearing
        if previous is None:
            environ.pop("TOKENIZERS_PARALLELISM", None)
        else:
            environ["TOKENIZERS_PARALLELISM"] = previous


def _map_split(
    dataset: Any,
    writer: ShardWriter,
    job: ScrambleJob,
    variant: Variant,
    split_features: Any,
    cache_file: Path,
    num_proc: int,
    batch_size: int,
) -> None:
    """One variant of a split through ``Dataset.map`` (``num_proc`` processes), then to its writer."""
    with _environment_kept():
        mapped = dataset.map(
            _map_batch,
            batched=True,
            batch_size=batch_size,
            with_indices=True,
            remove_columns=dataset.column_names,
            features=output_features(split_features, job.columns, variant),
            fn_kwargs={"job": job, "variant": variant, "column_order": list(split_features)},
            num_proc=num_proc if num_proc > 1 else None,
            # the package's code is not part of datasets' fingerprint: never reuse a cached result of
            # another version
            load_from_cache_file=False,
            cache_file_name=str(cache_file),
            desc=f"scrambling {cache_file.stem}",
        )
    for table in mapped.with_format("arrow").iter(batch_size=batch_size):
        writer.write(table)


# --------------------------------------------------------------------------------------------------
# Card, manifest, Hub
# --------------------------------------------------------------------------------------------------


def _command_line(
    source, columns, types, recipe, out, push, splits, config, revision, seed, id_column, sample_rate
) -> str:
    """The command that makes this output (for the card), reconstructed from the arguments."""
    parts = ["scrambled-bench", "scramble", source, "--columns", ",".join(columns)]
    parts += ["--recipe", recipe] if recipe else ["--types", ",".join(types or [])]
    for option, value in (
        ("--out", out),
        ("--push", push),
        ("--split", ",".join(splits) if splits else None),
        ("--config", config),
        ("--revision", revision),
        ("--id-column", id_column),
        ("--sample-rate", None if sample_rate is None else f"{sample_rate:g}"),
    ):
        if value is not None:
            parts += [option, str(value)]
    parts += ["--seed", str(seed)]
    return shlex.join(parts)


def _digest_of(entries: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for entry in entries:
        digest.update(entry.encode("utf-8") + b"\n")
    return digest.hexdigest()


def _data_file_entries(folder: Path) -> dict[str, dict[str, Any]]:
    """Relative path -> config, split, rows and sha256 of every parquet file under ``folder/data``."""
    import pyarrow.parquet as pq

    entries = {}
    for path in sorted((folder / "data").rglob("*.parquet")):
        entries[path.relative_to(folder).as_posix()] = {
            "config": path.parent.name,
            "split": path.name.rsplit("-", 3)[0],  # {split}-00000-of-00001.parquet
            "rows": pq.ParquetFile(path).metadata.num_rows,
            "sha256": file_sha256(path),
        }
    return entries


def _card_data(
    loaded: LoadedSource, job: ScrambleJob, entries: Mapping[str, Mapping[str, Any]], total_rows: int
) -> Any:
    """The card's YAML header: licence carried over, and the ``configs:`` block ``load_dataset`` reads."""
    from huggingface_hub import DatasetCardData

    from scrambled_bench.builder.card import size_category

    configs = []
    for variant in job.variants:
        files = sorted(
            (path, entry["sha256"]) for path, entry in entries.items() if entry["config"] == variant.config
        )
        configs.append(
            {
                "config_name": variant.config,
                "data_files": [
                    {"split": split, "path": f"data/{variant.config}/{split}-*.parquet"}
                    for split in loaded.splits
                ],
                # datasets keys the cache of a local folder on the YAML configs, not on the files: without the
                # content hash here a rescramble into the same folder would load the rows cached from the first
                "description": "sha256 of the data files: "
                + _digest_of(f"{path} {digest}" for path, digest in files),
            }
        )
    licence: dict[str, Any] = {"license": loaded.license or "unknown"}
    if loaded.license == "other" and loaded.license_name:
        licence["license_name"] = loaded.license_name
    hub = loaded.description.get("kind") == "Hub dataset"
    source = loaded.description["source"]
    return DatasetCardData(
        pretty_name=f"{source if hub else Path(source).name} (scrambled)",
        **licence,
        size_categories=[size_category(total_rows)],
        tags=["scrambled-text", "scrambled-bench", "robustness"],
        source_datasets=[source] if hub else None,
        configs=configs,
    )


def _columns_section(job: ScrambleJob, features: Mapping[str, Any]) -> str:
    rows = []
    paths = [column_path(column, features) for column in job.columns]
    for root in roots(paths):
        inside = [f"`{path.field}`" for path in paths if path.root == root and path.field is not None]
        what = f"{', '.join(inside)} scrambled inside, its other fields as in the source" if inside else None
        rows.append((f"`{root}`", what or "the scrambled text (the config's type, on the rows it scrambles)"))
        rows.append((f"`{root}{ORIGINAL_SUFFIX}`", f"the whole `{root}` as in the source"))
    rows.append(("`scramble_type`", "the type applied to this row's chosen columns"))
    rows.append(
        (
            "`scrambled`",
            "whether this row was scrambled (false where a sample rate or recipe left it unchanged)",
        )
    )
    if job.variants[0].recipe:
        rows.append(("`recipe`", "the recipe that made the row"))
    section = markdown_table(("column", "meaning"), rows)
    others = [name for name in features if name not in roots(paths)]
    if others:
        section += (
            "\n\nThe other columns (" + ", ".join(f"`{name}`" for name in others) + ") are copied unchanged."
        )
    return section


def _license_section(loaded: LoadedSource) -> str:
    if not loaded.license:
        return (
            "The source declares no licence in a dataset card (or its card could not be read), so none is carried "
            "over: check the source's terms before using or redistributing this copy."
        )
    name = f" ({loaded.license_name})" if loaded.license_name else ""
    return (
        f"Carried over from the source's dataset card: `{loaded.license}`{name}. This copy is derived from the "
        "source and keeps its terms; scrambling does not change them."
    )


def _types_section(job: ScrambleJob) -> str:
    from scrambled_bench.builder.recipes import RECIPES

    types = dict.fromkeys(variant.scramble_type for variant in job.variants)
    table = markdown_table(
        ("type", "what it does"), [(f"`{name}`", type_description(name)) for name in types]
    )
    recipe = job.variants[0].recipe
    if recipe is None:
        return table
    chosen = RECIPES[recipe]
    return f"Recipe `{recipe}` ({chosen.paper_name}, paper App. A.4): {chosen.description}.\n\n{table}"


def _card_text(
    loaded: LoadedSource,
    features: Mapping[str, Any],
    rows: Mapping[str, Mapping[str, int]],
    job: ScrambleJob,
    entries: Mapping[str, Mapping[str, Any]],
    *,
    command: str,
    repo_hint: str,
) -> str:
    """The README.md of a scramble output: packaged template, huggingface_hub's card API."""
    from huggingface_hub import DatasetCard

    from scrambled_bench import __version__
    from scrambled_bench.builder.card import read_packaged

    splits = list(loaded.splits)
    total_rows = sum(sum(per_split.values()) for per_split in rows.values())
    card_data = _card_data(loaded, job, entries, total_rows)
    detail = [
        f"{key} `{loaded.description[key]}`"
        for key in ("config", "revision", "commit")
        if loaded.description.get(key)
    ]
    config_table = markdown_table(
        ("config", "type", "rows scrambled", *splits),
        [
            (
                f"`{variant.config}`",
                f"`{variant.scramble_type}`",
                f"{variant.sample_rate:g} %",
                *(rows[variant.config].get(split, 0) for split in splits),
            )
            for variant in job.variants
        ],
    )
    values = {
        "pretty_name": card_data.pretty_name,
        "source": loaded.description["source"],
        "source_detail": " (" + ", ".join(detail) + ")" if detail else "",
        "package_version": __version__,
        "seed": str(job.seed),
        "repo_hint": repo_hint,
        "example_config": job.variants[0].config,
        "example_split": splits[0],
        "config_kind": "recipe" if job.variants[0].recipe else "scramble type",
        "config_table": config_table,
        "columns_section": _columns_section(job, next(iter(features.values()))),
        "row_key": f"the value of its `{job.id_column}` column"
        if job.id_column
        else "its index in its split (0, 1, 2, ...)",
        "types_table": _types_section(job),
        "license_section": _license_section(loaded),
        "command": command,
        "source_files_sentence": " and of every local input file" if loaded.files else "",
    }
    card = DatasetCard.from_template(card_data, template_str=read_packaged(TEMPLATE_NAME), **values)
    return card.content.rstrip() + "\n"


def _write_card_and_manifest(
    tmp: Path,
    loaded: LoadedSource,
    features: Mapping[str, Any],
    rows: Mapping[str, Mapping[str, int]],
    job: ScrambleJob,
    *,
    command: str,
    repo_hint: str,
    extra: Mapping[str, Any] | None = None,
) -> None:
    """README.md and manifest.json of the output in ``tmp`` (the data files are there already); ``extra``
    adds keys to the manifest."""
    from scrambled_bench import __version__

    entries: dict[str, dict[str, Any]] = _data_file_entries(tmp)
    card = _card_text(loaded, features, rows, job, entries, command=command, repo_hint=repo_hint)
    (tmp / CARD_NAME).write_text(card, encoding="utf-8")
    entries[CARD_NAME] = {"sha256": file_sha256(tmp / CARD_NAME)}
    first = job.variants[0]
    manifest = {
        "kind": MANIFEST_KIND,
        "version": __version__,
        "source": {key: value for key, value in loaded.description.items() if value is not None},
        "source_license": loaded.license,
        "source_files": dict(sorted(loaded.files.items())),
        "columns": list(job.columns),
        "row_key": job.id_column or "index",
        "types": list(dict.fromkeys(variant.scramble_type for variant in job.variants)),
        "recipe": first.recipe,
        "sample_rate": first.sample_rate,
        "seed": job.seed,
        "splits": list(loaded.splits),
        "configs": [variant.config for variant in job.variants],
        "built_with": library_versions(),
        "outputs": dict(sorted(entries.items())),
        **({"kept_splits": sorted(job.kept_splits)} if job.kept_splits else {}),
        **(extra or {}),
    }
    (tmp / MANIFEST_NAME).write_text(
        json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )


def push_scrambled(folder: Path, repo_id: str, *, private: bool = False, api: Any | None = None) -> str:
    """Upload a scramble output (card, manifest, data) to the dataset repository ``repo_id``; its URL.

    Files are checked against the manifest first; files under ``data/`` that the output does not have are
    deleted from the repository (a config dropped). Hub failures are one-line errors; the token is never
    printed.
    """
    from scrambled_bench.builder.hub import verify_build

    check_repo_id(repo_id, "--push")
    verify_build(folder)
    if api is None:
        from huggingface_hub import HfApi

        require_token()
        api = HfApi()
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    except Exception as exc:  # noqa: BLE001
        raise hub_error("create", repo_id, exc) from None
    try:
        api.upload_folder(
            repo_id=repo_id,
            folder_path=str(folder),
            repo_type="dataset",
            commit_message="scrambled-bench scramble",
            allow_patterns=[CARD_NAME, MANIFEST_NAME, "data/**"],
            delete_patterns=["data/**"],
        )
    except Exception as exc:  # noqa: BLE001
        raise hub_error("upload to", repo_id, exc) from None
    return f"https://huggingface.co/datasets/{repo_id}"


__all__ = [
    "ADDED_COLUMNS",
    "ORIGINAL_SUFFIX",
    "ScrambleJob",
    "ScrambleResult",
    "ShardWriter",
    "Variant",
    "apply_variant",
    "check_columns",
    "load_source",
    "output_features",
    "push_scrambled",
    "row_keys",
    "scramble_batch",
    "scramble_dataset",
    "variants_for",
]
