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

One module per job:

- ``variants``: what happens to each row (pure): output variants, row keys, scrambled batches;
- ``sources``: loading a source (files, folders, the Hub) and its licence;
- ``columns``: the chosen columns checked, and the output's features;
- ``shards``: parquet files of fixed row groups and shards, through ``Dataset.map`` or a streamed pool;
- ``card``: the dataset card and ``manifest.json``;
- ``pipeline``: the command's work, from the request to the folder moved into place (the Hub push is
  ``builder.hub.push_scrambled``).
"""

from scrambled_bench.builder.scramble.card import MANIFEST_KIND
from scrambled_bench.builder.scramble.columns import check_columns, output_features
from scrambled_bench.builder.scramble.pipeline import (
    ScrambleResult,
    is_scramble_output,
    scramble_dataset,
)
from scrambled_bench.builder.scramble.shards import ROWS_PER_GROUP, ROWS_PER_SHARD, ShardWriter
from scrambled_bench.builder.scramble.sources import LoadedSource, load_source
from scrambled_bench.builder.scramble.variants import (
    ADDED_COLUMNS,
    ORIGINAL_SUFFIX,
    ScrambleJob,
    Variant,
    apply_variant,
    row_keys,
    scramble_batch,
    variants_for,
)

__all__ = [
    "ADDED_COLUMNS",
    "MANIFEST_KIND",
    "ORIGINAL_SUFFIX",
    "ROWS_PER_GROUP",
    "ROWS_PER_SHARD",
    "LoadedSource",
    "ScrambleJob",
    "ScrambleResult",
    "ShardWriter",
    "Variant",
    "apply_variant",
    "check_columns",
    "is_scramble_output",
    "load_source",
    "output_features",
    "row_keys",
    "scramble_batch",
    "scramble_dataset",
    "variants_for",
]
