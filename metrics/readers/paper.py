"""The ``paper`` reader: the authors' ``answer_cleansing`` rules, exactly, quirks included."""

from __future__ import annotations

import re
from collections.abc import Sequence

from scrambled_bench.metrics.readers.common import Reading, check_arguments, check_output

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
        answer_format = check_arguments(output, choices, dataset)
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
        check_output(output)
        if "Scrambled sentence:" in output:
            return Reading(output.split("Scrambled sentence:")[0].strip(), "paper-cut-scrambled")
        return Reading(output.strip(), "paper-strip")
