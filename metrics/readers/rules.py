"""The careful reader's zero-shot rules (RealtimeQA and DREAM): the steps that prepare an output, the rules
that read a letter from it, and the reasons for reading none. Each is a named :class:`Rule`; the reader runs
them in the orders :mod:`~scrambled_bench.metrics.readers.careful` declares, and the rulebook,
docs/readers/rules.md, has a section for each."""

from __future__ import annotations

import re

from scrambled_bench.metrics.readers.common import Reading
from scrambled_bench.metrics.readers.content import REJECTED_CHOICE
from scrambled_bench.metrics.readers.letters import (
    judge_letter,
    mismatched_words,
    named_letters,
    read_stated,
)
from scrambled_bench.metrics.readers.question import (
    ALTERNATIVE,
    Choices,
    holds_another_text,
    names_choices,
    offers_another,
)
from scrambled_bench.metrics.readers.shapes import (
    ANSWER_STATEMENT,
    FILLER,
    LABEL,
    LETTER_FORM,
    NAMED_LETTER,
    SCRAMBLED_WORD,
    is_scrambled_echo,
    letter_of,
    line_of,
    outermost,
    short_sentences,
    statements,
    tokens,
    undenied,
    words_after,
)
from scrambled_bench.metrics.readers.units import Rule, Verdict

# How often an output must state a choice's content, in other words, for that to be its answer; once is
# enough in a short answer (this many sentences at most).
REPEATED = 2
SHORT_ANSWER = 3

_CHOICES = Choices(["Amazon", "Microsoft", "Meta", "Google"])  # the examples' question


# ------------------------------------------------------------------ steps: preparing the output


_LISTED_LINE = re.compile(r"^[ \t]*[(\[]?([A-Z])[)\].:][^\n]*", re.MULTILINE)
_INLINE_RECITAL = re.compile(
    r"^[ \t]*[(\[]?A[)\].:][^\n(\[]*[(\[]B[)\]][^\n(\[]*[(\[]C[)\]][^\n]*", re.MULTILINE
)
# Three lettered options or more in a row within a line, in any order and after any words ("The answer is
# A) Australia (B) South Africa (C) New Zealand (D) Brazil"): a shuffled recital. The words between two
# letters end no sentence ("(C). Not (A), not (B)." is no recital).
_LABELLED_OPTION = r"[(\[]?\b[A-Z][)\]][ \t]*(?:[^\n()\[\].!?]|[.!?](?![ \t\n]|$))*"
_SHUFFLED_RECITAL = re.compile(rf"(?:{_LABELLED_OPTION}){{3,}}")


class Recital(Rule):
    """Lists of the options an output recites are set aside before any rule reads; a recital and nothing else
    reads none.

    A recital is two or more lines in a row (blank lines between them allowed) that start with the letters
    in order from A, whatever follows them: the model copied (or rewrote) the options, which answers
    nothing. A model in a loop may go on past the question's letters ("D: He is calling.\\nE: He is ill.\\nF:
    He is ill. ..."), and so does the recital. Three or more options in order from A on one line ("A)Orange
    (B)Lime (C)Raspberry (D)Blueberry") are a recital too, and so is a line that lists three lettered options
    or more in any order and names three choices by their text.

    >>> RECITAL.set_aside("A) Amazon\\nB) Meta\\n\\nThe answer is (B).", _CHOICES)
    ('\\n\\n\\nThe answer is (B).', True)
    >>> RECITAL.set_aside("A)Orange (B)Lime (C)Raspberry\\nThe answer is (C).", _CHOICES)
    ('\\n\\nThe answer is (C).', True)
    >>> RECITAL.set_aside("A) Amazon, because ...\\nThe answer is (A).", _CHOICES)
    ('A) Amazon, because ...\\nThe answer is (A).', False)
    """

    name = "recital"
    patterns = (_LISTED_LINE, _INLINE_RECITAL, _SHUFFLED_RECITAL)

    def set_aside(self, text: str, choices: Choices) -> tuple[str, bool]:
        """``text`` without the lists of the options it recites, and whether it had one."""
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
            line_of(
                text, run.start(), run.end()
            )  # the whole line: "Typhoon Doksuri (C)Typhoon Khanun (D)..."
            for run in _SHUFFLED_RECITAL.finditer(text)
            if len(set(re.findall(r"\b([A-Z])[)\]]", run.group()))) >= 3
            and names_choices(run.group(), choices) >= 3
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

    def explains(self, text: str, verdict: Verdict) -> bool:
        """Nothing read, and the output was a recital and nothing else."""
        return verdict.recited and not text.strip()


# "A:" at the start of an output and text after it: a question-and-answer format's label.
_ANSWER_LABEL = re.compile(r"A[ \t]*:(?=\s*\S)")


class AnswerLabel(Rule):
    """An "A:" at the start of an output, followed by text, is an answer label (as in "Q: ... A: ...", the
    form SmolLM2 uses in "A: The answer is (B)."), not the letter A: the output is read without it, and the
    choice is whatever the text after it states ("A: Rainy." is C when Rainy is C). "A)", "(A)", "A." and a
    bare "A" remain the letter A. (The ruling of issue 45.)

    >>> ANSWER_LABEL.apply("A: Meta, it bought the firm.", _CHOICES)
    'Meta, it bought the firm.'
    >>> ANSWER_LABEL.apply("A:\\n\\nThe answer is (B).", _CHOICES)
    'The answer is (B).'
    >>> [ANSWER_LABEL.apply(text, _CHOICES) for text in ("A) Meta", "A. Meta", "A:", "A")]
    ['A) Meta', 'A. Meta', 'A:', 'A']
    """

    name = "answer-label"
    patterns = (_ANSWER_LABEL,)
    gives_own = False

    def apply(self, text: str, choices: Choices) -> str:
        """``text`` without its opening "A:" where text follows it."""
        label = _ANSWER_LABEL.match(text)
        return text[label.end() :].lstrip() if label else text


# ------------------------------------------------------------------ reading a letter or a choice


class LeadingLetter(Rule):
    """The letter the output starts with, in any common quoting or bracketing ("(B)", "[B]", "(b)", "B)",
    "B:", "B.", "**B**", "'C'", "\\boxed{B}"), after a label ("Option B", "Answer: B", "A: (B)", "Final
    answer - (C)"). A capital followed by a word is the article or a pronoun ("A map is ..."), not a letter.

    >>> LEADING_LETTER.read(" C.\\n", _CHOICES, Verdict())
    Reading(value='C', rule='leading-letter')
    >>> LEADING_LETTER.read("A map is not mentioned.", _CHOICES, Verdict()) is None
    True
    """

    name = "leading-letter"
    patterns = (LABEL, FILLER, LETTER_FORM)
    also_gives = ("letter-outside-choices", "letter-text-conflict")

    @staticmethod
    def form_at(text: str, start: int) -> re.Match | None:
        """The letter form after a label and filler words at ``start``, if any."""
        label = LABEL.match(text, start)
        return LETTER_FORM.match(text, FILLER.match(text, label.end() if label else start).end())

    def read(self, text: str, choices: Choices, verdict: Verdict) -> Reading | None:
        form = self.form_at(text, 0)
        if form:
            return judge_letter(letter_of(form), text[form.end() :], self.name, choices, verdict)
        return None


# A generation that started mid-word: "s A." (the tail of "is"), "wer: B" (of "answer").
_CUT_OFF_LEAD_IN = re.compile(r"(?!(?:no|not|nor|or|and|but|if)\b)[a-z]{1,3}[:,]?\s+")


class CutOffLeadIn(Rule):
    """The same as ``leading-letter`` after the fragment of a word, where no letter leads: a generation that
    began mid-word ("s A." is the tail of "is A."; "wer: B" of "answer: B"). Not after "no", "not", "or",
    "and", "but", "if".

    >>> CUT_OFF_LEAD_IN.read("s A.", _CHOICES, Verdict())
    Reading(value='A', rule='cut-off-lead-in')
    """

    name = "cut-off-lead-in"
    patterns = (_CUT_OFF_LEAD_IN,)
    also_gives = ("letter-outside-choices", "letter-text-conflict")

    def read(self, text: str, choices: Choices, verdict: Verdict) -> Reading | None:
        if LeadingLetter.form_at(text, 0):  # a leading letter, read or declined by leading-letter
            return None
        fragment = _CUT_OFF_LEAD_IN.match(text)
        form = LeadingLetter.form_at(text, fragment.end()) if fragment else None
        if form:
            return judge_letter(letter_of(form), text[form.end() :], self.name, choices, verdict)
        return None


# A letter given to the choice text just before it: "The food they like and dislike is (B)."
_LETTER_AFTER_TEXT = re.compile(r"[ \t]*(?:(?:is|=|:|-|\u2013)[ \t]*)?[(\[]([A-E])[)\]]")


class ChoiceText(Rule):
    """The choice whose text the output is, or starts with. The whole output is one choice's text, case,
    punctuation and quotes aside (:meth:`whole`, tried before anything else); or the output starts with a
    choice's text and goes on ("Ground beef, according to the evidence", also after "It's" or "Probably"):
    the longest such choice wins, two spelled alike tie. A letter given to that text that is not its own
    ("Measles (D)") is a conflict; a sentence that goes on to offer another choice ("... or pine martens") or
    to hold another's whole text is a hedge.

    >>> CHOICE_TEXT.whole("“microsoft.”", _CHOICES)
    Reading(value='B', rule='choice-text')
    >>> CHOICE_TEXT.read("Microsoft, according to the evidence.", _CHOICES, Verdict())
    Reading(value='B', rule='choice-text')
    >>> CHOICE_TEXT.read("Microsoft (C)", _CHOICES, Verdict())
    Reading(value=None, rule='letter-text-conflict')
    """

    name = "choice-text"
    patterns = (FILLER, _LETTER_AFTER_TEXT)
    also_gives = ("letter-text-conflict",)

    def whole(self, text: str, choices: Choices) -> Reading | None:
        """The choice whose text the whole of ``text`` is."""
        spelled = choices.exactly(text)
        return Reading(spelled, self.name) if spelled else None

    def read(self, text: str, choices: Choices, verdict: Verdict) -> Reading | None:
        for start in (0, FILLER.match(text).end()):  # "Red squirrels, ...", "It's probably red squirrels."
            spelled = choices.prefix(text[start:])
            if spelled:
                letter, words = spelled
                after = words_after(text[start:], words)
                labelled = _LETTER_AFTER_TEXT.match(after)
                if labelled and labelled.group(1) != letter:  # "The food they like is (B)." with that food C
                    return Reading(None, "letter-text-conflict")
                if offers_another(after, letter, choices) or holds_another_text(after, letter, choices):
                    verdict.hedged = True
                    return None
                return Reading(letter, self.name)
        return None


class AnswerIs(Rule):
    """The answer of the first statement that commits to one, anywhere in the output ("the answer is (C)",
    "Answer: B", "I'd go with", "..., so (B).", "closest to (A)"), followed by a letter form, a choice's text
    or a short clause that states one choice's content ("the answer is Disneys." for Disney).

    >>> ANSWER_IS.read("Based on the evidence, the answer is (D).", _CHOICES, Verdict())
    Reading(value='D', rule='answer-is')
    """

    name = "answer-is"
    patterns = (ANSWER_STATEMENT,)
    also_gives = ("letter-outside-choices", "letter-text-conflict")

    def read(self, text: str, choices: Choices, verdict: Verdict) -> Reading | None:
        for statement in statements(text):
            reading = read_stated(text[statement.end() :], choices, verdict)
            if reading is not None:
                return reading
        return None


class NamedLetter(Rule):
    """The only letter the output names unmistakably ("(A)", "[A]", "'A'", "Option A", "A is correct", a
    letter opening a line of its own, "... is D."), not ruled out ("not (B)", "(B) is wrong"); two or more
    named: ``ambiguous``. A letter named on a line that states another choice's content and not its own is a
    conflict.

    >>> NAMED_LETTER_RULE.read("The man chooses option (B) as the answer.", _CHOICES, Verdict())
    Reading(value='B', rule='named-letter')
    >>> NAMED_LETTER_RULE.read("The first line names (A). The last one names (C).", _CHOICES, Verdict())
    Reading(value=None, rule='ambiguous')
    """

    name = "named-letter"
    patterns = (NAMED_LETTER,)
    also_gives = ("ambiguous", "letter-outside-choices", "letter-text-conflict")

    def read(self, text: str, choices: Choices, verdict: Verdict) -> Reading | None:
        named = named_letters(text, choices)
        if not named:
            return None
        valid = [letter for letter in named if letter in choices.valid]
        if not valid:
            return Reading(None, "letter-outside-choices")
        if len(named) == 1:
            letter = valid[0]
            if mismatched_words(letter, text[named[letter] :], choices) is not None:
                return Reading(None, "letter-text-conflict")  # "... is (C) The coming exams." with exams B
            # the line that names it, and no other letter, states another choice's content and not its own
            # ("The 13th Amendment, which abolished slavery, ... (D)" with the 13th Amendment C); a line that
            # rules letters out ("(A) is wrong ... that leaves (B)") reasons, and pairs no letter with content
            start, end = line_of(text, named[letter], named[letter])
            line = text[start:end]
            said = {choices.valid[index] for index in choices.content.statements(line)}
            if said and letter not in said and len(NAMED_LETTER.findall(line)) == 1:
                return Reading(None, "letter-text-conflict")
            if offers_another(text[named[letter] :], letter, choices):
                verdict.hedged = True
                return None
            return Reading(letter, self.name)
        if any(offers_another(text[end:], letter, choices) for letter, end in named.items()):
            verdict.hedged = True
            return None
        return Reading(None, "ambiguous")


class ScrambledEcho(Rule):
    """An output that copies the evidence back in its scrambled form states no choice by its content, whatever
    choice it names in passing: the content rules do not read it, and with nothing else read it is this.

    >>> SCRAMBLED_ECHO.holds("A toddler ltitadfneir White House rdnsoug, tnsgeti off security alerts.")
    True
    """

    name = "scrambled-echo"
    patterns = SCRAMBLED_WORD

    def holds(self, text: str) -> bool:
        return is_scrambled_echo(text)

    def explains(self, text: str, verdict: Verdict) -> bool:
        return verdict.scrambled


# Two letters given together as the answer, bare: "... are A and C."
_TWO_BARE_LETTERS = re.compile(r"\b(?:is|are|be)\s+[A-E]\s*(?:,|and|or|&)\s*[A-E]\b")


class ChoiceMention(Rule):
    """A one-sentence output that states exactly one choice: its text, not after a negation ("They are in a
    library." reads "In a library."), or a person-choice by the surname alone, and no other choice's content.

    >>> CHOICE_MENTION.read("The company that bought it was Microsoft.", _CHOICES, Verdict())
    Reading(value='B', rule='choice-mention')
    >>> CHOICE_MENTION.read("The evidence never mentions Microsoft.", _CHOICES, Verdict()) is None
    True
    """

    name = "choice-mention"
    patterns = (_TWO_BARE_LETTERS,)
    reads_content = True

    def read(self, text: str, choices: Choices, verdict: Verdict) -> Reading | None:
        sentences = short_sentences(REJECTED_CHOICE.set_aside(text, choices.content))
        if len(sentences) != 1 or sentences[0].rstrip().endswith("?"):  # a question back is no answer
            return None
        if verdict.hedged:  # the one sentence offered two answers ("(A) or (B)" beside a choice "OR")
            return None
        if _TWO_BARE_LETTERS.search(
            sentences[0]
        ):  # "The two speakers talking about the weather are A and C."
            verdict.hedged = True
            return None
        words = tokens(sentences[0])
        found: list[tuple[int, int, str]] = []  # (start, end, letter) of each choice's words in the sentence
        for index, own in enumerate(choices.tokens):
            found += [(start, start + len(own), choices.valid[index]) for start in undenied(words, own)]
        if not found:  # "Bassett won the Oscar.": a person is named by the surname alone
            found = [(0, 1, letter) for letter in choices.surnames_named(sentences[0])]
        letters = {letter for _, _, letter in outermost(found)}
        # the sentence may state another choice's content in other words ("... often stay up late reading and
        # that they work hard and play hard": one choice's text, another's content): then it states two
        stated = {choices.valid[index] for index in choices.content.covered(sentences[0])}
        if len(letters) == 1 and not stated - letters:
            return Reading(letters.pop(), self.name)
        if len(letters) > 1 and {"or", "either"} & set(words):
            verdict.hedged = True
        return None


class ChoiceParaphrase(Rule):
    """An output that states one choice's content, in its words or others, and no other choice's: again and
    again ("choice-paraphrase"), or once in a short answer of three sentences at most ("choice-mention").

    >>> CHOICE_PARAPHRASE.read("Microsoft made the offer. Microsoft paid the most.", _CHOICES, Verdict())
    Reading(value='B', rule='choice-paraphrase')
    """

    name = "choice-paraphrase"
    also_gives = ("choice-mention",)
    reads_content = True

    def read(self, text: str, choices: Choices, verdict: Verdict) -> Reading | None:
        text = REJECTED_CHOICE.set_aside(text, choices.content)  # "The park is not mentioned." states no park
        stated = choices.content.statements(text)
        # a person named by the surname alone, again and again ("Alejna Putellas ... Putellas")
        named = {} if stated else choices.surnames_named(text)
        if len(named) == 1 and max(named.values()) >= REPEATED:
            stated = [choices.valid.index(next(iter(named)))] * max(named.values())
        if not stated or len(set(stated)) != 1:
            return None
        letter = choices.valid[stated[0]]
        words = tokens(text)
        if any(  # another choice's whole text, which clauses may split ("Glass Onion: A Knives Out Mystery")
            other != letter and len(own) > 1 and undenied(words, own)
            for other, own in zip(choices.valid, choices.tokens, strict=True)
        ):
            return None
        if len(stated) >= REPEATED:
            return Reading(letter, self.name)
        if verdict.hedged:  # the short answer offered two ("(A) or (B)"), whatever content its words share
            return None
        return Reading(letter, "choice-mention") if len(short_sentences(text)) <= SHORT_ANSWER else None


# ------------------------------------------------------------------ why nothing was read


class Hedge(Rule):
    """Nothing read, and an answer was offered beside another on the way ("(A) or (B)", "either A or C",
    "Red squirrels or pine martens").

    >>> HEDGE.explains("(A) or (B)", Verdict(hedged=True))
    True
    """

    name = "hedge"
    patterns = (ALTERNATIVE, _TWO_BARE_LETTERS)

    def explains(self, text: str, verdict: Verdict) -> bool:
        return verdict.hedged


# The prompt's own last line, repeated without an answer after it.
_PROMPT_LEAD_IN = re.compile(r"Based on the \w+, among the choices, the answer is\W*$", re.IGNORECASE)
# Where a model starts repeating the prompt (or writing the next question of a few-shot prompt).
_ECHO = re.compile(r"(?<![A-Za-z])(?:Question|Choices|Options|Evidence|Dialogue|Context|Passage)\s*:")
# A line that opens with a DREAM speaker's mark ("M: Good evening ...", "W: ...") copies the dialogue: M and W are
# never choice letters. In a DREAM answer, so does a speaker's mark ("Woman: ...", "Man: ...") that opens a line,
# indented or not, or that follows the end of a sentence on the same line.
_SPEAKER_LINE = re.compile(r"(?:^|(?<=\n))[MW]:[ \t]")
_SPEAKER = r"(?:[MW]|Man|Woman):[ \t]"
_DIALOGUE_ECHO = re.compile(rf"(?:^|(?<=\n))[ \t]*{_SPEAKER}|(?<=[.!?])[ \t]+(?={_SPEAKER})")


class DialogueEcho(Rule):
    """An echo of the dialogue starts at a line that opens with a DREAM speaker's mark, "M:" or "W:"; in a DREAM
    answer also at "Man:" or "Woman:" opening a line (indented or not), or at any of these marks after the end
    of a sentence on the same line: "The woman will buy the red dress. W: I like this red one. M: ..." is read
    as "The woman will buy the red dress.". (The DREAM-only marks are issue 45's.)

    >>> DIALOGUE_ECHO.start("The man will go to the museum. W: Let's go. M: Good idea.", dialogue=True)
    30
    >>> DIALOGUE_ECHO.start("The man will go to the museum. W: Let's go. M: Good idea.", dialogue=False) is None
    True
    """

    name = "dialogue-echo"
    patterns = (_SPEAKER_LINE, _DIALOGUE_ECHO)
    gives_own = False
    also_gives = ("prompt-echo",)

    def start(self, text: str, *, dialogue: bool) -> int | None:
        """Where the echo of a dialogue starts in ``text`` (``dialogue``: the question has one, DREAM's)."""
        echo = (_DIALOGUE_ECHO if dialogue else _SPEAKER_LINE).search(text)
        return echo.start() if echo else None


class PromptEcho(Rule):
    """Where the model starts repeating the prompt (a "Question:", "Choices:", "Evidence:", "Dialogue:" ...
    marker, or the dialogue itself, :class:`DialogueEcho`): only what comes before counts. Nothing read, and
    the output only repeats the prompt's last line, or nothing came before the echo: this.

    >>> PROMPT_ECHO.start("B.\\nQuestion: Which product ...", dialogue=False)
    3
    >>> PROMPT_ECHO.explains("Based on the evidence, among the choices, the answer is", Verdict())
    True
    """

    name = "prompt-echo"
    patterns = (_ECHO, _PROMPT_LEAD_IN)

    def start(self, text: str, *, dialogue: bool) -> int | None:
        """Where the echo of the prompt (or of the dialogue) starts in ``text``, or None."""
        echo = _ECHO.search(text)
        starts = [echo.start()] if echo else []
        said = DIALOGUE_ECHO.start(text, dialogue=dialogue)
        return min([*starts, said] if said is not None else starts, default=None)

    def explains(self, text: str, verdict: Verdict) -> bool:
        return bool(_PROMPT_LEAD_IN.search(text))


class NoAnswer(Rule):
    """Nothing above read anything: the output criticises the options without choosing, says the evidence does
    not tell, states no choice's content, or states several.

    >>> NO_ANSWER.explains("The evidence does not mention any of the banks.", Verdict())
    True
    """

    name = "no-answer"

    def explains(self, text: str, verdict: Verdict) -> bool:
        return True


RECITAL = Recital()
ANSWER_LABEL = AnswerLabel()
LEADING_LETTER = LeadingLetter()
CUT_OFF_LEAD_IN = CutOffLeadIn()
CHOICE_TEXT = ChoiceText()
ANSWER_IS = AnswerIs()
NAMED_LETTER_RULE = NamedLetter()
SCRAMBLED_ECHO = ScrambledEcho()
CHOICE_MENTION = ChoiceMention()
CHOICE_PARAPHRASE = ChoiceParaphrase()
HEDGE = Hedge()
DIALOGUE_ECHO = DialogueEcho()
PROMPT_ECHO = PromptEcho()
NO_ANSWER = NoAnswer()
