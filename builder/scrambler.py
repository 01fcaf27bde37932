"""Pure scramble functions: the paper's scramble types and a few natural-typo types.

Vocabulary (as in Cao et al., 2023):

- A *word* is a maximal run of ``\\w`` characters (Unicode), so apostrophes and hyphens split words.
- Only *letters* (``str.isalpha``) move or change. Digits, underscores, combining marks, punctuation and
  all whitespace stay exactly where they were.

Scramble types: every family (``original``, ``rsNN``, ``kf``, ``kfl``, the Appendix A.2 letter types, ``sub``
and the natural-typo families) is one :class:`ScrambleFamily` record in :data:`FAMILIES`, which holds its word
function, the letters a word needs to be eligible, whether it takes a rate and its description.

Determinism: the output depends only on (text, type, rate, seed, sample id, place). Every text gets its
own random stream (:func:`text_rng`), seeded from a hash of (the derivation's version :data:`STREAM_VERSION`,
seed, sample id, :class:`TextPlace`: the column path and the position in a list, type family), so two texts
of one row (a question and its choices, or two choices) never replay the same draws; every word draws from
its text's stream in reading order whatever the rate: a uniform number and its transformed form. ``rsNN`` transforms exactly
NN % of a text's eligible words (rounded to the nearest whole word, as in the paper's data, where every
text has its share rather than the share on average): those with the smallest numbers. Neither the
numbers nor the permutations depend on NN, so the rates are nested: the words scrambled at 20 % are
scrambled, identically, at 50 % and 100 %. The same holds for the typo families.

A scrambled word differs from the original whenever some other arrangement of its letters exists
under the type's constraints (for example ``"book"`` under ``kfl`` cannot change).

Lists (:func:`scramble_items`): the items of one list (a row's choices) that differ stay different once
scrambled, and no item takes the original text of another: an item that comes out as another item's output
or as another item's original (``"form"`` as ``"from"`` beside a choice ``"from"``) is drawn again, from the
stream of its next draw number, until it is neither. An item the type leaves unchanged (``"Au"`` under
``kfl``) stays as it is, and so does an item that no draw of :data:`MAX_REDRAWS` frees (``"from"`` under
``kfl`` can only become ``"form"``).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from scrambled_bench.errors import ScrambledBenchError

WORD_PATTERN = re.compile(r"\w+")
"""A word: a maximal run of Unicode word characters."""

_SUBSTITUTE_ALPHABET = string.ascii_letters
_TYPE_PATTERN = re.compile(r"^([a-z]+?)(-?\d+)$")


@dataclass(frozen=True)
class ScrambleType:
    """A parsed type name: ``family`` (``rs``, ``kf``, ``adj``...) and ``rate`` in percent (100 when fixed)."""

    name: str
    family: str
    rate: int = 100


def parse_type(name: str) -> ScrambleType:
    """Parse a config type name, raising :class:`ScrambledBenchError` for unknown names or rates.

    >>> parse_type("rs20")
    ScrambleType(name='rs20', family='rs', rate=20)
    >>> parse_type("kfl").family
    'kfl'
    >>> parse_type("rs0")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: scramble type 'rs0': rate 0 is outside (0, 100]
    >>> parse_type("kf50")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: unknown scramble type 'kf50' (known: original, rsNN, kf, kfl, kr2, klkr1, kfkr1, sub, adjNN, insNN, delNN, repNN, ftrsNN; NN is a percentage of the words)
    """
    if not isinstance(name, str):
        raise ScrambledBenchError(f"scramble type must be a string, got {name!r}")
    family = FAMILIES.get(name)
    if family is not None and not family.takes_rate:
        return ScrambleType(name=name, family=name)
    match = _TYPE_PATTERN.match(name)
    family = FAMILIES.get(match.group(1)) if match else None
    if match is None or family is None or not family.takes_rate:
        raise ScrambledBenchError(f"unknown scramble type {name!r} (known: {known_type_names()})")
    rate = int(match.group(2))
    if not 0 < rate <= 100:
        raise ScrambledBenchError(f"scramble type {name!r}: rate {rate} is outside (0, 100]")
    return ScrambleType(name=name, family=family.name, rate=rate)


# --------------------------------------------------------------------------------------------------
# Word-level helpers
# --------------------------------------------------------------------------------------------------


def letter_positions(word: str) -> list[int]:
    """Indices of the letters of ``word`` (the characters that may move).

    >>> letter_positions("it's2b_c")
    [0, 1, 3, 5, 7]
    """
    if word.isalpha():
        return list(range(len(word)))
    return [index for index, char in enumerate(word) if char.isalpha()]


def letter_count(word: str) -> int:
    """How many letters ``word`` has: what decides whether a family may change it.

    >>> letter_count("it's2b_c"), letter_count("scramble")
    (5, 8)
    """
    return len(word) if word.isalpha() else sum(map(str.isalpha, word))


def words(text: str) -> list[str]:
    """The words of ``text``: maximal runs of ``\\w`` characters.

    >>> words("Don't re-enter 42 rooms_2!")
    ['Don', 't', 're', 'enter', '42', 'rooms_2']
    """
    return WORD_PATTERN.findall(text)


def _place(word: str, positions: Sequence[int], letters: Sequence[str]) -> str:
    """Write ``letters`` into ``word`` at ``positions`` (same length), leaving every other character."""
    chars = list(word)
    for position, letter in zip(positions, letters):
        chars[position] = letter
    return "".join(chars)


# Speed: every word of every text passes through a word function once per family, so these helpers are the
# build's inner loop. ``random.Random.shuffle``, ``choice`` and ``sample`` are Python code over
# ``_randbelow``, which for ``random.Random`` is ``getrandbits(n.bit_length())`` redrawn while ``>= n``.
# Drawing from ``getrandbits`` directly gives the same numbers from the same stream, and so the same words,
# without a Python call per letter (the build ran 2x faster). tests/builder/test_scrambler_draws.py checks
# the equality against the running interpreter's library.


def _below(getrandbits: Callable[[int], int], bound: int) -> int:
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


def _shuffle_in_place(items: list[str], getrandbits: Callable[[int], int]) -> None:
    """``random.Random.shuffle(items)``: the same Fisher-Yates swaps from the same draws, inlined."""
    steps = _SHUFFLE_STEPS.get(len(items)) or _shuffle_steps(len(items))
    for index, bound, bits in steps:
        other = getrandbits(bits)
        while other >= bound:
            other = getrandbits(bits)
        items[index], items[other] = items[other], items[index]


def _sample_range(start: int, stop: int, count: int, rng: random.Random) -> list[int]:
    """``rng.sample(range(start, stop), count)`` for ``count <= 5``: the same picks from the same draws.

    The standard library keeps a pool list for a population of at most 21 and a set of picks above that
    (its ``setsize`` for ``k <= 5``); both are followed here.
    """
    size = stop - start
    if count > 5 or not 0 <= count <= size:
        return rng.sample(range(start, stop), count)
    getrandbits = rng.getrandbits
    if count == 1:  # both of the library's branches take the first draw as it is
        return [start + _below(getrandbits, size)]
    if size <= 21:
        if count == 2:  # the pool after the first pick: its last item moved into the picked slot
            first = _below(getrandbits, size)
            second = _below(getrandbits, size - 1)
            return [start + first, start + (size - 1 if second == first else second)]
        pool = list(range(start, stop))
        picks = []
        for taken in range(count):
            index = _below(getrandbits, size - taken)
            picks.append(pool[index])
            pool[index] = pool[size - taken - 1]
        return picks
    seen: set[int] = set()
    picks = []
    for _ in range(count):
        index = _below(getrandbits, size)
        while index in seen:
            index = _below(getrandbits, size)
        seen.add(index)
        picks.append(start + index)
    return picks


def _shuffle_differently(letters: list[str], rng: random.Random) -> list[str]:
    """A permutation of ``letters`` that differs from it whenever the letters are not all equal."""
    if len(set(letters)) < 2:
        return list(letters)
    shuffled = list(letters)
    getrandbits = rng.getrandbits
    while True:
        # reshuffles the previous attempt, not the original: part of the stream the published data pins
        _shuffle_in_place(shuffled, getrandbits)
        if shuffled != letters:
            return shuffled


def _shuffle_except(word: str, kept: set[int], rng: random.Random) -> str:
    """Shuffle the letters of ``word`` whose letter index is not in ``kept`` (indices into the letters)."""
    if word.isalpha():
        # letter index == position: take the kept letters out, shuffle the rest, put them back in place
        order = sorted(kept)
        letters = list(word)
        for index in reversed(order):
            del letters[index]
        shuffled = _shuffle_differently(letters, rng)
        for index in order:
            shuffled.insert(index, word[index])
        return "".join(shuffled)
    movable = [position for index, position in enumerate(letter_positions(word)) if index not in kept]
    letters = [word[position] for position in movable]
    return _place(word, movable, _shuffle_differently(letters, rng))


def _choose_kept(
    letters: str, candidates: range, count: int, fixed: set[int], rng: random.Random
) -> set[int]:
    """Pick ``count`` random letter indices from ``candidates`` (plus ``fixed``) to keep in place.

    The pick is redrawn while the remaining letters are all equal but some other pick would leave
    letters that can be rearranged, so that the word changes whenever it can. ``candidates`` never
    include a ``fixed`` index.
    """
    outside = letters
    for index in sorted(fixed, reverse=True):
        outside = outside[:index] + outside[index + 1 :]
    distinct = len(set(outside))
    # keeping `count` more letters removes at most `count` distinct ones: with count + 2 distinct letters
    # outside `fixed`, every pick leaves two, and the first pick is the answer without checking it
    certain = distinct >= count + 2
    feasible = distinct >= 2
    while True:
        kept = fixed.union(_sample_range(candidates.start, candidates.stop, count, rng))
        if certain or not feasible:
            return kept
        remaining = {letters[index] for index in range(len(letters)) if index not in kept}
        if len(remaining) >= 2:
            return kept


# --------------------------------------------------------------------------------------------------
# One named pure function per type: (word, rng) -> word. Ineligible words come back unchanged.
# --------------------------------------------------------------------------------------------------


def scramble_random(word: str, rng: random.Random) -> str:
    """``rs``: shuffle all letters of a word with at least 2 letters.

    >>> scramble_random("scramble", random.Random(0)) != "scramble"
    True
    >>> sorted(scramble_random("it2s", random.Random(1))), scramble_random("it2s", random.Random(1))[2]
    (['2', 'i', 's', 't'], '2')
    """
    if word.isalpha():  # the common case, without positions: the same draws and result as the general path
        return word if len(word) < 2 else "".join(_shuffle_differently(list(word), rng))
    if len(letter_positions(word)) < 2:
        return word
    return _shuffle_except(word, set(), rng)


def scramble_random_long(word: str, rng: random.Random) -> str:
    """``ftrs``: shuffle all letters of a word with more than two letters (the paper's FT-RS corpus, App. A.4).

    ``rs`` takes words with at least 2 letters; FT-RS scrambles "words with more than two letters", so a
    two-letter word is never chosen and a rate counts only the longer words.

    >>> scramble_random_long("of", random.Random(0)), scramble_random_long("the", random.Random(0)) != "the"
    ('of', True)
    """
    if letter_count(word) < 3:
        return word
    return scramble_random(word, rng)


def scramble_keep_first(word: str, rng: random.Random) -> str:
    """``kf``: keep the first letter, shuffle the others (words with at least 3 letters).

    >>> scramble_keep_first("scramble", random.Random(0))[0]
    's'
    >>> scramble_keep_first("at", random.Random(0))
    'at'
    """
    if word.isalpha():
        return word if len(word) < 3 else word[0] + "".join(_shuffle_differently(list(word[1:]), rng))
    if len(letter_positions(word)) < 3:
        return word
    return _shuffle_except(word, {0}, rng)


def scramble_keep_first_last(word: str, rng: random.Random) -> str:
    """``kfl``: keep the first and last letters, shuffle the inner ones (words with at least 4 letters).

    >>> out = scramble_keep_first_last("scramble", random.Random(0))
    >>> out[0] + out[-1], out != "scramble"
    ('se', True)
    """
    if word.isalpha():
        if len(word) < 4:
            return word
        return word[0] + "".join(_shuffle_differently(list(word[1:-1]), rng)) + word[-1]
    count = letter_count(word)
    if count < 4:
        return word
    return _shuffle_except(word, {0, count - 1}, rng)


def _letters_of(word: str) -> str:
    return word if word.isalpha() else "".join(char for char in word if char.isalpha())


def scramble_keep_random_two(word: str, rng: random.Random) -> str:
    """``kr2``: keep two letters at random positions, shuffle the others (words with at least 4 letters).

    >>> out = scramble_keep_random_two("scramble", random.Random(3))
    >>> sorted(out) == sorted("scramble"), sum(a == b for a, b in zip(out, "scramble")) >= 2
    (True, True)
    """
    letters = _letters_of(word)
    if len(letters) < 4:
        return word
    kept = _choose_kept(letters, range(len(letters)), 2, set(), rng)
    return _shuffle_except(word, kept, rng)


def scramble_keep_last_random_one(word: str, rng: random.Random) -> str:
    """``klkr1``: keep the last letter and one other at random (words with at least 4 letters).

    >>> scramble_keep_last_random_one("scramble", random.Random(0))[-1]
    'e'
    """
    letters = _letters_of(word)
    if len(letters) < 4:
        return word
    last = len(letters) - 1
    kept = _choose_kept(letters, range(last), 1, {last}, rng)
    return _shuffle_except(word, kept, rng)


def scramble_keep_first_random_one(word: str, rng: random.Random) -> str:
    """``kfkr1``: keep the first letter and one other at random (words with at least 4 letters).

    >>> scramble_keep_first_random_one("scramble", random.Random(0))[0]
    's'
    """
    letters = _letters_of(word)
    if len(letters) < 4:
        return word
    kept = _choose_kept(letters, range(1, len(letters)), 1, {0}, rng)
    return _shuffle_except(word, kept, rng)


def substitute_letters(word: str, rng: random.Random) -> str:
    """``sub``: replace every letter by a different random ASCII letter (words with at least 2 letters).

    >>> out = substitute_letters("word2", random.Random(0))
    >>> out[4], all(a != b and a.isalpha() for a, b in zip(out[:4], "word"))
    ('2', True)
    """
    positions = letter_positions(word)
    if len(positions) < 2:
        return word
    getrandbits, alphabet = rng.getrandbits, _SUBSTITUTE_ALPHABET
    size, bits = len(alphabet), len(alphabet).bit_length()
    replacements = []
    for position in positions:
        # rng.choice(alphabet) redrawn while it is the original letter: 6-bit draws until one is below 52
        # and names another letter (the choice's own redraws and the redraw of the original, merged)
        original = word[position]
        value = getrandbits(bits)
        while value >= size or alphabet[value] == original:
            value = getrandbits(bits)
        replacements.append(alphabet[value])
    return "".join(replacements) if len(positions) == len(word) else _place(word, positions, replacements)


def typo_adjacent_swap(word: str, rng: random.Random) -> str:
    """``adj``: swap two adjacent, different letters, never the first (words with at least 3 letters).

    >>> out = typo_adjacent_swap("letter", random.Random(0))
    >>> out[0], sorted(out) == sorted("letter"), sum(a != b for a, b in zip(out, "letter"))
    ('l', True, 2)
    """
    positions = letter_positions(word)
    if len(positions) < 3:
        return word
    pairs = [
        index
        for index in range(1, len(positions) - 1)
        if word[positions[index]] != word[positions[index + 1]]
    ]
    if not pairs:
        return word
    index = rng.choice(pairs)
    first, second = positions[index], positions[index + 1]
    return _place(word, (first, second), (word[second], word[first]))


def _random_letter_like(reference: str, rng: random.Random, *, avoid: str = "") -> str:
    """A random ASCII letter in the case of ``reference``, different from ``avoid``."""
    alphabet = string.ascii_uppercase if reference.isupper() else string.ascii_lowercase
    letter = rng.choice(alphabet)
    while letter == avoid:
        letter = rng.choice(alphabet)
    return letter


def typo_insert(word: str, rng: random.Random) -> str:
    """``ins``: insert one random letter right after a letter (words with at least 3 letters).

    The new letter is lower case unless the whole word is upper case (``"The"`` -> ``"Thke"``, never
    ``"TKhe"``).

    >>> out = typo_insert("letter", random.Random(0))
    >>> len(out), out[0], out.islower()
    (7, 'l', True)
    >>> typo_insert("NASA", random.Random(0)).isupper()
    True
    """
    positions = letter_positions(word)
    if len(positions) < 3:
        return word
    after = positions[rng.randrange(len(positions))]
    all_upper = all(word[position].isupper() for position in positions)
    letter = _random_letter_like("A" if all_upper else "a", rng)
    return word[: after + 1] + letter + word[after + 1 :]


def typo_delete(word: str, rng: random.Random) -> str:
    """``del``: delete one letter other than the first (words with at least 3 letters).

    >>> out = typo_delete("letter", random.Random(0))
    >>> len(out), out[0]
    (5, 'l')
    """
    positions = letter_positions(word)
    if len(positions) < 3:
        return word
    position = positions[rng.randrange(1, len(positions))]
    return word[:position] + word[position + 1 :]


def typo_replace(word: str, rng: random.Random) -> str:
    """``rep``: replace one letter other than the first by a different letter of the same case.

    >>> out = typo_replace("letter", random.Random(0))
    >>> len(out), out[0], sum(a != b for a, b in zip(out, "letter"))
    (6, 'l', 1)
    """
    positions = letter_positions(word)
    if len(positions) < 3:
        return word
    position = positions[rng.randrange(1, len(positions))]
    letter = _random_letter_like(word[position], rng, avoid=word[position])
    return _place(word, (position,), (letter,))


def _unchanged(word: str, rng: random.Random) -> str:
    """``original``: the word as it is."""
    return word


@dataclass(frozen=True)
class ScrambleFamily:
    """One scramble family: everything the package knows about it, in one record.

    The type lists, the type parser's message, the dataset card's type table, the ``--types`` help and
    the order of types in reports all come from :data:`FAMILIES`; adding a family is one record here
    (plus its property tests).
    """

    name: str
    word_function: Callable[[str, random.Random], str]
    """``(word, rng) -> word``; a word with fewer than :attr:`min_letters` letters comes back unchanged."""
    min_letters: int
    """Letters a word needs to be eligible (a word with fewer is never chosen by a rate)."""
    takes_rate: bool
    """Whether type names carry a rate in percent of the eligible words (``rs50``) or not (``kfl``)."""
    description: str
    """One line for the dataset card; ``NN`` stands for the rate of a rate family."""
    shipped_rates: tuple[int, ...] = ()
    """The rates :data:`ALL_TYPES` lists (any other rate in (0, 100] is accepted too)."""
    group: str = "paper"
    """``paper`` (the main tables), ``letters`` (Appendix A.2: which letters keep their place), ``typo``, or
    ``training`` (Appendix A.4's fine-tuning corpora; no shipped rates, so never in a default build)."""
    table_rates: tuple[int, ...] | None = None
    """The rates of the paper's main tables (1 and 3-8) where they are fewer than the shipped ones."""

    def type_names(self, *, tables: bool = False) -> tuple[str, ...]:
        """The shipped type names of the family (``tables``: those of the paper's main tables).

        >>> FAMILIES["adj"].type_names(), FAMILIES["rs"].type_names(tables=True)
        (('adj10', 'adj30', 'adj50', 'adj100'), ('rs20', 'rs50', 'rs100'))
        """
        if not self.takes_rate:
            return (self.name,)
        rates = self.table_rates if tables and self.table_rates is not None else self.shipped_rates
        return tuple(f"{self.name}{rate}" for rate in rates)

    @property
    def pattern(self) -> str:
        """How the family's type names are written in help texts: ``rsNN`` or ``kfl``."""
        return f"{self.name}NN" if self.takes_rate else self.name

    def describe(self, rate: int | None = None) -> str:
        """The card's description, with the rate written in where the family takes one.

        >>> FAMILIES["rs"].describe(20)
        'random scramble: 20 % of the words with at least 2 letters, all their letters shuffled'
        """
        return self.description.replace("NN", str(rate)) if rate is not None else self.description


PAPER_RATES = tuple(range(10, 101, 10))
"""The rates of the shipped random-scramble configs."""
TYPO_RATES = (10, 30, 50, 100)
"""The rates of the shipped natural-typo configs."""

FAMILIES: dict[str, ScrambleFamily] = {
    family.name: family
    for family in (
        ScrambleFamily("original", _unchanged, 0, False, "no change"),
        ScrambleFamily(
            "rs",
            scramble_random,
            2,
            True,
            "random scramble: NN % of the words with at least 2 letters, all their letters shuffled",
            shipped_rates=PAPER_RATES,
            table_rates=(20, 50, 100),
        ),
        ScrambleFamily(
            "kf",
            scramble_keep_first,
            3,
            False,
            "keep the first letter, shuffle the rest (words with at least 3 letters)",
        ),
        ScrambleFamily(
            "kfl",
            scramble_keep_first_last,
            4,
            False,
            "keep the first and last letters, shuffle the inner ones (words with at least 4 letters)",
        ),
        ScrambleFamily(
            "kr2",
            scramble_keep_random_two,
            4,
            False,
            "keep two letters at random positions, shuffle the rest (words with at least 4 letters; paper App. A.2)",
            group="letters",
        ),
        ScrambleFamily(
            "klkr1",
            scramble_keep_last_random_one,
            4,
            False,
            "keep the last letter and one random other (words with at least 4 letters; paper App. A.2)",
            group="letters",
        ),
        ScrambleFamily(
            "kfkr1",
            scramble_keep_first_random_one,
            4,
            False,
            "keep the first letter and one random other (words with at least 4 letters; paper App. A.2)",
            group="letters",
        ),
        ScrambleFamily(
            "sub",
            substitute_letters,
            2,
            False,
            "every letter of every word with at least 2 letters replaced by a different random letter "
            "(RPG's lower bound)",
        ),
        ScrambleFamily(
            "adj",
            typo_adjacent_swap,
            3,
            True,
            "natural typo in NN % of the words with at least 3 letters: two adjacent letters swapped, never the "
            "first (FT-KF&Adj)",
            shipped_rates=TYPO_RATES,
            group="typo",
        ),
        ScrambleFamily(
            "ins",
            typo_insert,
            3,
            True,
            "natural typo in NN % of the words with at least 3 letters: one random letter inserted after the first",
            shipped_rates=TYPO_RATES,
            group="typo",
        ),
        ScrambleFamily(
            "del",
            typo_delete,
            3,
            True,
            "natural typo in NN % of the words with at least 3 letters: one letter other than the first deleted",
            shipped_rates=TYPO_RATES,
            group="typo",
        ),
        ScrambleFamily(
            "rep",
            typo_replace,
            3,
            True,
            "natural typo in NN % of the words with at least 3 letters: one letter other than the first replaced",
            shipped_rates=TYPO_RATES,
            group="typo",
        ),
        ScrambleFamily(
            "ftrs",
            scramble_random_long,
            3,
            True,
            "random scramble in NN % of the words with more than two letters, all their letters shuffled "
            "(FT-RS, paper App. A.4)",
            group="training",
        ),
    )
}
"""Every scramble family, in the canonical order of tables and figures (original first, sub after the
letter types, the typo families last)."""

ALL_TYPES: tuple[str, ...] = tuple(name for family in FAMILIES.values() for name in family.type_names())
"""Every type name the builder ships (other rates such as ``rs35`` are accepted too)."""


def types_in(group: str, *, tables: bool = False) -> tuple[str, ...]:
    """The type names of one :attr:`ScrambleFamily.group`, in family order (``tables``: at the rates of the
    paper's main tables): the lists builds and suites draw from, so that a new family reaches them in one
    edit (its record).

    >>> types_in("paper", tables=True), types_in("letters")
    (('original', 'rs20', 'rs50', 'rs100', 'kf', 'kfl', 'sub'), ('kr2', 'klkr1', 'kfkr1'))
    """
    return tuple(
        name
        for family in FAMILIES.values()
        if family.group == group
        for name in family.type_names(tables=tables)
    )


def known_type_names() -> str:
    """The type names for help texts and error messages, derived from :data:`FAMILIES`.

    >>> known_type_names()
    'original, rsNN, kf, kfl, kr2, klkr1, kfkr1, sub, adjNN, insNN, delNN, repNN, ftrsNN; NN is a percentage of the words'
    """
    return ", ".join(family.pattern for family in FAMILIES.values()) + "; NN is a percentage of the words"


def type_order(name: str) -> tuple[int, int, str]:
    """Sort key of a type name in tables and figures: family order, then rate; unknown names last.

    >>> sorted(["sub", "rs100", "kfl", "original", "rs20", "adj10"], key=type_order)
    ['original', 'rs20', 'rs100', 'kfl', 'sub', 'adj10']
    """
    try:
        parsed = parse_type(name)
    except ScrambledBenchError:
        return (len(FAMILIES), 0, name)
    return (list(FAMILIES).index(parsed.family), parsed.rate, name)


def type_description(name: str) -> str:
    """The one-line description of a type, for the dataset card.

    >>> type_description("adj30")
    'natural typo in 30 % of the words with at least 3 letters: two adjacent letters swapped, never the first (FT-KF&Adj)'
    """
    parsed = parse_type(name)
    family = FAMILIES[parsed.family]
    return family.describe(parsed.rate if family.takes_rate else None)


# --------------------------------------------------------------------------------------------------
# Text level
# --------------------------------------------------------------------------------------------------


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
        if family == "original":
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
