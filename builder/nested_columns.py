"""Nested text columns for ``scramble --columns``: where the strings to scramble lie inside a column.

A column is named as ``--columns`` names it: a top-level text column (``question``), a list of strings
(``choices``), or one field of a nested column (``choices.text``): a field of a struct of lists (ARC's
``choices: {text: [...], label: [...]}`` as ``datasets`` loads it) or a field of a list of records
(``[{text: ..., label: ...}, ...]``). Only the named strings change; every other field keeps its value.

The original goes beside the column, as for a top-level column: ``<column>_original`` holds the whole
original value of the top-level column the name starts with (``choices_original`` for ``choices.text``,
the struct with its labels as they were), so one original column serves every field scrambled inside it.

Pure functions over ``datasets`` features and Python values (a batch's row values), no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scrambled_bench.errors import ScrambledBenchError


@dataclass(frozen=True)
class ColumnPath:
    """A ``--columns`` name: the top-level column it lives in and, for a nested one, the field inside it."""

    root: str
    field: str | None = None

    @property
    def name(self) -> str:
        return self.root if self.field is None else f"{self.root}.{self.field}"


def column_path(name: str, features: Mapping[str, Any]) -> ColumnPath:
    """The path a ``--columns`` name points at: a top-level column when one has that very name (dots and
    all), else ``root.field``.

    >>> column_path("choices.text", {"choices": {}}), column_path("a.b", {"a.b": None})
    (ColumnPath(root='choices', field='text'), ColumnPath(root='a.b', field=None))
    """
    if name in features or "." not in name:
        return ColumnPath(name)
    root, field = name.split(".", 1)
    return ColumnPath(root, field)


def roots(paths: Sequence[ColumnPath]) -> list[str]:
    """The top-level columns the paths live in, each once, in order (the columns that get an original).

    >>> roots([ColumnPath("choices", "text"), ColumnPath("q"), ColumnPath("choices", "label")])
    ['choices', 'q']
    """
    return list(dict.fromkeys(path.root for path in paths))


def _is_text(feature: Any) -> bool:
    from datasets import Value  # deferred: datasets is heavy

    return isinstance(feature, Value) and feature.dtype in ("string", "large_string")


def _list_item(feature: Any) -> Any | None:
    """The item feature of a list feature, else None."""
    from datasets import LargeList, List  # deferred: datasets is heavy

    return feature.feature if isinstance(feature, List | LargeList) else None


def is_list_of_text(feature: Any) -> bool:
    """Whether a feature is a list of strings (``choices``).

    >>> from datasets import List, Value
    >>> is_list_of_text(List(Value("string"))), is_list_of_text(Value("string")), is_list_of_text(None)
    (True, False, False)
    """
    return _is_text(_list_item(feature))


def text_paths(features: Mapping[str, Any]) -> list[str]:
    """Every name ``--columns`` accepts in these features: text, lists of strings, fields of nested columns.

    >>> from datasets import Features, List, Value
    >>> text_paths(Features({"q": Value("string"), "n": Value("int64"), "choices": {"text": List(Value("string")),
    ...     "label": List(Value("string"))}, "tags": List(Value("string")), "turns": List({"text": Value("string")})}))
    ['q', 'choices.text', 'choices.label', 'tags', 'turns.text']
    """
    found = []
    for name, feature in features.items():
        if _is_text(feature) or _is_text(_list_item(feature)):
            found.append(name)
        elif isinstance(feature, Mapping) or isinstance(_list_item(feature), Mapping):
            fields = feature if isinstance(feature, Mapping) else _list_item(feature)
            for field, sub in fields.items():
                if _is_text(sub) or (isinstance(feature, Mapping) and _is_text(_list_item(sub))):
                    found.append(f"{name}.{field}")
    return found


def check_path(split: str, features: Mapping[str, Any], path: ColumnPath) -> None:
    """A one-line error unless ``path`` names text in these features (listing the names that do).

    >>> from datasets import Features, List, Value
    >>> features = Features({"choices": {"text": List(Value("string")), "label": List(Value("int64"))}})
    >>> check_path("test", features, ColumnPath("choices", "text"))
    >>> check_path("test", features, ColumnPath("choices", "label"))
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: column 'choices.label' of split 'test' is not text; text columns: choices.text
    >>> check_path("test", features, ColumnPath("choices", "txt"))
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: split 'test' has no column 'choices.txt' (text columns: choices.text)
    """
    available = ", ".join(text_paths(features)) or "none"
    feature = features.get(path.root)
    if feature is not None and path.field is not None:
        fields = feature if isinstance(feature, Mapping) else _list_item(feature)
        feature = fields.get(path.field) if isinstance(fields, Mapping) else None
    if feature is None:
        raise ScrambledBenchError(f"split {split!r} has no column {path.name!r} (text columns: {available})")
    if not (_is_text(feature) or _is_text(_list_item(feature))):
        raise ScrambledBenchError(
            f"column {path.name!r} of split {split!r} is not text; text columns: {available}"
        )


Change = Callable[[Sequence[Any], bool], list[Any]]
"""``change(texts, listed)``: the new values of a group of strings that lie side by side (``listed``: the
items of one list, in order; else a single text, as a list of one). A missing value (None) is passed as it
is: the function returns it unchanged."""


def map_strings(value: Any, field: str | None, change: Change) -> Any:
    """``value`` (one row's value of a top-level column) with ``change`` applied to the strings ``field``
    names and everything else as it was; a missing value (None) stays missing. The items of one list (a
    list of strings, a struct's list field, or the field of a list of records) go to ``change`` together,
    so that it can tell them apart.

    >>> def upper(texts, listed):
    ...     return [None if t is None else (t.upper() + "*" if listed else t.upper()) for t in texts]
    >>> map_strings("a b", None, upper), map_strings(["a", None, "b"], None, upper)
    ('A B', ['A*', None, 'B*'])
    >>> map_strings({"text": ["yes", "no"], "label": ["A", "B"]}, "text", upper)
    {'text': ['YES*', 'NO*'], 'label': ['A', 'B']}
    >>> map_strings([{"text": "hi", "n": 1}, {"text": None, "n": 2}, None], "text", upper)
    [{'text': 'HI*', 'n': 1}, {'text': None, 'n': 2}, None]
    """
    if value is None:
        return None
    if field is None:
        if isinstance(value, list):
            return change(value, True)
        return change([value], False)[0]
    if isinstance(value, Mapping):  # a struct (of lists, or of strings)
        return {key: map_strings(item, None, change) if key == field else item for key, item in value.items()}
    # a list of records: their field's strings are the items of one list
    records = [record if isinstance(record, Mapping) else None for record in value]
    changed = change([None if record is None else record.get(field) for record in records], True)
    return [
        original if record is None else {**record, field: text}
        for original, record, text in zip(value, records, changed)
    ]


def map_row(
    row_values: Mapping[str, Any],
    paths: Sequence[ColumnPath],
    change: Callable[[ColumnPath, Sequence[Any], bool], list[Any]],
) -> dict[str, Any]:
    """The new values of the top-level columns ``paths`` live in, for one row; ``change(path, texts, listed)``
    is :data:`Change` told which path the strings lie at.

    >>> def upper(path, texts, listed):
    ...     return [t.upper() for t in texts]
    >>> map_row({"q": "hi", "c": {"text": ["a"], "label": ["x"]}}, [ColumnPath("q"), ColumnPath("c", "text")], upper)
    {'q': 'HI', 'c': {'text': ['A'], 'label': ['x']}}
    """
    changed = {root: row_values[root] for root in roots(paths)}
    for path in paths:
        changed[path.root] = map_strings(
            changed[path.root], path.field, lambda texts, listed, path=path: change(path, texts, listed)
        )
    return changed


def strings_at(value: Any, field: str | None) -> list[Any]:
    """The strings ``field`` names in one row's value of a column, in order (None where one is missing):
    what :func:`map_strings` changes, for comparing an output with its original.

    >>> strings_at({"text": ["yes", "no"], "label": ["A", "B"]}, "text"), strings_at("hi", None)
    (['yes', 'no'], ['hi'])
    >>> strings_at([{"text": "a"}, {"text": None}], "text"), strings_at(None, None)
    (['a', None], [])
    """
    found: list[Any] = []

    def collect(texts: Sequence[Any], listed: bool) -> list[Any]:
        found.extend(texts)
        return list(texts)

    map_strings(value, field, collect)
    return found
