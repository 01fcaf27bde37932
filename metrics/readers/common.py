"""What both answer readers share: each dataset's answer format, a reading and the reader interface, and
the checks of their arguments."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from scrambled_bench.choices import LETTERS

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


def check_arguments(output: object, choices: Sequence[str], dataset: str) -> AnswerFormat:
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


def check_output(output: object) -> None:
    if not isinstance(output, str):
        raise TypeError(f"output must be a string, got {type(output).__name__}")


# ================================================================ the paper's reader
