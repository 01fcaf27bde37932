"""Every text's own random stream: :func:`text_rng`, keyed by (:data:`STREAM_VERSION`, seed, sample id,
:class:`TextPlace`, type family), the one seed derivation of every caller."""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass

from scrambled_bench.errors import ScrambledBenchError

STREAM_VERSION = 2
"""The version of :func:`text_rng`'s derivation, hashed into every stream. Version 1 (dataset 1.0.0) keyed a
text by (seed, sample id, family) alone, so every text of a row replayed the same draws; version 2 adds the
text's :class:`TextPlace`. A change here changes every scrambled text: it comes with a new dataset version
(dataset_cards/CHANGELOG.md), never with a package release alone."""


@dataclass(frozen=True)
class TextPlace:
    """Where a text lies in its row: the column path as ``--columns`` names it (``question``,
    ``choices.text``) and its position in a list or nested structure (``(2,)``: the third choice; ``()``:
    the column's one text). Two texts of a row in two places draw from two independent streams.

    >>> TextPlace("choices").item(2), TextPlace.of("question")
    (TextPlace(column='choices', position=(2,)), TextPlace(column='question', position=()))
    """

    column: str
    position: tuple[int, ...] = ()

    def item(self, index: int) -> TextPlace:
        """The place of item ``index`` of the list at this place."""
        return TextPlace(self.column, (*self.position, index))

    @staticmethod
    def of(place: TextPlace | str) -> TextPlace:
        """A place, from a place or a column name (a top-level text).

        >>> TextPlace.of(3)
        Traceback (most recent call last):
        ...
        scrambled_bench.errors.ScrambledBenchError: a text's place is a column name or a TextPlace, got int
        """
        if isinstance(place, TextPlace):
            return place
        if isinstance(place, str):
            return TextPlace(place)
        raise ScrambledBenchError(
            f"a text's place is a column name or a TextPlace, got {type(place).__name__}"
        )


def text_rng(seed: int, sample_id: str, place: TextPlace, family: str, *, draw: int = 0) -> random.Random:
    """The random stream of one text under one type family (independent of the rate): the one seed
    derivation of every caller (``build``, ``scramble`` and the harness variants it writes, the datatrove
    step, Inspect's wrapper), hashed from (:data:`STREAM_VERSION`, seed, sample id, place, family) and, for a
    list item drawn again (:func:`scramble_items`), its draw number.

    >>> first = text_rng(0, "a", TextPlace("choices", (0,)), "rs").random()
    >>> first == text_rng(0, "a", TextPlace("choices", (0,)), "rs").random()
    True
    >>> first == text_rng(0, "a", TextPlace("choices", (1,)), "rs").random()
    False
    """
    parts = [STREAM_VERSION, int(seed), sample_id, place.column, list(place.position), family]
    if draw:
        parts.append(int(draw))
    key = json.dumps(parts, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return random.Random(int.from_bytes(hashlib.blake2b(key, digest_size=16).digest(), "big"))
