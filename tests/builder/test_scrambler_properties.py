"""Invariants of every scramble type on arbitrary Unicode text (hypothesis)."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrambled_bench.builder.scrambler import (
    ALL_TYPES,
    FAMILIES,
    PAPER_RATES,
    letter_positions,
    parse_type,
    scramble,
)

WORD = re.compile(r"\w+")
PERMUTING = ("rs", "kf", "kfl", "kr2", "klkr1", "kfkr1", "adj", "ftrs")
MIN_LETTERS = {
    "rs": 2,
    "kf": 3,
    "kfl": 4,
    "kr2": 4,
    "klkr1": 4,
    "kfkr1": 4,
    "sub": 2,
    "adj": 3,
    "ins": 3,
    "del": 3,
    "rep": 3,
    "ftrs": 3,
}
# every shipped type, plus the training family that ships no config (FT-RS's words of more than two letters)
TESTED_TYPES = (*ALL_TYPES, "ftrs30", "ftrs100")


def test_each_family_record_states_the_eligibility_these_tests_check():
    assert {
        name: family.min_letters for name, family in FAMILIES.items() if name != "original"
    } == MIN_LETTERS


# Words of letters (several scripts, combining marks, digits, underscores) between any separators.
texts = st.text(
    alphabet=st.one_of(
        st.characters(categories=("Lu", "Ll", "Lo", "Mn", "Nd")),
        st.sampled_from(list("aabbeeiio _'-\n\t.,!? 2020")),
    ),
    max_size=120,
)
seeds = st.integers(min_value=0, max_value=2**31)
sample_ids = st.text(max_size=12)
fast = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def word_pairs(original: str, scrambled: str) -> list[tuple[str, str]]:
    """Pair the words of a same-skeleton scramble (every type except ins/del keeps the word spans)."""
    spans = [match.span() for match in WORD.finditer(original)]
    return [(original[a:b], scrambled[a:b]) for a, b in spans]


def skeleton(text: str) -> str:
    """The text with every word replaced by a marker: what must never change."""
    return WORD.sub("\x00", text)


@fast
@given(text=texts, seed=seeds, sample_id=sample_ids, scramble_type=st.sampled_from(TESTED_TYPES))
def test_non_word_characters_and_whitespace_stay(text, seed, sample_id, scramble_type):
    out = scramble(text, scramble_type, seed=seed, sample_id=sample_id, place="text")
    assert skeleton(out) == skeleton(text)
    assert len(WORD.findall(out)) == len(WORD.findall(text))


@fast
@given(text=texts, seed=seeds, sample_id=sample_ids, scramble_type=st.sampled_from(TESTED_TYPES))
def test_letters_are_a_permutation_or_substitution_and_non_letters_stay(text, seed, sample_id, scramble_type):
    family = parse_type(scramble_type).family
    out = scramble(text, scramble_type, seed=seed, sample_id=sample_id, place="text")
    if family in ("ins", "del"):
        for before, after in zip(WORD.findall(text), WORD.findall(out)):
            assert [c for c in after if not c.isalpha()] == [c for c in before if not c.isalpha()]
            letters_before = [c for c in before if c.isalpha()]
            letters_after = [c for c in after if c.isalpha()]
            if after != before:
                assert len(letters_after) - len(letters_before) == (1 if family == "ins" else -1)
                assert letters_after[0] == letters_before[0]
        return
    assert len(out) == len(text)
    for before, after in word_pairs(text, out):
        positions = letter_positions(before)
        assert letter_positions(after) == positions
        assert [after[i] for i in range(len(before)) if i not in positions] == [
            before[i] for i in range(len(before)) if i not in positions
        ]
        if family in PERMUTING or family == "original":
            assert sorted(after) == sorted(before)
        elif family == "sub" and len(positions) >= 2:
            assert all(after[i] != before[i] for i in positions)
        elif family == "rep" and after != before:
            assert sum(a != b for a, b in zip(after, before)) == 1


@fast
@given(
    text=texts,
    seed=seeds,
    sample_id=sample_ids,
    scramble_type=st.sampled_from(["kf", "kfl", "klkr1", "kfkr1", "adj100", "rep100"]),
)
def test_kept_positions_are_kept(text, seed, sample_id, scramble_type):
    family = parse_type(scramble_type).family
    out = scramble(text, scramble_type, seed=seed, sample_id=sample_id, place="text")
    for before, after in word_pairs(text, out):
        positions = letter_positions(before)
        if len(positions) < MIN_LETTERS[family]:
            assert after == before
            continue
        if family in ("kf", "kfkr1", "adj", "rep"):
            assert after[positions[0]] == before[positions[0]]
        if family in ("kfl", "klkr1"):
            assert after[positions[-1]] == before[positions[-1]]
        if family == "kfl":
            assert after[positions[0]] == before[positions[0]]
        if family in ("klkr1", "kfkr1"):
            assert sum(after[p] == before[p] for p in positions) >= 2


@fast
@given(
    text=texts,
    seed=seeds,
    sample_id=sample_ids,
    family=st.sampled_from(["rs", "adj", "ins", "del", "rep", "ftrs"]),
)
def test_rates_are_nested(text, seed, sample_id, family):
    """A word changed at a lower rate is changed identically at every higher rate."""
    outputs = [
        scramble(text, f"{family}{rate}", seed=seed, sample_id=sample_id, place="text")
        for rate in PAPER_RATES
    ]
    if family in ("ins", "del"):
        changed = [
            {i for i, (a, b) in enumerate(zip(WORD.findall(text), WORD.findall(out))) if a != b}
            for out in outputs
        ]
        words_at = [WORD.findall(out) for out in outputs]
        for low in range(len(outputs) - 1):
            assert changed[low] <= changed[low + 1]
            assert all(words_at[low][i] == words_at[low + 1][i] for i in changed[low])
        return
    for low, high in itertools.pairwise(outputs):
        for (before, at_low), (_, at_high) in zip(word_pairs(text, low), word_pairs(text, high)):
            if at_low != before:
                assert at_high == at_low


@fast
@given(text=texts, seed=seeds, sample_id=sample_ids, scramble_type=st.sampled_from(TESTED_TYPES))
def test_word_changes_whenever_another_arrangement_exists(text, seed, sample_id, scramble_type):
    family = parse_type(scramble_type).family
    if family in ("ins", "del", "rep", "original") or parse_type(scramble_type).rate != 100:
        return
    out = scramble(text, scramble_type, seed=seed, sample_id=sample_id, place="text")
    for before, after in word_pairs(text, out):
        letters = [before[p] for p in letter_positions(before)]
        if len(letters) < MIN_LETTERS[family]:
            continue
        if family == "sub":
            assert after != before
            continue
        if family == "adj":
            if any(a != b for a, b in itertools.pairwise(letters[1:])):
                assert after != before
            continue
        # the letters that may move under the type (for the keep-random types: over all choices of kept letters)
        movable = {
            "rs": letters,
            "ftrs": letters,
            "kf": letters[1:],
            "kfl": letters[1:-1],
            "kr2": letters,
            "klkr1": letters[:-1],
            "kfkr1": letters[1:],
        }[family]
        if len(set(movable)) >= 2:
            assert after != before


@fast
@given(text=texts, seed=seeds, sample_id=sample_ids, scramble_type=st.sampled_from(TESTED_TYPES))
def test_deterministic_and_independent_of_call_order(text, seed, sample_id, scramble_type):
    first = scramble(text, scramble_type, seed=seed, sample_id=sample_id, place="text")
    scramble(
        text + " other words here", scramble_type, seed=seed + 1, sample_id=sample_id + "x", place="text"
    )
    assert scramble(text, scramble_type, seed=seed, sample_id=sample_id, place="text") == first


def test_same_output_in_a_fresh_process_and_across_a_process_pool():
    """Determinism across processes and process counts: no hash randomisation or shared state leaks in."""
    cases = [
        ("The quick brown fox jumps over the lazy dog, twice!", t, 7, f"id-{i}")
        for i, t in enumerate(ALL_TYPES)
    ]
    here = [scramble(text, t, seed=s, sample_id=i, place="text") for text, t, s, i in cases]
    code = textwrap.dedent(
        f"""
        import json, sys
        from concurrent.futures import ProcessPoolExecutor
        from scrambled_bench.builder.scrambler import scramble
        cases = {cases!r}
        def one(case):
            text, t, s, i = case
            return scramble(text, t, seed=s, sample_id=i, place="text")
        if __name__ == "__main__":
            with ProcessPoolExecutor(2) as pool:
                pooled = list(pool.map(one, reversed(cases)))[::-1]
            print(json.dumps([list(map(one, cases)), pooled]))
        """
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    serial, pooled = json.loads(result.stdout)
    assert serial == here
    assert pooled == here


@pytest.mark.parametrize("name", ["rs0", "rs101", "adj-5", "kfx", "RS20", ""])
def test_bad_type_names_are_rejected_in_one_line(name):
    from scrambled_bench.errors import ScrambledBenchError

    with pytest.raises(ScrambledBenchError) as info:
        scramble("text", name, seed=0, sample_id="x", place="text")
    assert "\n" not in str(info.value)
    assert repr(name) in str(info.value)


changeable_words = st.lists(
    st.text(alphabet="abcdefghijkl", min_size=2, max_size=9).filter(lambda word: len(set(word)) > 1),
    max_size=40,
)


@fast
@given(words_=changeable_words, seed=seeds, sample_id=sample_ids, rate=st.sampled_from(PAPER_RATES))
def test_rs_rate_changes_exactly_its_share_of_the_words(words_, seed, sample_id, rate):
    """rsNN changes round(NN % of the eligible words) of every text, not NN % on average."""
    text = " ".join(words_)
    out = scramble(text, f"rs{rate}", seed=seed, sample_id=sample_id, place="text")
    changed = sum(a != b for a, b in zip(text.split(), out.split()))
    assert changed == (rate * len(words_) + 50) // 100
