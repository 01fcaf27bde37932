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

from scrambled_bench.builder.build import check_output_folder, swap_into_place
from scrambled_bench.builder.hub import push_scrambled
from scrambled_bench.builder.manifest import Manifest
from scrambled_bench.builder.scramble.card import (
    MANIFEST_KIND,
    command_line,
    recorded_settings,
    write_card_and_manifest,
)
from scrambled_bench.builder.scramble.columns import check_columns
from scrambled_bench.builder.scramble.previous import KeptConfig, kept_configs
from scrambled_bench.builder.scramble.shards import ROWS_PER_GROUP, ROWS_PER_SHARD, write_splits
from scrambled_bench.builder.scramble.sources import LoadedSource, features_of, load_source
from scrambled_bench.builder.scramble.variants import ScrambleJob, Variant, variants_for
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
    previous = (
        Manifest.read(out).data if out is not None and not replace and is_scramble_output(out) else None
    )

    if loaded is None:
        loaded = load_source(
            source, config=config, splits=splits, revision=revision, streaming=streaming, cache_dir=cache_dir
        )
    features = {name: features_of(name, dataset) for name, dataset in loaded.splits.items()}
    for name, split_features in features.items():
        check_columns(name, split_features, columns, id_column)

    settings = recorded_settings(loaded, columns, id_column, variants, seed, kept_splits)
    kept: list[KeptConfig] = []
    written = variants
    if previous is not None and out is not None:
        kept, again = kept_configs(out, previous, settings, variants)
        written = (*variants, *again)
    parent = out.parent if out is not None else Path(tempfile.gettempdir())
    name = out.name if out is not None else "scrambled"
    try:
        tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{name}.tmp-"))
    except OSError as exc:
        raise ScrambledBenchError(
            f"cannot write to the output folder {parent}: {exc.strerror or exc}"
        ) from None
    try:
        job = ScrambleJob(tuple(columns), written, seed, id_column, frozenset(kept_splits))
        rows, unchanged = write_splits(
            tmp, loaded, features, job, num_proc=num_proc, streaming=streaming, batch_size=batch_size,
            rows_per_shard=rows_per_shard,
        )  # fmt: skip
        if previous is not None and out is not None:
            for previous_config in kept:
                previous_config.copy(out, tmp)
                rows[previous_config.variant.config] = previous_config.rows
                unchanged[previous_config.variant.config] = previous_config.unchanged
            job = replaced(job, variants=_grown_order(previous, kept, written))
            rows = {variant.config: rows[variant.config] for variant in job.variants}
            unchanged = {variant.config: unchanged[variant.config] for variant in job.variants}
        if command is None:  # the command that makes this output at once (a grown one's every type)
            command = command_line(
                source,
                columns,
                [variant.scramble_type for variant in job.variants] if recipe is None else types,
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
        write_card_and_manifest(
            tmp, loaded, features, rows, job, command=command, repo_hint=repo_hint, settings=settings,
            unchanged=unchanged, extra=extra,
        )  # fmt: skip
        url = None
        if push is not None:
            url = push_scrambled(tmp, push, private=private, api=api).url
        if out is not None:
            swap_into_place(tmp, out)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return ScrambleResult(
        out=out, url=url, rows=rows, unchanged=unchanged, kept=tuple(config.variant.config for config in kept)
    )


def _grown_order(
    previous: Mapping[str, Any], kept: Sequence[KeptConfig], written: Sequence[Variant]
) -> tuple[Variant, ...]:
    """The variants of a grown output: the previous output's configs in their order, then the new ones."""
    by_config = {config.variant.config: config.variant for config in kept}
    by_config.update({variant.config: variant for variant in written})
    order = [config for config in previous.get("configs") or [] if config in by_config]
    order += [config for config in by_config if config not in order]
    return tuple(by_config[config] for config in order)
