"""Writing: every split under every variant into parquet files of fixed row groups and shards (the same rows
give the same bytes, whatever ``num_proc``, streaming or the batch size), through ``Dataset.map`` or a
streamed, order-keeping process pool."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import shutil
import tempfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from scrambled_bench.builder.scramble.columns import count_unchanged, output_features
from scrambled_bench.builder.scramble.sources import LoadedSource
from scrambled_bench.builder.scramble.variants import ScrambleJob, Variant, map_batch, scramble_streamed_batch

ROWS_PER_GROUP = 1_000
"""Rows per parquet row group (fixed: the bytes of the files depend on it), and the default batch size."""
ROWS_PER_SHARD = 100_000
"""Rows per parquet file (a whole number of row groups)."""


class ShardWriter:
    """Parquet files of one config and split, in row groups of exactly ``rows_per_group`` rows and files of
    ``rows_per_shard`` rows, whatever the sizes of the tables handed to it: the same rows give the same bytes.

    Files are written as ``{split}-{index:05d}.parquet.partial`` and named ``{split}-{index:05d}-of-{count:05d}.parquet``
    once the count is known (:meth:`close`).

    >>> import tempfile, pyarrow as pa
    >>> table = pa.table({"text": [str(n) for n in range(5)]})
    >>> writer = ShardWriter(Path(tempfile.mkdtemp()), "test", table.schema, rows_per_group=2, rows_per_shard=4)
    >>> writer.write(table)
    >>> [(path.name, rows) for path, rows in writer.close()]
    [('test-00000-of-00002.parquet', 4), ('test-00001-of-00002.parquet', 1)]
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
        import pyarrow as pa  # deferred: pyarrow is heavy

        combined = pa.concat_tables(self.pending)
        head, rest = combined.slice(0, count), combined.slice(count)
        self.pending = [rest] if rest.num_rows else []
        self.pending_rows = rest.num_rows
        return head

    def _open(self) -> None:
        import pyarrow.parquet as pq  # deferred: pyarrow is heavy

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


class CountingWriter:
    """A :class:`ShardWriter` that also counts, as the tables pass, the texts of the scrambled rows and those
    the type left unchanged (:func:`~scrambled_bench.builder.scramble.columns.count_unchanged`): the
    counts the card and the command's summary give, whichever path (map, stream, processes) made the tables."""

    def __init__(self, writer: ShardWriter, columns: Sequence[str]):
        self.writer, self.columns = writer, list(columns)
        self.schema = writer.schema
        self.texts = self.unchanged = 0

    def write(self, table: Any) -> None:
        texts, unchanged = count_unchanged(table, self.columns)
        self.texts += texts
        self.unchanged += unchanged
        self.writer.write(table)

    def close(self) -> list[tuple[Path, int]]:
        return self.writer.close()

    def abort(self) -> None:
        self.writer.abort()


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


def write_splits(
    tmp: Path,
    loaded: LoadedSource,
    features: Mapping[str, Any],
    job: ScrambleJob,
    *,
    num_proc: int,
    streaming: bool,
    batch_size: int,
    rows_per_shard: int,
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
    """Write every split under every variant into ``tmp/data``; rows per config and split, and per config
    the texts its scrambled rows hold and how many of them the type left unchanged (``texts``,
    ``unchanged``)."""
    rows: dict[str, dict[str, int]] = {variant.config: {} for variant in job.variants}
    unchanged = {variant.config: {"texts": 0, "unchanged": 0} for variant in job.variants}
    scratch = Path(tempfile.mkdtemp(dir=tmp.parent, prefix=f"{tmp.name}.cache-"))
    try:
        for split, dataset in loaded.splits.items():
            writers = [
                CountingWriter(
                    ShardWriter(
                        tmp / "data" / variant.config,
                        split,
                        output_features(features[split], job.columns, variant).arrow_schema,
                        rows_per_group=ROWS_PER_GROUP,
                        rows_per_shard=rows_per_shard,
                    ),
                    job.columns,
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
                unchanged[variant.config]["texts"] += writer.texts
                unchanged[variant.config]["unchanged"] += writer.unchanged
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return rows, unchanged


def _stream_split(
    dataset: Any,
    writers: Sequence[CountingWriter],
    job: ScrambleJob,
    column_order: list[str],
    num_proc: int,
    batch_size: int,
) -> None:
    """Read a streamed split batch by batch, scramble each batch under every variant (on ``num_proc``
    processes, in order) and hand the outputs to the variants' writers."""
    import pyarrow as pa  # deferred: pyarrow is heavy

    def work() -> Iterator[tuple[dict[str, list[Any]], int, ScrambleJob, list[str]]]:
        first = 0
        for batch in dataset.iter(batch_size=batch_size):
            yield batch, first, job, column_order
            first += len(next(iter(batch.values()))) if batch else 0

    for outputs in _ordered_parallel_map(scramble_streamed_batch, work(), num_proc):
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
    writer: CountingWriter,
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
            map_batch,
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
