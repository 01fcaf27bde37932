"""The scrambler's inlined draws are the standard library's: the same numbers from the same stream.

The word functions draw from ``random.Random.getrandbits`` directly instead of through ``shuffle``,
``choice`` and ``sample`` (a Python call per letter was most of the build's time). These tests pin that
the results, and the state the stream is left in, are what the library calls give on this interpreter.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrambled_bench.builder import draws, scrambler, word_functions

seeds = st.integers(min_value=0, max_value=2**32)


@settings(max_examples=300, deadline=None)
@given(seed=seeds, length=st.integers(min_value=0, max_value=80))
def test_inlined_shuffle_is_random_shuffle(seed, length):
    ours, theirs = random.Random(seed), random.Random(seed)
    items = [chr(97 + index % 26) + str(index) for index in range(length)]
    mine, library = list(items), list(items)
    draws.shuffle_in_place(mine, ours.getrandbits)
    theirs.shuffle(library)
    assert mine == library
    assert ours.random() == theirs.random()


@settings(max_examples=300, deadline=None)
@given(seed=seeds, bound=st.integers(min_value=1, max_value=10_000))
def test_below_is_randbelow_and_choice(seed, bound):
    ours, theirs = random.Random(seed), random.Random(seed)
    population = range(bound)
    assert draws.below(ours.getrandbits, bound) == theirs.choice(population)
    assert ours.random() == theirs.random()


@settings(max_examples=400, deadline=None)
@given(
    seed=seeds,
    start=st.integers(min_value=0, max_value=3),
    size=st.integers(min_value=1, max_value=40),
    count=st.integers(min_value=1, max_value=5),
)
def test_sample_range_is_random_sample_on_both_sides_of_the_set_threshold(seed, start, size, count):
    if count > size:
        return
    ours, theirs = random.Random(seed), random.Random(seed)
    population = list(range(start, start + size))
    assert draws.sample_range(start, start + size, count, ours) == theirs.sample(population, count)
    assert ours.random() == theirs.random()


@pytest.mark.parametrize("word", ["substitute", "a2b", "ZZZZ", "é", "naïve_1"])
def test_substitution_draws_are_choice_redrawn_while_equal(word):
    """``sub`` merges ``choice``'s redraws with the redraw of the original letter: the same letters."""
    for seed in range(50):
        ours, theirs = random.Random(seed), random.Random(seed)
        expected = []
        letters = [char for char in word if char.isalpha()]
        if len(letters) >= 2:
            for letter in letters:
                pick = theirs.choice(word_functions._SUBSTITUTE_ALPHABET)
                while pick == letter:
                    pick = theirs.choice(word_functions._SUBSTITUTE_ALPHABET)
                expected.append(pick)
        out = scrambler.substitute_letters(word, ours)
        assert [out[i] for i in scrambler.letter_positions(word)] == (expected or letters)
        assert ours.random() == theirs.random()
