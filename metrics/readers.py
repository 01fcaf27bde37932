"""Answer readers: how a model's raw text becomes what the metrics score.

A reader turns a ScrQA output into a choice letter and a ScrRec output into a recovered sentence. There are
two, with one interface (:class:`AnswerReader`), chosen by name with :func:`get_reader`:

- ``paper``: the authors' ``answer_cleansing`` rules, exactly, quirks included. It reproduces their parsed
  letters and sentences on every row of their released outputs, so the paper's tables can be recomputed.
- ``careful`` (the default): what a careful human reader would read. It also understands the shapes modern
  chat models answer in (markdown, quotes, "Answer: B", a restated question), and it declines to read an
  answer where there is none (an echo of the prompt, a hedge between two choices).

Every reading says which rule decided (:class:`Reading`), so disagreements between the readers can be
counted by rule. Pure functions over strings, no I/O; model output is only ever matched with regular
expressions and compared as text, never evaluated as code (the authors' scorer calls ``eval()`` on it).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from scrambled_bench.choices import LETTERS
from scrambled_bench.errors import ScrambledBenchError

#: Recovery rules that take nothing away but surrounding whitespace: the output was the sentence as it is.
UNCHANGED_RECOVERY_RULES = frozenset({"plain", "paper-strip", "empty"})


@dataclass(frozen=True)
class AnswerFormat:
    """What a reader needs to know of a dataset: how its prompts ask for the answer."""

    letters: str
    """The letters the prompt offers ("among A through D"); the paper's parser looks for exactly these."""
    chain_of_thought: bool
    """Whether the answer ends a worked solution ("... the answer is (C).") rather than starting the output."""
    context_marker: str
    """The prompt's context line ("Evidence: ", "Dialogue: "), where the paper's rule 2 cuts a repeated prompt."""


#: Per dataset, as the paper prompts it: RealtimeQA evidence "among A through D", DREAM dialogues "A through
#: C", AQuA five choices with a chain of thought.
ANSWER_FORMATS = {
    "realtimeqa": AnswerFormat("ABCD", False, "Evidence: "),
    "dream": AnswerFormat("ABC", False, "Dialogue: "),
    "aqua": AnswerFormat("ABCDE", True, "Question: "),
}
DATASET_LETTERS = {dataset: answer_format.letters for dataset, answer_format in ANSWER_FORMATS.items()}


@dataclass(frozen=True)
class Reading:
    """What a reader read from one output, and the name of the rule that decided.

    ``value`` is the letter (``"A"``..``"E"``) for a choice task or the cleaned sentence for recovery;
    ``None`` means nothing was read, and ``rule`` then says why ("empty", "hedge", "prompt-echo", ...).

    >>> Reading("B", "leading-letter").value
    'B'
    """

    value: str | None
    rule: str


@runtime_checkable
class AnswerReader(Protocol):
    """The interface both readers share."""

    name: str

    def read_choice(self, output: str, choices: Sequence[str], *, dataset: str) -> Reading:
        """The choice letter ``output`` answers with; ``dataset`` is "realtimeqa", "dream" or "aqua"."""
        ...

    def read_recovery(self, output: str) -> Reading:
        """The recovered sentence of a ScrRec ``output``."""
        ...


def parse_choices(prompt: str) -> list[str]:
    """The choice texts of a prompt's last ``Choices: (A)... (B)...`` line, in letter order.

    The released ScrQA files keep the prompt but not the choices; this recovers them.

    >>> parse_choices("Question: Who?\\nChoices: (A)Ann (B)Bob (C)Cy\\nAnswer:")
    ['Ann', 'Bob', 'Cy']
    >>> parse_choices("Choices: (A)5(√3 + 1) (B)6(√3 + √2)")
    ['5(√3 + 1)', '6(√3 + √2)']
    >>> parse_choices("no choices here")
    []
    """
    lines = [line for line in prompt.splitlines() if line.startswith("Choices:")]
    if not lines:
        return []
    line = lines[-1][len("Choices:") :]
    # Walk the markers in letter order so a "(B)" inside a choice text of A cannot cut it short.
    starts: list[tuple[int, int]] = []
    position = 0
    for letter in LETTERS:
        found = line.find(f"({letter})", position)
        if found < 0:
            break
        starts.append((found, found + 3))
        position = found + 3
    return [
        line[end : (starts[i + 1][0] if i + 1 < len(starts) else len(line))].strip()
        for i, (_, end) in enumerate(starts)
    ]


def _check_arguments(output: object, choices: Sequence[str], dataset: str) -> AnswerFormat:
    """The dataset's answer format, after checking the arguments a reader was given."""
    if dataset not in ANSWER_FORMATS:
        raise ValueError(
            f"unknown dataset {dataset!r}; choose {', '.join(list(ANSWER_FORMATS)[:-1])} or {list(ANSWER_FORMATS)[-1]}"
        )
    if not isinstance(output, str):
        raise TypeError(f"output must be a string, got {type(output).__name__}")
    answer_format = ANSWER_FORMATS[dataset]
    letters = answer_format.letters
    if isinstance(choices, str) or not 1 <= len(choices) <= len(letters):
        count = "a string" if isinstance(choices, str) else str(len(choices))
        raise ValueError(f"{dataset} takes a list of 1 to {len(letters)} choice texts, got {count}")
    return answer_format


def _check_output(output: object) -> None:
    if not isinstance(output, str):
        raise TypeError(f"output must be a string, got {type(output).__name__}")


# ================================================================ the paper's reader


# Rule 2: where the authors cut off a model that went on to repeat the prompt, then the dataset's context
# marker. The stored utils.py cuts at "Dialogue: " for RealtimeQA too; "Evidence: " (the README's rule) gives
# the same result on every released row, and it is the marker a RealtimeQA prompt actually has.
_PAPER_REPETITION_MARKERS = ("Answer: ", "Question: ", "Choices: ")


class PaperReader:
    """The authors' ``answer_cleansing`` (``utils.py`` of ccqq77/unnatural-error-correction), rule by rule.

    ScrQA, RealtimeQA and DREAM (zero-shot):

    1. If no choice text contains a ".", keep only the part of the output before its first ".".
    2. Keep the part before the first "Answer: ", of that the part before the first "Question: ", then
       before "Choices: ", then before "Evidence: " (RealtimeQA) or "Dialogue: " (DREAM).
    3. Letters: every capital A-D (RealtimeQA) or A-C (DREAM) anywhere, in order, as single characters.
    4. Choice texts: every non-overlapping, case-sensitive occurrence of any choice text (one alternation in
       choice order); then drop each found text that is a substring of another, different found text, by
       removing from the list while walking over it (so the element after a removed one is skipped, as in
       the authors' Python); map the rest to letters with ``choices.index``.
    5. Nothing found: no answer ("paper-none"). Choice texts found: the letter of the first remaining one
       ("paper-choice-text"); otherwise the first letter ("paper-first-letter").

    AQuA (chain of thought): 6. the first capital A-E after the last "answer is " ("paper-answer-is"); no
    answer when there is no "answer is " or no such capital after it.

    ScrRec: 7. the part before "Scrambled sentence:" if there is one ("paper-cut-scrambled"), then
    surrounding whitespace stripped ("paper-strip"); the value is always a string, "" included, as the
    authors scored it.

    Where these rules are knowingly crude (kept, because they are the paper's):

    - any capital A-D anywhere counts as a letter: the "A" of "A man", the "C" of "USA" or "Cyclone", the
      "B" of "Based on the evidence";
    - a choice's text anywhere beats a letter, so "(C) At seven fifty" reads as the choice "At seven" (B),
      and a choice text that happens to be a substring of the explanation wins over the stated letter;
    - rule 1 keeps only what comes before the first "." when no choice has one, so "Not A. The answer is
      (B)." reads as A;
    - a hedge ("(A) or (B)") reads as its first letter, an echo of the prompt reads as the "A" of "Answer"
      or of "among A through D" if rule 2 left any, and a letter outside the choices counts (AQuA);
    - in AQuA, "the answer is 6, but ... Alternatively" reads as A, and a final ``\\boxed{(C)}`` without
      the words "answer is" reads as nothing.

    >>> paper = PaperReader()
    >>> choices = ["Salad dressing", "Baby formula", "Ground beef", "Whole milk"]
    >>> for output in ["(B)Baby formula", " C.\\n", "A map, I think", "not clear."]:
    ...     print(f"{output!r:18} {paper.read_choice(output, choices, dataset='realtimeqa')}")
    '(B)Baby formula'  Reading(value='B', rule='paper-choice-text')
    ' C.\\n'            Reading(value='C', rule='paper-first-letter')
    'A map, I think'   Reading(value='A', rule='paper-first-letter')
    'not clear.'       Reading(value=None, rule='paper-none')
    >>> paper.read_choice("So 3 x 4 = 12. The answer is (E).", list("12345"), dataset="aqua").value
    'E'
    >>> paper.read_recovery(" The cat sat.\\nScrambled sentence: Teh cta")
    Reading(value='The cat sat.', rule='paper-cut-scrambled')
    """

    name = "paper"

    def read_choice(self, output: str, choices: Sequence[str], *, dataset: str) -> Reading:
        """The authors' letter for ``output`` (rules 1-6); ``value`` None where their parse gave ""."""
        answer_format = _check_arguments(output, choices, dataset)
        if answer_format.chain_of_thought:
            return self._read_chain_of_thought(output)
        letters = answer_format.letters
        choices = list(choices)
        text = output
        if not any("." in choice for choice in choices):  # rule 1
            text = text.split(".")[0]
        for marker in (*_PAPER_REPETITION_MARKERS, answer_format.context_marker):  # rule 2
            text = text.split(marker)[0]
        found_letters = re.findall("|".join(letters), text)  # rule 3
        found_texts = re.findall("|".join(re.escape(choice) for choice in choices), text)  # rule 4
        # The authors' loop removes from the list it walks over, which skips the element after each removed
        # one; this is deliberate, to reproduce their parse exactly.
        for found in found_texts:
            if any(found in other for other in found_texts if found != other):
                found_texts.remove(found)
        if found_texts:  # rule 5: choice texts win over letters
            return Reading(letters[choices.index(found_texts[0])], "paper-choice-text")
        if found_letters:
            return Reading(found_letters[0], "paper-first-letter")
        return Reading(None, "paper-none")

    @staticmethod
    def _read_chain_of_thought(output: str) -> Reading:
        if "answer is " not in output:  # rule 6
            return Reading(None, "paper-none")
        found = re.search("A|B|C|D|E", output.split("answer is ")[-1])
        return Reading(found.group(), "paper-answer-is") if found else Reading(None, "paper-none")

    def read_recovery(self, output: str) -> Reading:
        """The authors' ``recovered`` for a ScrRec ``output`` (rule 7)."""
        _check_output(output)
        if "Scrambled sentence:" in output:
            return Reading(output.split("Scrambled sentence:")[0].strip(), "paper-cut-scrambled")
        return Reading(output.strip(), "paper-strip")


# ================================================================ the careful reader

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
_ECHO = re.compile(r"(?<![A-Za-z])(?:Question|Choices|Options|Evidence|Dialogue|Context|Passage)\s*:")

# A letter standing alone: what may follow it so that it is the letter and not the article "A" of
# "A map" or the initial of "D.C.".
_BARE_END = (
    r"(?=\s*$|\s*\n|[):\]}]|[.,;!?](?![A-Za-z0-9])|\s*[\u2013\u2014]|\s+-\s|\s+\("
    r"|\s+(?:or|and|is|was|would|seems|appears|looks|fits|matches|because|since)\b)"
)
# A letter in any common quoting or bracketing, optionally inside LaTeX's \boxed{\textbf{...}}.
_LETTER_FORM = re.compile(
    r"(?:\$?\\boxed\s*\{\s*(?:\\(?:text|textbf|mathrm|mathbf)\s*\{\s*)?)?"
    # in brackets a lower-case letter is a letter too ("(b)"), bare it is a word ("a map")
    r"(?:\(\s*(?P<round>[A-Ea-e])\s*\)|\[\s*(?P<square>[A-Ea-e])\s*\]|\{\s*(?P<curly>[A-E])\s*\}"
    r"|\"\s*(?P<double>[A-E])\s*\"|'\s*(?P<single>[A-E])\s*'|(?P<bare>[A-E])" + _BARE_END + ")"
)
# Labels that may stand before a leading letter: "Answer:", "Final answer -", "Option", "Choice".
_LABEL = re.compile(
    r"(?:(?:the\s+)?(?:final|correct|best|right|my)\s+)?(?:answer|option|choice|letter)\b\s*[:\-=\u2013\u2014]?\s*",
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
    r"\b(?:answer|option|choice)(?:\s+(?:choice|option|letter))?\s*(?:is\b|would\s+be|should\s+be|must\s+be"
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
# How far after a letter or a statement the reader looks for the words that go with it (a choice's text,
# "or (B)"): far more than any choice's text, and it keeps reading a long degenerate output linear.
_NEAR = 400
# After a number, more of a number or of a calculation: "6 - 2 = 4" does not state the choice "6".
_GOES_ON = re.compile(r"\s*(?:[-+*/^=:\u00d7\u00f7]|[.,]?\d)")
# After any choice text, another quantity joined to it: "2 hours and 30 minutes" is not "2 hours".
_GOES_ON_WITH_NUMBER = re.compile(r"\s+(?:and|plus|minus|times)\s+\d", re.IGNORECASE)
# Words that, up to three words before a choice's text, keep it from being the answer ("never mentions
# Microsoft", "doesn't say", "whether it is").
_NEGATING = {"not", "no", "nor", "never", "neither", "than", "instead", "t", "cannot", "without", "except"}
_NEGATING |= {"whether", "if", "unlike"}
# The prompt's own last line, repeated without an answer after it.
_PROMPT_LEAD_IN = re.compile(r"Based on the \w+, among the choices, the answer is\W*$", re.IGNORECASE)
_LEADING_SYMBOLS = re.compile(r"^[^\w(\[{\"'\\$]+")
_LISTED_CHOICE = re.compile(r"[ \t]*[(\[]?([A-E])[)\].:][ \t]*([^\n]*)\n")


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


def _skip_listed_choices(text: str, choices: _Choices) -> str:
    """``text`` after a list of the choices the model copied before answering ("A. ...\\nB. ...\\n")."""
    position, listed = 0, 0
    while line := _LISTED_CHOICE.match(text, position):
        letter = line.group(1)
        if (
            letter not in choices.valid
            or _tokens(line.group(2)) != choices.tokens[choices.valid.index(letter)]
        ):
            break
        position, listed = line.end(), listed + 1
    return text[position:] if listed >= 2 else text


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


class CarefulReader:
    """What a careful human reader reads as the model's answer.

    ScrQA on RealtimeQA and DREAM (zero-shot), rules in priority order; the first that reads decides:

    1. "empty": nothing but whitespace and markdown.
    2. Only what comes before the model starts repeating the prompt counts (a "Question:", "Choices:",
       "Evidence:", "Dialogue:" ... marker): "B. Question: ..." reads B. If nothing before it answers:
       "answer-after-echo" where the echo restates this very question (its "Choices:" are these choices)
       and then answers it; otherwise "prompt-echo" (a pure echo, or a new question the model made up).
       The prompt's "among A through D" never counts as naming letters.
    3. "choice-text": the whole output is one choice's text, case and punctuation aside (“Red squirrels”
       for "Red squirrels."). A copy of the choices listed line by line ("A. ...\\nB. ...") is skipped.
    4. "leading-letter": the output starts with a letter in any common quoting or bracketing ("(B)",
       "[B]", "(b)", "**B**", "B)", "B:", "B.", "'C'", "“B”: ...", "«A»", "\\boxed{B}", "Option B",
       "Answer: B", "Final answer - (C)"), after bullets or emoji if any. A capital followed by a word is
       the article or a pronoun ("A map is ...", "I think ..."), not a letter. "cut-off-lead-in": the same
       after a fragment of a word ("s A.": the generation began mid-word).
    5. "choice-text": the output starts with a choice's text and goes on ("Ground beef, according to
       ...", also after "It's" or "Probably"); the longest such choice wins, two spelled alike tie.
    6. "answer-is": the first statement that commits to an answer, anywhere ("the answer is (C)",
       "Answer: B", "the correct option is D", "I'd go with", "I think it's", "so (B).", "closest to (A)",
       "which is choice (B)", "the only choice that fits is (A)"), followed by a letter form or a choice's
       text. Not statements: "Let's check each option:" (goes through the choices), a question ("Could
       the answer be (B)?") and a hypothesis ("If x were 4, the answer would be (B).").
    7. "named-letter": the only letter named unmistakably ("(A)", "[A]", "'A'", "Option A", "A is
       correct", or a letter opening a line of its own); letters ruled out ("not (B)", "(B) is wrong")
       do not count. Two or more: "ambiguous".
    8. "choice-mention": a one-sentence output, not a question, that contains exactly one choice's text,
       not after a negation ("They are in a library." reads "In a library."; "The evidence never mentions
       Microsoft." reads nothing).
    9. Nothing read: "hedge" if an answer was offered beside another on the way, "prompt-echo" if the
       output only repeats the prompt's last line, else "no-answer".

    Every letter read is checked: one that is not among the choices gives no answer
    ("letter-outside-choices"), as does one whose following words are exactly another choice's text
    ("letter-text-conflict", e.g. "(C) Microsoft" when Microsoft is B). One offered beside another in the
    same sentence ("(A) or (B)", "either A or C", "Red squirrels or pine martens", but not the choice's
    own words, as in "(C) Both A and B") is no commitment: the search goes on down the rules.

    AQuA (chain of thought): rule 2's cut, then "answer-is": the answer of the last statement that states
    one ("the answer is (C)", "... C", "\\boxed{C}", the choice's text, "The closest answer choice is
    (D)"), "hedge" if that statement hedges; then "boxed": the last ``\\boxed{...}`` holding a letter or a
    choice's text; then "named-letter": the one letter the last sentence names and does not rule out
    ("Since choice (C) works, ...", "... = (A)."); then "no-answer". A number that goes on ("the answer is
    6 - 2 = 4") is not the choice "6".

    Knowingly left unread (no answer rather than a guess): a bare lower-case letter ("b"), part of a
    choice's text ("A restaurant" for "At a restaurant."), a choice mentioned inside a longer explanation
    that never commits, an equivalent quantity ("2 hours and 30 minutes" for "2.5 hours").

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
        answer_format = _check_arguments(output, choices, dataset)
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
        verdict = _Verdict()
        # leading punctuation, bullets, arrows and emoji ("✅ B", "-> (C)") carry no answer
        text = _LEADING_SYMBOLS.sub("", region.strip())
        if not text:
            return Reading(None, "no-answer")
        spelled = choices.exactly(text)
        if spelled:
            return Reading(spelled, "choice-text")
        text = _skip_listed_choices(text, choices)
        rules = (
            self._leading_letter,
            self._leading_choice_text,
            self._first_statement,
            self._named_letter,
            self._mentioned_choice,
        )
        for rule in rules:  # in priority order; a hedge seen on the way is remembered in the verdict
            reading = rule(text, choices, verdict)
            if reading is not None:
                return reading
        if verdict.hedged:
            return Reading(None, "hedge")
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
                if _offers_another(_words_after(text[start:], words), letter, choices):
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
        words = _tokens(sentences[0])
        found: list[tuple[int, int, str]] = []  # (start, end, letter) of each choice's words in the sentence
        for index, tokens in enumerate(choices.tokens):
            for start in range(len(words) - len(tokens) + 1 if tokens else 0):
                negated = _NEGATING & set(words[max(0, start - 3) : start])
                if words[start : start + len(tokens)] == tokens and not negated:
                    found.append((start, start + len(tokens), choices.valid[index]))
        # a choice inside the words of a longer one ("at seven" in "at seven fifty") is not mentioned itself
        found = [f for f in found if not any(o[0] <= f[0] and f[1] <= o[1] and o != f for o in found)]
        letters = {letter for _, _, letter in found}
        if len(letters) == 1:
            return Reading(letters.pop(), "choice-mention")
        if len(letters) > 1 and {"or", "either"} & set(words):
            verdict.hedged = True
        return None

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
        _check_output(output)
        return _read_recovery(output)


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


def _judge_letter(letter: str, rest: str, rule: str, choices: _Choices, verdict: _Verdict) -> Reading | None:
    """A letter read by ``rule`` checked: one of the choices, not contradicted, not hedged."""
    if _NEGATED_AFTER.match(rest):  # "(A) is wrong, ..." names a letter to rule it out
        return None
    if letter not in choices.valid:
        return Reading(None, "letter-outside-choices")
    after = rest.lstrip(" )].:-\u2013\u2014\t")
    said = _sentence_rest(after)
    own = choices.tokens[choices.valid.index(letter)]
    other = choices.exactly(said)
    if other and other != letter and _tokens(said) != own:
        return Reading(None, "letter-text-conflict")
    if own and _tokens(after[:_NEAR])[: len(own)] == own:
        rest = _words_after(after, len(own))  # "(C) Both A and B": the choice's own words offer nothing else
    if _offers_another(rest, letter, choices):
        verdict.hedged = True
        return None
    return Reading(letter, rule)


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
    return None


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


# ---------------------------------------------------------------- ScrRec: the careful reader's side

# The prompt format repeated after the answer (base models), or the model's restating of the input.
_SCRAMBLED_MARKER = re.compile(r"(?:^|(?<=\s))(?:The\s+)?Scrambled(?:\s+sentence)?\s*:", re.IGNORECASE)
_RECOVERED_MARKER = re.compile(
    r"(?:^|(?<=\s))(?:The\s+)?(?:Recovered|Unscrambled)\s+sentence\s*:", re.IGNORECASE
)
_FENCE = re.compile(r"```[^\n`]*\n(.*?)\n?[ \t]*```", re.DOTALL)
_RECOVERY_WORDS = (
    r"(?:recovered|original|unscrambled|descrambled|corrected|restored|fixed|reconstructed|decoded|"
    r"rearranged|unjumbled|correct|recovery|unscrambling)"
)
# "Sure! The original sentence is:", "Here is the recovered sentence:", "Recovered sentence:",
# "Unscrambled:", "Sure, here's the sentence with the words unscrambled:".
_PREAMBLE = re.compile(
    r"^(?:(?:sure|certainly|of\s+course|okay|ok|alright|absolutely|great|here\s+you\s+go)\b[!,.]*\s*)?"
    r"(?:(?:here(?:'s|\u2019s|\s+is)|this\s+is)\s+(?:the\s+|your\s+|my\s+)?[^:\n]{0,60}?:"
    r"|(?:the\s+|your\s+)?" + _RECOVERY_WORDS + r"(?:\s+(?:sentence|text|version))?"
    r"(?:\s+(?:is|would\s+be|reads|should\s+read))?\s*:"
    r"|(?:the\s+)?(?:sentence|text)\s+" + _RECOVERY_WORDS + r"\s*:)[ \t]*\n?",
    re.IGNORECASE,
)
# A first line of its own that introduces the sentence: short, ends with ":", speaks of recovering.
_PREAMBLE_LINE = re.compile(
    r"^[^\n]{0,100}(?:" + _RECOVERY_WORDS + r"|sentence|here)[^\n]{0,60}:[ \t]*\n", re.IGNORECASE
)
_NOTE_START = (
    r"\(?\s*(?:Note|NB|N\.B\.|P\.S\.|Explanation|Changes|Corrections?|Translation)\b"
    r"|\(?\s*I(?:\s+have|'ve|\u2019ve)?\s+(?:corrected|unscrambled|fixed|rearranged|recovered|changed|assumed|"
    r"kept|made|interpreted|replaced|reordered|unjumbled|descrambled|restored)\b"
    r"|\(?\s*(?:This|The)\s+(?:recovered\s+|original\s+|unscrambled\s+)?(?:sentence|text)\s+(?:was|has|is|now)\b"
    r"|\(?\s*(?:Let\s+me\s+know|I\s+hope|Hope\s+this)\b"
)
_NOTE_LINE = re.compile(r"\n[ \t]*(?:[-*][ \t]+)?(?:" + _NOTE_START + r")", re.IGNORECASE)
# A note on the sentence's own line: "... outbreaks. (I unscrambled each word.)", "... Note: I corrected".
_INLINE_NOTE = re.compile(
    r"(?<=[.!?\"')\u201d\u2019])[ \t]+(?:\((?:"
    + _NOTE_START
    + r")[^()\n]*\)|(?:Note|NB|P\.S\.)\s*:[^\n]*)[ \t]*$",
    re.IGNORECASE,
)
_WRAPPING_QUOTES = {
    '"': '"',
    "\u201c": "\u201d",
    "\u201e": "\u201c",
    "\u00ab": "\u00bb",
    "'": "'",
    "\u2018": "\u2019",
}


def _read_recovery(output: str) -> Reading:
    """The careful reader's ScrRec side; the steps are listed in :meth:`CarefulReader.read_recovery`."""
    text = output.strip()
    if not text:
        return Reading(None, "empty")
    applied: list[str] = []

    scrambled = _SCRAMBLED_MARKER.search(text)
    if scrambled and scrambled.start() == 0:
        recovered = _RECOVERED_MARKER.search(text, scrambled.end())
        if recovered:  # the model restated the scrambled input, then answered
            text = text[recovered.start() :]
            applied.append("prompt-continuation")
        else:  # "The scrambled sentence: <a recovered sentence>": a mislabelled lead-in
            text = text[scrambled.end() :].lstrip()
            applied.append("preamble")
        scrambled = _SCRAMBLED_MARKER.search(text)
    if scrambled:
        text = text[: scrambled.start()].strip()
        applied.append("prompt-continuation")

    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
        applied.append("code-fence")

    for _ in range(2):  # "Sure! Here is the recovered sentence:\nRecovered sentence: ..."
        preamble = _PREAMBLE_LINE.match(text + "\n") or _PREAMBLE.match(text)
        if not preamble:
            break
        text = text[preamble.end() :].strip()
        applied.append("preamble")

    # a note on a line of its own, then one on the sentence's own line
    for note_pattern in (_NOTE_LINE, _INLINE_NOTE):
        note = note_pattern.search(text)
        if note:
            text = text[: note.start()].rstrip()
            applied.append("trailing-note")

    if text.startswith("**") and text.endswith("**") and len(text) > 4 and "**" not in text[2:-2]:
        text = text[2:-2].strip()
        applied.append("quotes")
    closing = _WRAPPING_QUOTES.get(text[:1])
    if closing and len(text) > 2 and text.endswith(closing) and _quotes_only_at_the_ends(text):
        text = text[1:-1].strip()
        applied.append("quotes")

    if not text:
        return Reading(None, "empty")
    return Reading(text, applied[0] if applied else "plain")


def _quotes_only_at_the_ends(text: str) -> bool:
    """Whether the quote marks opening and closing ``text`` wrap it, rather than quote a part of it.

    ``"We won," he said. "Great."`` opens and closes with a quote that belongs to the sentence itself; an
    apostrophe between two letters ("Wendy's") is no quote.
    """
    inner = text[1:-1]
    if text[0] in "'\u2018":
        return not re.search(r"(?<![^\W\d_])['\u2018\u2019]|['\u2018\u2019](?![^\W\d_])", inner)
    return not re.search('["\u201c\u201d\u201e\u00ab\u00bb]', inner)


# ================================================================ choosing a reader

READERS: dict[str, AnswerReader] = {"paper": PaperReader(), "careful": CarefulReader()}
DEFAULT_READER = "careful"


def get_reader(name: str) -> AnswerReader:
    """The answer reader called ``name`` ("paper" or "careful").

    >>> get_reader("careful").name
    'careful'
    >>> get_reader("authors")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: unknown answer reader 'authors'; choose paper or careful
    """
    try:
        return READERS[name]
    except (KeyError, TypeError):
        raise ScrambledBenchError(f"unknown answer reader {name!r}; choose paper or careful") from None
