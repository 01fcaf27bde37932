"""The checks a zero-shot answer must pass once a rule has read it, and how a mismatched pair is mended.

A letter (or choice) read is no commitment when the output says no choice fits, gives another answer on its
first line, commits to another choice elsewhere, or goes on to state other choices' content; each check is a
named :class:`Rule`, run in the order :mod:`~scrambled_bench.metrics.readers.careful` declares, and what
follows an answer given twice (or a scrambled echo after it) is not weighed at all."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from scrambled_bench.metrics.readers.common import Reading
from scrambled_bench.metrics.readers.content import REJECTED_CHOICE, sentences
from scrambled_bench.metrics.readers.letters import (
    LIST_ITEMS,
    Pair,
    first_line_choice,
    is_label,
    judge_letter,
    read_stated,
)
from scrambled_bench.metrics.readers.question import Choices
from scrambled_bench.metrics.readers.rules import REPEATED
from scrambled_bench.metrics.readers.shapes import (
    AFTER_LETTER,
    LETTER_FORM,
    LETTER_LABELS,
    LETTER_LINE,
    NEAR,
    SCRAMBLED_WORD,
    is_scrambled_echo,
    letter_of,
    statements,
    tokens,
)
from scrambled_bench.metrics.readers.units import Rule, Verdict

# The end of a clause: where the words that gave an answer end.
_CLAUSE_END = re.compile(r"[.,;:!?\n]+(?=\s|$)|\n")

_CHOICES = Choices(["New York", "Philadelphia", "Baltimore", "Pittsburgh"])  # the examples' question


@dataclass
class Answer:
    """An answer a rule has read from a zero-shot output, as the checks weigh it: its letter, the output, the
    question's choices, and how many times the output commits to that letter (counted by
    :class:`AnotherCommitment`, the check that looks for commitments)."""

    letter: str
    text: str
    choices: Choices
    confirmed: int = field(default=0)

    @functools.cached_property
    def first_clause_end(self) -> re.Match | None:
        return _CLAUSE_END.search(self.text)

    @functools.cached_property
    def after(self) -> str:
        """What the output goes on to say after the clause that gave the answer."""
        first = self.first_clause_end
        return self.text[first.end() :] if first else ""

    @functools.cached_property
    def weighed(self) -> str:
        """What :attr:`after` says that is weighed against the answer: not the choices it names only to reject
        them (:class:`~scrambled_bench.metrics.readers.content.RejectedChoice`), nor the sentences that give
        the answer's own letter again (:class:`LetterGivenAgain`)."""
        text = self.after
        for rule in WEIGHED_APART:  # in their declared order
            text = rule.apart(text, self)
        return text


# A declaration that no choice is right, which takes back an answer given before it.
_NO_CHOICE_FITS = re.compile(
    r"\bnone\s+of\s+(?:the\s+|these\s+)?(?:above|options|choices|answers|answer\s+choices|given\s+(?:options|choices))\b"
    r"|\bno\s+(?:correct|right|valid)\s+(?:answer|option|choice)\b|\bcannot\s+be\s+determined\b"
    r"|\b(?:is|are)\s+not\s+(?:among|in|one\s+of)\s+the\s+(?:given\s+)?(?:choices|options|answer\s+choices)\b",
    re.IGNORECASE,
)


class NoChoiceFits(Rule):
    """An answer taken back by a declaration that no choice is right ("B. But none of the options is
    correct.", "... so it cannot be determined"), unless a choice's own text says so ("None of the above").

    >>> NO_CHOICE_FITS.check(Answer("B", "B. But none of the options is correct.", _CHOICES))
    Reading(value=None, rule='no-answer')
    """

    name = "no-choice-fits"
    patterns = (_NO_CHOICE_FITS,)
    gives_own = False
    also_gives = ("no-answer",)

    def check(self, answer: Answer) -> Reading | None:
        text, choices = answer.text, answer.choices
        if _NO_CHOICE_FITS.search(text) and not any(
            _NO_CHOICE_FITS.search(" ".join(t)) for t in choices.tokens
        ):
            return Reading(None, "no-answer")
        return None


class FirstLineAnswer(Rule):
    """A short first line that gives one choice's text, alone or as an item of a list separated by commas or
    colons, or states one choice's content in three words or fewer ("4" for "4 times.": what an opening "A: 4"
    gives), is an answer of its own, which a letter given later for another choice contradicts.

    >>> FIRST_LINE_ANSWER.check(Answer("D", "Baltimore, Boston\\n\\nThe answer is D.", _CHOICES))
    Reading(value=None, rule='letter-text-conflict')
    """

    name = "first-line-answer"
    patterns = (LIST_ITEMS,)
    gives_own = False
    also_gives = ("letter-text-conflict",)

    def check(self, answer: Answer) -> Reading | None:
        given = first_line_choice(answer.text, answer.choices)
        if given is not None and given != answer.letter:
            return Reading(None, "letter-text-conflict")
        return None


class AnotherCommitment(Rule):
    """The output commits to another choice elsewhere: another statement of an answer, a line that starts with
    another letter and its label, or a bracketed letter given its own choice's text as a label ("Answer:
    (B)\\n\\nAnswer: (C)"): ``cycle``; a letter there given another choice's text: ``letter-text-conflict``.
    It also counts how often the output commits to the answer itself.

    >>> ANOTHER_COMMITMENT.check(Answer("B", "Answer: (B)\\n\\nAnswer: (C)", _CHOICES))
    Reading(value=None, rule='cycle')
    """

    name = "another-commitment"
    patterns = (LETTER_LINE, LETTER_LABELS)
    gives_own = False
    also_gives = ("letter-text-conflict", "cycle")

    def check(self, answer: Answer) -> Reading | None:
        text, choices, letter = answer.text, answer.choices, answer.letter
        verdict = Verdict()
        # what follows a statement or a letter is read within NEAR (bounded slices keep a long output linear),
        # and a passage read once is not read again (a model stuck in a loop repeats itself)
        read: set[tuple[str, str]] = set()
        places = [(None, statement.end()) for statement in statements(text)]
        places += [(line.group("line"), line.end()) for line in LETTER_LINE.finditer(text)]
        places += [
            (label.group(1), label.end())
            for label in LETTER_LABELS.finditer(text)
            if is_label(label, text, choices)
        ]
        answer.confirmed = 0  # commitments to this very letter, the first reading's own among them
        for named, end in places:
            after = text[end : end + 2 * NEAR]
            if (named or "", after) in read:
                continue
            read.add((named or "", after))
            if named is None:
                reading = read_stated(after, choices, verdict)
            else:
                reading = judge_letter(named, after, "leading-letter", choices, verdict)
            if reading is not None and reading.rule == "letter-text-conflict":
                return reading
            if reading is not None and reading.value is not None and reading.value != letter:
                return Reading(None, "cycle")
            answer.confirmed += reading is not None and reading.value == letter
        return None


class AnswerGivenTwice(Rule):
    """What an output says after an answer it has given twice ("C)Historically inaccurate costumes\\n\\nThe
    answer is C.\\n\\n... filmed in Spain ...") discusses the other choices and takes nothing back: the checks
    of what follows the answer do not weigh it.

    >>> ANSWER_GIVEN_TWICE.applies(Answer("C", "C) Baltimore\\n\\nThe answer is C.", _CHOICES, confirmed=2))
    True
    """

    name = "answer-given-twice"
    gives_own = False

    def applies(self, answer: Answer) -> bool:
        return answer.confirmed >= 2


class EchoAfterAnswer(Rule):
    """A scrambled echo of the evidence after the answer ("Border Collie\\n\\nThe 22-hntom-dol manerG Shedprhe
    si ...") states nothing at all (the judges' fourth rule): the checks of what follows do not weigh it.

    >>> ECHO_AFTER_ANSWER.applies(Answer("A", "New York. Teh cmoapny sdia ttah rdnsoug hmwo.", _CHOICES))
    True
    """

    name = "echo-after-answer"
    patterns = SCRAMBLED_WORD
    gives_own = False

    def applies(self, answer: Answer) -> bool:
        return is_scrambled_echo(answer.after)


class LetterGivenAgain(Rule):
    """An output that opens with a letter and its own choice's text, then gives other choices' texts under
    the same letter ("(A) To the park. (A) To the library. (A) To the museum."), keeps giving that letter: the
    sentences that open with it again are no stops of a tour and no content weighed against it, and the letter
    is read. Where another letter opens a sentence too ("A) ... B) ... (A) ..."), nothing is set aside.

    >>> answer = Answer("A", "(A) New York. (A) Baltimore. (A) Pittsburgh.", _CHOICES)
    >>> LETTER_GIVEN_AGAIN.apart(answer.after, answer)
    ''
    """

    name = "letter-given-again"
    patterns = (LETTER_FORM,)
    gives_own = False

    def apart(self, text: str, answer: Answer) -> str:
        """``text`` (what follows the answer) without the sentences that give the answer's letter again, where
        the output opened with that letter and its own choice's text."""
        opening = LETTER_FORM.match(answer.text.lstrip())
        if not opening or letter_of(opening) != answer.letter or not self._own_text_follows(answer, opening):
            return text
        given = [
            letter_of(form) if (form := LETTER_FORM.match(sentence)) else None for sentence in sentences(text)
        ]
        if answer.letter not in given or set(given) - {
            answer.letter,
            None,
        }:  # another letter given: no such shape
            return text
        kept = [
            sentence
            for sentence, letter in zip(sentences(text), given, strict=True)
            if letter != answer.letter
        ]
        return "\n".join(kept)

    @staticmethod
    def _own_text_follows(answer: Answer, opening: re.Match) -> bool:
        own = answer.choices.own(answer.letter)
        after = answer.text.lstrip()[opening.end() :].lstrip(AFTER_LETTER)
        return bool(own) and tokens(after[:NEAR])[: len(own)] == own


class ContentAfterAnswer(Rule):
    """After the clause that gave the answer, the output states one other choice's content, and never this
    one's, again and again (once, after a bare letter, which has no words of its own to weigh): no answer
    ("A\\n\\nA swimwear trend known as AI goggles has gained popularity" when AI goggles is D).

    >>> CONTENT_AFTER_ANSWER.check(Answer("A", "A\\n\\nThe plane landed in Pittsburgh.", _CHOICES))
    Reading(value=None, rule='letter-text-conflict')
    """

    name = "content-after-answer"
    patterns = (_CLAUSE_END,)
    gives_own = False
    also_gives = ("letter-text-conflict",)
    weighs_what_follows = True

    def check(self, answer: Answer) -> Reading | None:
        letter, choices, first = answer.letter, answer.choices, answer.first_clause_end
        stated = [choices.valid[index] for index in choices.content.statements(answer.weighed)]
        others = {other for other in stated if other != letter}
        # a bare letter has no words of its own to weigh against the content that follows: once is enough
        bare = first is not None and set(tokens(answer.text[: first.end()])) <= {
            letter.lower(),
            "answer",
            "option",
        }
        if letter not in stated and len(others) == 1 and len(stated) >= (1 if bare else REPEATED):
            return Reading(None, "letter-text-conflict")
        return None


class Tour(Rule):
    """After the clause that gave the answer, two or more sentences that each state one other choice's content
    are a tour of the choices, not an answer ("The woman king: Babylon\\n\\nThe woman king: Glass
    Onion\\n\\n..."); a sentence that states several others lists them, as evidence does, and is no stop.

    >>> TOUR.check(Answer("A", "New York.\\n\\nThe bus went to Baltimore.\\n\\nThe bus went to Pittsburgh.", _CHOICES))
    Reading(value=None, rule='cycle')
    """

    name = "tour"
    gives_own = False
    also_gives = ("cycle",)
    weighs_what_follows = True

    def check(self, answer: Answer) -> Reading | None:
        letter, choices = answer.letter, answer.choices
        toured: set[str] = set()
        for sentence in sentences(answer.weighed):
            in_sentence = {choices.valid[index] for index in choices.content.statements(sentence)} - {letter}
            if len(in_sentence) == 1:
                toured |= in_sentence
        if len(toured) >= 2:
            return Reading(None, "cycle")
        return None


class LetterTextConflictResolved(Rule):
    """A mismatched pair (a letter given another choice's words) set aside, the rest of the output commits to
    exactly one choice, stated and not merely spoken of, one of a pair's two, and states no other choice's
    content: that choice ("Baltimore\\n\\nThe answer is (B) Baltimore" reads C when Baltimore is C).

    >>> pairs = [Pair(0, 10, "A", "B")]
    >>> LETTER_TEXT_CONFLICT_RESOLVED.mends(Reading("B", "answer-is"), "\\n\\nThe answer is (B) Philadelphia.", pairs, _CHOICES)
    True
    >>> LETTER_TEXT_CONFLICT_RESOLVED.mends(Reading("C", "answer-is"), "\\n\\nThe answer is (C) Baltimore.", pairs, _CHOICES)
    False
    """

    name = "letter-text-conflict-resolved"

    def mends(self, resolved: Reading, rest: str, pairs: list[Pair], choices: Choices) -> bool:
        """Whether ``resolved``, the reading of ``rest`` (the output without its mismatched ``pairs``), mends
        them."""
        stated = {choices.valid[index] for index in choices.content.statements(rest)}
        if resolved.value is None or stated - {resolved.value}:  # the rest states another choice too
            return False
        if resolved.rule in ("choice-mention", "choice-paraphrase"):  # content merely spoken of mends no pair
            return False
        # nor does a sentence about the choice ("C)Snapchat\n\nSnapchat is a social media platform ..." with
        # Snapchat D): its text opens the sentence, where a stated answer stands on a line of its own
        if resolved.rule == "choice-text" and choices.exactly(rest.strip().split("\n")[0]) != resolved.value:
            return False
        # A pair that opens the output is its first answer, broken: a later answer mends it only when it is
        # stated (not merely spoken of) and is one of the pair's two choices ("A: After 6:00 p.m.\n\nThe
        # answer is (B)." reads B when B is After 6; "A) 15%\n\nThe answer is (D) 3%." with 15% B reads none,
        # and so does "A. Starship\n\nThe rocket's name is Starship." with Starship B).
        if any(resolved.value not in (pair.letter, pair.words) for pair in pairs):
            return False
        # A bare letter that repeats a pair's own letter restates the broken pair; it does not mend it ("A)
        # 2.4 million\n\nThe answer is A." with 2.4 million C reads none; "... is (A) 30%" with 30% A reads A).
        return not (resolved.value not in stated and any(resolved.value == pair.letter for pair in pairs))


NO_CHOICE_FITS = NoChoiceFits()
FIRST_LINE_ANSWER = FirstLineAnswer()
ANOTHER_COMMITMENT = AnotherCommitment()
ANSWER_GIVEN_TWICE = AnswerGivenTwice()
ECHO_AFTER_ANSWER = EchoAfterAnswer()
CONTENT_AFTER_ANSWER = ContentAfterAnswer()
TOUR = Tour()
LETTER_GIVEN_AGAIN = LetterGivenAgain()

#: What the checks that weigh what follows an answer set aside first, in order: the choices an output names only
#: to reject them, and the sentences that give its letter again.
WEIGHED_APART: tuple[Rule, ...] = (REJECTED_CHOICE, LETTER_GIVEN_AGAIN)
LETTER_TEXT_CONFLICT_RESOLVED = LetterTextConflictResolved()
