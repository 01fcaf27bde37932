"""Every text of a row draws its own randomness, and the items of a list that differ stay different.

The rows are what a multiple-choice task holds: a question and 2-6 choices of 1-6 letters, many of one
length (the case where a shared stream made choices identical: ``["Au", "Ag", "Gd", "Go"]`` came out as
``['ma', 'ma', 'ma', 'ma']`` under ``sub`` when every text of a row replayed the row's draws). They go
through ``scramble``'s row function (:func:`scramble_batch`, which the lm-eval and lighteval variants and
the datatrove step share) and through Inspect's wrapper (:func:`scrambled_sample`).
"""

from __future__ import annotations

import random
import string
from itertools import combinations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrambled_bench.builder.scramble import Variant, scramble_batch
from scrambled_bench.builder.scrambler import (
    ALL_TYPES,
    MAX_REDRAWS,
    STREAM_VERSION,
    TextPlace,
    scramble,
    scramble_items,
    text_rng,
)

TESTED_TYPES = (*ALL_TYPES, "ftrs30", "ftrs100")
CHANCE = 1 / 51
"""Two independent ``sub`` letters agree about once in 51 (each is one of the 51 letters other than the
original)."""


@st.composite
def rows(draw) -> tuple[str, list[str]]:
    """A question and 2-6 choices of 1-6 letters, most of one length; small alphabets too, where a type
    has few ways to change a choice and equal originals are common."""
    alphabet = draw(st.sampled_from([string.ascii_letters, "abcde", "ab"]))
    length = draw(st.integers(1, 6))
    same = st.text(alphabet, min_size=length, max_size=length)
    other = st.text(alphabet, min_size=1, max_size=6)
    choices = draw(st.lists(st.one_of(same, same, other), min_size=2, max_size=6))
    words = st.text(string.ascii_letters, min_size=1, max_size=8)
    question = " ".join(draw(st.lists(words, min_size=1, max_size=6))) + "?"
    return question, choices


def scrambled_row(question: str, choices: list[str], scramble_type: str, key: str, seed: int = 0):
    out = scramble_batch(
        {"question": [question], "choices": [choices]},
        [key],
        columns=["question", "choices"],
        variant=Variant(scramble_type, scramble_type),
        seed=seed,
    )
    return out["question"][0], out["choices"][0]


def assert_distinct_where_originals_differ(originals: list[str], outputs: list[str]) -> None:
    for (a, out_a), (b, out_b) in combinations(zip(originals, outputs), 2):
        if a != b:
            assert out_a != out_b, (originals, outputs)


def assert_no_item_takes_another_original(originals: list[str], outputs: list[str]) -> None:
    """No item comes out as the original text of an item with another original."""
    for index, out in enumerate(outputs):
        others = {text for other, text in enumerate(originals) if other != index and text != originals[index]}
        assert out not in others, (index, originals, outputs)


lists = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@lists
@given(row=rows(), key=st.text(max_size=6), seed=st.integers(0, 2**31))
@pytest.mark.parametrize("scramble_type", TESTED_TYPES)
def test_choices_that_differ_come_out_different(scramble_type, row, key, seed):
    question, choices = row
    _, outputs = scrambled_row(question, choices, scramble_type, key, seed)
    assert len(outputs) == len(choices)
    assert_distinct_where_originals_differ(choices, outputs)


@st.composite
def anagram_rows(draw) -> tuple[str, list[str]]:
    """Choices that are rearrangements, one-letter edits and sub-words of one word (``form``, ``from``,
    ``farm``, ``fro``): where a type's outputs most often meet another choice's wording."""
    base = draw(st.text("abcdefrmo", min_size=3, max_size=6))
    letters = list(base)
    variants = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["swap", "shuffle", "drop", "replace", "same"]))
        word = list(letters)
        if kind == "swap" and len(word) > 1:
            i = draw(st.integers(0, len(word) - 2))
            word[i], word[i + 1] = word[i + 1], word[i]
        elif kind == "shuffle":
            word = draw(st.permutations(word))
        elif kind == "drop" and len(word) > 1:
            del word[draw(st.integers(0, len(word) - 1))]
        elif kind == "replace":
            word[draw(st.integers(0, len(word) - 1))] = draw(st.sampled_from("aeiourm"))
        variants.append("".join(word))
    return "Which word?", [base, *variants]


def assert_kept_only_without_a_free_draw(originals, outputs, scramble_type, key, seed) -> None:
    """An item that kept its text though the type changes it had no free draw: each of its 1 + MAX_REDRAWS
    draws was another item's original or output."""
    for index, (text, out) in enumerate(zip(originals, outputs)):
        first = scramble(text, scramble_type, seed=seed, sample_id=key, place=TextPlace("choices", (index,)))
        if out != text or first == text:
            continue
        held = {o for other, (t, o) in enumerate(zip(originals, outputs)) if other != index and t != text}
        held |= {t for t in originals if t != text}
        for draw in range(MAX_REDRAWS + 1):
            again = scramble(
                text, scramble_type, seed=seed, sample_id=key, place=TextPlace("choices", (index,)), draw=draw
            )
            assert again in held, (index, draw, again, originals, outputs)


@lists
@given(row=st.one_of(rows(), anagram_rows()), key=st.text(max_size=6), seed=st.integers(0, 2**31))
@pytest.mark.parametrize("scramble_type", TESTED_TYPES)
def test_no_choice_takes_another_choices_original_text(scramble_type, row, key, seed):
    """For every type: no scrambled choice equals the original wording of another choice (one with other
    wording), outputs stay distinct where originals are, and a choice keeps its own text, though the type
    could change it, only where none of its bounded draws was free."""
    question, choices = row
    _, outputs = scrambled_row(question, choices, scramble_type, key, seed)
    assert_no_item_takes_another_original(choices, outputs)
    assert_distinct_where_originals_differ(choices, outputs)
    assert_kept_only_without_a_free_draw(choices, outputs, scramble_type, key, seed)


@lists
@given(row=rows(), other=rows(), key=st.text(max_size=6), seed=st.integers(0, 2**31))
@pytest.mark.parametrize("scramble_type", TESTED_TYPES)
def test_the_question_is_scrambled_on_its_own(scramble_type, row, other, key, seed):
    """The question's output depends on its own text and place, never on the choices beside it, and it is the
    single text's scramble at the column ``question``."""
    question, choices = row
    alone = scramble(question, scramble_type, seed=seed, sample_id=key, place="question")
    assert scrambled_row(question, choices, scramble_type, key, seed)[0] == alone
    assert scrambled_row(question, other[1], scramble_type, key, seed)[0] == alone


def test_sub_first_letters_agree_at_the_rate_of_independent_draws():
    """10,000 pairs of same-length choices of one row (different originals), and 10,000 pairs of a
    question's first word with a choice of its length: their first letters under ``sub`` agree about once in
    51, as independent draws do (a shared stream made them agree almost always)."""
    rng = random.Random(0)
    choice_pairs = choice_agree = question_pairs = question_agree = 0
    row = 0
    while choice_pairs < 10_000 or question_pairs < 10_000:
        length = rng.randint(2, 6)
        choices = list(
            {"".join(rng.choices(string.ascii_letters, k=length)) for _ in range(rng.randint(2, 6))}
        )
        question = " ".join(
            ["".join(rng.choices(string.ascii_letters, k=length))]
            + ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(1, 8))) for _ in range(3)]
        )
        scrambled_question, outputs = scrambled_row(question, choices, "sub", str(row))
        for out_a, out_b in combinations(outputs, 2):
            choice_pairs += 1
            choice_agree += out_a[0] == out_b[0]
        for output in outputs:
            question_pairs += 1
            question_agree += scrambled_question[0] == output[0]
        row += 1
    for agree, pairs in ((choice_agree, choice_pairs), (question_agree, question_pairs)):
        assert 0.5 * CHANCE <= agree / pairs <= 2 * CHANCE, (agree, pairs)


def test_the_reported_rows_now_keep_their_choices_apart():
    """The issue's example rows: every choice its own, the question not sharing their prefix."""
    for key, (question, choices) in enumerate(
        [
            ("Which symbol is gold?", ["Au", "Ag", "Gd", "Go"]),
            ("Which body orbits the Earth?", ["Mars", "Moon", "Sun", "Vega"]),
        ]
    ):
        for scramble_type in ("sub", "kfl", "rs100"):
            scrambled_question, outputs = scrambled_row(question, choices, scramble_type, str(key))
            assert len(set(outputs)) == len(choices), (scramble_type, outputs)
            if scramble_type == "sub":
                assert not any(scrambled_question.startswith(output) for output in outputs)


def test_an_item_no_type_can_change_stays_and_no_other_becomes_it():
    # "ab" is one letter short of kf's three; "bac" has one other arrangement under kf, "bca", which is the
    # third item's original (and "bca"'s only other is "bac"): both keep their text rather than swap them
    assert scramble_items(["ab", "bac", "bca"], "kf", seed=0, sample_id="0", place="c") == [
        "ab",
        "bac",
        "bca",
    ]
    # del: "abb" can only become "ab", which the unchangeable "ab" holds, so it stays as it is
    assert scramble_items(["ab", "abb"], "del100", seed=0, sample_id="0", place="c") == ["ab", "abb"]


def test_the_reported_anagrams_keep_their_own_wording():
    """The issue's row: kfl turned ['form', 'from', 'farm', 'firm'] (gold "from") into ['from', 'form',
    'fram', 'frim'], the gold's wording on a distractor. Under kfl a four-letter word has one other
    arrangement; where it is another choice's wording, the choice keeps its own."""
    choices = ["form", "from", "farm", "firm"]
    for key in range(20):
        _, outputs = scrambled_row("Which word?", choices, "kfl", str(key))
        assert outputs == ["form", "from", "fram", "frim"], (key, outputs)


def test_an_item_without_a_free_draw_keeps_its_text_after_a_bounded_number_of_draws(monkeypatch):
    """Where every draw of an item is another item's original, the item keeps its own text, after exactly
    1 + MAX_REDRAWS draws (deterministic and bounded), and the result is a valid list."""
    from scrambled_bench.builder import scrambler

    for draw in range(MAX_REDRAWS + 1):
        assert scramble("from", "kfl", seed=0, sample_id="0", place=TextPlace("c", (0,)), draw=draw) == "form"
    calls: list[int] = []
    real = scrambler.scramble

    def counted(*args, **kwargs):
        calls.append(kwargs.get("draw", 0))
        return real(*args, **kwargs)

    monkeypatch.setattr(scrambler, "scramble", counted)
    assert scramble_items(["from", "form"], "kfl", seed=0, sample_id="0", place="c") == ["from", "form"]
    assert len(calls) == 2 * (1 + MAX_REDRAWS)
    assert sorted(set(calls)) == list(range(MAX_REDRAWS + 1))


def test_a_redraw_is_deterministic_and_keyed_by_its_draw_number():
    place = TextPlace("choices", (1,))
    first = text_rng(0, "r", place, "sub").random()
    assert first == text_rng(0, "r", place, "sub", draw=0).random()
    assert first != text_rng(0, "r", place, "sub", draw=1).random()
    assert text_rng(0, "r", place, "sub", draw=1).random() == text_rng(0, "r", place, "sub", draw=1).random()
    items = ["Au", "Ag", "Gd", "Go", "Au"]
    assert scramble_items(items, "sub", seed=0, sample_id="r", place="c") == scramble_items(
        items, "sub", seed=0, sample_id="r", place="c"
    )
    assert STREAM_VERSION == 2


@settings(max_examples=40, deadline=None)
@given(row=rows(), key=st.text(max_size=6))
@pytest.mark.parametrize("scramble_type", ["sub", "kfl", "rs50", "kf"])
def test_inspect_choices_are_the_scramble_commands(scramble_type, row, key):
    """Inspect's wrapper with ``fields=input,choices`` scrambles a sample as ``scramble`` scrambles a row of
    the columns ``input`` and ``choices``: the same texts, so the same guarantees."""
    pytest.importorskip("inspect_ai")
    from inspect_ai.dataset import Sample

    from scrambled_bench.integrations.inspect.scrambled import scrambled_sample

    question, choices = row
    sample = Sample(id=key, input=question, choices=choices, target="A")
    out = scrambled_sample(sample, key, scramble_type, ["input", "choices"])
    expected = scramble_batch(
        {"input": [question], "choices": [choices]},
        [key],
        columns=["input", "choices"],
        variant=Variant(scramble_type, scramble_type),
        seed=0,
    )
    assert (out.input, out.choices) == (expected["input"][0], expected["choices"][0])
    assert_distinct_where_originals_differ(choices, out.choices)
    assert_no_item_takes_another_original(choices, out.choices)
