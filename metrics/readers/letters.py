"""How the careful reader weighs a letter it has found: against the choices (a letter outside them), against
the words that go with it (another choice's text: a mismatched pair), against another answer offered beside
it (a hedge); and where an output names or gives letters."""

from __future__ import annotations

import re
from typing import NamedTuple

from scrambled_bench.metrics.readers.common import Reading
from scrambled_bench.metrics.readers.content import REJECTED_CHOICE
from scrambled_bench.metrics.readers.question import Choices, offers_another
from scrambled_bench.metrics.readers.shapes import (
    AFTER_LETTER,
    FILLER,
    LABEL,
    LABEL_ENDS,
    LABEL_WORDS,
    LETTER_FORM,
    LETTER_LABELS,
    LETTER_LINE,
    NAMED_LETTER,
    NEAR,
    SENTENCE_END,
    letter_of,
    sentence_rest,
    statements,
    tokens,
    words_after,
)
from scrambled_bench.metrics.readers.units import Verdict

NEGATION_AFTER_STATEMENT = re.compile(r"(?:not|none|neither|unclear|unknown|impossible)\b", re.IGNORECASE)
NEGATED_BEFORE = re.compile(
    r"(?:\bnot|n't|\brather\s+than|\binstead\s+of|\bexcept|\bother\s+than|\bunlike|\bnor|\bneither|\bthan"
    r"|\b(?:neither|nor)\s+(?:does|do|is|are|would))"
    r"\s*(?:(?i:option|choice))?\s*$",
    re.IGNORECASE,
)
NEGATED_AFTER = re.compile(
    r"\s*(?:is|are|seems|would\s+be|can\s+be|must\s+be)\s+(?:not\b|incorrect|wrong|false|unlikely|ruled|eliminated)",
    re.IGNORECASE,
)
# The same after a letter named in passing and its choice's words: "(D) 12 does not work".
FAILS_AFTER = re.compile(
    r"\W{0,3}(?:\w+\W+){0,2}?(?:does\s+not|doesn't|do\s+not|don't|fails?|cannot|can't|won't|isn't|is\s+not)\b",
    re.IGNORECASE,
)
# The most words a first line may have to state a choice's content as a label, as "4" does "4 times.".
_LABEL_LINE_WORDS = 3
# What separates the items of a first line's list ("Dustin City, Salt Lake City", "Cricket: Ben Stokes").
LIST_ITEMS = re.compile(r"[,:]")
# a line that gives a letter nothing but another letter as its text ("C)D", "B: A")
_BARE_LETTER = re.compile(r"\(?([A-E])\)?[ \t]*(?=\n|$)")


def judge_letter(letter: str, rest: str, rule: str, choices: Choices, verdict: Verdict) -> Reading | None:
    """A letter read by ``rule`` checked: one of the choices, not contradicted, not hedged.

    >>> choices = Choices(["Amazon", "Microsoft", "Meta"])
    >>> judge_letter("B", ") Microsoft", "leading-letter", choices, Verdict())
    Reading(value='B', rule='leading-letter')
    >>> judge_letter("C", ") Microsoft", "leading-letter", choices, Verdict())
    Reading(value=None, rule='letter-text-conflict')
    """
    if NEGATED_AFTER.match(rest):  # "(A) is wrong, ..." names a letter to rule it out
        return None
    if letter not in choices.valid:
        return Reading(None, "letter-outside-choices")
    if mismatched_words(letter, rest, choices) is not None:
        return Reading(None, "letter-text-conflict")
    after = rest.lstrip(AFTER_LETTER)
    own = choices.own(letter)
    if own and tokens(after[:NEAR])[: len(own)] == own:
        rest = words_after(after, len(own))  # "(C) Both A and B": the choice's own words offer nothing else
        if REJECTED_CHOICE.rejects(rest, choices.content):  # "(A) To the park is not correct": ruled out
            return None
    if offers_another(rest, letter, choices):
        verdict.hedged = True
        return None
    return Reading(letter, rule)


def read_stated(after: str, choices: Choices, verdict: Verdict) -> Reading | None:
    """The answer that follows an answer statement, or None when it states none (or hedges).

    >>> read_stated(" is Disneys.", Choices(["Disney", "Apple"]), Verdict())
    Reading(value='A', rule='answer-is')
    """
    start = FILLER.match(after).end()
    rest = after[start:]
    if NEGATION_AFTER_STATEMENT.match(rest) and not choices.prefix(rest):
        return None
    form = LETTER_FORM.match(rest)
    if form:
        return judge_letter(letter_of(form), rest[form.end() :], "answer-is", choices, verdict)
    for skip in ("", "the ", "a ", "an "):
        if skip and not rest.lower().startswith(skip):
            continue
        spelled = choices.prefix(rest[len(skip) :])
        if spelled:
            letter, words = spelled
            if offers_another(words_after(rest[len(skip) :], words), letter, choices):
                verdict.hedged = True
                return None
            return Reading(letter, "answer-is")
    stated = choices.stated(rest)  # "the answer is Disneys.", "the answer is: 16%"
    return Reading(stated, "answer-is") if stated else None


def named_letters(text: str, choices: Choices) -> dict[str, int]:
    """The letters ``text`` names unmistakably and does not rule out, with where each is first named.

    >>> named_letters("Not (A). (B) is wrong. So (C).", Choices(["x", "y", "z"]))
    {'C': 29}
    """
    named: dict[str, int] = {}
    for match in NAMED_LETTER.finditer(text):
        letter = letter_of(match)
        if NEGATED_BEFORE.search(text[max(0, match.start() - 30) : match.start()]):
            continue  # "not (B)", "rather than option C"
        if NEGATED_AFTER.match(text, match.end()):
            continue  # "(A) is wrong"
        after = text[match.end() :]
        own = choices.own(letter)
        if own and tokens(after[:NEAR])[: len(own)] == own:
            after = words_after(after, len(own))  # the choice's own words may deny something
            if REJECTED_CHOICE.rejects(after, choices.content):
                continue  # "A) To the park is wrong."
        if FAILS_AFTER.match(after):
            continue  # "(D) 12 does not work"
        end = SENTENCE_END.search(text, match.end(), match.end() + NEAR)
        if end and text[end.start()] == "?":
            continue  # "Could it be (B)?"
        named.setdefault(letter, match.end())
    return named


def is_label(label: re.Match, text: str, choices: Choices) -> bool:
    """Whether a bracketed letter inside a line is given as an answer: followed by its own choice's text and
    then nothing but the end of the line or another letter ("C)OPEC (D)IOC (E)").

    >>> text = "C)OPEC (D)IOC (E)"
    >>> is_label(LETTER_LABELS.search(text), text, Choices(["NATO", "G20", "OPEC", "IOC"]))
    True
    """
    letter = label.group(1)
    if letter not in choices.valid or not (own := choices.own(letter)):
        return False
    after = text[label.end() : label.end() + NEAR]
    if tokens(after)[: len(own)] != own:
        return False
    return bool(LABEL_ENDS.match(words_after(after, len(own))))


def mismatched_words(letter: str, rest: str, choices: Choices) -> int | None:
    """How far into ``rest`` the words that go with ``letter`` reach when they are another choice's, else None.

    They are another choice's when they are its text, start with it ("C) 371 days" when D is 371), or state
    its content in a short label ("B) the Disneys").

    >>> choices = Choices(["Amazon", "Microsoft", "Meta"])
    >>> mismatched_words("C", ") Microsoft\\n\\nThe answer is: Microsoft", choices)
    11
    >>> mismatched_words("B", ") Microsoft", choices) is None
    True
    """
    mismatch = _mismatch(letter, rest, choices)
    return None if mismatch is None else mismatch[0]


def _mismatch(letter: str, rest: str, choices: Choices) -> tuple[int, str] | None:
    """:func:`mismatched_words`'s reach, and the letter of the choice those words name."""
    if letter not in choices.valid:
        return None
    after = rest.lstrip(AFTER_LETTER)
    said = sentence_rest(after)
    pointer = _BARE_LETTER.match(after)
    if pointer and pointer.group(1) in choices.valid and pointer.group(1) != letter:
        # "C)D": a letter given another letter as its text
        return len(rest) - len(after) + pointer.end(), pointer.group(1)
    spelled = choices.prefix(after)
    # a sentence that names a choice only to reject it ("C. The park is not mentioned.") gives the letter none
    label = choices.stated(after) if REJECTED_CHOICE.set_aside(said, choices.content) == said else None
    other = choices.exactly(said) or (spelled[0] if spelled else None) or label
    if not other or other == letter or tokens(said) == choices.own(letter):
        return None
    if offers_another(after, letter, choices):  # "(A) or (B)" beside a choice "OR" offers two letters
        return None
    reach = len(said)
    if spelled and spelled[0] == other and not choices.exactly(said):  # only the choice's words go with it
        reach = len(after) - len(words_after(after, spelled[1]))
    return len(rest) - len(after) + reach, other


class Pair(NamedTuple):
    """A letter given with another choice's words: where it starts and ends, the letter, and the letter of
    the choice its words name."""

    start: int
    end: int
    letter: str
    words: str


def mismatched_pairs(text: str, choices: Choices) -> list[Pair]:
    """Where each letter given with another choice's words starts and ends in ``text``, the letter, and the
    letter of the choice the words name, in order of where they start.

    Such a pair commits to no choice, but the rest of the output may still commit to one: "Baltimore\\n\\nThe
    answer is (B) Baltimore" (Baltimore is C) states Baltimore; "C) 450,000\\n\\nThe answer is: 450,000"
    (450,000 is D) states 450,000. The letters looked at are those given as answers: the leading one, one
    after an answer statement, one that opens a line, and a bracketed one anywhere.

    >>> choices = Choices(["New York", "Philadelphia", "Baltimore", "Pittsburgh"])
    >>> text = "Baltimore\\n\\nThe answer is (B) Baltimore."
    >>> mismatched_pairs(text, choices)
    [Pair(start=25, end=38, letter='B', words='C')]
    >>> cut(text, [(25, 38)])
    'Baltimore\\n\\nThe answer is .'
    """
    letters: list[tuple[str, int, int]] = []  # (letter, start, end) of each letter given as an answer
    label = LABEL.match(text)
    for start in [FILLER.match(text, label.end() if label else 0).end()] + [
        FILLER.match(text, statement.end()).end() for statement in statements(text)
    ]:
        if form := LETTER_FORM.match(text, start):
            letters.append((letter_of(form), form.start(), form.end()))
    letters += [(line.group("line"), line.start("line"), line.end()) for line in LETTER_LINE.finditer(text)]
    letters += [(label.group(1), label.start(), label.end()) for label in LETTER_LABELS.finditer(text)]
    # a letter found twice (after a statement, and as a bracketed label) makes one pair
    pairs: dict[tuple[int, int], Pair] = {}
    for letter, start, end in letters:
        mismatch = _mismatch(letter, text[end : end + 2 * NEAR], choices)
        if mismatch is not None:
            pairs.setdefault((start, end + mismatch[0]), Pair(start, end + mismatch[0], letter, mismatch[1]))
    return [pair for _span, pair in sorted(pairs.items())]


def cut(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` without the (possibly overlapping) ``spans``.

    >>> cut("abcdef", [(1, 3), (2, 4)])
    'aef'
    """
    kept, position = [], 0
    for start, end in sorted(spans):
        kept.append(text[position : max(position, start)])
        position = max(position, end)
    return "".join(kept) + text[position:]


def first_line_choice(text: str, choices: Choices) -> str | None:
    """The choice a short first line gives by its text, alone or as one item of a list separated by commas or
    colons, or else states by its content in three words or fewer ("4" for "4 times."), when more lines
    follow: an answer of its own, which a letter given later for another choice contradicts.

    >>> choices = Choices(["Los Angeles", "Salt Lake City", "New York City", "Washington, DC"])
    >>> first_line_choice("Dustin City, Salt Lake City\\n\\nThe answer is D.", choices)
    'B'
    >>> first_line_choice("Washington, DC\\n\\nThe answer is D.", choices)
    'D'
    >>> first_line_choice("The city is Salt Lake City.\\n\\nThe answer is D.", choices) is None
    True
    >>> first_line_choice("4\\n\\nThe answer is (C) 5.", Choices(["3 times.", "4 times.", "5 times."]))
    'B'
    """
    first, newline, _rest = text.strip().partition("\n")
    if not newline or len(tokens(first)) > LABEL_WORDS:
        return None
    items = LIST_ITEMS.split(first)  # "Dustin City, Salt Lake City", "Cricket: Ben Stokes"
    given = {
        choices.exactly(",".join(items[start:end]))
        for start in range(len(items))
        for end in range(start + 1, len(items) + 1)
    }
    given.discard(None)
    if not given and len(tokens(first)) <= _LABEL_LINE_WORDS and (stated := choices.stated(first)):
        given = {stated}  # "4" for "4 times.", "Class 2" for "Class two."
    return given.pop() if len(given) == 1 else None
