"""Which choice a stretch of a model's text states by its content, with or without the choice's letter.

The careful reader uses this where an output answers in words: "the answer is Disneys" for the choice
"Disney", "C) 371 days" when 371 is choice D, or an answer that never names a letter but says, sentence after
sentence, that "the toddler" got in. The method, measured against a blind judge (docs/readers/history.md):

- words are compared by a crude stem (lower case, a plural or verb ending dropped: "Disneys" and "Disney",
  "developing" and "develop"), and numbers as numbers ("450,000" is "$450,000"; "4.5" stays one number);
- each choice is represented by its *distinctive* words: its content words (function words such as "the",
  "is", "of" left out) that no other choice of the question has. "Gas station ATMs" against "Phone charging
  stations" is {gas, atm}; a choice with no distinctive word ("She is happy." beside "She is living a happy
  life.") can only be stated by its own text;
- a capitalised distinctive word of five letters or more (a name) is also held by a capitalised word one
  letter apart from it ("The Daily Calder" holds "Caller"); a scramble of the name never is;
- a clause states a choice when it holds at least two thirds of the choice's distinctive words, and more of
  them than of any other choice's; a clause with a negation before those words ("the man should not
  minimize the use of fossil fuels") states nothing, unless the choice itself says "not" there ("Tom is not
  a good mechanic" states the choice "He is not a good mechanic.").

Pure functions over strings; the per-question work (:class:`ChoiceContent`) is done once per reading.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from scrambled_bench.metrics.readers.units import Rule

# A word, or a number with its separators ("450,000", "4.5", "20.1"); an apostrophe ends a word ("Disney's"
# is "disney" and "s", and "s" is a function word).
_WORD = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")
# Function words: they say nothing about which choice is meant. Negations are not here (they are content
# for a claim), nor are prepositions that carry a choice's meaning ("under", "before", "after").
# fmt: off
FUNCTION_WORDS = frozenset({
    "a", "an", "the", "this", "that", "these", "those", "it", "its", "he", "she", "they", "we",
    "you", "i", "me", "him", "her", "them", "us", "his", "hers", "their", "theirs", "our", "your", "my",
    "mine", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "done", "has",
    "have", "had", "having", "will", "would", "shall", "should", "can", "could", "may", "might",
    "of", "to", "in", "on", "at", "by", "for", "with", "from", "as", "into", "onto", "about", "than",
    "then", "so", "and", "or", "but", "if", "because", "while", "also", "just", "very", "really", "quite",
    "rather", "some", "any", "all", "each", "every", "both", "either", "there", "here", "what", "which",
    "who", "whom", "whose", "when", "where", "why", "how", "s", "t",
})
# fmt: on
# Words that deny what follows them in the same clause ("did not eat out", "rather than Paris").
_NEGATION = re.compile(
    r"\b(?:not|no|never|neither|nor|without|except|cannot|unlike|instead\s+of|rather\s+than)\b|n['\u2019]t\b",
    re.IGNORECASE,
)
# Where a clause ends: punctuation, or a conjunction that turns the claim ("..., but instead ...").
_CLAUSE_END = re.compile(r"[.,;:!?\n]+(?=\s|$)|\s(?:but|however|whereas|while)\s", re.IGNORECASE)
# A sentence, with the mark that ends it.
_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?=[^\s.!?]))+(?:[.!?]+|\n|$)")
# A clause that says of what it names that it is no answer ("Choice A is not possible because ...", "The park is
# not mentioned", "(B) is incorrect"), and one that says so of what the clause before it named ("The park is
# closed, so they will not go there").
_NOT_THE_ANSWER = r"(?:possible|mentioned|correct|right|true|the\s+(?:correct\s+|right\s+|best\s+)?answer|an?\s+(?:option|answer))"
REJECTS = re.compile(
    rf"\b(?:is|are|was|were|seems?|would\s+be)\s+(?:not\s+{_NOT_THE_ANSWER}|incorrect|wrong|false|impossible"
    rf"|ruled\s+out|eliminated|excluded)\b|\b(?:isn't|aren't|wasn't|weren't)\s+{_NOT_THE_ANSWER}\b"
    r"|\b(?:not|never)\s+(?:mentioned|stated|discussed)\b|\bcan\s+be\s+(?:ruled\s+out|eliminated|excluded)\b",
    re.IGNORECASE,
)
REJECTS_THE_CLAUSE_BEFORE = re.compile(
    r"\b(?:will|would|do|does|did|can|could|should)\s*(?:not|n't)\s+go\s+there\b", re.IGNORECASE
)
# A capitalised word, and how long a choice's name must be for one misspelt letter to still name it (shorter
# names one letter apart are often other words: "Iran" and "Iraq").
_CAPITALISED = re.compile(r"\b[A-Z][^\W\d_]{3,}")
_NAME_LETTERS = 5
# How much of a choice's distinctive words a clause must hold to state it: one of one, two of two or three,
# three of four ("Burgers" is not "Burger King"; "Silicon Valley Bank" is "Silicon Valley Bank & Signature
# Bank" when no other choice has those words).
COVERAGE = 2 / 3


# Plurals no ending rule reaches ("children" is "child").
_IRREGULAR_PLURALS = {
    "children": "child", "people": "person", "men": "man", "women": "woman", "feet": "foot", "teeth": "tooth",
    "mice": "mouse", "geese": "goose",
}  # fmt: skip


@functools.lru_cache(maxsize=1 << 14)  # the same words come back in every output: a cache halves the time
def stem(word: str) -> str:
    """A word lower-cased, with a plural or verb ending and a final "e" dropped, so that forms of one word
    compare equal ("lives", "living" and "live"; "hopes", "hoping" and "hoped").

    >>> [stem(word) for word in ["Disneys", "banks", "stories", "developing", "started", "glass", "450,000"]]
    ['disney', 'bank', 'story', 'develop', 'start', 'glass', '450000']
    >>> {stem(word) for word in ["lives", "living", "live", "lived"]}
    {'liv'}
    >>> stem("Children") == stem("child")
    True
    """
    word = word.lower()
    if word[:1].isdigit():
        return word.replace(",", "")
    word = _IRREGULAR_PLURALS.get(word, word)
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ed"):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def content_words(text: str) -> list[str]:
    """The stems of ``text``'s content words, in order.

    >>> content_words("The answer is Disneys.")
    ['answer', 'disney']
    """
    return [stem(word) for word in _WORD.findall(text) if word.lower() not in FUNCTION_WORDS]


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (at ".", "!", "?" before a space, and at line ends).

    >>> sentences("Goals by James, Hemp and Daly. Russo won it!\\nThen more.")
    ['Goals by James, Hemp and Daly.', 'Russo won it!', 'Then more.']
    """
    return [sentence.strip() for sentence in _SENTENCE.findall(text) if sentence.strip()]


def clauses(text: str) -> list[str]:
    """``text`` cut into clauses (at punctuation, and at "but", "however", "instead" ...).

    >>> clauses("He should not go, but instead he should stay.")
    ['He should not go', 'instead he should stay']
    """
    parts, start = [], 0
    for end in _CLAUSE_END.finditer(text):
        parts.append(text[start : end.start()])
        start = end.end()
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()]


class ChoiceContent:
    """The distinctive words of each choice of one question, and which choice a clause states.

    >>> content = ChoiceContent(["Airport Wi-Fi", "Gas station ATMs", "Phone charging stations", "Car charging stations"])
    >>> [sorted(words) for words in content.distinctive]
    [['airport', 'fi', 'wi'], ['atm', 'gas'], ['phon'], ['car']]
    >>> content.stated("Avoid public phone charging stations.")
    2
    >>> content.stated("Charging stations are risky.") is None
    True
    >>> ChoiceContent(["4.5 years", "6 years", "9 years"]).statements("It took 4.5 years. Was it 6 years?")
    [0]
    >>> ChoiceContent(["Anne, Princess Royal", "The Princess of Wales, Kate Middleton"]).stated("The Princess of Wales came.")
    1
    """

    def __init__(self, choices: Sequence[str]):
        words = [set(content_words(choice)) for choice in choices]
        self.distinctive = [
            words[i] - set().union(*(other for j, other in enumerate(words) if j != i))
            for i in range(len(words))
        ]
        # A choice that names one entity twice, comma-separated, each part capitalised ("The Princess of Wales,
        # Kate Middleton", "Washington, DC"), is also stated by either part alone: all of that part's content
        # words, when some of them are the choice's own ("Princess of Wales" beside "Anne, Princess Royal").
        self.aliases = [
            (i, alias)
            for i, choice in enumerate(choices)
            if "," in choice and all(part.strip()[:1].isupper() for part in choice.split(","))
            for part in choice.split(",")
            if (alias := set(content_words(part))) & self.distinctive[i]
        ]
        # A name a model misspells by one letter ("The Daily Calder" for "The Daily Caller", "Hakeem Jeffriese")
        # still names its entity: each choice's capitalised distinctive words of five letters or more, by stem
        self.names = [
            {
                stem(word): word.lower()
                for word in _WORD.findall(choice)
                if word[:1].isupper() and len(word) >= _NAME_LETTERS and stem(word) in self.distinctive[i]
            }
            for i, choice in enumerate(choices)
        ]
        self._all = set().union(*self.distinctive, *(alias for _, alias in self.aliases))
        self._choices = list(choices)
        # a question whose choices themselves say "not mentioned", "is wrong" ... has no rejection to set aside
        self.rejections_are_answers = any(
            REJECTS.search(choice) or REJECTS_THE_CLAUSE_BEFORE.search(choice) for choice in choices
        )
        self._stated: dict[str, int | None] = {}  # clause -> choice: a model in a loop repeats its clauses

    def stated(self, clause: str) -> int | None:
        """The index of the one choice ``clause`` states by its distinctive words, or None.

        None when no choice has enough of its words in the clause, when two tie, or when a negation comes
        before them ("did not eat out").
        """
        stems = self._stems_with_names(clause)
        if not self._all.intersection(stems):
            return None
        best, best_coverage, tied = None, 0.0, False
        for index, distinctive in enumerate(self.distinctive):
            if not distinctive:
                continue
            coverage = len(distinctive.intersection(stems)) / len(distinctive)
            if coverage > best_coverage:
                best, best_coverage, tied = index, coverage, False
            elif coverage == best_coverage and coverage > 0:
                tied = True
        if best is None or tied or best_coverage < COVERAGE - 1e-9:
            named = {index for index, alias in self.aliases if alias <= stems}  # every word of a part
            if len(named) != 1:
                return None
            best = named.pop()
        negations = _negations_before(clause, self.distinctive[best])
        if negations and negations > _negations_before(self._choices[best], self.distinctive[best]):
            return None
        return best

    def _stems_with_names(self, text: str) -> set[str]:
        """The stems of ``text``'s words, and the stem of each choice's name that a capitalised word of
        ``text`` misspells by one letter (one added, dropped or changed)."""
        stems = {stem(word.group()) for word in _WORD.finditer(text)}
        capitalised = {word.lower() for word in _CAPITALISED.findall(text)}
        for names in self.names:
            for name_stem, name in names.items():
                if name_stem not in stems and any(_one_letter_apart(word, name) for word in capitalised):
                    stems.add(name_stem)
        return stems

    def partly(self, text: str) -> int | None:
        """The index of the one choice some of whose distinctive words ``text`` holds (not after a negation the
        choice lacks), when it holds none of any other choice's; else None.

        >>> ChoiceContent(["Red coats.", "Blue hats.", "Green shoes."]).partly("They wore red ones.")
        0
        >>> ChoiceContent(["Red coats.", "Blue hats.", "Green shoes."]).partly("Red or blue.") is None
        True
        """
        stems = self._stems_with_names(text)
        held = [index for index, distinctive in enumerate(self.distinctive) if distinctive & stems]
        if len(held) != 1:
            return None
        index = held[0]
        negations = _negations_before(text, self.distinctive[index])
        return None if negations > _negations_before(self._choices[index], self.distinctive[index]) else index

    def covered(self, text: str) -> set[int]:
        """The indices of every choice whose distinctive words ``text`` holds enough of (not after a negation
        the choice lacks), whichever holds the most: what a sentence speaks of, where :meth:`stated` picks one.

        >>> ChoiceContent(["They play loud music.", "They never clean the yard.", "They are kind."]).covered(
        ...     "The neighbours play loud music and never clean the yard.")
        {0, 1}
        """
        stems = self._stems_with_names(text)
        return {
            index
            for index, distinctive in enumerate(self.distinctive)
            if distinctive
            and len(distinctive & stems) / len(distinctive) >= COVERAGE - 1e-9
            and _negations_before(text, distinctive) <= _negations_before(self._choices[index], distinctive)
        }

    def without_rejected(self, text: str) -> str:
        """``text`` without the clauses that name a choice only to reject it (see :class:`RejectedChoice`)."""
        if self.rejections_are_answers or not (
            REJECTS.search(text) or REJECTS_THE_CLAUSE_BEFORE.search(text)
        ):
            return text
        dropped: list[tuple[int, int]] = []
        for sentence in _SENTENCE.finditer(text):
            parts, start = [], sentence.start()
            for end in _CLAUSE_END.finditer(text, sentence.start(), sentence.end()):
                parts.append((start, end.start()))
                start = end.end()
            parts.append((start, sentence.end()))
            spans = [
                # the clause before is what is rejected where the rejection has no subject of its own ("Amazon
                # and Google, are not mentioned") or points back ("..., so they will not go there")
                (parts[i - 1][0] if i and (_opens_with_rejection(text[s:e]) or back) else s, e)
                for i, (s, e) in enumerate(parts)
                if (back := REJECTS_THE_CLAUSE_BEFORE.search(text, s, e)) or REJECTS.search(text, s, e)
            ]
            kept = "".join(text[s:e] for s, e in _between(sentence.span(), spans))
            # a sentence left without a word goes whole, so that it is no sentence of its own
            dropped += [sentence.span()] if not _WORD.search(kept) else spans
        return "".join(text[s:e] for s, e in _between((0, len(text)), dropped))

    def statements(self, text: str) -> list[int]:
        """The index of the choice each clause of ``text`` states, for the clauses that state one; a question
        ("Could it be the toddler?") states nothing."""
        stated = []
        for sentence in _SENTENCE.findall(text):
            if sentence.rstrip().endswith("?"):
                continue
            for clause in clauses(sentence):
                if clause not in self._stated:
                    self._stated[clause] = self.stated(clause)
                if self._stated[clause] is not None:
                    stated.append(self._stated[clause])
        return stated


def _one_letter_apart(word: str, name: str) -> bool:
    """Whether ``word`` is ``name`` with one letter added, dropped or changed (a permutation of a name's
    letters, as a scramble makes, never is).

    >>> [_one_letter_apart(word, "caller") for word in ["calder", "callers", "caler", "caller", "clealr"]]
    [True, True, True, False, False]
    """
    if word == name or abs(len(word) - len(name)) > 1:
        return False
    prefix = 0
    while prefix < min(len(word), len(name)) and word[prefix] == name[prefix]:
        prefix += 1
    if len(word) == len(name):
        return word[prefix + 1 :] == name[prefix + 1 :]
    longer, shorter = (word, name) if len(word) > len(name) else (name, word)
    return longer[prefix + 1 :] == shorter[prefix:]


def _negations_before(text: str, distinctive: set[str]) -> int:
    """How many negations ``text`` has before the first of the ``distinctive`` words."""
    first = next(
        (word.start() for word in _WORD.finditer(text) if stem(word.group()) in distinctive), len(text)
    )
    return len(_NEGATION.findall(text, 0, first))


def _opens_with_rejection(clause: str) -> bool:
    """Whether ``clause`` is a rejection with no subject of its own ("are not mentioned in the evidence").

    >>> _opens_with_rejection(" are not mentioned in the evidence"), _opens_with_rejection("Amazon is wrong")
    (True, False)
    """
    return bool(REJECTS.match(clause.lstrip()))


def _between(span: tuple[int, int], holes: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of ``span`` outside the (possibly overlapping) ``holes``.

    >>> _between((0, 10), [(2, 4), (3, 6)])
    [(0, 2), (6, 10)]
    """
    parts, position = [], span[0]
    for start, end in sorted(holes):
        if start > position:
            parts.append((position, start))
        position = max(position, end)
    return [*parts, (position, span[1])] if position < span[1] else parts


class RejectedChoice(Rule):
    """A choice named only to be rejected or denied states no answer: a clause that says of what it names that
    it is not possible, not mentioned, not correct, not the answer, wrong, or ruled out ("Choice A is not
    possible because ...", "The park is not mentioned."), and the clause before one that says "so they will
    not go there", are set aside before an answer's content is weighed. The answer left standing is read;
    the rejected choices are no tour of the choices and no conflict. Where a question's own choices say so
    ("Not mentioned."), nothing is set aside.

    >>> content = ChoiceContent(["To the park.", "To the library.", "To the museum."])
    >>> REJECTED_CHOICE.set_aside("They go to the museum. The park is closed, so they will not go there.", content)
    'They go to the museum.'
    >>> REJECTED_CHOICE.set_aside("Choice A is not possible because the park is closed. So, the museum.", content)
    ' So, the museum.'
    """

    name = "rejected-choice"
    patterns = (REJECTS, REJECTS_THE_CLAUSE_BEFORE)
    gives_own = False

    def set_aside(self, text: str, content: ChoiceContent) -> str:
        return content.without_rejected(text)

    def apart(self, text: str, answer) -> str:
        """``text``, what follows an answer the checks weigh (``answer``, a checks.Answer), without the clauses
        that reject a choice."""
        return self.set_aside(text, answer.choices.content)

    def rejects(self, text: str, content: ChoiceContent) -> bool:
        """Whether ``text``, what follows a choice's letter and text, begins by rejecting it ("(A) To the park
        is not correct")."""
        return not content.rejections_are_answers and bool(REJECTS.match(text.lstrip(" ,")))


REJECTED_CHOICE = RejectedChoice()
