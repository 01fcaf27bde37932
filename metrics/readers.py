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

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

LETTERS = "ABCDE"

#: The letters the paper's prompts offer per dataset (RealtimeQA "among A through D", DREAM "A through C",
#: AQuA five choices); the paper's parser looks for exactly these.
DATASET_LETTERS = {"realtimeqa": "ABCD", "dream": "ABC", "aqua": "ABCDE"}


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


def _check_arguments(output: object, choices: Sequence[str], dataset: str) -> str:
    """The dataset's letters, after checking the arguments a reader was given."""
    if dataset not in DATASET_LETTERS:
        raise ValueError(f"unknown dataset {dataset!r}; choose realtimeqa, dream or aqua")
    if not isinstance(output, str):
        raise TypeError(f"output must be a string, got {type(output).__name__}")
    letters = DATASET_LETTERS[dataset]
    if isinstance(choices, str) or not 1 <= len(choices) <= len(letters):
        count = "a string" if isinstance(choices, str) else str(len(choices))
        raise ValueError(f"{dataset} takes a list of 1 to {len(letters)} choice texts, got {count}")
    return letters


def _check_output(output: object) -> None:
    if not isinstance(output, str):
        raise TypeError(f"output must be a string, got {type(output).__name__}")


# ================================================================ the paper's reader


# Rule 2: where the authors cut off a model that went on to repeat the prompt. The stored utils.py cuts at
# "Dialogue: " for RealtimeQA too; "Evidence: " (the README's rule) gives the same result on every released
# row, and it is the marker a RealtimeQA prompt actually has.
_PAPER_REPETITION_MARKERS = {
    "realtimeqa": ("Answer: ", "Question: ", "Choices: ", "Evidence: "),
    "dream": ("Answer: ", "Question: ", "Choices: ", "Dialogue: "),
}


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
    >>> paper.read_choice("(B)Baby formula", choices, dataset="realtimeqa")
    Reading(value='B', rule='paper-choice-text')
    >>> paper.read_choice(" C.\\n", choices, dataset="realtimeqa")
    Reading(value='C', rule='paper-first-letter')
    >>> paper.read_choice("A map, I think", choices, dataset="realtimeqa").value
    'A'
    >>> paper.read_choice("not clear.", choices, dataset="realtimeqa")
    Reading(value=None, rule='paper-none')
    >>> paper.read_choice("So 3 x 4 = 12. The answer is (E).", list("12345"), dataset="aqua").value
    'E'
    >>> paper.read_recovery(" The cat sat.\\nScrambled sentence: Teh cta")
    Reading(value='The cat sat.', rule='paper-cut-scrambled')
    """

    name = "paper"

    def read_choice(self, output: str, choices: Sequence[str], *, dataset: str) -> Reading:
        """The authors' letter for ``output`` (rules 1-6); ``value`` None where their parse gave ""."""
        letters = _check_arguments(output, choices, dataset)
        if dataset == "aqua":
            return self._read_chain_of_thought(output)
        choices = list(choices)
        text = output
        if not any("." in choice for choice in choices):  # rule 1
            text = text.split(".")[0]
        for marker in _PAPER_REPETITION_MARKERS[dataset]:  # rule 2
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
