"""Lists of names as a command line or a settings file gives them (``--types kf --types kfl,rs50``)."""

from __future__ import annotations

from collections.abc import Iterable

from scrambled_bench.errors import ScrambledBenchError


def split_names(values: Iterable[str] | None) -> list[str] | None:
    """Names from repeated and comma-separated values, in order; None when none were given.

    An empty name (``kf,,kfl``, a trailing comma) is a mistake to point out, never to skip.

    >>> split_names(["rs20,kf", "kfl"])
    ['rs20', 'kf', 'kfl']
    >>> split_names(None) is None, split_names([]) is None
    (True, True)
    >>> split_names(["kf,,kfl"])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: empty name in 'kf,,kfl'
    """
    if values is None:
        return None
    values = list(values)
    if not values:
        return None
    names = [name.strip() for value in values for name in value.split(",")]
    if any(not name for name in names):
        raise ScrambledBenchError(f"empty name in {','.join(values)!r}")
    return names
