"""The paper's prompts (Cao et al. 2023, Appendix C), word for word.

The texts were checked against the authors' code (``ccqq77/unnatural-error-correction``: ``evaluate.py``,
``utils.py``) and against the ``input`` fields of their released outputs, so a prompt built here is the
string the authors sent, byte for byte (the QA prompts, the AQuA few-shot chain-of-thought prompt and the
ScrRec prompts). Everything here is a pure function of its arguments; scrambling the exemplars uses the
builder's deterministic scrambler with the run's seed.
"""

from __future__ import annotations

from collections.abc import Sequence

from scrambled_bench.builder.scrambler import is_unscrambled, scramble
from scrambled_bench.choices import LETTERS

#: ScrRec zero-shot instruction (Appendix C.1), followed by a newline and the target.
SCRREC_INSTRUCTION = "The following sentence contains words with scrambled letters. Please recover the original sentence from it."

#: ScrRec few-shot exemplars (Appendix C.2): three sentences of the wikiQA dataset, scrambled at 50%.
SCRREC_EXEMPLARS: tuple[str, ...] = (
    "The camp continued to function this way until the war ended.",
    (
        "It was first developed in the 1980s by Acorn Computers Ltd to power their desktop machines and "
        "subsequently spun off as a separate company, now ARM Holdings."
    ),
    (
        "According to the CIA Factbook, the United States is one of three countries (the others being Liberia "
        "and Burma/Myanmar) that has not adopted the International System of Units (SI) metric system as their "
        "official system of weights and measures."
    ),
)

#: the scramble type the few-shot exemplars are scrambled with (the paper: 50% of the words)
SCRREC_EXEMPLAR_TYPE = "rs50"

#: AQuA-RAT few-shot chain-of-thought exemplars (Appendix C.5): question, choices, rationale ending in the answer.
AQUA_EXEMPLARS: tuple[dict[str, str], ...] = (
    {
        "question": "John found that the average of 15 numbers is 40. If 10 is added to each number then the "
        "mean of the numbers is?",
        "choices": "(A)50 (B)45 (C)65 (D)78 (E)64",
        "answer": "If 10 is added to each number, then the mean of the numbers also increases by 10. So the "
        "new mean would be 50. The answer is (A).",
    },
    {
        "question": "If a / b = 3/4 and 8a + 5b = 22, then find the value of a.",
        "choices": "(A)1/2 (B)3/2 (C)5/2 (D)4/2 (E)7/2",
        "answer": "If a / b = 3/4, then b = 4a / 3. So 8a + 5(4a / 3) = 22. This simplifies to 8a + 20a / 3 "
        "= 22, which means 44a / 3 = 22. So a is equal to 3/2. The answer is (B).",
    },
    {
        "question": "A person is traveling at 20 km/hr and reached his destiny in 2.5 hr then find the distance?",
        "choices": "(A)53 km (B)55 km (C)52 km (D)60 km (E)50 km",
        "answer": "The distance that the person traveled would have been 20 km/hr * 2.5 hrs = 50 km. The "
        "answer is (E).",
    },
    {
        "question": "How many keystrokes are needed to type the numbers from 1 to 500?",
        "choices": "(A)1156 (B)1392 (C)1480 (D)1562 (E)1788",
        "answer": "There are 9 one-digit numbers from 1 to 9. There are 90 two-digit numbers from 10 to 99. "
        "There are 401 three-digit numbers from 100 to 500. 9 + 90(2) + 401(3) = 1392. The answer is (B).",
    },
)

#: ``--exemplar-rate`` values (percent of the exemplar questions' words scrambled) and their scramble types
EXEMPLAR_RATES: dict[int, str] = {0: "original", 20: "rs20", 50: "rs50", 100: "rs100"}

# Stop sequences where the prompt format would repeat: without them a base model continues with the next
# "Scrambled sentence:" or "Question:" block, and the answer parsers would read the invented one.
SCRREC_STOP: tuple[str, ...] = ("\nScrambled sentence:", "\nScrambled Sentence:")
QA_STOP: tuple[str, ...] = ("\nQuestion:", "\nDialogue:", "\nChoices:")
AQUA_STOP: tuple[str, ...] = ("\nQuestion:",)


def format_choices(choices: Sequence[str]) -> str:
    """The choices line as the paper writes it: ``(A)text (B)text``, no space after the letter.

    >>> format_choices(["Salad dressing", "Baby formula"])
    '(A)Salad dressing (B)Baby formula'
    """
    if len(choices) > len(LETTERS):
        raise ValueError(f"at most {len(LETTERS)} choices are supported, got {len(choices)}")
    return " ".join(f"({LETTERS[index]}){choice}" for index, choice in enumerate(choices))


def scrrec_zero_shot_prompt(scrambled: str) -> str:
    """ScrRec zero-shot (Appendix C.1).

    >>> print(scrrec_zero_shot_prompt("Teh cat"))
    The following sentence contains words with scrambled letters. Please recover the original sentence from it.
    Scrambled sentence: Teh cat
    Recovered sentence:
    """
    return f"{SCRREC_INSTRUCTION}\nScrambled sentence: {scrambled.strip()}\nRecovered sentence:"


def scrrec_demonstration(scrambled_exemplars: Sequence[str]) -> str:
    """The few-shot block: "Scrambled Sentence:" / "Recovered Sentence:" pairs (capital S, as in the paper).

    ``scrambled_exemplars`` are the scrambled forms of :data:`SCRREC_EXEMPLARS`, in order.

    >>> print(scrrec_demonstration(["Teh cpma", "b", "c"]).splitlines()[:2])
    ['Scrambled Sentence: Teh cpma', 'Recovered Sentence: The camp continued to function this way until the war ended.']
    """
    if len(scrambled_exemplars) != len(SCRREC_EXEMPLARS):
        raise ValueError(
            f"expected {len(SCRREC_EXEMPLARS)} scrambled exemplars, got {len(scrambled_exemplars)}"
        )
    return "".join(
        f"Scrambled Sentence: {scrambled}\nRecovered Sentence: {original}\n\n"
        for scrambled, original in zip(scrambled_exemplars, SCRREC_EXEMPLARS)
    )


def scrrec_few_shot_prompt(scrambled: str, demonstration: str) -> str:
    """ScrRec few-shot (Appendix C.2): the demonstration, then the target as in the zero-shot prompt.

    >>> print(scrrec_few_shot_prompt("Teh cat", "Scrambled Sentence: x\\nRecovered Sentence: y\\n\\n"))
    Scrambled Sentence: x
    Recovered Sentence: y
    <BLANKLINE>
    Scrambled sentence: Teh cat
    Recovered sentence:
    """
    return f"{demonstration}Scrambled sentence: {scrambled.strip()}\nRecovered sentence:"


def realtimeqa_prompt(question: str, choices: Sequence[str], evidence: str) -> str:
    """ScrQA zero-shot on RealtimeQA (Appendix C.3).

    >>> print(realtimeqa_prompt("Who won?", ["Ann", "Bob", "Cy", "Di"], "Bob wno."))
    Question: Who won?
    Choices: (A)Ann (B)Bob (C)Cy (D)Di
    Evidence: Bob wno.
    Answer: Based on the evidence, among A through D, the answer is
    """
    return (
        f"Question: {question}\nChoices: {format_choices(choices)}\nEvidence: {evidence}\n"
        f"Answer: Based on the evidence, among A through {LETTERS[len(choices) - 1]}, the answer is"
    )


def dream_prompt(dialogue: str, question: str, choices: Sequence[str]) -> str:
    """ScrQA zero-shot on DREAM (Appendix C.4).

    >>> print(dream_prompt("W: Hi.\\nM: Hello.", "Who speaks first?", ["The woman.", "The man.", "Nobody."]))
    Dialogue:
    W: Hi.
    M: Hello.
    Question: Who speaks first?
    Choices: (A)The woman. (B)The man. (C)Nobody.
    Answer: Based on the dialogue, among A through C, the answer is
    """
    return (
        f"Dialogue:\n{dialogue}\nQuestion: {question}\nChoices: {format_choices(choices)}\n"
        f"Answer: Based on the dialogue, among A through {LETTERS[len(choices) - 1]}, the answer is"
    )


def aqua_demonstration(scrambled_questions: Sequence[str]) -> str:
    """The AQuA chain-of-thought demonstration (Appendix C.5); only the exemplar questions are scrambled.

    >>> demo = aqua_demonstration([e["question"] for e in AQUA_EXEMPLARS])
    >>> print(demo.splitlines()[2])
    Answer: If 10 is added to each number, then the mean of the numbers also increases by 10. So the new mean would be 50. The answer is (A).
    """
    if len(scrambled_questions) != len(AQUA_EXEMPLARS):
        raise ValueError(f"expected {len(AQUA_EXEMPLARS)} exemplar questions, got {len(scrambled_questions)}")
    return "".join(
        f"Question: {question}\nChoices: {exemplar['choices']}\nAnswer: {exemplar['answer']}\n\n"
        for question, exemplar in zip(scrambled_questions, AQUA_EXEMPLARS)
    )


def aqua_prompt(question: str, choices: Sequence[str], demonstration: str) -> str:
    """AQuA-RAT few-shot CoT: the demonstration, then the question with "Answer:" and no trailing space.

    >>> print(aqua_prompt("1+1?", ["1", "2", "3", "4", "5"], ""))
    Question: 1+1?
    Choices: (A)1 (B)2 (C)3 (D)4 (E)5
    Answer:
    """
    return f"{demonstration}Question: {question}\nChoices: {format_choices(choices)}\nAnswer:"


def scrambled_scrrec_exemplars(seed: int) -> list[str]:
    """The three ScrRec exemplars scrambled at 50% with the run's ``seed`` (deterministic).

    >>> scrambled_scrrec_exemplars(0) == scrambled_scrrec_exemplars(0)
    True
    """
    return [
        scramble(
            sentence, SCRREC_EXEMPLAR_TYPE, seed=seed, sample_id=f"scrrec-exemplar-{index}", place="original"
        )
        for index, sentence in enumerate(SCRREC_EXEMPLARS)
    ]


def scrambled_aqua_exemplar_questions(exemplar_rate: int, seed: int) -> list[str]:
    """The four AQuA exemplar questions scrambled at ``exemplar_rate`` percent (0, 20, 50 or 100).

    >>> scrambled_aqua_exemplar_questions(0, seed=1)[0].startswith("John found that the average")
    True
    """
    if exemplar_rate not in EXEMPLAR_RATES:
        raise ValueError(f"exemplar rate must be one of {sorted(EXEMPLAR_RATES)}, got {exemplar_rate}")
    scramble_type = EXEMPLAR_RATES[exemplar_rate]
    if is_unscrambled(scramble_type):
        return [exemplar["question"] for exemplar in AQUA_EXEMPLARS]
    return [
        # at the place of a built row's scrambled text (an AQuA row's `original` is its question)
        scramble(
            exemplar["question"],
            scramble_type,
            seed=seed,
            sample_id=f"aqua-exemplar-{index}",
            place="original",
        )
        for index, exemplar in enumerate(AQUA_EXEMPLARS)
    ]
