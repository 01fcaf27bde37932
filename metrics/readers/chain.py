"""The careful reader's rules for a worked solution (AQuA, few-shot chain of thought): the last statement of
an answer decides, else the last box, else the one letter the last sentence names. A solution corrects itself
on the way, so no cycle is looked for. Each is a named :class:`Rule`, tried in the order
:mod:`~scrambled_bench.metrics.readers.careful` declares."""

from __future__ import annotations

import re

from scrambled_bench.metrics.readers.common import Reading
from scrambled_bench.metrics.readers.letters import named_letters, read_stated
from scrambled_bench.metrics.readers.question import Choices
from scrambled_bench.metrics.readers.shapes import ANSWER_STATEMENT, LETTER_FORM, NEAR, letter_of, statements
from scrambled_bench.metrics.readers.units import Rule, Verdict

_FIVE = Choices(list("12345"))  # the examples' question


class LastStatement(Rule):
    """The answer of the last statement that states one ("the answer is (C)", "... C", "\\boxed{C}", the
    choice's text, "The closest answer choice is (D)"); ``hedge`` if that statement offers two.

    >>> LAST_STATEMENT.read("First the answer is (A). Checking again, the answer is (C).", _FIVE)
    Reading(value='C', rule='answer-is')
    >>> LAST_STATEMENT.read("So the answer is either (C) or (D).", _FIVE)
    Reading(value=None, rule='hedge')
    """

    name = "last-statement"
    patterns = (ANSWER_STATEMENT,)
    gives_own = False
    also_gives = ("answer-is", "hedge", "letter-outside-choices", "letter-text-conflict")

    def read(self, region: str, choices: Choices) -> Reading | None:
        verdict = Verdict()
        for statement in reversed(statements(region)):
            reading = read_stated(region[statement.end() :], choices, verdict)
            if reading is not None:
                return reading
            if verdict.hedged:
                return Reading(None, "hedge")
        return None


_BOXED = re.compile(r"\\boxed\s*\{")


def _braced(text: str, start: int) -> str:
    """The text from ``start`` to the brace that closes the one just before it (within ``NEAR``)."""
    depth = 1
    for position in range(start, min(len(text), start + NEAR)):
        if text[position] == "{":
            depth += 1
        elif text[position] == "}":
            depth -= 1
            if depth == 0:
                return text[start:position]
    return text[start : start + NEAR]


class Boxed(Rule):
    """The last ``\\boxed{...}`` that holds a letter or a choice's text (``\\boxed{\\textbf{(C)}\\ 67.40}`` is
    C); ``letter-outside-choices`` if its letter is no choice.

    >>> BOXED.read("so $x = \\\\boxed{\\\\textbf{(C)}\\\\ 67.40}$", _FIVE)
    Reading(value='C', rule='boxed')
    """

    name = "boxed"
    patterns = (_BOXED,)
    also_gives = ("letter-outside-choices",)

    def read(self, region: str, choices: Choices) -> Reading | None:
        for boxed in reversed(list(_BOXED.finditer(region))):
            content = _braced(region, boxed.end())
            content = re.sub(r"\\(?:text|textbf|mathrm|mathbf)\s*\{|[{}$]|\\[,;!: ]", " ", content).strip()
            form = LETTER_FORM.match(content)
            letter = letter_of(form) if form else choices.exactly(content)
            if letter:
                ok = letter in choices.valid
                return Reading(letter if ok else None, self.name if ok else "letter-outside-choices")
        return None


# Words that keep the last sentence of a worked solution from concluding with the letter it names.
_DOUBT = re.compile(r"^\s*(?:if|whether|suppose|assuming)\b|\?|\b(?:might|may|could)\s+be\b", re.IGNORECASE)


class LastSentenceLetter(Rule):
    """The one letter the last sentence names and does not rule out ("Since choice (C) works, the number of
    members is 25.", "... = (A)."), unless the sentence doubts ("if", "might be", a question).

    >>> LAST_SENTENCE_LETTER.read("Trying each: since choice (C) works, the club has 25 members.", _FIVE)
    Reading(value='C', rule='named-letter')
    """

    name = "last-sentence-letter"
    patterns = (_DOUBT,)
    gives_own = False
    also_gives = ("named-letter",)

    def read(self, region: str, choices: Choices) -> Reading | None:
        sentences = [part for part in re.split(r"(?<=[.!?])\s+|\n+", region.strip()) if part.strip()]
        if sentences and not _DOUBT.search(sentences[-1]):
            named = set(named_letters(sentences[-1], choices))
            if len(named) == 1 and named <= set(choices.valid):
                return Reading(named.pop(), "named-letter")
        return None


LAST_STATEMENT = LastStatement()
BOXED = Boxed()
LAST_SENTENCE_LETTER = LastSentenceLetter()
