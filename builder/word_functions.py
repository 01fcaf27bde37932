"""The word level: what a word and a letter are, and one named pure function per scramble family,
``(word, rng) -> word``.

Vocabulary (as in Cao et al., 2023):

- A *word* is a maximal run of ``\\w`` characters (Unicode), so apostrophes and hyphens split words.
- Only *letters* (``str.isalpha``) move or change. Digits, underscores, combining marks, punctuation and
  all whitespace stay exactly where they were.

A word with fewer letters than its family needs comes back unchanged; otherwise a scrambled word differs
from the original whenever some other arrangement of its letters exists under the type's constraints (for
example ``"book"`` under ``kfl`` cannot change). The families' records
(:data:`~scrambled_bench.builder.families.FAMILIES`) name these functions.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Sequence

from scrambled_bench.builder.draws import sample_range, shuffle_differently

WORD_PATTERN = re.compile(r"\w+")
"""A word: a maximal run of Unicode word characters."""

_SUBSTITUTE_ALPHABET = string.ascii_letters


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


def _shuffle_except(word: str, kept: set[int], rng: random.Random) -> str:
    """Shuffle the letters of ``word`` whose letter index is not in ``kept`` (indices into the letters)."""
    if word.isalpha():
        # letter index == position: take the kept letters out, shuffle the rest, put them back in place
        order = sorted(kept)
        letters = list(word)
        for index in reversed(order):
            del letters[index]
        shuffled = shuffle_differently(letters, rng)
        for index in order:
            shuffled.insert(index, word[index])
        return "".join(shuffled)
    movable = [position for index, position in enumerate(letter_positions(word)) if index not in kept]
    letters = [word[position] for position in movable]
    return _place(word, movable, shuffle_differently(letters, rng))


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
        kept = fixed.union(sample_range(candidates.start, candidates.stop, count, rng))
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
        return word if len(word) < 2 else "".join(shuffle_differently(list(word), rng))
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
        return word if len(word) < 3 else word[0] + "".join(shuffle_differently(list(word[1:]), rng))
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
        return word[0] + "".join(shuffle_differently(list(word[1:-1]), rng)) + word[-1]
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


def unchanged_word(word: str, rng: random.Random) -> str:
    """``original``: the word as it is."""
    return word
