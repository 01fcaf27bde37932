"""Concrete scrambles: what each type keeps and changes on known words."""

from __future__ import annotations

import random

import pytest

from scrambled_bench.builder import scrambler
from scrambled_bench.builder.build import TEXT_PLACE
from scrambled_bench.builder.scrambler import parse_type, scramble, words


def test_words_split_on_apostrophes_and_hyphens_and_keep_digits_and_underscores():
    assert words("It's a well-known 3rd_party café, naïve!") == [
        "It",
        "s",
        "a",
        "well",
        "known",
        "3rd_party",
        "café",
        "naïve",
    ]


def test_original_is_identity_and_line_breaks_survive_every_type():
    dialogue = "W: The movie next Tuesday has been cancelled.\nM: What do you mean?\n"
    assert scramble(dialogue, "original", seed=0, sample_id="d", place="text") == dialogue
    for scramble_type in scrambler.ALL_TYPES:
        out = scramble(dialogue, scramble_type, seed=0, sample_id="d", place="text")
        assert out.count("\n") == 2 and out.startswith("W: ") and "\nM: " in out


def test_kfl_on_a_sentence_keeps_ends_and_leaves_short_words():
    out = scramble("The scrambled sentence is still readable", "kfl", seed=3, sample_id="s", place="text")
    pairs = list(zip("The scrambled sentence is still readable".split(), out.split()))
    assert pairs[0] == ("The", "The") and pairs[3] == ("is", "is")
    for before, after in pairs[1:]:
        if len(before) >= 4:
            assert (after[0], after[-1]) == (before[0], before[-1]) and sorted(after) == sorted(before)
    assert out != "The scrambled sentence is still readable"


def test_rs100_changes_every_word_that_can_change_and_rs_rates_nest():
    text = "Scrambled words remain surprisingly readable for large language models"
    full = scramble(text, "rs100", seed=0, sample_id="x", place="text")
    assert all(a != b for a, b in zip(text.split(), full.split()))
    changed_at = {
        rate: {
            i
            for i, (a, b) in enumerate(
                zip(text.split(), scramble(text, f"rs{rate}", seed=0, sample_id="x", place="text").split())
            )
            if a != b
        }
        for rate in (10, 20, 50, 100)
    }
    assert changed_at[10] <= changed_at[20] <= changed_at[50] <= changed_at[100] == set(range(9))


def test_a_rate_scrambles_exactly_its_share_of_every_text():
    """rs20 of a text with 10 eligible words scrambles 2 of them, never 0 or 4 (the paper's data has every
    text at its share; an independent draw per word gave anything from none to most words)."""
    text = "Scrambled words remain surprisingly readable for large language models today"
    for sample in range(30):
        for rate, expected in ((10, 1), (20, 2), (50, 5), (70, 7), (100, 10)):
            out = scramble(text, f"rs{rate}", seed=0, sample_id=str(sample), place="text")
            assert sum(a != b for a, b in zip(text.split(), out.split())) == expected
    assert [scrambler.words_at_rate(n, 20) for n in (1, 2, 3, 7, 8, 23)] == [0, 0, 1, 1, 2, 5]


def test_seed_and_sample_id_change_the_output_but_repeat_exactly():
    text = "Determinism depends on the text the type the seed and the sample"
    base = scramble(text, "rs50", seed=0, sample_id="a", place="text")
    assert scramble(text, "rs50", seed=0, sample_id="a", place="text") == base
    assert scramble(text, "rs50", seed=1, sample_id="a", place="text") != base
    assert scramble(text, "rs50", seed=0, sample_id="b", place="text") != base


def test_words_that_cannot_change_are_left_alone():
    assert scrambler.scramble_keep_first_last("book", random.Random(0)) == "book"
    assert scrambler.scramble_random("aaaa", random.Random(0)) == "aaaa"
    assert scrambler.scramble_keep_first("at", random.Random(0)) == "at"
    assert scrambler.substitute_letters("I", random.Random(0)) == "I"


def test_keep_random_types_pick_kept_letters_that_still_let_the_word_change():
    # 'aaab': keeping 'b' would leave only a's; the kept pair is redrawn so the word changes
    for seed in range(30):
        assert scrambler.scramble_keep_random_two("aaab", random.Random(seed)) != "aaab"
        assert scrambler.scramble_keep_first_random_one("xaab", random.Random(seed)) != "xaab"
        assert scrambler.scramble_keep_last_random_one("aabx", random.Random(seed)) != "aabx"


def test_sub_replaces_every_letter_with_a_different_ascii_letter():
    out = scramble("Hello wörld 42", "sub", seed=0, sample_id="s", place="text")
    assert out[5] == " " and out.endswith(" 42")
    assert all(a != b and b.isascii() and b.isalpha() for a, b in zip("Hello wörld", out[:11]) if a != " ")


def test_natural_typos_make_one_edit_per_chosen_word():
    text = "natural typing errors happen"
    for family, length_change in (("adj", 0), ("ins", 1), ("del", -1), ("rep", 0)):
        out = scramble(text, f"{family}100", seed=0, sample_id="t", place="text")
        for before, after in zip(text.split(), out.split()):
            assert len(after) - len(before) == length_change
            assert after[0] == before[0]
            if family == "rep":
                assert sum(a != b for a, b in zip(before, after)) == 1
            if family == "adj":
                assert sorted(after) == sorted(before) and sum(a != b for a, b in zip(before, after)) == 2


@pytest.mark.parametrize(
    ("name", "family", "rate"),
    [
        ("rs10", "rs", 10),
        ("rs35", "rs", 35),
        ("rs100", "rs", 100),
        ("kfkr1", "kfkr1", 100),
        ("adj50", "adj", 50),
        ("del100", "del", 100),
    ],
)
def test_parse_type(name, family, rate):
    parsed = parse_type(name)
    assert (parsed.family, parsed.rate) == (family, rate)


def test_every_shipped_type_parses_and_the_paper_types_are_there():
    assert {parse_type(t).name for t in scrambler.ALL_TYPES} == set(scrambler.ALL_TYPES)
    assert {"original", "rs20", "rs50", "rs100", "kf", "kfl", "sub", "kr2", "klkr1", "kfkr1"} <= set(
        scrambler.ALL_TYPES
    )
    assert {f"rs{r}" for r in range(10, 101, 10)} <= set(scrambler.ALL_TYPES)


GOLDEN_TEXT = "The quick brown fox jumps over the lazy dog; it's 2023!"


@pytest.mark.parametrize(
    ("scramble_type", "expected"),
    [
        ("original", "The quick brown fox jumps over the lazy dog; it's 2023!"),
        ("rs20", "The quick brown fox jumps over the lazy ogd; ti's 2023!"),
        ("rs50", "ehT quick brown fox jumps rove the lzay ogd; ti's 2023!"),
        ("rs100", "ehT iuqck bonrw xof jpsmu rove hte lzay ogd; ti's 2023!"),
        ("kf", "Teh qikcu bonrw fxo jmpsu oerv teh lzay dgo; it's 2023!"),
        ("kfl", "The qiuck bowrn fox jmups oevr the lzay dog; it's 2023!"),
        ("kr2", "The qciuk bnrwo fox jumsp oevr the lzay dog; it's 2023!"),
        ("klkr1", "The qciuk bowrn fox jupms evor the zaly dog; it's 2023!"),
        ("kfkr1", "The qicuk bwonr fox jumsp oevr the layz dog; it's 2023!"),
        ("sub", "ZfD QgjBe fgrmz UNK MMBBt Wytv aRH zATv KnU; fw's 2023!"),
        ("adj50", "The quick brown fxo jumsp oevr the layz dgo; it's 2023!"),
        ("ins50", "The quicbk brown fox jumps overa tyhe lazzy doug; it's 2023!"),
        ("del50", "Te quick brown fo jumps ove te lazy dg; it's 2023!"),
        ("rep50", "Twe quick brown fkx jumps oves tha lazm dog; it's 2023!"),
    ],
)
def test_golden_outputs_pin_the_random_streams(scramble_type, expected):
    """Fixed outputs at a build's place (stream version 2, dataset 1.1.0): a change here changes every published
    build, so it needs a new dataset version."""
    assert scramble(GOLDEN_TEXT, scramble_type, seed=0, sample_id="golden", place=TEXT_PLACE) == expected
