"""Loading a source: data files or globs, local folders, ``save_to_disk`` folders and Hub datasets, with the
licence their dataset card declares and the sha256 of every local input file."""

from __future__ import annotations

import codecs
import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrambled_bench.builder.build import CARD_NAME
from scrambled_bench.errors import ScrambledBenchError, first_line
from scrambled_bench.io import file_sha256

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


INFERENCE_ROWS = 1_000
"""Rows of a streamed source whose features are inferred where it declares none."""


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
    from huggingface_hub import DatasetCard  # deferred: huggingface_hub is heavy

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
        matches = glob.glob(os.path.expanduser(pattern), recursive=True)
        return sorted(Path(match) for match in matches if os.path.isfile(match))
    if path.is_file():
        return [path]
    return sorted(
        file
        for file in path.rglob("*")
        if file.is_file() and not any(part.startswith(".") for part in file.relative_to(path).parts)
    )


TEXT_BUILDERS = ("json", "csv", "text")
"""The builders that read their files as text: UTF-8, as ``datasets`` reads them."""


def file_problem(file: Path, builder: str) -> str | None:
    """What makes a data file unreadable before ``datasets`` tries it: empty (no bytes, or only whitespace
    in a text file), or, for a text file, not UTF-8 (read through its compression). None for a good file.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.jsonl").write_bytes(b'{"text": "caf\\xe9"}\\n')
    >>> file_problem(folder / "a.jsonl", "json").split(": ", 1)[1]
    'not UTF-8 (byte 0xe9 at offset 13); save it as UTF-8'
    >>> _ = (folder / "b.jsonl").write_bytes(b"\\n \\n")
    >>> file_problem(folder / "b.jsonl", "json").split(": ", 1)[1]
    'empty (no rows to scramble)'
    """
    import fsspec  # deferred: fsspec is heavy

    empty = f"{file}: empty (no rows to scramble)"
    if file.stat().st_size == 0:
        return empty
    if builder not in TEXT_BUILDERS:
        return None
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, content = 0, False
    with fsspec.open(str(file), "rb", compression="infer") as handle:
        while True:
            chunk = handle.read(1 << 20)
            pending = len(decoder.getstate()[0])  # bytes of a character split across reads
            try:
                text = decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                where = offset - pending + exc.start
                return f"{file}: not UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {where}); save it as UTF-8"
            if not chunk:
                break
            content = content or bool(text.strip())
            offset += len(chunk)
    return None if content else empty


def _load_files(
    source: str, files: Sequence[Path], split_arg: list[str] | None, streaming: bool, cache_dir: str | None
):
    """Data files through the packaged ``datasets`` builder of their extension; a file that is empty or not
    UTF-8 is a one-line error naming it before ``datasets`` reads anything."""
    import datasets  # deferred: datasets is heavy

    if not files:
        raise ScrambledBenchError(f"cannot load dataset {source!r}: no file matches")
    builders = {FILE_BUILDERS.get(_data_suffix(file)) for file in files}
    if len(builders) != 1 or None in builders:
        known = ", ".join(sorted(FILE_BUILDERS))
        raise ScrambledBenchError(
            f"cannot load dataset {source!r}: expected files of one kind ({known}, optionally compressed)"
        )
    builder = builders.pop()
    for file in files:
        problem = file_problem(file, builder)
        if problem is not None:
            raise ScrambledBenchError(f"cannot load dataset {source!r}: {problem}")
    extra = {"delimiter": "\t"} if all(_data_suffix(file) == ".tsv" for file in files) else {}
    data_files = [str(file) for file in files]
    return builder, datasets.load_dataset(
        builder, data_files=data_files, split=split_arg, streaming=streaming, cache_dir=cache_dir, **extra
    )


def _load_saved(source: str, path: Path, split_arg: list[str] | None, streaming: bool):
    """A ``save_to_disk`` folder (a Dataset or a DatasetDict)."""
    import datasets  # deferred: datasets is heavy

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
    path = Path(source).expanduser()
    pattern = source if any(char in source for char in "*?[") else None
    local = pattern is not None or path.exists()
    if local and revision is not None:
        raise ScrambledBenchError(f"--revision applies to a Hub dataset id, not to the local {source}")
    split_arg = list(splits) if splits else None
    try:
        loaded, details, licence = _load(
            source, path, pattern, config, split_arg, revision, streaming, cache_dir
        )
    except ScrambledBenchError:
        raise
    except Exception as exc:  # noqa: BLE001 - every loader failure (offline included) becomes one line
        raise ScrambledBenchError(f"cannot load dataset {source!r}: {first_line(exc)}") from None
    chosen = _named_splits(loaded, split_arg)
    if not chosen:
        raise ScrambledBenchError(f"cannot load dataset {source!r}: it has no splits")
    files = {}
    if local:
        for file in _local_files(path, pattern):
            files[str(file.relative_to(path)) if path.is_dir() else str(file)] = file_sha256(file)
    description = {"source": source, "config": config, **details}
    return LoadedSource(chosen, description, licence[0], licence[1], files)


def _load(
    source: str,
    path: Path,
    pattern: str | None,
    config: str | None,
    split_arg: list[str] | None,
    revision: str | None,
    streaming: bool,
    cache_dir: str | None,
) -> tuple[Any, dict[str, Any], tuple[str | None, str | None]]:
    """What ``datasets`` loads from the source, by the kind of source it is, with what the card records of
    that kind (``kind``; for a Hub dataset its revision and commit) and the licence its dataset card declares."""
    import datasets  # deferred: datasets is heavy

    if pattern is not None or path.is_file():
        builder, loaded = _load_files(source, _local_files(path, pattern), split_arg, streaming, cache_dir)
        return loaded, {"kind": f"{builder} files"}, (None, None)
    if path.is_dir() and ((path / "state.json").is_file() or (path / "dataset_dict.json").is_file()):
        return (
            _load_saved(source, path, split_arg, streaming),
            {"kind": "save_to_disk folder"},
            _local_license(path),
        )
    if path.is_dir():
        loaded = datasets.load_dataset(
            str(path), config, split=split_arg, streaming=streaming, cache_dir=cache_dir
        )
        return loaded, {"kind": "local folder"}, _local_license(path)
    loaded = datasets.load_dataset(
        source, config, split=split_arg, revision=revision, streaming=streaming, cache_dir=cache_dir
    )
    details = {"kind": "Hub dataset", "revision": revision or "main", "commit": _hub_commit(source, revision)}
    return loaded, details, _license_of_card(source, repo=True)


def _named_splits(loaded: Any, split_arg: list[str] | None) -> dict[str, Any]:
    """Split name -> split, from what ``datasets`` returned: a list (the splits asked for, in order), one split,
    or a dict of splits."""
    import datasets  # deferred: datasets is heavy

    if isinstance(loaded, list):  # load_dataset(split=[...]) returns the splits in the order asked
        return dict(zip(split_arg or [], loaded))
    if isinstance(loaded, datasets.Dataset | datasets.IterableDataset):
        return {split_arg[0] if split_arg else str(loaded.split or "train"): loaded}
    return dict(loaded)


def _hub_commit(repo_id: str, revision: str | None) -> str | None:
    """The commit a Hub revision points at, best effort (``None`` offline)."""
    try:
        from huggingface_hub import HfApi  # deferred: huggingface_hub is heavy

        return HfApi().dataset_info(repo_id, revision=revision).sha
    except Exception:  # noqa: BLE001 - the commit is recorded where it can be known
        return None


def features_of(split: str, dataset: Any) -> Any:
    """The split's ``datasets.Features``; a streamed source that does not declare them has them inferred
    from its first rows."""
    import datasets  # deferred: datasets is heavy
    import pyarrow as pa  # deferred: pyarrow is heavy

    features = dataset.features
    if features is None:
        first = next(iter(dataset.iter(batch_size=INFERENCE_ROWS)), None)
        if first is None:
            raise ScrambledBenchError(f"split {split!r} is empty and declares no columns")
        features = datasets.Features.from_arrow_schema(pa.Table.from_pydict(first).schema)
    return features
