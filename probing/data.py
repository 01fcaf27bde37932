"""The probe's questions: DREAM train (probe training) and dev + test (evaluation), their prompt, and the
scrambling of their dialogue.

The prompt is the paper's DREAM ScrQA prompt (Appendix C.4), :data:`PROMPT_TEMPLATE`: the dialogue with the
question, as Appendix A.3 describes the probe's input, *and the choices*, followed by the answer cue. The
choices are included because the label is the answer *letter*: DREAM lists its three choices in an
arbitrary order, so without them the letter is not a function of the input and no probe could beat chance
however well the model understood the dialogue. With the answer cue last, the last token is the one at
which the model would emit its answer, so the probe reads the state the model answers from. The prompt is
fed as raw text (no chat template), the same for base and instruction-tuned models.

Only the dialogue is scrambled, as in ScrQA, with the builder's scrambler, the probe's seed and the
question's builder key (``dream/<split>/<dialogue>/<index>``) as sample id: a dev or test prompt holds the
same scrambled dialogue as the built ``dream_<type>`` config with that seed.

Everything here is pure except :func:`read_questions`, which reads DREAM through a
:class:`~scrambled_bench.builder.sources.fetch.SourceReader`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scrambled_bench.builder.build import TEXT_PLACE
from scrambled_bench.builder.scrambler import parse_type, scramble
from scrambled_bench.builder.sources.dream import load_questions
from scrambled_bench.builder.sources.fetch import SourceReader
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.prompts import dream_prompt

#: the paper's settings in Figures 7 and 8: Ori, RS-20%, RS-50%, RS-100%, KF, KFL, Sub
DEFAULT_TYPES: tuple[str, ...] = ("original", "rs20", "rs50", "rs100", "kf", "kfl", "sub")

#: the paper's DREAM ScrQA prompt (Appendix C.4), as :func:`~scrambled_bench.evaluation.prompts.dream_prompt`
#: writes it; ``{choices}`` is ``(A)text (B)text (C)text``. Part of the features' identity.
PROMPT_TEMPLATE = (
    "Dialogue:\n{dialogue}\nQuestion: {question}\nChoices: {choices}\n"
    "Answer: Based on the dialogue, among A through {last_letter}, the answer is"
)

#: what the probe predicts, by index: DREAM has three choices per question
LETTERS = "ABC"
N_CLASSES = len(LETTERS)
TRAIN_SPLITS: tuple[str, ...] = ("train",)
EVAL_SPLITS: tuple[str, ...] = ("dev", "test")


@dataclass(frozen=True)
class ProbeQuestion:
    """One DREAM question: ``id`` is ``"{split}/{dialogue}/{index}"``, ``label`` the gold choice's index."""

    id: str
    split: str
    dialogue: str
    question: str
    choices: tuple[str, ...]
    label: int
    scramble_key: str


def read_questions(reader: SourceReader, splits: Sequence[str]) -> list[ProbeQuestion]:
    """Every question of the DREAM ``splits``, in upstream order (split by split)."""
    questions = []
    for split in splits:
        for record in load_questions(reader, split):
            fields = record.fields
            if len(fields["choices"]) != N_CLASSES:
                raise ScrambledBenchError(
                    f"DREAM question {fields['id']} has {len(fields['choices'])} choices; the probe expects "
                    f"{N_CLASSES}"
                )
            questions.append(
                ProbeQuestion(
                    id=fields["id"],
                    split=split,
                    dialogue=fields["original"],
                    question=fields["question"],
                    choices=tuple(fields["choices"]),
                    label=LETTERS.index(fields["answer"]),
                    scramble_key=record.scramble_key,
                )
            )
    return questions


def _order_key(question_id: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}:{question_id}".encode()).hexdigest()


def select_questions(questions: Sequence[ProbeQuestion], limit: int | None, seed: int) -> list[ProbeQuestion]:
    """At most ``limit`` questions (all when ``None``): class-balanced, deterministic, and nested.

    Each answer letter's questions are put in a seeded pseudo-random order and the letters are taken in
    turn (A, B, C, A, ...), so any ``limit`` of at least three holds every class in equal shares, a
    larger ``limit`` extends a smaller one (its cached features are reused) and the same seed picks the
    same questions on every machine.

    >>> qs = [ProbeQuestion(f"train/d/{i}", "train", "", "", ("a", "b", "c"), i % 3, "") for i in range(9)]
    >>> [q.label for q in select_questions(qs, 5, seed=0)]
    [0, 1, 2, 0, 1]
    >>> small, large = select_questions(qs, 4, seed=0), select_questions(qs, 7, seed=0)
    >>> large[:4] == small
    True
    """
    by_label: dict[int, list[ProbeQuestion]] = {}
    for question in sorted(questions, key=lambda q: _order_key(q.id, seed)):
        by_label.setdefault(question.label, []).append(question)
    queues = [by_label[label] for label in sorted(by_label)]
    interleaved = [
        queue[position]
        for position in range(max((len(queue) for queue in queues), default=0))
        for queue in queues
        if position < len(queue)
    ]
    return interleaved if limit is None else interleaved[:limit]


def probe_prompt(question: ProbeQuestion, scramble_type: str, *, seed: int) -> str:
    """The probe's input for one question in one setting: :data:`PROMPT_TEMPLATE` with the dialogue scrambled,
    written by ScrQA's own :func:`~scrambled_bench.evaluation.prompts.dream_prompt`.

    >>> q = ProbeQuestion("dev/1-1/1", "dev", "W: Hi there.\\nM: Hello, how are you?", "Who speaks first?",
    ...                   ("The woman.", "The man.", "Nobody."), 0, "dream/dev/1-1/1")
    >>> probe_prompt(q, "rs100", seed=0).splitlines()[:3]
    ['Dialogue:', 'W: iH terhe.', 'M: oHlel, ohw era uyo?']
    >>> choices = "(A)The woman. (B)The man. (C)Nobody."
    >>> probe_prompt(q, "original", seed=0) == PROMPT_TEMPLATE.format(
    ...     dialogue=q.dialogue, question=q.question, choices=choices, last_letter="C")
    True
    """
    dialogue = scramble(
        question.dialogue, scramble_type, seed=seed, sample_id=question.scramble_key, place=TEXT_PLACE
    )
    return dream_prompt(dialogue, question.question, question.choices)


def parse_types(names: Iterable[str] | None) -> tuple[str, ...]:
    """Checked scramble types in the order given, without duplicates; none given: :data:`DEFAULT_TYPES`.

    >>> parse_types(["rs20", "original", "rs20"])
    ('rs20', 'original')
    >>> parse_types(["kfx"])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: unknown scramble type 'kfx' (known: ...)
    """
    chosen = list(dict.fromkeys(names or ()))
    for name in chosen:
        parse_type(name)
    return tuple(chosen) or DEFAULT_TYPES


def parse_layers(spec: str | Sequence[int] | None) -> tuple[int, ...] | None:
    """``"all"`` (or ``None``) -> ``None`` (every layer); ``"0,4,8"`` -> ``(0, 4, 8)``, sorted, unique.

    Layer 0 is the embeddings and layer *i* the output of the model's *i*-th block; whether the indices
    exist is checked once the model is loaded (:func:`check_layers`).

    >>> parse_layers("all") is None, parse_layers("8,0,4,4")
    (True, (0, 4, 8))
    >>> parse_layers("0,x")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --layers takes 'all' or layer numbers such as 0,4,8, got '0,x'
    """
    if spec is None or (isinstance(spec, str) and spec.strip().lower() == "all"):
        return None
    if isinstance(spec, str):
        parts = [part.strip() for part in spec.split(",") if part.strip()]
        if not parts or not all(part.isdigit() for part in parts):
            raise ScrambledBenchError(f"--layers takes 'all' or layer numbers such as 0,4,8, got {spec!r}")
        numbers = [int(part) for part in parts]
    else:
        numbers = [int(number) for number in spec]
        if not numbers or any(number < 0 for number in numbers):
            raise ScrambledBenchError(f"layers must be non-negative numbers, got {list(spec)!r}")
    return tuple(sorted(set(numbers)))


def check_layers(layers: tuple[int, ...] | None, n_states: int) -> tuple[int, ...]:
    """The layers to probe, given a model with ``n_states`` hidden states (its blocks plus the embeddings).

    >>> check_layers(None, 4), check_layers((0, 3), 4)
    ((0, 1, 2, 3), (0, 3))
    >>> check_layers((0, 31), 31)
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --layers 31: the model has layers 0..30 (0 = the embeddings)
    """
    if layers is None:
        return tuple(range(n_states))
    missing = [layer for layer in layers if layer >= n_states]
    if missing:
        raise ScrambledBenchError(
            f"--layers {','.join(map(str, missing))}: the model has layers 0..{n_states - 1} "
            "(0 = the embeddings)"
        )
    return layers


def check_limit(name: str, limit: int | None) -> None:
    """A limit must leave room for every answer class.

    >>> check_limit("--limit-train", 2)
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --limit-train 2 is below the number of answer classes (3): ...
    """
    if limit is not None and limit < N_CLASSES:
        raise ScrambledBenchError(
            f"{name} {limit} is below the number of answer classes ({N_CLASSES}): a probe needs every class"
        )
