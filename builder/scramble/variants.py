"""What happens to each row (pure): the output variants of a request, the row keys, and the scrambled
columns of a batch beside their originals. The map and the streamed paths, and the datatrove step, share them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from scrambled_bench.builder.nested_columns import ColumnPath, column_path, map_row, roots
from scrambled_bench.builder.recipes import check_sample_rate, get_recipe, row_selected
from scrambled_bench.builder.scrambler import TextPlace, parse_type, scramble, scramble_items
from scrambled_bench.errors import ScrambledBenchError

ORIGINAL_SUFFIX = "_original"
ADDED_COLUMNS = ("scramble_type", "scrambled", "recipe")


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


def apply_variant(
    text: str | None, row_key: str, variant: Variant, *, seed: int, column: str
) -> tuple[str | None, bool]:
    """(output text, whether the row is chosen) for one text of a row, the text of ``column``: what the command
    and the datatrove step share.

    A row a sample rate leaves out keeps its text; a missing value (``None``) stays missing.

    >>> apply_variant("The quick brown fox", "7", Variant("kfl", "kfl"), seed=0, column="text")
    ('The qucik borwn fox', True)
    >>> apply_variant("The quick brown fox", "7", Variant("ft-ori", "original", 0.0, "ft-ori"), seed=0, column="text")
    ('The quick brown fox', False)
    """
    chosen = row_selected(row_key, seed=seed, sample_rate=variant.sample_rate)
    if not chosen:
        return text, chosen
    return scrambled_texts([text], False, TextPlace(column), row_key, variant, seed)[0], chosen


def scrambled_texts(
    texts: Sequence[Any], listed: bool, place: TextPlace, row_key: str, variant: Variant, seed: int
) -> list[str | None]:
    """One row's texts at ``place`` under ``variant``: a single text (``listed`` false, a list of one), or the
    items of one list, kept distinct (:func:`~scrambled_bench.builder.scrambler.scramble_items`).

    >>> scrambled_texts(["Au", "Ag", "Gd", "Go"], True, TextPlace("choices"), "0", Variant("sub", "sub"), 0)
    ['Nd', 'XZ', 'Kz', 'Dm']
    """
    for text in texts:
        if text is not None and not isinstance(text, str):
            raise ScrambledBenchError(
                f"row {row_key}: column {place.column!r}: can only scramble text, got {type(text).__name__}"
            )
    if listed:
        return scramble_items(texts, variant.scramble_type, seed=seed, sample_id=row_key, place=place)
    return [
        None
        if text is None
        else scramble(text, variant.scramble_type, seed=seed, sample_id=row_key, place=place)
        for text in texts
    ]


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
    {'id': [1], 'text': ['Holle theer'], 'text_original': ['Hello there'], 'scramble_type': ['kf'], 'scrambled': [True]}
    """
    rows = len(keys)
    chosen = [row_selected(key, seed=seed, sample_rate=variant.sample_rate) for key in keys]

    def _at_path(path: ColumnPath, texts: Sequence[Any], listed: bool, key: str) -> list[str | None]:
        return scrambled_texts(texts, listed, TextPlace(path.name), key, variant, seed)

    paths = [column_path(column, batch) for column in columns]
    scrambled: dict[str, list[Any]] = {root: [] for root in roots(paths)}
    for index, (key, selected) in enumerate(zip(keys, chosen)):
        row = {root: batch[root][index] for root in scrambled}
        if selected:  # nested columns (`choices.text`) change only the strings they name
            row = map_row(row, paths, lambda path, texts, listed, key=key: _at_path(path, texts, listed, key))
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


def map_batch(
    batch: Mapping[str, Sequence[Any]],
    indices: Sequence[int],
    *,
    job: ScrambleJob,
    variant: Variant,
    column_order: Sequence[str],
) -> dict[str, list[Any]]:
    """``Dataset.map``'s function (top level, so that its worker processes can import it)."""
    return job.scramble_keyed(batch, row_keys(batch, indices, job.id_column), variant, column_order)


def scramble_streamed_batch(
    work: tuple[dict[str, list[Any]], int, ScrambleJob, list[str]],
) -> list[dict[str, list[Any]]]:
    """One streamed batch (its rows, the index of its first row) under every variant; top level, for the
    worker processes of ``--num-proc``."""
    batch, first_index, job, column_order = work
    rows = len(next(iter(batch.values()))) if batch else 0
    keys = row_keys(batch, range(first_index, first_index + rows), job.id_column)  # once for all variants
    return [job.scramble_keyed(batch, keys, variant, column_order) for variant in job.variants]
