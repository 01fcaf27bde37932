"""Pure scramble functions: the paper's scramble types and a few natural-typo types, for texts and lists.

This module is the scrambler's public face: every name below imports from here
(``from scrambled_bench.builder.scrambler import scramble, FAMILIES, TextPlace``). Its parts, one concept
each, sit beside it:

- :mod:`~scrambled_bench.builder.families`: the types, one :class:`ScrambleFamily` record per family in
  :data:`FAMILIES` (word function, letters a word needs, rate or not, description, group, rates), and the
  parser, type lists, help text, descriptions and sort order derived from them;
- :mod:`~scrambled_bench.builder.word_functions`: what a word and a letter are, and one pure
  ``(word, rng) -> word`` function per family;
- :mod:`~scrambled_bench.builder.draws`: the standard library's random draws, inlined (the build's inner
  loop);
- :mod:`~scrambled_bench.builder.text_streams`: every text's own random stream, :func:`text_rng`;
- here: a text under one or many types (:func:`scramble`, :func:`scramble_many`) and the items of one list
  kept distinct (:func:`scramble_items`).

Determinism: the output depends only on (text, type, rate, seed, sample id, place). Every text gets its
own random stream (:func:`text_rng`), seeded from a hash of (the derivation's version :data:`STREAM_VERSION`,
seed, sample id, :class:`TextPlace`: the column path and the position in a list, type family), so two texts
of one row (a question and its choices, or two choices) never replay the same draws; every word draws from
its text's stream in reading order whatever the rate: a uniform number and its transformed form. ``rsNN`` transforms exactly
NN % of a text's eligible words (rounded to the nearest whole word, as in the paper's data, where every
text has its share rather than the share on average): those with the smallest numbers. Neither the
numbers nor the permutations depend on NN, so the rates are nested: the words scrambled at 20 % are
scrambled, identically, at 50 % and 100 %. The same holds for the typo families.

Lists (:func:`scramble_items`): the items of one list (a row's choices) that differ stay different once
scrambled, and no item takes the original text of another: an item that comes out as another item's output
or as another item's original (``"form"`` as ``"from"`` beside a choice ``"from"``) is drawn again, from the
stream of its next draw number, until it is neither. An item the type leaves unchanged (``"Au"`` under
``kfl``) stays as it is, and so does an item that no draw of :data:`MAX_REDRAWS` frees (``"from"`` under
``kfl`` can only become ``"form"``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scrambled_bench.builder.families import (
    ALL_TYPES,
    FAMILIES,
    PAPER_RATES,
    TYPO_RATES,
    UNSCRAMBLED,
    ScrambleFamily,
    ScrambleType,
    is_unscrambled,
    known_type_names,
    parse_type,
    type_description,
    type_order,
    types_in,
)
from scrambled_bench.builder.text_streams import STREAM_VERSION, TextPlace, text_rng
from scrambled_bench.builder.word_functions import (
    WORD_PATTERN,
    letter_count,
    letter_positions,
    scramble_keep_first,
    scramble_keep_first_last,
    scramble_keep_first_random_one,
    scramble_keep_last_random_one,
    scramble_keep_random_two,
    scramble_random,
    scramble_random_long,
    substitute_letters,
    typo_adjacent_swap,
    typo_delete,
    typo_insert,
    typo_replace,
    words,
)
from scrambled_bench.errors import ScrambledBenchError

__all__ = [
    "ALL_TYPES",
    "FAMILIES",
    "MAX_REDRAWS",
    "PAPER_RATES",
    "STREAM_VERSION",
    "TYPO_RATES",
    "UNSCRAMBLED",
    "WORD_PATTERN",
    "ScrambleFamily",
    "ScrambleType",
    "TextPlace",
    "WordOutcomes",
    "is_unscrambled",
    "known_type_names",
    "letter_count",
    "letter_positions",
    "parse_type",
    "scramble",
    "scramble_items",
    "scramble_keep_first",
    "scramble_keep_first_last",
    "scramble_keep_first_random_one",
    "scramble_keep_last_random_one",
    "scramble_keep_random_two",
    "scramble_many",
    "scramble_random",
    "scramble_random_long",
    "substitute_letters",
    "text_rng",
    "type_description",
    "type_order",
    "types_in",
    "typo_adjacent_swap",
    "typo_delete",
    "typo_insert",
    "typo_replace",
    "word_outcomes",
    "words",
    "words_at_rate",
]


@dataclass(frozen=True)
class WordOutcomes:
    """One text under one family: its pieces, every word's draw and every word's transformed form.

    ``pieces`` alternate separator, word, separator, ..., separator (``re.split`` with the word pattern as
    a group), so word ``i`` is ``pieces[2 * i + 1]``; joining ``pieces`` gives the text back.
    """

    pieces: list[str]
    draws: list[float]
    transformed: list[str]

    def ranked(self, min_letters: int) -> list[int]:
        """Indices of the words with at least ``min_letters`` letters, smallest draw first."""
        words_ = self.pieces[1::2]
        eligible = [index for index, word in enumerate(words_) if letter_count(word) >= min_letters]
        # a stable sort of indices in reading order: ties in the draw (never seen) keep reading order
        return sorted(eligible, key=self.draws.__getitem__)

    def apply(self, chosen: Iterable[int] | None = None) -> str:
        """The text with the ``chosen`` words (``None``: every word) replaced by their transformed form."""
        pieces = list(self.pieces)
        if chosen is None:
            pieces[1::2] = self.transformed
        else:
            transformed = self.transformed
            for index in chosen:
                pieces[2 * index + 1] = transformed[index]
        return "".join(pieces)


_WORD_SPLIT = re.compile(f"({WORD_PATTERN.pattern})")
""":data:`WORD_PATTERN` as a group: ``split`` keeps the words, at the odd indices."""


def word_outcomes(
    text: str, family: str, seed: int, sample_id: str, place: TextPlace, *, draw: int = 0
) -> WordOutcomes:
    """Every word's draw and transformed form under ``family``: what every rate of the family picks from.

    Every word consumes its draws whether or not it is eligible, so a word's outcome depends only on
    the text, the family, the seed, the sample id and the place; a rate only decides which outcomes are used.

    >>> outcomes = word_outcomes("a bc", "kf", 0, "x", TextPlace("text"))
    >>> outcomes.pieces, outcomes.transformed
    (['', 'a', ' ', 'bc', ''], ['a', 'bc'])
    """
    pieces = _WORD_SPLIT.split(text)
    rng = text_rng(seed, sample_id, place, family, draw=draw)
    transform, draw = FAMILIES[family].word_function, rng.random
    # a tuple's items are evaluated left to right: each word's draw comes before its transform's draws
    pairs = [(draw(), transform(word, rng)) for word in pieces[1::2]]
    return WordOutcomes(pieces, [pair[0] for pair in pairs], [pair[1] for pair in pairs])


def words_at_rate(eligible: int, rate: int) -> int:
    """How many of a text's ``eligible`` words a rate of ``rate`` % transforms: the nearest whole number.

    Each text gets exactly its share, as in the paper's data (20 % of 23 words is 5 words in every
    text, not 5 on average), rounding halves up.

    >>> words_at_rate(23, 20), words_at_rate(25, 50), words_at_rate(2, 20), words_at_rate(7, 100)
    (5, 13, 0, 7)
    """
    return (rate * eligible + 50) // 100


_PARSED_TYPES: dict[str, ScrambleType] = {}
"""Type names already parsed (a build parses the same few names once per text)."""


def _parsed(name: str) -> ScrambleType:
    parsed = _PARSED_TYPES.get(name) if isinstance(name, str) else None
    if parsed is None:
        parsed = parse_type(name)
        _PARSED_TYPES[name] = parsed
    return parsed


def scramble_many(
    text: str,
    scramble_types: Sequence[str],
    *,
    seed: int,
    sample_id: str,
    place: TextPlace | str,
    draw: int = 0,
) -> list[str]:
    """``[scramble(text, t, seed=seed, sample_id=sample_id, place=place) for t in scramble_types]``, drawing
    once per family.

    The rates of one family (``rs20``, ``rs50``, ``rs100``) share one word plan, which is what makes
    them nested and what makes building many rates cheap. ``draw`` numbers a redraw of a list item
    (:func:`scramble_items`); 0 is a text's first draw.

    >>> text = "Nested rates share one plan"
    >>> scramble_many(text, ["rs20", "rs100"], seed=0, sample_id="x", place="text") == [
    ...     scramble(text, "rs20", seed=0, sample_id="x", place="text"),
    ...     scramble(text, "rs100", seed=0, sample_id="x", place="text")]
    True
    """
    parsed = [_parsed(name) for name in scramble_types]
    if not isinstance(text, str):
        raise ScrambledBenchError(f"can only scramble text, got {type(text).__name__}")
    seed, sample_id, place = int(seed), str(sample_id), TextPlace.of(place)
    outcomes: dict[str, WordOutcomes] = {}
    rankings: dict[str, list[int]] = {}
    outputs = []
    for scramble_type in parsed:
        family, rate = scramble_type.family, scramble_type.rate
        if FAMILIES[family].identity:
            outputs.append(text)
            continue
        if family not in outcomes:
            outcomes[family] = word_outcomes(text, family, seed, sample_id, place, draw=draw)
        if rate >= 100:
            # every eligible word; an ineligible word's transform is the word itself
            outputs.append(outcomes[family].apply())
            continue
        if family not in rankings:
            rankings[family] = outcomes[family].ranked(FAMILIES[family].min_letters)
        ranked = rankings[family]
        outputs.append(outcomes[family].apply(ranked[: words_at_rate(len(ranked), rate)]))
    return outputs


def scramble(
    text: str, scramble_type: str, *, seed: int, sample_id: str, place: TextPlace | str, draw: int = 0
) -> str:
    """Scramble ``text`` with the config type ``scramble_type``; deterministic in all its arguments.

    ``sample_id`` is the row's key and ``place`` where the text lies in the row (a column name, or a
    :class:`TextPlace` for an item of a list): two texts of one row draw independently.

    >>> scramble("The quick brown fox", "original", seed=0, sample_id="x", place="text")
    'The quick brown fox'
    >>> out = scramble("The quick brown fox jumps", "kfl", seed=0, sample_id="x", place="text")
    >>> [w[0] + w[-1] for w in out.split()]
    ['Te', 'qk', 'bn', 'fx', 'js']
    >>> scramble("x", "kfx", seed=0, sample_id="x", place="text")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: unknown scramble type 'kfx' (known: original, rsNN, kf, kfl, kr2, klkr1, kfkr1, sub, adjNN, insNN, delNN, repNN, ftrsNN; NN is a percentage of the words)
    """
    return scramble_many(text, [scramble_type], seed=seed, sample_id=sample_id, place=place, draw=draw)[0]


MAX_REDRAWS = 32
"""Draws after the first that :func:`scramble_items` tries for a list item whose output another item has,
as its output or as its original text; after them the item keeps its original text."""


def scramble_items(
    texts: Sequence[str | None], scramble_type: str, *, seed: int, sample_id: str, place: TextPlace | str
) -> list[str | None]:
    """The items of one list (a row's choices) scrambled, item ``i`` at ``place.item(i)``: distinct where
    their originals are, and none equal to another item's original text.

    Every original text is held by its own item(s) first, then, in list order, an item whose output another
    item (with a different original) holds, as its original or as an earlier output, is drawn again (draw
    1, 2, ... of its place: deterministic) until it is free. An item no draw of :data:`MAX_REDRAWS` frees
    keeps its original text, which no other item can hold, so the draws are bounded and a valid list always
    results (under ``kfl`` a four-letter word has one other arrangement; where that arrangement is another
    choice, the word stays). Items the type leaves unchanged (too short, say) stay as they are. A missing
    item (None) stays missing.

    >>> scramble_items(["Au", "Ag", "Gd", "Go"], "sub", seed=0, sample_id="1", place="choices")
    ['Cv', 'jF', 'OP', 'Ih']
    >>> scramble_items(["form", "from", "farm", "firm"], "kfl", seed=0, sample_id="1", place="choices")
    ['form', 'from', 'fram', 'frim']
    >>> scramble_items(["Mars", "Mras", "Sun", None], "kfl", seed=0, sample_id="1", place="choices")
    ['Mars', 'Mras', 'Sun', None]
    """
    place = TextPlace.of(place)
    scrambled = [
        None
        if text is None
        else scramble(text, scramble_type, seed=seed, sample_id=sample_id, place=place.item(index))
        for index, text in enumerate(texts)
    ]
    # output -> the original that holds it: every original holds itself (equal originals may share it)
    taken = {text: text for text in texts if text is not None}
    for index, (text, out) in enumerate(zip(texts, scrambled)):
        if text is None or out == text:
            continue
        draw = 0
        while taken.get(out, text) != text:
            draw += 1
            if draw > MAX_REDRAWS:
                out = text
                break
            out = scramble(
                text, scramble_type, seed=seed, sample_id=sample_id, place=place.item(index), draw=draw
            )
        scrambled[index] = out
        taken.setdefault(out, text)
    return scrambled
