"""The choices of one question as the careful reader compares them: by their text (:class:`Choices`), by
their content (:class:`~scrambled_bench.metrics.readers.content.ChoiceContent`), and what an output's words
say of them (one choice's text, another offered beside it)."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from scrambled_bench.choices import LETTERS
from scrambled_bench.metrics.readers.content import ChoiceContent, clauses
from scrambled_bench.metrics.readers.shapes import (
    FILLER,
    LABEL_WORDS,
    LETTER_FORM,
    NAMED_LETTER,
    NEAR,
    letter_of,
    sentence_rest,
    tokens,
    undenied,
    words_after,
)

# a label that opens with a number states that number ("40% of the total of 100,000")
_LEADING_NUMBER = re.compile(r"\s*[$\u00a3\u20ac]?\s*\d[\d,]*(?:\.\d+)?\s*(?:%|percent\b)?")
# After a number, more of a number or of a calculation: "6 - 2 = 4" does not state the choice "6".
_GOES_ON = re.compile(r"\s*(?:[-+*/^=:\u00d7\u00f7]|[.,]?\d)")
# A calculation or a compound quantity, whose numbers are not the choices they equal ("6 - 2 = 4").
_CALCULATION = re.compile(
    r"[=+*/^\u00d7\u00f7]|\d\s*[-\u2013]\s*\d|\b(?:and|plus|minus|times)\s+\d", re.IGNORECASE
)
# After any choice text, another quantity joined to it: "2 hours and 30 minutes" is not "2 hours".
_GOES_ON_WITH_NUMBER = re.compile(r"\s+(?:and|plus|minus|times)\s+\d", re.IGNORECASE)
# Another answer offered beside the one read: "(A) or (B)", "A, B and C", "Baby formula or (C)".
ALTERNATIVE = re.compile(r"(?:\b(?:or|and/or|and|vs\.?|versus|nor)\s+|^\s*[,/]\s*)", re.IGNORECASE)


class Choices:
    """The choices of one question as the careful reader compares them.

    >>> choices = Choices(["Amazon", "Microsoft", "Meta"])
    >>> choices.valid, choices.exactly("“microsoft.”"), choices.prefix("Meta, it bought the firm")
    ('ABC', 'B', ('C', 1))
    """

    def __init__(self, choices: Sequence[str]):
        self.valid = LETTERS[: len(choices)]
        self.tokens = [tokens(choice) for choice in choices]
        self._texts = choices

    @functools.cached_property
    def content(self) -> ChoiceContent:
        """What each choice says, in distinctive words (made when a rule first needs it)."""
        return ChoiceContent(self._texts)

    def own(self, letter: str) -> list[str]:
        """The words of ``letter``'s choice (none for a letter that is no choice)."""
        return self.tokens[self.valid.index(letter)] if letter in self.valid else []

    def stated(self, text: str) -> str | None:
        """The letter of the choice that the sentence ``text`` begins states by its content, if the sentence
        is one short clause, a label ("371 days", "the Disneys"), and states exactly one choice."""
        sentence = clauses(sentence_rest(text))
        if len(sentence) != 1 or len(tokens(sentence[0])) > LABEL_WORDS or _CALCULATION.search(sentence[0]):
            return None
        if NAMED_LETTER.search(sentence[0]):  # "this is (A) 20%": the letter speaks, not the words
            return None
        leading = _LEADING_NUMBER.match(sentence[0])
        if leading and self.content.stated(leading.group()) is None:
            return None  # "40% of the total ticket value of 100,000": the label states 40%, no choice
        index = self.content.stated(sentence[0])
        return None if index is None else self.valid[index]

    def exactly(self, text: str) -> str | None:
        """The letter of the one choice whose text ``text`` is (after normalising), if exactly one."""
        wanted = tokens(text)
        letters = {self.valid[i] for i, words in enumerate(self.tokens) if words and words == wanted}
        return letters.pop() if len(letters) == 1 else None

    def prefix(self, text: str) -> tuple[str, int] | None:
        """The letter of the longest choice text ``text`` starts with, and how many words it spans.

        ``None`` when none does, or when two choices spelled alike tie for the longest.
        """
        words = tokens(text[:NEAR])
        matches = sorted(
            (
                (len(own), self.valid[i])
                for i, own in enumerate(self.tokens)
                if own and words[: len(own)] == own and not goes_on(own, words_after(text, len(own)))
            ),
            reverse=True,
        )
        if not matches or (len(matches) > 1 and matches[0][0] == matches[1][0] and matches[0] != matches[1]):
            return None
        return matches[0][1], matches[0][0]

    @functools.cached_property
    def surnames(self) -> dict[str, str]:
        """The last word of each choice that is a person's name (two or three capitalised words, as "Angela
        Bassett"), by letter, where no other choice has that word.

        >>> Choices(["Angela Bassett", "Kerry Condon", "Jamie Lee Curtis", "Stephanie Hsu"]).surnames["C"]
        'Curtis'
        >>> Choices(["New York", "Los Angeles"]).surnames
        {'A': 'York', 'B': 'Angeles'}
        """
        names = {}
        for letter, text in zip(self.valid, self._texts, strict=True):
            words = text.strip().rstrip(".").split()
            if 2 <= len(words) <= 3 and all(re.fullmatch(r"[A-Z][a-z'\-]+", word) for word in words):
                names[letter] = words[-1]
        shared = {
            word
            for letter, word in names.items()
            for other, words in zip(self.valid, self.tokens, strict=True)
            if other != letter and word.lower() in words
        }
        return {letter: word for letter, word in names.items() if word not in shared}

    def surnames_named(self, text: str) -> dict[str, int]:
        """How often ``text`` names each person-choice by its surname (see :attr:`surnames`), by letter, for
        those it names.

        >>> Choices(["Angela Bassett", "Kerry Condon"]).surnames_named("Bassett won; Bassett wept.")
        {'A': 2}
        """
        counts = {
            letter: len(re.findall(rf"\b{re.escape(surname)}\b", text))
            for letter, surname in self.surnames.items()
        }
        return {letter: count for letter, count in counts.items() if count}

    def same_as(self, other: Sequence[str]) -> bool:
        """Whether ``other`` (choices a model echoed) are these, the last one possibly cut off."""
        echoed = [tokens(choice) for choice in other]
        if not echoed or len(echoed) > len(self.tokens):
            return False
        *complete, last = echoed
        own = self.tokens[: len(echoed)]
        return complete == own[:-1] and own[-1][: len(last)] == last


def goes_on(words: list[str], after: str) -> bool:
    """Whether the words after a choice's text make it part of a longer quantity.

    >>> goes_on(["6"], " - 2 = 4"), goes_on(["2", "hours"], " and 30 minutes"), goes_on(["6"], ".")
    (True, True, False)
    """
    return bool((words[-1].isdigit() and _GOES_ON.match(after)) or _GOES_ON_WITH_NUMBER.match(after))


def offers_another(rest: str, letter: str, choices: Choices) -> bool:
    """Whether the sentence that goes on with ``rest`` offers an answer other than ``letter`` beside it.

    >>> offers_another(" or (B), I think.", "A", Choices(["Amazon", "Microsoft"]))
    True
    """
    rest = sentence_rest(rest)
    for alternative in ALTERNATIVE.finditer(rest):
        after = rest[alternative.end() :].lstrip()
        after = after[FILLER.match(after).end() :] if after[:1].islower() else after
        form = LETTER_FORM.match(after)
        if form and letter_of(form) != letter:
            return True
        spelled = choices.prefix(after)
        if spelled and spelled[0] != letter and not form:
            return True
    return False


def holds_another_text(rest: str, letter: str, choices: Choices) -> bool:
    """Whether the sentence that ``rest`` begins holds another choice's whole text (two words or more, not
    negated) after ``letter``'s: "The food they like and dislike is the taste of food." states two choices.

    >>> holds_another_text(" is the taste of food.", "C", Choices(["The taste of food.", "The cost.", "The food."]))
    True
    >>> holds_another_text(" is not the taste of food.", "C", Choices(["The taste of food.", "The cost.", "The food."]))
    False
    """
    words = tokens(sentence_rest(rest))
    return any(
        other != letter and len(own) >= 2 and undenied(words, own)
        for other, own in zip(choices.valid, choices.tokens, strict=True)
    )


def names_choices(text: str, choices: Choices) -> int:
    """How many of the choices ``text`` names by their whole text (all of them, for a list of the options).

    >>> names_choices("A) Amazon (B) Meta", Choices(["Amazon", "Microsoft", "Meta"]))
    2
    """
    words = tokens(text)
    return sum(bool(undenied(words, own)) for own in choices.tokens)
