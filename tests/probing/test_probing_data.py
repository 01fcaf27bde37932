"""The probe's questions and prompt: DREAM's three splits, the paper's prompt, a deterministic choice."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from scrambled_bench.builder.build import TEXT_PLACE
from scrambled_bench.builder.scrambler import scramble
from scrambled_bench.builder.sources.fetch import SourceReader
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.prompts import dream_prompt
from scrambled_bench.probing.data import (
    DEFAULT_TYPES,
    EVAL_SPLITS,
    TRAIN_SPLITS,
    ProbeQuestion,
    parse_types,
    probe_prompt,
    read_questions,
    select_questions,
)


def _questions(n: int, split: str = "train") -> list[ProbeQuestion]:
    return [
        ProbeQuestion(
            f"{split}/d{i}/1", split, f"W: line {i}.", "Q?", ("a", "b", "c"), i % 3, f"dream/{split}/d{i}/1"
        )
        for i in range(n)
    ]


def test_the_template_is_the_papers_dream_prompt_with_the_dialogue_scrambled() -> None:
    question = ProbeQuestion(
        "dev/1-1/1", "dev", "W: Where are you going tonight?\nM: To the cinema.", "Where is the man going?",
        ("Home.", "To the cinema.", "To work."), 1, "dream/dev/1-1/1",
    )  # fmt: skip
    for scramble_type in ("original", "kfl", "rs100", "sub"):
        scrambled = scramble(
            question.dialogue, scramble_type, seed=0, sample_id=question.scramble_key, place=TEXT_PLACE
        )
        assert probe_prompt(question, scramble_type, seed=0) == dream_prompt(
            scrambled, question.question, list(question.choices)
        )
    assert probe_prompt(question, "kfl", seed=0) != probe_prompt(question, "kfl", seed=1)


def test_selection_is_balanced_nested_and_seeded() -> None:
    questions = _questions(300)
    chosen = select_questions(questions, 90, seed=0)
    assert Counter(q.label for q in chosen) == {0: 30, 1: 30, 2: 30}
    assert select_questions(questions, 150, seed=0)[:90] == chosen
    assert select_questions(questions, 90, seed=0) == chosen
    assert select_questions(questions, 90, seed=1) != chosen
    assert len(select_questions(questions, None, seed=0)) == 300
    assert len(select_questions(questions, 10_000, seed=0)) == 300


def test_types_default_to_the_papers_settings_and_unknown_ones_are_refused() -> None:
    assert parse_types(None) == DEFAULT_TYPES == ("original", "rs20", "rs50", "rs100", "kf", "kfl", "sub")
    with pytest.raises(ScrambledBenchError, match="unknown scramble type 'rs'"):
        parse_types(["original", "rs"])


@pytest.mark.shared
def test_dream_splits_are_read_whole(source_mirror: Path) -> None:
    reader = SourceReader(mirror=source_mirror)
    train = read_questions(reader, TRAIN_SPLITS)
    evaluation = read_questions(reader, EVAL_SPLITS)
    assert len(train) == 6116
    assert Counter(q.split for q in evaluation) == {"dev": 2040, "test": 2041}
    ids = [q.id for q in train + evaluation]
    assert len(set(ids)) == len(ids)
    assert all(len(q.choices) == 3 and q.label in (0, 1, 2) for q in train + evaluation)


@pytest.mark.shared
def test_dev_and_test_questions_are_scrambled_as_in_the_built_configs(source_mirror: Path) -> None:
    from scrambled_bench.builder.sources import dream

    reader = SourceReader(mirror=source_mirror)
    annotated = {record.fields["id"]: record for record in dream.load(reader).records}
    probed = {q.id: q for q in read_questions(reader, EVAL_SPLITS)}
    assert set(annotated) <= set(probed)
    for question_id in list(annotated)[:50]:
        record, question = annotated[question_id], probed[question_id]
        assert question.scramble_key == record.scramble_key
        assert question.dialogue == record.fields["original"]
        assert "ABC"[question.label] == record.fields["answer"]
