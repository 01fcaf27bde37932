"""The ``careful`` reader (the default): what a careful human reader would read in a ScrQA answer; its
ScrRec side is :mod:`scrambled_bench.metrics.readers.recovery`."""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from scrambled_bench.choices import LETTERS
from scrambled_bench.metrics.readers.common import Reading, check_arguments, check_output, parse_choices
from scrambled_bench.metrics.readers.content import ChoiceContent, clauses, sentences
from scrambled_bench.metrics.readers.recovery import read_recovery

# Typographic and guillemet quotes read as their ASCII counterparts.
_QUOTES = str.maketrans(
    {
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\uff02": '"',
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2039": "'",
        "\u203a": "'",
    }
)
# An emphasised letter ("**B**", "*(B)*", "`C`", "__A.__") is a strong way of naming it: made "(B)" before
# the remaining markdown marks are dropped, so that it stays distinguishable from an article.
_EMPHASISED_LETTER = re.compile(r"(\*{1,3}|_{1,3}|`+)\s*[(\[]?([A-E])[)\]]?[.:]?\s*\1(?![*_`])")
_MARKDOWN = re.compile(r"\*+|`+|_{2,}|^[ \t]*#+[ \t]*|^[ \t]*>[ \t]*", re.MULTILINE)
# "among A through D" (the prompt's own wording, often repeated) names letters without choosing one.
_LETTER_RANGE = re.compile(r"\b(?:among|from)\s+\(?[A-E]\)?\s*(?:through|to|-|\u2013)\s*\(?[A-E]\)?")

# Where a model starts repeating the prompt (or writing the next question of a few-shot prompt).
# A line that opens with a DREAM speaker's mark ("M: Good evening ...", "W: ...") copies the dialogue: M and W are
# never choice letters.
_ECHO = re.compile(
    r"(?<![A-Za-z])(?:Question|Choices|Options|Evidence|Dialogue|Context|Passage)\s*:|(?:^|(?<=\n))[MW]:[ \t]"
)

# A letter standing alone: what may follow it so that it is the letter and not the article "A" of
# "A map" or the initial of "D.C.".
_BARE_END = (
    # "C.Huntington Bank": a letter glued by its full stop to a capitalised word (not "D.C." or "U.S.")
    r"(?=\s*$|\s*\n|[):\]}]|[.,;!?](?![A-Za-z0-9])|\.(?=[A-Z][a-z])|\s*[\u2013\u2014]|\s+-\s|\s+\("
    r"|\s+(?:or|and|is|was|would|seems|appears|looks|fits|matches|because|since)\b)"
)
# A letter in any common quoting or bracketing, optionally inside LaTeX's \boxed{\textbf{...}}.
_LETTER_FORM = re.compile(
    r"(?:\$?\\boxed\s*\{\s*(?:\\(?:text|textbf|mathrm|mathbf)\s*\{\s*)?)?"
    # in brackets a lower-case letter is a letter too ("(b)"), bare it is a word ("a map")
    r"(?:\(\s*(?P<round>[A-Ea-e])\s*\)|\[\s*(?P<square>[A-Ea-e])\s*\]|\{\s*(?P<curly>[A-E])\s*\}"
    r"|\"\s*(?P<double>[A-E])\s*\"|'\s*(?P<single>[A-E])\s*'|(?P<bare>[A-E])" + _BARE_END + ")"
)
# "A: The answer is ...": "A:" is the answer's label when an answer statement follows it.
_A_LABEL_BEFORE_STATEMENT = r"(?i:(?:the\s+)?(?:correct\s+|final\s+|right\s+)?answer\b)"
# Labels that may stand before a leading letter: "Answer:", "Final answer -", "Option", "Choice".
_LABEL = re.compile(
    r"(?:(?:the\s+)?(?:final|correct|best|right|my)\s+)?(?:answer|option|choice|letter)\b\s*[:\-=\u2013\u2014]?\s*"
    # "A: (C) Cook", "A: The answer is (B).": the "A:" of a "Q: ... A: ..." format, when another letter or
    # an answer statement follows it
    r"|(?-i:A)\s*:\s*(?=[(\[][A-E][)\]]|[A-E](?:[).:]|\s*$)|" + _A_LABEL_BEFORE_STATEMENT + ")",
    re.IGNORECASE,
)
# Words that may stand between a label or an answer statement and the answer itself.
_FILLER = re.compile(
    r"(?:\s|[:,=\-\u2013\u2014$]|\\[(\[]|\b(?:therefore|thus|so|then|clearly|probably|likely|most|definitely|certainly|"
    r"indeed|actually|approximately|about|around|roughly|closest\s+to|close\s+to|option|choice|letter|answer|"
    r"it'?s|it\s+is|that|either|both|between|maybe|perhaps|possibly|even)\b)*",
    re.IGNORECASE,
)
# A generation that started mid-word: "s A." (the tail of "is"), "wer: B" (of "answer").
_CUT_OFF_LEAD_IN = re.compile(r"(?!(?:no|not|nor|or|and|but|if)\b)[a-z]{1,3}[:,]?\s+")
# Statements that commit to an answer: "the answer is", "Answer:", "I'd go with", "I think it's".
_ANSWER_STATEMENT = re.compile(
    # "The answer is based on the dialogue ...", "... is found in the passage" say where the answer comes from
    r"\b(?:answer|option|choice)(?:\s+(?:choice|option|letter))?\s*(?:is\b(?!\s+(?:based|found|derived)\s+(?:on|in|from)\b)"
    r"|would\s+be|should\s+be|must\s+be"
    r"|will\s+be|=)"
    # "Answer:", "Answer choice:", "Correct option:"; a bare "option:" introduces a list, not an answer
    r"|\banswer(?:\s+(?:choice|option|letter))?\s*:|\b(?:correct|final|best|right)\s+(?:option|choice)\s*:"
    r"|\b(?:closest|best|correct|right)\s+(?:one|match|fit)\s+is"
    # "it is closest to (A)", "the closest answer, which is (E)", "... = 0.4167, which is choice (B)"
    r"|\bclosest(?:\s+(?:answer|option|choice))*(?:\s*,?\s*which)?\s*(?:is|to|would\s+be)\b"
    r"|\bwhich\s+is\s+(?:answer\s+)?(?:choice|option)\b"
    # "The only choice that is a multiple of 36 is (A) 36.": a choice described, then its letter
    r"|\b(?:choices?|options?)\b[^.\n]{0,80}?\bis(?=\s+(?:choice\s+|option\s+)?[(\[][A-E][)\]])"
    # "..., so (B).", "Therefore, [C]": a conclusion that is only a letter
    r"|\b(?:so|therefore|thus|hence)\b,?(?=\s*(?:[(\[][A-E][)\]]|\$?\\boxed))"
    r"|\bI(?:\s+would|'d|\s+will|'ll)?\s+(?:go\s+with|choose|pick|select|opt\s+for)"
    r"|\bI(?:\s+(?:think|believe|guess|would\s+say)|'d\s+say)(?:\s+that)?(?:\s+it(?:'s|\s+is|\s+would\s+be))?",
    re.IGNORECASE,
)
_NEGATION_AFTER_STATEMENT = re.compile(r"(?:not|none|neither|unclear|unknown|impossible)\b", re.IGNORECASE)
# A letter named in a way that cannot be an article or an initial, anywhere in the text.
_NAMED_LETTER = re.compile(
    r"\((?P<round>[A-E])\)|\[(?P<square>[A-E])\]|\"(?P<double>[A-E])\"|'(?P<single>[A-E])'"
    r"|\b(?i:option|choice|letter|answer)\s+\(?(?P<labelled>[A-E])\b\)?"
    r"|\b(?P<verb>[A-E])\s+(?:is|seems|appears|looks|would\s+be)\s+(?:the\s+)?(?:most\s+)?"
    r"(?:correct|right|best|answer|likely|accurate|true)\b"
    # "..., the host who left the network, is D.": a bare letter is what the sentence ends by saying it is
    r"|\b(?:is|was)\s+(?P<copula>[A-E])(?=[ \t]*[.!]?[ \t]*(?:\n|$))"
    # a line that starts with the letter: "...explanation.\n\n**B) Microsoft**"
    r"|(?m:^[ \t]*(?P<line>[A-E])(?:[).:]|[ \t]*$))"
)
_NEGATED_BEFORE = re.compile(
    r"(?:\bnot|n't|\brather\s+than|\binstead\s+of|\bexcept|\bother\s+than|\bunlike|\bnor|\bneither|\bthan"
    r"|\b(?:neither|nor)\s+(?:does|do|is|are|would))"
    r"\s*(?:(?i:option|choice))?\s*$",
    re.IGNORECASE,
)
# Words that keep the last sentence of a worked solution from concluding with the letter it names.
_DOUBT = re.compile(r"^\s*(?:if|whether|suppose|assuming)\b|\?|\b(?:might|may|could)\s+be\b", re.IGNORECASE)
_HYPOTHETICAL = re.compile(r"\s*(?:if|suppose|assuming|had)\b", re.IGNORECASE)
# "Let's check each answer choice:" goes through the choices; it does not state one.
_NOT_A_STATEMENT_AFTER = re.compile(
    r"\b(?:each|every|all|other|possible|following|these|those)\s*$", re.IGNORECASE
)
_NEGATED_AFTER = re.compile(
    r"\s*(?:is|are|seems|would\s+be|can\s+be|must\s+be)\s+(?:not\b|incorrect|wrong|false|unlikely|ruled|eliminated)",
    re.IGNORECASE,
)
# The same after a letter named in passing and its choice's words: "(D) 12 does not work".
_FAILS_AFTER = re.compile(
    r"\W{0,3}(?:\w+\W+){0,2}?(?:does\s+not|doesn't|do\s+not|don't|fails?|cannot|can't|won't|isn't|is\s+not)\b",
    re.IGNORECASE,
)
# Another answer offered beside the one read: "(A) or (B)", "A, B and C", "Baby formula or (C)".
_ALTERNATIVE = re.compile(r"(?:\b(?:or|and/or|and|vs\.?|versus|nor)\s+|^\s*[,/]\s*)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
_BOXED = re.compile(r"\\boxed\s*\{")
_TOKEN = re.compile(r"[^\W_]+")
# How often an output must state a choice's content, in other words, for that to be its answer; once is
# enough in a short answer (this many sentences at most).
_REPEATED = 2
_SHORT_ANSWER = 3
# The most words a choice's label may have after its letter ("C) 371 days"): longer, it is an explanation.
_LABEL_WORDS = 12
# a label that opens with a number states that number ("40% of the total of 100,000")
_LEADING_NUMBER = re.compile(r"\s*[$\u00a3\u20ac]?\s*\d[\d,]*(?:\.\d+)?\s*(?:%|percent\b)?")
# How far after a letter or a statement the reader looks for the words that go with it (a choice's text,
# "or (B)"): far more than any choice's text, and it keeps reading a long degenerate output linear.
_NEAR = 400
# After a number, more of a number or of a calculation: "6 - 2 = 4" does not state the choice "6".
_GOES_ON = re.compile(r"\s*(?:[-+*/^=:\u00d7\u00f7]|[.,]?\d)")
# A calculation or a compound quantity, whose numbers are not the choices they equal ("6 - 2 = 4").
_CALCULATION = re.compile(
    r"[=+*/^\u00d7\u00f7]|\d\s*[-\u2013]\s*\d|\b(?:and|plus|minus|times)\s+\d", re.IGNORECASE
)
# After any choice text, another quantity joined to it: "2 hours and 30 minutes" is not "2 hours".
_GOES_ON_WITH_NUMBER = re.compile(r"\s+(?:and|plus|minus|times)\s+\d", re.IGNORECASE)
# Words that, up to three words before a choice's text, keep it from being the answer ("never mentions
# Microsoft", "doesn't say", "whether it is").
_NEGATING = {"not", "no", "nor", "never", "neither", "than", "instead", "t", "cannot", "without", "except"}
_NEGATING |= {"whether", "if", "unlike"}
# A scrambled word a model copied from the evidence: a lower-case word that opens with consonants no English
# word opens with ("ttah", "hmwo", "rdnsoug"), or holds four consonants in a row ("omcndutse"), or none of
# a, e, i, o, u, y ("tcnp"), or a capital inside it ("seNapl", "iBtLyMpn", the substitution type's words).
# A capitalised word may be a name ("Nguyen", "Tsai"), so only its inner capitals count.
_WORD = re.compile(r"\b[A-Za-z]{3,}\b")
# fmt: off
_ONSETS = frozenset({
    "bl", "br", "ch", "cl", "cr", "dr", "dw", "fl", "fr", "gl", "gr", "gn", "kn", "kl", "kr", "ph", "pl", "pr",
    "ps", "qu", "sc", "sh", "sk", "sl", "sm", "sn", "sp", "st", "sw", "th", "tr", "tw", "wh", "wr", "sch", "scr",
    "shr", "spl", "spr", "str", "thr", "squ", "chr", "phr", "sph",
})
# fmt: on
_ONSET = re.compile(r"[^aeiouy]+")
_CONSONANT_RUN = re.compile(r"[^aeiouy]{4}")
_CAMEL_CASE = re.compile(r"(?:[A-Z][a-z]+)+")  # "McDonald", "PlayStation": names, not scrambles
# An output is a scrambled echo of the evidence when at least this many of its words, and this share of
# them, are scrambled; none of the SmolLM2 outputs on unscrambled evidence comes near.
_SCRAMBLED_WORDS = 3
_SCRAMBLED_SHARE = 0.1
# The prompt's own last line, repeated without an answer after it.
_PROMPT_LEAD_IN = re.compile(r"Based on the \w+, among the choices, the answer is\W*$", re.IGNORECASE)
_LEADING_SYMBOLS = re.compile(r"^[^\w(\[{\"'\\$]+")
# "A:" at the start, a question-and-answer format's label; and how many words make what follows a sentence.
_ANSWER_LABEL = re.compile(r"A[ \t]*:[ \t]*(?![(\[]?[A-E](?:[)\].:]|\s*$))")
_SENTENCE_WORDS = 3
# A line that starts with a capital and the mark of a listed option ("A) ...", "(B) ...", "C: ...").
_LISTED_LINE = re.compile(r"^[ \t]*[(\[]?([A-Z])[)\].:][^\n]*", re.MULTILINE)
# A declaration that no choice is right, which takes back an answer given before it.
_NO_CHOICE_FITS = re.compile(
    r"\bnone\s+of\s+(?:the\s+|these\s+)?(?:above|options|choices|answers|answer\s+choices|given\s+(?:options|choices))\b"
    r"|\bno\s+(?:correct|right|valid)\s+(?:answer|option|choice)\b|\bcannot\s+be\s+determined\b"
    r"|\b(?:is|are)\s+not\s+(?:among|in|one\s+of)\s+the\s+(?:given\s+)?(?:choices|options|answer\s+choices)\b",
    re.IGNORECASE,
)
# Two letters given together as the answer, bare: "... are A and C."
_TWO_BARE_LETTERS = re.compile(r"\b(?:is|are|be)\s+[A-E]\s*(?:,|and|or|&)\s*[A-E]\b")
# A letter given to the choice text just before it: "The food they like and dislike is (B)."
_LETTER_AFTER_TEXT = re.compile(r"[ \t]*(?:(?:is|=|:|-|\u2013)[ \t]*)?[(\[]([A-E])[)\]]")
# A bracketed letter anywhere ("... (D)IOC"), and what may follow its choice's text for it to be a label.
_LETTER_LABELS = re.compile(r"[(\[]([A-E])[)\]]")
_LABEL_ENDS = re.compile(r"[\s.,;:!\"']*(?:$|\n|[(\[][A-E][)\]])")
# What may stand between a letter and the words that go with it ("C) 371 days", "(B): Microsoft").
_AFTER_LETTER = " )].:-\u2013\u2014\t"
# a line that gives a letter nothing but another letter as its text ("C)D", "B: A")
_BARE_LETTER = re.compile(r"\(?([A-E])\)?[ \t]*(?=\n|$)")
# The end of a clause: where the words that gave an answer end.
_CLAUSE_END = re.compile(r"[.,;:!?\n]+(?=\s|$)|\n")
# One line that goes through three options or more in order from A: "A)Orange (B)Lime (C)Raspberry".
_INLINE_RECITAL = re.compile(
    r"^[ \t]*[(\[]?A[)\].:][^\n(\[]*[(\[]B[)\]][^\n(\[]*[(\[]C[)\]][^\n]*", re.MULTILINE
)
# Three lettered options or more in a row within a line, in any order and after any words ("The answer is
# A) Australia (B) South Africa (C) New Zealand (D) Brazil"): a shuffled recital. The words between two
# letters end no sentence ("(C). Not (A), not (B)." is no recital).
_LABELLED_OPTION = r"[(\[]?\b[A-Z][)\]][ \t]*(?:[^\n()\[\].!?]|[.!?](?![ \t\n]|$))*"
_SHUFFLED_RECITAL = re.compile(rf"(?:{_LABELLED_OPTION}){{3,}}")
# A line that starts with a letter and its label ("B) Washington"): an answer given again, or another one.
_LETTER_LINE = re.compile(
    r"^[ \t]*(?!A[ \t]*:[ \t]*" + _A_LABEL_BEFORE_STATEMENT + ")"
    r"(?:A[ \t]*:[ \t]*(?=[(\[]?[A-E](?:[)\].:]|[ \t]*$)))?[(\[]?(?P<line>[A-E])(?:[)\].:]|\.(?=[A-Z][a-z])|[ \t]*$)",
    re.MULTILINE,
)


def _letter_of(match: re.Match) -> str:
    return next(value for value in match.groupdict().values() if value).upper()


def _tokens(text: str) -> list[str]:
    """Lower-case words and numbers: how a choice's text is compared, whatever its case and punctuation."""
    return _TOKEN.findall(text.translate(_QUOTES).lower())


class _Choices:
    """The choices of one question as the careful reader compares them."""

    def __init__(self, choices: Sequence[str]):
        self.valid = LETTERS[: len(choices)]
        self.tokens = [_tokens(choice) for choice in choices]
        self._texts = choices

    @functools.cached_property
    def content(self) -> ChoiceContent:
        """What each choice says, in distinctive words (made when a rule first needs it)."""
        return ChoiceContent(self._texts)

    def stated(self, text: str) -> str | None:
        """The letter of the choice that the sentence ``text`` begins states by its content, if the sentence
        is one short clause, a label ("371 days", "the Disneys"), and states exactly one choice."""
        sentence = clauses(_sentence_rest(text))
        if len(sentence) != 1 or len(_tokens(sentence[0])) > _LABEL_WORDS or _CALCULATION.search(sentence[0]):
            return None
        if _NAMED_LETTER.search(sentence[0]):  # "this is (A) 20%": the letter speaks, not the words
            return None
        leading = _LEADING_NUMBER.match(sentence[0])
        if leading and self.content.stated(leading.group()) is None:
            return None  # "40% of the total ticket value of 100,000": the label states 40%, no choice
        index = self.content.stated(sentence[0])
        return None if index is None else self.valid[index]

    def exactly(self, text: str) -> str | None:
        """The letter of the one choice whose text ``text`` is (after normalising), if exactly one."""
        wanted = _tokens(text)
        letters = {self.valid[i] for i, tokens in enumerate(self.tokens) if tokens and tokens == wanted}
        return letters.pop() if len(letters) == 1 else None

    def prefix(self, text: str) -> tuple[str, int] | None:
        """The letter of the longest choice text ``text`` starts with, and how many words it spans.

        ``None`` when none does, or when two choices spelled alike tie for the longest.
        """
        words = _tokens(text[:_NEAR])
        matches = sorted(
            (
                (len(tokens), self.valid[i])
                for i, tokens in enumerate(self.tokens)
                if tokens
                and words[: len(tokens)] == tokens
                and not _goes_on(tokens, _words_after(text, len(tokens)))
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

        >>> _Choices(["Angela Bassett", "Kerry Condon", "Jamie Lee Curtis", "Stephanie Hsu"]).surnames["C"]
        'Curtis'
        >>> _Choices(["New York", "Los Angeles"]).surnames
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
            for other, tokens in zip(self.valid, self.tokens, strict=True)
            if other != letter and word.lower() in tokens
        }
        return {letter: word for letter, word in names.items() if word not in shared}

    def surnames_named(self, text: str) -> dict[str, int]:
        """How often ``text`` names each person-choice by its surname (see :attr:`surnames`), by letter, for
        those it names.

        >>> _Choices(["Angela Bassett", "Kerry Condon"]).surnames_named("Bassett won; Bassett wept.")
        {'A': 2}
        """
        counts = {
            letter: len(re.findall(rf"\b{re.escape(surname)}\b", text))
            for letter, surname in self.surnames.items()
        }
        return {letter: count for letter, count in counts.items() if count}

    def same_as(self, other: Sequence[str]) -> bool:
        """Whether ``other`` (choices a model echoed) are these, the last one possibly cut off."""
        echoed = [_tokens(choice) for choice in other]
        if not echoed or len(echoed) > len(self.tokens):
            return False
        *complete, last = echoed
        own = self.tokens[: len(echoed)]
        return complete == own[:-1] and own[-1][: len(last)] == last


def _statements(text: str) -> list[re.Match]:
    """The statements that commit to an answer in ``text``, in order of where they start.

    They may overlap: in "The closest answer choice to this value is (A)" both "closest ... to" (which
    reads nothing) and "choice ... is" (which reads A) are statements.
    """
    statements = []
    position = 0
    while match := _ANSWER_STATEMENT.search(text, position):
        position = match.start() + 1
        if _NOT_A_STATEMENT_AFTER.search(text, max(0, match.start() - 12), match.start()):
            continue
        window = max(0, match.start() - 300)  # a sentence's start is looked for nearby only
        starts = [end.end() for end in _SENTENCE_END.finditer(text, window, match.start())]
        sentence_start = starts[-1] if starts else window
        end = _SENTENCE_END.search(text, match.end(), match.end() + _NEAR)
        if end and text[end.start()] == "?":
            continue  # "Could the answer be (B)?" asks; it does not state
        if _HYPOTHETICAL.match(text, sentence_start) and re.search(
            r"\bwould\b", match.group(), re.IGNORECASE
        ):
            continue  # "If x were 4, the answer would be (B)."
        statements.append(match)
    return statements


def _goes_on(tokens: list[str], after: str) -> bool:
    """Whether the words after a choice's text make it part of a longer quantity."""
    return bool((tokens[-1].isdigit() and _GOES_ON.match(after)) or _GOES_ON_WITH_NUMBER.match(after))


def _without_answer_label(text: str, choices: _Choices) -> str:
    """``text`` without the "A:" of a question-and-answer format that stands before a sentence.

    "A: Linda ekpsas English ... The answer is (C)" labels an answer with "A:", as a transcript labels a
    speaker: when the words after "A:" are a sentence that is not choice A's (they neither begin with its
    text nor state its content), the "A" is no letter.

    >>> choices = _Choices(["Amazon", "Microsoft", "Meta", "Google"])
    >>> _without_answer_label("A: The evidence does not say.", choices)
    'The evidence does not say.'
    >>> _without_answer_label("A: Amazon, it bought the firm.", choices)
    'A: Amazon, it bought the firm.'
    """
    label = _ANSWER_LABEL.match(text)
    if not label:
        return text
    after = text[label.end() :]
    words = _tokens(_sentence_rest(after))
    own = choices.tokens[0]
    if len(words) < _SENTENCE_WORDS or (own and words[: len(own)] == own) or choices.stated(after):
        return text
    # "A: The man looking for Math 51B is ..." with Math 51B C: a sentence that states a choice's content is
    # given to the letter, which the rules then weigh against it
    if choices.content.statements(_sentence_rest(after)):
        return text
    # "A: The woman returned the dress because it was not her liking." with A "... is not her liking.": the
    # sentence speaks of A's content, partly, and of no other choice's, so the "A" is the letter it answers
    if choices.content.partly(_sentence_rest(after)) == 0:
        return text
    return after


def _without_recitals(text: str, choices: _Choices) -> tuple[str, bool]:
    """``text`` without the lists of the options it recites ("A. ...\\nB. ...\\nC. ..."), and whether it had one.

    A recital is two or more lines in a row (blank lines between them allowed) that start with the letters
    in order from A, whatever follows them: the model copied (or rewrote) the options, which answers
    nothing. A model in a loop may go on past the question's letters ("D: He is calling.\\nE: He is ill.\\nF:
    He is ill. ..."), and so does the recital. Three or more options in order from A on one line ("A)Orange
    (B)Lime (C)Raspberry (D)Blueberry") are a recital too.

    >>> choices = _Choices(["Amazon", "Microsoft", "Meta"])
    >>> _without_recitals("A) Amazon\\nB) Meta\\n\\nThe answer is (B).", choices)
    ('\\n\\n\\nThe answer is (B).', True)
    >>> _without_recitals("A)Orange (B)Lime (C)Raspberry\\nThe answer is (C).", choices)
    ('\\n\\nThe answer is (C).', True)
    >>> _without_recitals("A) Amazon, because ...\\nThe answer is (A).", choices)
    ('A) Amazon, because ...\\nThe answer is (A).', False)
    """
    recitals: list[tuple[int, int]] = []
    start, end, following = 0, -1, ""  # the run of listed lines being followed, and its next letter
    for line in _LISTED_LINE.finditer(text):
        letter = line.group(1)
        if letter == following and not text[end : line.start()].strip():
            end, following = line.end(), chr(ord(letter) + 1)
            continue
        if following > "B":  # the run that ends here had two lines or more
            recitals.append((start, end))
        start, end, following = (line.start(), line.end(), "B") if letter == "A" else (0, -1, "")
    if following > "B":
        recitals.append((start, end))
    recitals += [line.span() for line in _INLINE_RECITAL.finditer(text)]
    recitals += [
        _line_of(text, run.start(), run.end())  # the whole line: "Typhoon Doksuri (C)Typhoon Khanun (D)..."
        for run in _SHUFFLED_RECITAL.finditer(text)
        if len(set(re.findall(r"\b([A-Z])[)\]]", run.group()))) >= 3
        and _names_choices(run.group(), choices) >= 3
    ]
    if not recitals:
        return text, False
    kept, position = [], 0
    for start, end in sorted(recitals):
        if start < position:  # recitals of two kinds that overlap: their union is set aside
            position = max(position, end)
            continue
        kept += [text[position:start], "\n"]
        position = end
    return "".join(kept) + text[position:], True


def _line_of(text: str, start: int, end: int) -> tuple[int, int]:
    """Where the line (or lines) holding ``text[start:end]`` start and end."""
    line_end = text.find("\n", end)
    return text.rfind("\n", 0, start) + 1, len(text) if line_end < 0 else line_end


def _names_choices(text: str, choices: _Choices) -> int:
    """How many of the choices ``text`` names by their whole text (all of them, for a list of the options)."""
    words = _tokens(text)
    return sum(bool(_undenied(words, tokens)) for tokens in choices.tokens)


def _words_after(text: str, count: int) -> str:
    """``text`` after its first ``count`` words (the words :func:`_tokens` sees)."""
    if count <= 0:
        return text
    words = _TOKEN.finditer(text)  # quote marks are no words, so translating them would change nothing
    last = next(itertools.islice(words, count - 1, None), None)
    return text[last.end() :] if last else text


def _sentence_rest(text: str) -> str:
    """The rest of the sentence ``text`` goes on with (its first ``_NEAR`` characters at most)."""
    end = _SENTENCE_END.search(text, 0, _NEAR)
    return text[: end.start()] if end else text[:_NEAR]


def _mends(resolved: Reading, rest: str, pairs: list[_Pair], choices: _Choices) -> bool:
    """Whether ``resolved``, the reading of ``rest`` (the output without its mismatched ``pairs``), mends them:
    a later answer that commits to exactly one choice, stated and not merely spoken of, one of a pair's two.

    >>> choices = _Choices(["Denver", "Baltimore", "Boston"])
    >>> pairs = [_Pair(0, 10, "A", "B")]
    >>> _mends(Reading("B", "answer-is"), "\\n\\nThe answer is (B) Baltimore.", pairs, choices)
    True
    >>> _mends(Reading("C", "answer-is"), "\\n\\nThe answer is (C) Boston.", pairs, choices)
    False
    """
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


def _holds_another_text(rest: str, letter: str, choices: _Choices) -> bool:
    """Whether the sentence that ``rest`` begins holds another choice's whole text (two words or more, not
    negated) after ``letter``'s: "The food they like and dislike is the taste of food." states two choices.

    >>> _holds_another_text(" is the taste of food.", "C", _Choices(["The taste of food.", "The cost.", "The food."]))
    True
    >>> _holds_another_text(" is not the taste of food.", "C", _Choices(["The taste of food.", "The cost.", "The food."]))
    False
    """
    words = _tokens(_sentence_rest(rest))
    return any(
        other != letter and len(tokens) >= 2 and _undenied(words, tokens)
        for other, tokens in zip(choices.valid, choices.tokens, strict=True)
    )


def _offers_another(rest: str, letter: str, choices: _Choices) -> bool:
    """Whether the sentence that goes on with ``rest`` offers an answer other than ``letter`` beside it."""
    rest = _sentence_rest(rest)
    for alternative in _ALTERNATIVE.finditer(rest):
        after = rest[alternative.end() :].lstrip()
        after = after[_FILLER.match(after).end() :] if after[:1].islower() else after
        form = _LETTER_FORM.match(after)
        if form and _letter_of(form) != letter:
            return True
        spelled = choices.prefix(after)
        if spelled and spelled[0] != letter and not form:
            return True
    return False


@dataclass
class _Verdict:
    """What the search for an answer noticed on its way: whether an answer was offered beside another."""

    hedged: bool = False


#: The rules a ScrQA reading names: those that read a letter, then those that say why none was read. Each is
#: a section of the rulebook, docs/readers_disagreements.md, and a test keeps the two in step.
CHOICE_RULES = (
    "choice-text",
    "leading-letter",
    "cut-off-lead-in",
    "answer-is",
    "named-letter",
    "choice-mention",
    "choice-paraphrase",
    "boxed",
    "answer-after-echo",
    "letter-text-conflict-resolved",
    # no answer, and why
    "empty",
    "prompt-echo",
    "scrambled-echo",
    "recital",
    "hedge",
    "ambiguous",
    "cycle",
    "letter-text-conflict",
    "letter-outside-choices",
    "no-answer",
)


class CarefulReader:
    """What a careful human reader reads as the model's answer. The rulebook, docs/readers_disagreements.md,
    has every rule with examples and how it differs from the paper's parse.

    ScrQA on RealtimeQA and DREAM (zero-shot), rules in priority order; the first that reads decides:

    1. "empty": nothing but whitespace and markdown.
    2. Only what comes before the model starts repeating the prompt counts (a "Question:", "Choices:",
       "Evidence:", "Dialogue:" ... marker, or a DREAM speaker's "M:" or "W:" opening a line): "B. Question: ..." reads B. If nothing before it answers:
       "answer-after-echo" where the echo restates this very question (its "Choices:" are these choices)
       and then answers it; otherwise "prompt-echo" (a pure echo, or a new question the model made up).
       The prompt's "among A through D" never counts as naming letters.
    3. "choice-text": the whole output is one choice's text, case and punctuation aside (“Red squirrels”
       for "Red squirrels."). Lines that recite the options in letter order ("A: ...\\nB: ...") are set
       aside, whatever their text, and so is a line listing three lettered options or more in any order that
       names three choices ("The answer is A) Australia (B) South Africa (C) New Zealand"); a recital and
       nothing else is "recital".
    4. "leading-letter": the output starts with a letter in any common quoting or bracketing ("(B)",
       "[B]", "(b)", "**B**", "B)", "B:", "B.", "'C'", "“B”: ...", "«A»", "\\boxed{B}", "Option B",
       "Answer: B", "A: (B)", "Final answer - (C)"), after bullets or emoji if any. A capital followed by a
       word is the article or a pronoun ("A map is ...", "I think ..."), not a letter. An "A:" before a
       sentence is a question-and-answer label unless the sentence speaks of A's content and of no other
       choice's ("A: The woman returned the dress because it was not her liking."), or states any choice's
       content, against which the letter is then weighed. "cut-off-lead-in":
       the same after a fragment of a word ("s A.": the generation began mid-word).
    5. "choice-text": the output starts with a choice's text and goes on ("Ground beef, according to
       ...", also after "It's" or "Probably"); the longest such choice wins, two spelled alike tie. A
       sentence that goes on to another choice's whole text offers both ("The food they like and dislike
       is the taste of food.").
    6. "answer-is": the first statement that commits to an answer, anywhere ("the answer is (C)",
       "Answer: B", "the correct option is D", "I'd go with", "I think it's", "so (B).", "closest to (A)",
       "which is choice (B)", "the only choice that fits is (A)"), followed by a letter form, a choice's
       text or a short clause that states one choice's content ("the answer is Disneys."). Not
       statements: "Let's check each option:" (goes through the choices), a question ("Could the answer
       be (B)?"), a hypothesis ("If x were 4, the answer would be (B).") and a source ("The answer is based
       on the dialogue ...").
    7. "named-letter": the only letter named unmistakably ("(A)", "[A]", "'A'", "Option A", "A is
       correct", or a letter opening a line of its own); letters ruled out ("not (B)", "(B) is wrong")
       do not count. Two or more: "ambiguous".
    8. "choice-mention": a short answer (three sentences at most) that states exactly one choice, once: its
       text, not after a negation ("They are in a library." reads "In a library."; "The evidence never
       mentions Microsoft." reads nothing), or its content in other words
       (:mod:`~scrambled_bench.metrics.readers.content`: "The woman is tired of her present job." reads
       "She is tired of her present work.").
    9. "choice-paraphrase": no letter, but one choice's content stated again and again (two clauses or
       more), and no other choice's.
    10. Nothing read: "hedge" if an answer was offered beside another on the way, "recital", "prompt-echo"
        if the output only repeats the prompt's last line, "scrambled-echo" if it copies the scrambled
        evidence back ("A toddler ltitadfneir White House rdnsoug": rules 8 and 9 do not read such an
        echo, whatever choice it names in passing), else "no-answer".

    Every letter read is checked: one that is not among the choices gives no answer
    ("letter-outside-choices"). A letter whose words name another choice ("(C) Microsoft" when Microsoft is
    B, "C) 371 days" when D is 371), here or anywhere in the output, commits to nothing: the output is read
    again without such pairs, and what the rest commits to, if exactly one choice and no other choice's
    content is stated, is read ("letter-text-conflict-resolved": "Baltimore\\n\\nThe answer is (B)
    Baltimore" reads C when Baltimore is C); otherwise no answer ("letter-text-conflict", also for an output
    that after its letter states another choice's content again and again). One offered beside another in the same sentence
    ("(A) or (B)", "either A or C", "Red squirrels or pine martens", but not the choice's own words, as in
    "(C) Both A and B") is no commitment: the search goes on down the rules. One the output contradicts by
    committing to another choice elsewhere ("Answer: (B) ... Answer: (C)") is no answer: "cycle". What an
    output says after an answer it has given twice, and a scrambled echo after its answer, take nothing back. A choice's
    text given another letter ("Measles (D)" when Measles is A) is "letter-text-conflict" too, and so is a bare
    letter followed by another choice's content ("A\n\nA trend known as AI goggles ..." when AI goggles is D),
    and a letter named on a line that states another choice's content and not its own.
    A pair is mended only by a stated answer, not by content spoken of, and only when every pair names the
    choice the rest commits to ("A\n\nThe answer is (B) Ground beef." with Ground beef C reads none), and a
    sentence about the choice mends none ("C)Snapchat\n\nSnapchat is ..." with Snapchat D); a bare
    letter that repeats a pair's own letter mends nothing ("A) 2.4 million\n\nThe answer is A." with 2.4
    million C). A short first line that gives one choice's text, alone or in a list separated by commas or
    colons, is an answer a letter for another choice contradicts ("Dusty, New York City\n\nThe answer is D." with New York
    City C reads none).

    AQuA (chain of thought): rule 2's cut, then "answer-is": the answer of the last statement that states
    one ("the answer is (C)", "... C", "\\boxed{C}", the choice's text, "The closest answer choice is
    (D)"), "hedge" if that statement hedges; then "boxed": the last ``\\boxed{...}`` holding a letter or a
    choice's text; then "named-letter": the one letter the last sentence names and does not rule out
    ("Since choice (C) works, ...", "... = (A)."); then "no-answer". A number that goes on ("the answer is
    6 - 2 = 4") is not the choice "6". A worked solution may correct itself: no cycle is looked for.

    Knowingly left unread (no answer rather than a guess): a bare lower-case letter ("b"), part of a
    choice's text ("A restaurant" for "At a restaurant."), half of a choice's distinctive words ("Burgers"
    for "Burger King"), a choice mentioned once inside a longer explanation, a synonym beyond a shared stem
    or world knowledge ("the Crucible" for the World Snooker Championship), an equivalent quantity ("2
    hours and 30 minutes" for "2.5 hours").

    ScrRec: see :meth:`read_recovery`.

    >>> careful = CarefulReader()
    >>> choices = ["Salad dressing", "Baby formula", "Ground beef", "Whole milk"]
    >>> careful.read_choice("**B**", choices, dataset="realtimeqa")
    Reading(value='B', rule='leading-letter')
    >>> careful.read_choice(" B.\\nQuestion: Which product ...", choices, dataset="realtimeqa")
    Reading(value='B', rule='leading-letter')
    >>> careful.read_choice("“Ground beef”", choices, dataset="realtimeqa")
    Reading(value='C', rule='choice-text')
    >>> careful.read_choice("Based on the evidence, the answer is (D).", choices, dataset="realtimeqa")
    Reading(value='D', rule='answer-is')
    >>> careful.read_choice("(C) Baby formula", choices, dataset="realtimeqa")
    Reading(value=None, rule='letter-text-conflict')
    >>> careful.read_choice("Baby formula\\n\\nThe answer is (C) Baby formula.", choices, dataset="realtimeqa")
    Reading(value='B', rule='letter-text-conflict-resolved')
    >>> careful.read_choice("(A) or (B)", choices, dataset="realtimeqa")
    Reading(value=None, rule='hedge')
    >>> careful.read_choice("A map is not mentioned.", choices, dataset="realtimeqa")
    Reading(value=None, rule='no-answer')
    >>> careful.read_choice("x = 12, so the answer is \\\\boxed{E}.", list("12345"), dataset="aqua")
    Reading(value='E', rule='answer-is')
    """

    name = "careful"

    def read_choice(self, output: str, choices: Sequence[str], *, dataset: str) -> Reading:
        """The letter a careful human reads as ``output``'s answer; ``value`` None with the reason."""
        answer_format = check_arguments(output, choices, dataset)
        options = _Choices(choices)
        text = _LETTER_RANGE.sub("among the choices", _prepare(output))
        if not text.strip(" \t\r\n.,:;-"):
            return Reading(None, "empty")
        echo = _ECHO.search(text)
        region = text[: echo.start()] if echo else text
        read = self._read_chain_of_thought if answer_format.chain_of_thought else self._read_zero_shot
        reading = read(region, options)
        if reading.value is not None or not echo or reading.rule not in ("no-answer", "hedge"):
            return reading
        # Nothing answered before the model began to repeat the prompt: it may have restated this question
        # and answered it, or only echoed the prompt (or asked a new question) and never answered.
        after_echo = self._read_after_echo(text[echo.start() :], options, answer_format.chain_of_thought)
        if after_echo is not None:
            return after_echo
        return reading if region.strip(" \t\r\n.,:;-\"'()") else Reading(None, "prompt-echo")

    # ------------------------------------------------------------ zero-shot

    def _read_zero_shot(self, region: str, choices: _Choices) -> Reading:
        # leading punctuation, bullets, arrows and emoji ("✅ B", "-> (C)") carry no answer
        text = _LEADING_SYMBOLS.sub("", region.strip())
        if not text:
            return Reading(None, "no-answer")
        spelled = choices.exactly(text)
        if spelled:
            return Reading(spelled, "choice-text")
        text, recited = _without_recitals(text, choices)
        text = _without_answer_label(_LEADING_SYMBOLS.sub("", text.strip()), choices)
        reading = self._read_by_rules(text, choices, recited)
        if reading.rule != "letter-text-conflict":
            return reading
        # A letter given with another choice's words commits to neither; what the rest of the output commits
        # to, if it commits to exactly one choice, is the answer ("Baltimore\n\nThe answer is (B) Baltimore"
        # with Baltimore C reads C).
        pairs = _mismatched_pairs(text, choices)
        if not pairs:
            return reading
        rest = _cut(text, [(pair.start, pair.end) for pair in pairs])
        resolved = self._read_by_rules(_LEADING_SYMBOLS.sub("", rest.strip()), choices, recited)
        if not _mends(resolved, rest, pairs, choices):
            return reading
        return Reading(resolved.value, "letter-text-conflict-resolved")

    def _read_by_rules(self, text: str, choices: _Choices, recited: bool) -> Reading:
        verdict = _Verdict()
        letter_rules = (
            self._leading_letter,
            self._leading_choice_text,
            self._first_statement,
            self._named_letter,
        )
        content_rules = (self._mentioned_choice, self._paraphrased_choice)
        echo = False
        for rule in (
            *letter_rules,
            *content_rules,
        ):  # in priority order; a hedge seen on the way is remembered
            # a scrambled echo of the evidence states no choice by its content, whatever words it shares with
            # one (looked for only once no letter rule has read, as most outputs are read before)
            if rule is content_rules[0] and (echo := _is_scrambled_echo(text)):
                break
            reading = rule(text, choices, verdict)
            if reading is not None:
                if reading.value is not None:
                    return _contradiction(reading.value, text, choices) or reading
                return reading
        if verdict.hedged:
            return Reading(None, "hedge")
        if recited and not text.strip():
            return Reading(None, "recital")
        if echo:
            return Reading(None, "scrambled-echo")
        return Reading(None, "prompt-echo" if _PROMPT_LEAD_IN.search(text) else "no-answer")

    @staticmethod
    def _leading_letter(text: str, choices: _Choices, verdict: _Verdict) -> Reading | None:
        for rule in ("leading-letter", "cut-off-lead-in"):
            start = 0
            if rule == "cut-off-lead-in":
                fragment = _CUT_OFF_LEAD_IN.match(text)
                if not fragment:
                    return None
                start = fragment.end()
            label = _LABEL.match(text, start)
            start = _FILLER.match(text, label.end() if label else start).end()
            form = _LETTER_FORM.match(text, start)
            if form:
                return _judge_letter(_letter_of(form), text[form.end() :], rule, choices, verdict)
        return None

    @staticmethod
    def _leading_choice_text(text: str, choices: _Choices, verdict: _Verdict) -> Reading | None:
        for start in (0, _FILLER.match(text).end()):  # "Red squirrels, ...", "It's probably red squirrels."
            spelled = choices.prefix(text[start:])
            if spelled:
                letter, words = spelled
                after = _words_after(text[start:], words)
                labelled = _LETTER_AFTER_TEXT.match(after)
                if labelled and labelled.group(1) != letter:  # "The food they like is (B)." with that food C
                    return Reading(None, "letter-text-conflict")
                if _offers_another(after, letter, choices) or _holds_another_text(after, letter, choices):
                    verdict.hedged = True
                    return None
                return Reading(letter, "choice-text")
        return None

    @staticmethod
    def _first_statement(text: str, choices: _Choices, verdict: _Verdict) -> Reading | None:
        for statement in _statements(text):
            reading = _read_stated(text[statement.end() :], choices, verdict)
            if reading is not None:
                return reading
        return None

    @staticmethod
    def _named_letter(text: str, choices: _Choices, verdict: _Verdict) -> Reading | None:
        named = _named_letters(text, choices)
        if not named:
            return None
        valid = [letter for letter in named if letter in choices.valid]
        if not valid:
            return Reading(None, "letter-outside-choices")
        if len(named) == 1:
            letter = valid[0]
            if _mismatched_words(letter, text[named[letter] :], choices) is not None:
                return Reading(None, "letter-text-conflict")  # "... is (C) The coming exams." with exams B
            # the line that names it, and no other letter, states another choice's content and not its own
            # ("The 13th Amendment, which abolished slavery, ... (D)" with the 13th Amendment C); a line that
            # rules letters out ("(A) is wrong ... that leaves (B)") reasons, and pairs no letter with content
            start, end = _line_of(text, named[letter], named[letter])
            line = text[start:end]
            said = {choices.valid[index] for index in choices.content.statements(line)}
            if said and letter not in said and len(_NAMED_LETTER.findall(line)) == 1:
                return Reading(None, "letter-text-conflict")
            if _offers_another(text[named[letter] :], letter, choices):
                verdict.hedged = True
                return None
            return Reading(letter, "named-letter")
        if any(_offers_another(text[end:], letter, choices) for letter, end in named.items()):
            verdict.hedged = True
            return None
        return Reading(None, "ambiguous")

    @staticmethod
    def _mentioned_choice(text: str, choices: _Choices, verdict: _Verdict) -> Reading | None:
        """A one-sentence output that speaks of exactly one choice ("They are in a library.")."""
        sentences = [part for part in re.split(r"(?<=[.!?])\s+|\n+", text.strip()) if _tokens(part)]
        if len(sentences) != 1 or sentences[0].rstrip().endswith("?"):  # a question back is no answer
            return None
        if verdict.hedged:  # the one sentence offered two answers ("(A) or (B)" beside a choice "OR")
            return None
        if _TWO_BARE_LETTERS.search(
            sentences[0]
        ):  # "The two speakers talking about the weather are A and C."
            verdict.hedged = True
            return None
        words = _tokens(sentences[0])
        found: list[tuple[int, int, str]] = []  # (start, end, letter) of each choice's words in the sentence
        for index, tokens in enumerate(choices.tokens):
            found += [
                (start, start + len(tokens), choices.valid[index]) for start in _undenied(words, tokens)
            ]
        if not found:  # "Bassett won the Oscar.": a person is named by the surname alone
            found = [(0, 1, letter) for letter in choices.surnames_named(sentences[0])]
        letters = {letter for _, _, letter in _outermost(found)}
        # the sentence may state another choice's content in other words ("... often stay up late reading and
        # that they work hard and play hard": one choice's text, another's content): then it states two
        stated = {choices.valid[index] for index in choices.content.covered(sentences[0])}
        if len(letters) == 1 and not stated - letters:
            return Reading(letters.pop(), "choice-mention")
        if len(letters) > 1 and {"or", "either"} & set(words):
            verdict.hedged = True
        return None

    @staticmethod
    def _paraphrased_choice(text: str, choices: _Choices, verdict: _Verdict) -> Reading | None:
        """An output that states one choice's content, in its words or others, and no other choice's: again
        and again ("choice-paraphrase"), or once in a short answer ("choice-mention")."""
        stated = choices.content.statements(text)
        # a person named by the surname alone, again and again ("Alejna Putellas ... Putellas")
        named = {} if stated else choices.surnames_named(text)
        if len(named) == 1 and max(named.values()) >= _REPEATED:
            stated = [choices.valid.index(next(iter(named)))] * max(named.values())
        if not stated or len(set(stated)) != 1:
            return None
        letter = choices.valid[stated[0]]
        words = _tokens(text)
        if any(  # another choice's whole text, which clauses may split ("Glass Onion: A Knives Out Mystery")
            other != letter and len(tokens) > 1 and _undenied(words, tokens)
            for other, tokens in zip(choices.valid, choices.tokens, strict=True)
        ):
            return None
        if len(stated) >= _REPEATED:
            return Reading(letter, "choice-paraphrase")
        if verdict.hedged:  # the short answer offered two ("(A) or (B)"), whatever content its words share
            return None
        sentences = [part for part in re.split(r"(?<=[.!?])\s+|\n+", text.strip()) if _tokens(part)]
        return Reading(letter, "choice-mention") if len(sentences) <= _SHORT_ANSWER else None

    # ------------------------------------------------------------ chain of thought

    @staticmethod
    def _read_chain_of_thought(region: str, choices: _Choices) -> Reading:
        verdict = _Verdict()
        for statement in reversed(_statements(region)):
            reading = _read_stated(region[statement.end() :], choices, verdict)
            if reading is not None:
                return reading
            if verdict.hedged:
                return Reading(None, "hedge")
        for boxed in reversed(list(_BOXED.finditer(region))):
            content = _braced(region, boxed.end())
            content = re.sub(r"\\(?:text|textbf|mathrm|mathbf)\s*\{|[{}$]|\\[,;!: ]", " ", content).strip()
            form = _LETTER_FORM.match(content)
            letter = _letter_of(form) if form else choices.exactly(content)
            if letter:
                ok = letter in choices.valid
                return Reading(letter if ok else None, "boxed" if ok else "letter-outside-choices")
        # "Since choice (C) works, the number of members is 25.": the conclusion names one letter
        sentences = [part for part in re.split(r"(?<=[.!?])\s+|\n+", region.strip()) if part.strip()]
        if sentences and not _DOUBT.search(sentences[-1]):
            named = set(_named_letters(sentences[-1], choices))
            if len(named) == 1 and named <= set(choices.valid):
                return Reading(named.pop(), "named-letter")
        return Reading(None, "no-answer")

    # ------------------------------------------------------------ echoes of the prompt

    def _read_after_echo(self, echo: str, choices: _Choices, chain_of_thought: bool) -> Reading | None:
        """The answer after a restatement of this very question, or None.

        An echo with a "Choices:" line is read only if those are this question's choices (otherwise the
        model made up a new question), and then like a whole output; an echo without one (a cited
        "Evidence:") only for a statement that commits to an answer.
        """
        echoed = re.search(r"(?:Choices|Options)\s*:[^\n]*", echo)
        if echoed:
            listed = parse_choices("Choices:" + echoed.group().split(":", 1)[1])
            if listed and not choices.same_as(listed):
                return None
            rest = echo[echoed.end() :]
            following = _ECHO.search(rest)
            rest = rest[: following.start()] if following else rest
            read = self._read_chain_of_thought if chain_of_thought else self._read_zero_shot
            reading = read(rest, choices)
        else:
            verdict = _Verdict()
            statements = _statements(echo)
            if chain_of_thought:  # a worked solution states its answer last
                statements.reverse()
            readings = (_read_stated(echo[statement.end() :], choices, verdict) for statement in statements)
            reading = next((reading for reading in readings if reading is not None), None)
        if reading is None or reading.value is None:
            return None
        return Reading(reading.value, "answer-after-echo")

    # ------------------------------------------------------------ ScrRec

    def read_recovery(self, output: str) -> Reading:
        """The recovered sentence of a ScrRec ``output``, without what a chat model wraps around it.

        Steps, in order; ``rule`` names the first that changed anything ("plain" when none did):

        1. "prompt-continuation": cut where the model goes on with the prompt's format ("Scrambled
           sentence: ..."); if the output begins by restating the scrambled input, the part from its
           "Recovered sentence:" on is kept instead. An output that begins with "The scrambled sentence:"
           and never says "Recovered sentence:" has only mislabelled its answer ("preamble").
        2. "code-fence": the content of the first ```` ``` ```` block.
        3. "preamble": a lead-in such as "Here is the recovered sentence:", "Recovered sentence:" or
           "Sure! The original sentence is:", on its own line or before the sentence.
        4. "trailing-note": a following line that comments ("Note: I corrected ...", "I unscrambled ...",
           "Let me know ..."), or such a note in parentheses or after "Note:" at the end of the sentence.
        5. "quotes": quote marks (ASCII, typographic, guillemets) or ``**`` that wrap the whole sentence, not
           those that belong to it (``"We won," he said.`` keeps its quotes).

        Surrounding whitespace goes too; the sentence itself is kept byte for byte. Nothing left: ``None``
        ("empty").

        >>> careful = CarefulReader()
        >>> careful.read_recovery("Here is the recovered sentence:\\n\\n“The cat sat on the mat.”")
        Reading(value='The cat sat on the mat.', rule='preamble')
        >>> careful.read_recovery("The cat sat.\\n\\nNote: I corrected the spelling of 'cat'.").value
        'The cat sat.'
        >>> careful.read_recovery(" The cat sat.\\nScrambled sentence: Teh dgo")
        Reading(value='The cat sat.', rule='prompt-continuation')
        >>> careful.read_recovery("   ")
        Reading(value=None, rule='empty')
        """
        check_output(output)
        return read_recovery(output)


def _prepare(output: str) -> str:
    """Typographic quotes made ASCII, markdown dropped (an emphasised letter kept as "(B)")."""
    text = output.translate(_QUOTES)
    text = _EMPHASISED_LETTER.sub(r"(\2)", text)
    return _MARKDOWN.sub("", text)


def _named_letters(text: str, choices: _Choices) -> dict[str, int]:
    """The letters ``text`` names unmistakably and does not rule out, with where each is first named."""
    named: dict[str, int] = {}
    for match in _NAMED_LETTER.finditer(text):
        letter = _letter_of(match)
        if _NEGATED_BEFORE.search(text[max(0, match.start() - 30) : match.start()]):
            continue  # "not (B)", "rather than option C"
        if _NEGATED_AFTER.match(text, match.end()):
            continue  # "(A) is wrong"
        after = text[match.end() :]
        own = choices.tokens[choices.valid.index(letter)] if letter in choices.valid else []
        if own and _tokens(after[:_NEAR])[: len(own)] == own:
            after = _words_after(after, len(own))  # the choice's own words may deny something
        if _FAILS_AFTER.match(after):
            continue  # "(D) 12 does not work"
        end = _SENTENCE_END.search(text, match.end(), match.end() + _NEAR)
        if end and text[end.start()] == "?":
            continue  # "Could it be (B)?"
        named.setdefault(letter, match.end())
    return named


def _is_scrambled(word: str) -> bool:
    """Whether ``word`` (three letters or more) looks scrambled: see ``_ONSETS``.

    >>> [w for w in "Cheri ofsepror from seNapl found ttah iwchh the artist wnkno McDonald".split() if _is_scrambled(w)]
    ['seNapl', 'ttah', 'iwchh', 'wnkno']
    """
    if not (word[1:].islower() or word.isupper()):
        return not _CAMEL_CASE.fullmatch(word)
    if word[0].isupper():
        return False
    lower = word.lower()
    onset = _ONSET.match(lower)
    return bool(
        (onset and len(onset.group()) >= 2 and onset.group() not in _ONSETS)
        or _CONSONANT_RUN.search(lower)
        or not re.search("[aeiouy]", lower)
    )


def _is_scrambled_echo(text: str) -> bool:
    """Whether ``text`` is mostly the evidence copied in its scrambled form, which states no answer.

    >>> _is_scrambled_echo("A toddler ltitadfneir White House rdnsoug, tnsgeti off security alerts.")
    True
    >>> _is_scrambled_echo("A toddler got into the White House grounds, setting off security alerts.")
    False
    """
    words = _WORD.findall(text)
    scrambled = sum(map(_is_scrambled, words))
    return scrambled >= _SCRAMBLED_WORDS and scrambled >= _SCRAMBLED_SHARE * len(words)


def _undenied(words: list[str], part: list[str]) -> list[int]:
    """Where the word sequence ``part`` starts in ``words``, where no negation comes in the three words before
    ("should not minimize the use of fossil fuels"); none for an empty ``part``.

    >>> _undenied("he should not minimize fuels but start fuels".split(), ["minimize", "fuels"])
    []
    >>> _undenied("start fuels now".split(), ["start", "fuels"])
    [0]
    """
    if not part:
        return []
    return [
        start
        for start in range(len(words) - len(part) + 1)
        if words[start : start + len(part)] == part and not _NEGATING & set(words[max(0, start - 3) : start])
    ]


def _outermost(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The (start, end, letter) spans not inside another one: a choice inside the words of a longer one ("at
    seven" in "at seven fifty") is not mentioned itself. One sweep, so that a long output stays linear.

    >>> _outermost([(0, 2, "B"), (0, 3, "C"), (5, 6, "A")])
    [(0, 3, 'C'), (5, 6, 'A')]
    """
    spans: dict[tuple[int, int], set[str]] = {}
    for start, end, letter in found:
        spans.setdefault((start, end), set()).add(letter)
    kept, reach = [], -1
    for (start, end), letters in sorted(spans.items(), key=lambda span: (span[0][0], -span[0][1])):
        if end > reach:  # not inside an earlier, longer span
            kept += [(start, end, letter) for letter in sorted(letters)] if len(letters) == 1 else []
            reach = end
    return kept


def _contradiction(letter: str, text: str, choices: _Choices) -> Reading | None:
    """No answer, and why, when the zero-shot answer ``letter`` is no commitment after all; None when nothing
    contradicts it.

    "cycle": the output also commits to another choice (another "the answer is ...", or a line given to
    another letter). "letter-text-conflict": a letter elsewhere is followed by another choice's text, or
    the output states another choice's content again and again and never this one's. "no-answer": it says
    that none of the choices is right.
    """
    if _NO_CHOICE_FITS.search(text) and not any(_NO_CHOICE_FITS.search(" ".join(t)) for t in choices.tokens):
        return Reading(None, "no-answer")  # "B. But none of the options is correct."
    given = _first_line_choice(text, choices)
    if given is not None and given != letter:  # "Dusty, New York City\n\nThe answer is D." (New York City C)
        return Reading(None, "letter-text-conflict")
    verdict = _Verdict()
    # what follows a statement or a letter is read within _NEAR (bounded slices keep a long output linear),
    # and a passage read once is not read again (a model stuck in a loop repeats itself)
    read: set[tuple[str, str]] = set()
    places = [(None, statement.end()) for statement in _statements(text)]
    places += [(line.group("line"), line.end()) for line in _LETTER_LINE.finditer(text)]
    places += [
        (label.group(1), label.end())
        for label in _LETTER_LABELS.finditer(text)
        if _is_label(label, text, choices)
    ]
    confirmed = 0  # commitments to this very letter, the first reading's own among them
    for named, end in places:
        after = text[end : end + 2 * _NEAR]
        if (named or "", after) in read:
            continue
        read.add((named or "", after))
        if named is None:
            reading = _read_stated(after, choices, verdict)
        else:
            reading = _judge_letter(named, after, "leading-letter", choices, verdict)
        if reading is not None and reading.rule == "letter-text-conflict":
            return reading
        if reading is not None and reading.value is not None and reading.value != letter:
            return Reading(None, "cycle")
        confirmed += reading is not None and reading.value == letter
    # what the output goes on to say, after the clause that gave the answer ("Cereal\n\nThe data shows that
    # eggs decreased the most ... eggs ..."); an answer given twice ("C)Historically inaccurate costumes\n\nThe
    # answer is C.") is not taken back by what is then said of other choices, nor is any answer by a scrambled
    # echo of the evidence, which states nothing (the judges' fourth rule)
    first = _CLAUSE_END.search(text)
    after_answer = text[first.end() :] if first else ""
    if confirmed >= 2 or _is_scrambled_echo(after_answer):
        return None
    stated = [choices.valid[index] for index in choices.content.statements(after_answer)]
    others = {other for other in stated if other != letter}
    # a bare letter has no words of its own to weigh against the content that follows: once is enough
    bare = first is not None and set(_tokens(text[: first.end()])) <= {letter.lower(), "answer", "option"}
    if letter not in stated and len(others) == 1 and len(stated) >= (1 if bare else _REPEATED):
        return Reading(None, "letter-text-conflict")
    # "The woman king: Babylon ... The woman king: Glass Onion ...": a tour of the choices, each stop a sentence
    # that states one other choice; a sentence that states several others lists them ("goals by James, Hemp
    # and Daly"), as evidence does, and is no stop
    toured: set[str] = set()
    for sentence in sentences(after_answer):
        in_sentence = {choices.valid[index] for index in choices.content.statements(sentence)} - {letter}
        if len(in_sentence) == 1:
            toured |= in_sentence
    if len(toured) >= 2:
        return Reading(None, "cycle")
    return None


def _first_line_choice(text: str, choices: _Choices) -> str | None:
    """The choice a short first line gives by its text, alone or as one item of a list separated by commas or
    colons, when more lines follow: an answer of its own, which a letter given later for another choice
    contradicts.

    >>> choices = _Choices(["Los Angeles", "Salt Lake City", "New York City", "Washington, DC"])
    >>> _first_line_choice("Dustin City, Salt Lake City\\n\\nThe answer is D.", choices)
    'B'
    >>> _first_line_choice("Washington, DC\\n\\nThe answer is D.", choices)
    'D'
    >>> _first_line_choice("The city is Salt Lake City.\\n\\nThe answer is D.", choices) is None
    True
    """
    first, newline, _rest = text.strip().partition("\n")
    if not newline or len(_tokens(first)) > _LABEL_WORDS:
        return None
    items = re.split(r"[,:]", first)  # "Dustin City, Salt Lake City", "Cricket: Ben Stokes"
    given = {
        choices.exactly(",".join(items[start:end]))
        for start in range(len(items))
        for end in range(start + 1, len(items) + 1)
    }
    given.discard(None)
    return given.pop() if len(given) == 1 else None


def _is_label(label: re.Match, text: str, choices: _Choices) -> bool:
    """Whether a bracketed letter inside a line is given as an answer: followed by its own choice's text and
    then nothing but the end of the line or another letter ("C)OPEC (D)IOC (E)")."""
    letter = label.group(1)
    if letter not in choices.valid or not (own := choices.tokens[choices.valid.index(letter)]):
        return False
    after = text[label.end() : label.end() + _NEAR]
    if _tokens(after)[: len(own)] != own:
        return False
    return bool(_LABEL_ENDS.match(_words_after(after, len(own))))


def _judge_letter(letter: str, rest: str, rule: str, choices: _Choices, verdict: _Verdict) -> Reading | None:
    """A letter read by ``rule`` checked: one of the choices, not contradicted, not hedged."""
    if _NEGATED_AFTER.match(rest):  # "(A) is wrong, ..." names a letter to rule it out
        return None
    if letter not in choices.valid:
        return Reading(None, "letter-outside-choices")
    if _mismatched_words(letter, rest, choices) is not None:
        return Reading(None, "letter-text-conflict")
    after = rest.lstrip(_AFTER_LETTER)
    own = choices.tokens[choices.valid.index(letter)]
    if own and _tokens(after[:_NEAR])[: len(own)] == own:
        rest = _words_after(after, len(own))  # "(C) Both A and B": the choice's own words offer nothing else
    if _offers_another(rest, letter, choices):
        verdict.hedged = True
        return None
    return Reading(letter, rule)


def _mismatched_words(letter: str, rest: str, choices: _Choices) -> int | None:
    """How far into ``rest`` the words that go with ``letter`` reach when they are another choice's, else None.

    They are another choice's when they are its text, start with it ("C) 371 days" when D is 371), or state
    its content in a short label ("B) the Disneys").

    >>> choices = _Choices(["Amazon", "Microsoft", "Meta"])
    >>> _mismatched_words("C", ") Microsoft\\n\\nThe answer is: Microsoft", choices)
    11
    >>> _mismatched_words("B", ") Microsoft", choices) is None
    True
    """
    mismatch = _mismatch(letter, rest, choices)
    return None if mismatch is None else mismatch[0]


def _mismatch(letter: str, rest: str, choices: _Choices) -> tuple[int, str] | None:
    """:func:`_mismatched_words`'s reach, and the letter of the choice those words name."""
    if letter not in choices.valid:
        return None
    after = rest.lstrip(_AFTER_LETTER)
    said = _sentence_rest(after)
    pointer = _BARE_LETTER.match(after)
    if pointer and pointer.group(1) in choices.valid and pointer.group(1) != letter:
        # "C)D": a letter given another letter as its text
        return len(rest) - len(after) + pointer.end(), pointer.group(1)
    spelled = choices.prefix(after)
    other = choices.exactly(said) or (spelled[0] if spelled else None) or choices.stated(after)
    if not other or other == letter or _tokens(said) == choices.tokens[choices.valid.index(letter)]:
        return None
    if _offers_another(after, letter, choices):  # "(A) or (B)" beside a choice "OR" offers two letters
        return None
    reach = len(said)
    if spelled and spelled[0] == other and not choices.exactly(said):  # only the choice's words go with it
        reach = len(after) - len(_words_after(after, spelled[1]))
    return len(rest) - len(after) + reach, other


class _Pair(NamedTuple):
    """A letter given with another choice's words: where it starts and ends, the letter, and the letter of
    the choice its words name."""

    start: int
    end: int
    letter: str
    words: str


def _mismatched_pairs(text: str, choices: _Choices) -> list[_Pair]:
    """Where each letter given with another choice's words starts and ends in ``text``, the letter, and the
    letter of the choice the words name, in order of where they start.

    Such a pair commits to no choice, but the rest of the output may still commit to one: "Baltimore\\n\\nThe
    answer is (B) Baltimore" (Baltimore is C) states Baltimore; "C) 450,000\\n\\nThe answer is: 450,000"
    (450,000 is D) states 450,000. The letters looked at are those given as answers: the leading one, one
    after an answer statement, one that opens a line, and a bracketed one anywhere.

    >>> choices = _Choices(["New York", "Philadelphia", "Baltimore", "Pittsburgh"])
    >>> text = "Baltimore\\n\\nThe answer is (B) Baltimore."
    >>> _mismatched_pairs(text, choices)
    [_Pair(start=25, end=38, letter='B', words='C')]
    >>> _cut(text, [(25, 38)])
    'Baltimore\\n\\nThe answer is .'
    """
    letters: list[tuple[str, int, int]] = []  # (letter, start, end) of each letter given as an answer
    label = _LABEL.match(text)
    for start in [_FILLER.match(text, label.end() if label else 0).end()] + [
        _FILLER.match(text, statement.end()).end() for statement in _statements(text)
    ]:
        if form := _LETTER_FORM.match(text, start):
            letters.append((_letter_of(form), form.start(), form.end()))
    letters += [(line.group("line"), line.start("line"), line.end()) for line in _LETTER_LINE.finditer(text)]
    letters += [(label.group(1), label.start(), label.end()) for label in _LETTER_LABELS.finditer(text)]
    # a letter found twice (after a statement, and as a bracketed label) makes one pair
    pairs: dict[tuple[int, int], _Pair] = {}
    for letter, start, end in letters:
        mismatch = _mismatch(letter, text[end : end + 2 * _NEAR], choices)
        if mismatch is not None:
            pairs.setdefault((start, end + mismatch[0]), _Pair(start, end + mismatch[0], letter, mismatch[1]))
    return [pair for _span, pair in sorted(pairs.items())]


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` without the (possibly overlapping) ``spans``."""
    kept, position = [], 0
    for start, end in sorted(spans):
        kept.append(text[position : max(position, start)])
        position = max(position, end)
    return "".join(kept) + text[position:]


def _read_stated(after: str, choices: _Choices, verdict: _Verdict) -> Reading | None:
    """The answer that follows an answer statement, or None when it states none (or hedges)."""
    start = _FILLER.match(after).end()
    rest = after[start:]
    if _NEGATION_AFTER_STATEMENT.match(rest) and not choices.prefix(rest):
        return None
    form = _LETTER_FORM.match(rest)
    if form:
        return _judge_letter(_letter_of(form), rest[form.end() :], "answer-is", choices, verdict)
    for skip in ("", "the ", "a ", "an "):
        if skip and not rest.lower().startswith(skip):
            continue
        spelled = choices.prefix(rest[len(skip) :])
        if spelled:
            letter, words = spelled
            if _offers_another(_words_after(rest[len(skip) :], words), letter, choices):
                verdict.hedged = True
                return None
            return Reading(letter, "answer-is")
    stated = choices.stated(rest)  # "the answer is Disneys.", "the answer is: 16%"
    return Reading(stated, "answer-is") if stated else None


def _braced(text: str, start: int) -> str:
    """The text from ``start`` to the brace that closes the one just before it (within ``_NEAR``)."""
    depth = 1
    for position in range(start, min(len(text), start + _NEAR)):
        if text[position] == "{":
            depth += 1
        elif text[position] == "}":
            depth -= 1
            if depth == 0:
                return text[start:position]
    return text[start : start + _NEAR]
