"""The command's work: check the request, load the source, write the configs, the card and the manifest
into a temporary folder, push it and move it into place."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from dataclasses import replace as replaced
from pathlib import Path
from typing import Any

from scrambled_bench.builder.build import check_output_folder, make_temporary_folder, swap_into_place
from scrambled_bench.builder.hub import push_scrambled
from scrambled_bench.builder.manifest import Manifest
from scrambled_bench.builder.scramble.card import (
    MANIFEST_KIND,
    command_line,
    recorded_settings,
    write_card_and_manifest,
)
from scrambled_bench.builder.scramble.columns import check_columns
from scrambled_bench.builder.scramble.previous import GrownOutput
from scrambled_bench.builder.scramble.shards import ROWS_PER_GROUP, ROWS_PER_SHARD, write_splits
from scrambled_bench.builder.scramble.sources import LoadedSource, features_of, load_source
from scrambled_bench.builder.scramble.variants import ScrambleJob, variants_for
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.hub import check_repo_id, require_token


@dataclass(frozen=True)
class ScrambleResult:
    """What a scramble wrote: the folder (``None`` when only pushed), the Hub URL, rows per config and split,
    per config the texts of its scrambled rows and how many the type left unchanged (``texts``,
    ``unchanged``), and the configs a previous output in the folder held and keeps (``kept``)."""

    out: Path | None
    url: str | None
    rows: dict[str, dict[str, int]]
    unchanged: dict[str, dict[str, int]] = field(default_factory=dict)
    kept: tuple[str, ...] = ()

    def unchanged_summary(self) -> str:
        """The counts of unchanged texts in words, for the command's summary.

        >>> ScrambleResult(None, None, {}, {"kfl": {"texts": 120, "unchanged": 3}, "sub": {"texts": 120, "unchanged": 0}}).unchanged_summary()
        'texts left unchanged: kfl 3 of 120, sub 0 of 120'
        """
        parts = [
            f"{config} {count['unchanged']} of {count['texts']}" for config, count in self.unchanged.items()
        ]
        return "texts left unchanged: " + ", ".join(parts) if parts else ""


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
    replace: bool = False,
) -> ScrambleResult:
    """Scramble ``columns`` of ``source`` with each of ``types`` (one config each) or with ``recipe``, into
    ``out`` and/or the Hub dataset repository ``push``. See the module docstring for the layout and columns.

    ``batch_size`` (rows per batch handed to the scrambler) changes neither the rows nor the bytes written;
    ``rows_per_shard`` sets the size of the parquet files.
    ``api`` replaces ``huggingface_hub.HfApi`` for ``push`` (tests).
    ``loaded`` is a source already loaded (a harness task's dataset, ``integrations.datasets``) in place of
    ``source``; ``kept_splits`` are copied with their text unchanged; ``extra_outputs(folder)`` writes more
    files into the output before it is moved into place and returns what the manifest adds about them.

    A previous output in ``out`` grows (``builder.scramble.previous``): it keeps its configs and gains the
    types asked for; one made with other settings is refused. ``replace`` writes exactly what is asked for.

    >>> scramble_dataset("x.jsonl", columns=["text"], types=["kfl"], out=None)
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: give --out DIR, --push ORG/NAME or both
    """
    if out is None and push is None:
        raise ScrambledBenchError("give --out DIR, --push ORG/NAME or both")
    columns = list(dict.fromkeys(columns))
    variants = variants_for(types, recipe, sample_rate)
    _check_counts(seed, num_proc)
    destination = Destination.checked(out, push, private=private, api=api)
    previous = destination.previous_manifest() if not replace else None
    if loaded is None:
        loaded = load_source(
            source, config=config, splits=splits, revision=revision, streaming=streaming, cache_dir=cache_dir
        )
    features = _checked_features(loaded, columns, id_column)
    settings = recorded_settings(loaded, columns, id_column, variants, seed, kept_splits)
    grown = None if previous is None else GrownOutput.of(destination.folder, previous, settings, variants)
    written = variants if grown is None else (*variants, *grown.again)
    job = ScrambleJob(tuple(columns), written, seed, id_column, frozenset(kept_splits))
    tmp = destination.temporary_folder()
    try:
        rows, unchanged = write_splits(
            tmp, loaded, features, job, num_proc=num_proc, streaming=streaming, batch_size=batch_size,
            rows_per_shard=rows_per_shard,
        )  # fmt: skip
        if grown is not None:
            grown_variants, rows, unchanged = grown.merge(tmp, job.variants, rows, unchanged)
            job = replaced(job, variants=grown_variants)
        if command is None:  # the command that makes this output at once (a grown one's every type)
            made = [variant.scramble_type for variant in job.variants] if recipe is None else types
            command = command_line(
                source, columns, made, recipe, destination.folder, push, splits, config, revision, seed,
                id_column, sample_rate,
            )  # fmt: skip
        write_card_and_manifest(
            tmp, loaded, features, rows, job, command=command, repo_hint=destination.repo_hint, settings=settings,
            unchanged=unchanged, extra=extra_outputs(tmp) if extra_outputs is not None else {},
        )  # fmt: skip
        url = destination.deliver(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    kept = () if grown is None else tuple(config.variant.config for config in grown.kept)
    return ScrambleResult(out=destination.folder, url=url, rows=rows, unchanged=unchanged, kept=kept)


def _check_counts(seed: int, num_proc: int) -> None:
    """Refuse a seed that is not a non-negative integer and fewer than one worker process (one line each)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ScrambledBenchError(f"--seed must be a non-negative integer, got {seed!r}")
    if isinstance(num_proc, bool) or not isinstance(num_proc, int) or num_proc < 1:
        raise ScrambledBenchError(f"--num-proc must be at least 1, got {num_proc!r}")


def _checked_features(loaded: LoadedSource, columns: Sequence[str], id_column: str | None) -> dict[str, Any]:
    """Split name -> its features, once every split is checked to hold the chosen columns (and the row key's)."""
    features = {name: features_of(name, dataset) for name, dataset in loaded.splits.items()}
    for name, split_features in features.items():
        check_columns(name, split_features, columns, id_column)
    return features


@dataclass(frozen=True)
class Destination:
    """Where a scramble's output goes: the folder ``folder``, the Hub dataset ``push``, or both. It is
    written into a temporary folder first and delivered whole (:meth:`deliver`)."""

    folder: Path | None
    push: str | None
    private: bool = False
    api: Any | None = None
    """Stands in for ``huggingface_hub.HfApi`` (tests)."""

    @classmethod
    def checked(cls, out: Path | None, push: str | None, *, private: bool, api: Any | None) -> Destination:
        """Check the destination before any work: a valid Hub id and a token for ``push`` (unless an ``api``
        stands in), and an ``out`` that is free or a previous scramble output (one line each)."""
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
        return cls(out, push, private, api)

    def previous_manifest(self) -> Mapping[str, Any] | None:
        """The manifest of a previous scramble output in the folder, which this one grows; None if none."""
        if self.folder is None or not is_scramble_output(self.folder):
            return None
        return Manifest.read(self.folder).data

    @property
    def repo_hint(self) -> str:
        """Where the card tells readers to load the output from: the Hub id, else the folder."""
        return self.push or (str(self.folder) if self.folder is not None else ".")

    def temporary_folder(self) -> Path:
        """A new temporary folder beside the output folder (in the system's temporary folder when only pushed)."""
        if self.folder is None:
            return make_temporary_folder(Path(tempfile.gettempdir()), "scrambled")
        return make_temporary_folder(self.folder.parent, self.folder.name)

    def deliver(self, tmp: Path) -> str | None:
        """Push the finished output in ``tmp`` to the Hub (its URL is returned), then move it into place at the
        folder, or remove it where it was only pushed."""
        url = None
        if self.push is not None:
            url = push_scrambled(tmp, self.push, private=self.private, api=self.api).url
        if self.folder is not None:
            swap_into_place(tmp, self.folder)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
        return url
