"""The scramble types: one :class:`ScrambleFamily` record per family in :data:`FAMILIES` (its word function,
the letters a word needs to be eligible, whether it takes a rate, its description, group and rates), and
what derives from the records: the type parser, the type lists, help texts, descriptions and sort order.

Code that treats types differently asks their records; it does not compare type names.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from scrambled_bench.builder import word_functions as word
from scrambled_bench.errors import ScrambledBenchError

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
    identity: bool = False
    """Whether the family leaves every text as it is (``original``, the control): a text under it is the text
    itself, without drawing from its random stream."""

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
        ScrambleFamily("original", word.unchanged_word, 0, False, "no change", identity=True),
        ScrambleFamily(
            "rs",
            word.scramble_random,
            2,
            True,
            "random scramble: NN % of the words with at least 2 letters, all their letters shuffled",
            shipped_rates=PAPER_RATES,
            table_rates=(20, 50, 100),
        ),
        ScrambleFamily(
            "kf",
            word.scramble_keep_first,
            3,
            False,
            "keep the first letter, shuffle the rest (words with at least 3 letters)",
        ),
        ScrambleFamily(
            "kfl",
            word.scramble_keep_first_last,
            4,
            False,
            "keep the first and last letters, shuffle the inner ones (words with at least 4 letters)",
        ),
        ScrambleFamily(
            "kr2",
            word.scramble_keep_random_two,
            4,
            False,
            "keep two letters at random positions, shuffle the rest (words with at least 4 letters; paper App. A.2)",
            group="letters",
        ),
        ScrambleFamily(
            "klkr1",
            word.scramble_keep_last_random_one,
            4,
            False,
            "keep the last letter and one random other (words with at least 4 letters; paper App. A.2)",
            group="letters",
        ),
        ScrambleFamily(
            "kfkr1",
            word.scramble_keep_first_random_one,
            4,
            False,
            "keep the first letter and one random other (words with at least 4 letters; paper App. A.2)",
            group="letters",
        ),
        ScrambleFamily(
            "sub",
            word.substitute_letters,
            2,
            False,
            "every letter of every word with at least 2 letters replaced by a different random letter "
            "(RPG's lower bound)",
        ),
        ScrambleFamily(
            "adj",
            word.typo_adjacent_swap,
            3,
            True,
            "natural typo in NN % of the words with at least 3 letters: two adjacent letters swapped, never the "
            "first (FT-KF&Adj)",
            shipped_rates=TYPO_RATES,
            group="typo",
        ),
        ScrambleFamily(
            "ins",
            word.typo_insert,
            3,
            True,
            "natural typo in NN % of the words with at least 3 letters: one random letter inserted after the first",
            shipped_rates=TYPO_RATES,
            group="typo",
        ),
        ScrambleFamily(
            "del",
            word.typo_delete,
            3,
            True,
            "natural typo in NN % of the words with at least 3 letters: one letter other than the first deleted",
            shipped_rates=TYPO_RATES,
            group="typo",
        ),
        ScrambleFamily(
            "rep",
            word.typo_replace,
            3,
            True,
            "natural typo in NN % of the words with at least 3 letters: one letter other than the first replaced",
            shipped_rates=TYPO_RATES,
            group="typo",
        ),
        ScrambleFamily(
            "ftrs",
            word.scramble_random_long,
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


UNSCRAMBLED = next(family.name for family in FAMILIES.values() if family.identity)
"""The type of the unscrambled text (``original``): the one every scrambled type is paired with."""


def is_unscrambled(name: str) -> bool:
    """Whether a type leaves the text as it is (its family is the identity), asked of the record rather than
    compared with a name; an unknown name is not.

    >>> is_unscrambled("original"), is_unscrambled("rs20"), is_unscrambled("no-such-type")
    (True, False, False)
    """
    try:
        return FAMILIES[parse_type(name).family].identity
    except ScrambledBenchError:
        return False


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
