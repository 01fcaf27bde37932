"""The chosen columns: checked against a split's features, and the output's features (each chosen column
followed by its original, then the added columns)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scrambled_bench.builder.nested_columns import check_path, column_path, is_list_of_text, roots, text_paths
from scrambled_bench.builder.scramble.variants import ADDED_COLUMNS, ORIGINAL_SUFFIX, Variant
from scrambled_bench.errors import ScrambledBenchError


def _is_text(feature: Any) -> bool:
    from datasets import Value  # deferred: datasets is heavy

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
    >>> from datasets import List
    >>> features = Features({"id": Value("int64"), "text": Value("string"), "tags": List(Value("string")),
    ...                      "choices": {"text": List(Value("string")), "label": List(Value("int64"))}})
    >>> check_columns("train", features, ["id"], None)
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: column 'id' of split 'train' is not text (int64); text columns: text, tags, choices.text
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
            # every name --columns takes: text, lists of strings and the text fields of nested columns
            text_columns = ", ".join(text_paths(features)) or "none"
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
    from datasets import Features, Value  # deferred: datasets is heavy

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


def _flat_strings(array: Any, field: str | None) -> Any:
    """The strings a path names in one column of a table, flattened in row order (nulls kept)."""
    import pyarrow as pa  # deferred: pyarrow is heavy
    import pyarrow.compute as pc  # deferred: pyarrow is heavy

    if field is not None:
        if pa.types.is_struct(array.type):
            array = pc.struct_field(array, field)
        else:  # a list of records
            array = pc.struct_field(pc.list_flatten(array), field)
    if pa.types.is_list(array.type) or pa.types.is_large_list(array.type):
        array = pc.list_flatten(array)
    return array


def count_unchanged(table: Any, columns: Sequence[str]) -> tuple[int, int]:
    """(texts, unchanged): the texts the chosen columns name in the scrambled rows of an output table (a
    list's items one by one; missing values left out) and how many of them the type left as they were.

    >>> import pyarrow as pa
    >>> table = pa.table({"q": ["ab", "c", "d"], "q_original": ["ba", "c", "d"], "choices": [["x", "yz"], None, ["u"]],
    ...                   "choices_original": [["x", "zy"], None, ["v"]], "scrambled": [True, True, False]})
    >>> count_unchanged(table, ["q", "choices"])
    (4, 2)
    """
    import pyarrow.compute as pc  # deferred: pyarrow is heavy

    table = table.filter(table["scrambled"])
    texts = unchanged = 0
    paths = [column_path(column, dict.fromkeys(table.column_names)) for column in columns]
    for path in paths:
        output = _flat_strings(table[path.root], path.field)
        original = _flat_strings(table[path.root + ORIGINAL_SUFFIX], path.field)
        texts += len(output) - output.null_count
        unchanged += pc.sum(pc.equal(output, original)).as_py() or 0
    return texts, unchanged
