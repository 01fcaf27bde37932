"""The standard library's random draws, inlined: the same numbers from the same stream, faster.

Every word of every text passes through a word function once per family, so these helpers are the build's
inner loop. ``random.Random.shuffle``, ``choice`` and ``sample`` are Python code over ``_randbelow``, which
for ``random.Random`` is ``getrandbits(n.bit_length())`` redrawn while ``>= n``. Drawing from
``getrandbits`` directly gives the same numbers from the same stream, and so the same words, without a
Python call per letter (the build ran 2x faster). tests/builder/test_scrambler_draws.py checks the equality
against the running interpreter's library: a change here changes published data unless that test passes.
"""

from __future__ import annotations

import random
from collections.abc import Callable


def below(getrandbits: Callable[[int], int], bound: int) -> int:
    """``random.Random._randbelow(bound)``: a uniform integer in ``[0, bound)`` from ``getrandbits``."""
    bits = bound.bit_length()
    value = getrandbits(bits)
    while value >= bound:
        value = getrandbits(bits)
    return value


_SHUFFLE_STEPS: dict[int, tuple[tuple[int, int, int], ...]] = {}
"""Item count -> Fisher-Yates's (index, bound, bits) steps, computed once per length (idempotent, so
threads that race to fill an entry store the same value)."""


def _shuffle_steps(length: int) -> tuple[tuple[int, int, int], ...]:
    steps = tuple((index, index + 1, (index + 1).bit_length()) for index in range(length - 1, 0, -1))
    _SHUFFLE_STEPS[length] = steps
    return steps


def shuffle_in_place(items: list[str], getrandbits: Callable[[int], int]) -> None:
    """``random.Random.shuffle(items)``: the same Fisher-Yates swaps from the same draws, inlined."""
    steps = _SHUFFLE_STEPS.get(len(items)) or _shuffle_steps(len(items))
    for index, bound, bits in steps:
        other = getrandbits(bits)
        while other >= bound:
            other = getrandbits(bits)
        items[index], items[other] = items[other], items[index]


def sample_range(start: int, stop: int, count: int, rng: random.Random) -> list[int]:
    """``rng.sample(range(start, stop), count)`` for ``count <= 5``: the same picks from the same draws.

    The standard library keeps a pool list for a population of at most 21 and a set of picks above that
    (its ``setsize`` for ``k <= 5``); both are followed here.
    """
    size = stop - start
    if count > 5 or not 0 <= count <= size:
        return rng.sample(range(start, stop), count)
    getrandbits = rng.getrandbits
    if count == 1:  # both of the library's branches take the first draw as it is
        return [start + below(getrandbits, size)]
    if size <= 21:
        if count == 2:  # the pool after the first pick: its last item moved into the picked slot
            first = below(getrandbits, size)
            second = below(getrandbits, size - 1)
            return [start + first, start + (size - 1 if second == first else second)]
        pool = list(range(start, stop))
        picks = []
        for taken in range(count):
            index = below(getrandbits, size - taken)
            picks.append(pool[index])
            pool[index] = pool[size - taken - 1]
        return picks
    seen: set[int] = set()
    picks = []
    for _ in range(count):
        index = below(getrandbits, size)
        while index in seen:
            index = below(getrandbits, size)
        seen.add(index)
        picks.append(start + index)
    return picks


def shuffle_differently(letters: list[str], rng: random.Random) -> list[str]:
    """A permutation of ``letters`` that differs from it whenever the letters are not all equal."""
    if len(set(letters)) < 2:
        return list(letters)
    shuffled = list(letters)
    getrandbits = rng.getrandbits
    while True:
        # reshuffles the previous attempt, not the original: part of the stream the published data pins
        shuffle_in_place(shuffled, getrandbits)
        if shuffled != letters:
            return shuffled
