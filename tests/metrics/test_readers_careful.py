"""The ``careful`` reader: a hand-written corpus of realistic outputs, invariants, and the reader registry."""

from __future__ import annotations

import gzip
import json
import re
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from scrambled_bench.choices import LETTERS
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.metrics.readers import (
    DEFAULT_READER,
    READERS,
    AnswerReader,
    CarefulReader,
    PaperReader,
    Reading,
    get_reader,
    parse_choices,
)

careful = CarefulReader()
FIXTURES = Path(__file__).parent / "fixtures"
CHOICES = ["Amazon", "Microsoft", "Meta", "Google"]


def _load(name: str) -> list[dict]:
    with open(FIXTURES / name, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


CHOICE_CORPUS = _load("careful_corpus.jsonl")
RECOVERY_CORPUS = _load("careful_recovery_corpus.jsonl")


def _case_id(case: dict) -> str:
    return f"{case['dataset']}-{case['rule']}-{case['note'][:40]}"


# ---------------------------------------------------------------- the corpus


@pytest.mark.parametrize("case", CHOICE_CORPUS, ids=[_case_id(case) for case in CHOICE_CORPUS])
def test_the_careful_reader_reads_what_a_careful_human_reads(case):
    reading = careful.read_choice(case["output"], case["choices"], dataset=case["dataset"])
    assert reading == Reading(case["expected"], case["rule"])


@pytest.mark.parametrize(
    "case", RECOVERY_CORPUS, ids=[f"{c['rule']}-{c['note'][:40]}" for c in RECOVERY_CORPUS]
)
def test_the_careful_reader_unwraps_a_recovered_sentence(case):
    assert careful.read_recovery(case["output"]) == Reading(case["expected"], case["rule"])


# The rules each dataset's corpus must show at work (AQuA is read as chain of thought, without the
# zero-shot rules about how an answer starts).
ZERO_SHOT_RULES = {
    "leading-letter",
    "cut-off-lead-in",
    "choice-text",
    "answer-is",
    "named-letter",
    "choice-mention",
    "choice-paraphrase",
    "hedge",
    "cycle",
    "recital",
    "prompt-echo",
    "scrambled-echo",
    "answer-after-echo",
    "letter-outside-choices",
    "letter-text-conflict",
    "letter-text-conflict-resolved",
    "echo-answer-conflict",
    "no-answer",
    "empty",
}
REQUIRED_RULES = {
    "realtimeqa": ZERO_SHOT_RULES | {"ambiguous"},
    "dream": ZERO_SHOT_RULES,
    "aqua": {
        "answer-is",
        "boxed",
        "named-letter",
        "hedge",
        "prompt-echo",
        "answer-after-echo",
        "no-answer",
        "empty",
    },
}


def test_the_corpus_is_large_and_covers_every_rule_in_every_dataset():
    assert len(CHOICE_CORPUS) >= 200
    for dataset, rules in REQUIRED_RULES.items():
        cases = [case for case in CHOICE_CORPUS if case["dataset"] == dataset]
        seen = Counter(case["rule"] for case in cases)
        assert rules <= set(seen), f"{dataset} lacks {sorted(rules - set(seen))}"
    recovery_rules = {case["rule"] for case in RECOVERY_CORPUS}
    assert recovery_rules == {
        "plain",
        "preamble",
        "quotes",
        "code-fence",
        "trailing-note",
        "prompt-continuation",
        "empty",
    }


def test_the_corpus_is_well_formed():
    for case in CHOICE_CORPUS:
        assert set(case) == {"output", "choices", "dataset", "expected", "rule", "note"}, case
        assert case["expected"] is None or case["expected"] in LETTERS[: len(case["choices"])], case
        assert re.fullmatch(r"[a-z]+(?:-[a-z]+)*", case["rule"]), case
    outputs = [(case["output"], tuple(case["choices"])) for case in CHOICE_CORPUS]
    assert len(outputs) == len(set(outputs)), "a case is listed twice"


# ---------------------------------------------------------------- rules that need more than one example


def test_a_choice_text_inside_another_reads_as_the_longer_only_when_it_is_said():
    choices = ["At six fifty.", "At seven.", "At seven fifty."]
    assert careful.read_choice("At seven fifty, I think.", choices, dataset="dream").value == "C"
    assert careful.read_choice("At seven, I think.", choices, dataset="dream").value == "B"


def test_a_number_that_goes_on_is_not_the_choice():
    five = ["6", "8", "10", "12", "14"]
    assert careful.read_choice("So the answer is 6 - 2 = 4.", five, dataset="aqua").value is None
    assert careful.read_choice("So the answer is 6.", five, dataset="aqua").value == "A"
    assert (
        careful.read_choice("So the answer is 12 hours and 30 minutes.", ["12 hours"], dataset="aqua").value
        is None
    )


def test_the_last_statement_decides_a_chain_of_thought_and_a_zero_shot_answer_that_cycles_reads_none():
    """A worked solution corrects itself on the way; a zero-shot answer that names two answers in turn commits
    to neither (the blind judge's rule)."""
    text = "First guess: the answer is (A). Checking again, the answer is (C)."
    assert careful.read_choice(text, list("12345"), dataset="aqua").value == "C"
    assert careful.read_choice(text, CHOICES, dataset="realtimeqa") == Reading(None, "cycle")


def test_questions_and_hypotheses_state_no_answer():
    five = ["3", "4", "5", "6", "7"]
    text = "x = 5, so the answer is (C). If x were 4, the answer would be (B)."
    assert careful.read_choice(text, five, dataset="aqua") == Reading("C", "answer-is")
    assert careful.read_choice("Could the answer be (B)?", CHOICES, dataset="realtimeqa").value is None
    assert careful.read_choice("Is it (B)? I am not sure.", CHOICES, dataset="realtimeqa").value is None


def test_an_echo_of_another_question_is_not_read_but_an_echo_of_this_one_is():
    same = "Question: Who?\nChoices: (A)Amazon (B)Microsoft (C)Meta (D)Google\nAnswer: (C)"
    other = "Question: Who?\nChoices: (A)Sweden (B)Finland (C)Israel (D)Italy\nAnswer: (C)"
    assert careful.read_choice(same, CHOICES, dataset="realtimeqa") == Reading("C", "answer-after-echo")
    assert careful.read_choice(other, CHOICES, dataset="realtimeqa") == Reading(None, "prompt-echo")
    cut_off = "Question: Who?\nChoices: (A)Amazon (B)Microsoft (C)Me"
    assert careful.read_choice(cut_off, CHOICES, dataset="realtimeqa") == Reading(None, "prompt-echo")


@pytest.mark.parametrize("unit", ["answer is ", "(A) ", "A or ", "\\boxed{", "choice ", "so (B) ", "Note: "])
def test_a_long_degenerate_output_is_read_in_reasonable_time(unit):
    """A model stuck in a loop can write tens of thousands of characters; reading must stay near linear."""
    output = unit * (40_000 // len(unit))
    started = time.perf_counter()
    for dataset in ("realtimeqa", "aqua"):
        careful.read_choice(output, CHOICES, dataset=dataset)
    careful.read_recovery(output)
    assert time.perf_counter() - started < 10  # about 0.1-0.8 s on a laptop core; quadratic was 10 s and more


def test_model_output_is_never_run_as_code(tmp_path):
    marker = tmp_path / "ran"
    payload = f"__import__('pathlib').Path({str(marker)!r}).touch() or 'the answer is (A)'"
    for dataset in ("realtimeqa", "dream", "aqua"):
        careful.read_choice(payload, CHOICES[:3], dataset=dataset)
    careful.read_recovery(payload)
    assert not marker.exists()


# ---------------------------------------------------------------- the registry and bad input


def test_the_registry():
    assert set(READERS) == {"paper", "careful"}
    assert DEFAULT_READER == "careful"
    assert get_reader("paper") is READERS["paper"]
    assert isinstance(get_reader("paper"), PaperReader)
    for name, reader in READERS.items():
        assert reader.name == name
        assert isinstance(reader, AnswerReader)


@pytest.mark.parametrize("name", ["authors", "Careful", "", None])
def test_an_unknown_reader_is_named_in_one_line(name):
    with pytest.raises(ScrambledBenchError) as raised:
        get_reader(name)
    assert str(raised.value) == f"unknown answer reader {name!r}; choose paper or careful"


@pytest.mark.parametrize("reader", ["paper", "careful"])
def test_bad_arguments_are_named(reader):
    read = READERS[reader].read_choice
    with pytest.raises(ValueError, match="unknown dataset 'realtimeQA'; choose realtimeqa, dream or aqua"):
        read("A", CHOICES, dataset="realtimeQA")
    with pytest.raises(ValueError, match="realtimeqa takes a list of 1 to 4 choice texts, got 5"):
        read("A", [*CHOICES, "Apple"], dataset="realtimeqa")
    with pytest.raises(ValueError, match="aqua takes a list of 1 to 5 choice texts, got 0"):
        read("A", [], dataset="aqua")
    with pytest.raises(TypeError, match="output must be a string, got NoneType"):
        read(None, CHOICES, dataset="realtimeqa")
    with pytest.raises(TypeError, match="output must be a string, got int"):
        READERS[reader].read_recovery(3)


# ---------------------------------------------------------------- invariants

DATASETS = st.sampled_from(["realtimeqa", "dream", "aqua"])
MAX_CHOICES = {"realtimeqa": 4, "dream": 3, "aqua": 5}


@st.composite
def questions(draw):
    """A dataset and choice texts it allows (free text, so some look like letters or labels)."""
    dataset = draw(DATASETS)
    choices = draw(st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=MAX_CHOICES[dataset]))
    return dataset, choices


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=300), questions())
def test_reading_never_raises_and_gives_nothing_or_a_valid_letter(output, question):
    dataset, choices = question
    for reader in READERS.values():
        reading = reader.read_choice(output, choices, dataset=dataset)
        assert re.fullmatch(r"[a-z]+(?:-[a-z]+)*", reading.rule)
        assert reading.value is None or reading.value in LETTERS[: MAX_CHOICES[dataset]]
        if reader is careful:
            assert reading.value is None or reading.value in LETTERS[: len(choices)]


ANSWER_WORDS = st.sampled_from(
    [
        "The answer is",
        "Answer:",
        "(A) or (B)",
        "either A or C",
        "Question:",
        "Choices: (A)x (B)y",
        "\\boxed{",
        "**B**",
        "not",
        "A map",
        "I think",
        "\n",
        " ",
        ".",
        "so (C).",
        "closest to",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(ANSWER_WORDS, st.text(max_size=8)), max_size=25), questions())
def test_reading_answer_like_fragments_never_raises(parts, question):
    dataset, choices = question
    reading = careful.read_choice("".join(parts), choices, dataset=dataset)
    assert reading.value is None or reading.value in LETTERS[: len(choices)]


def _no_choice_spells(letter: str, choices: list[str]) -> bool:
    return all(re.findall(r"[^\W_]+", choice.lower()) != [letter.lower()] for choice in choices)


@settings(max_examples=300, deadline=None)
@given(
    questions(),
    st.data(),
    st.sampled_from(["{}", "({})", "{}.", " {}.\n", "**{}**", "Answer: {}", "[{}]", "“{}”", "{})"]),
)
def test_a_bare_valid_letter_is_read_as_itself(question, data, shape):
    dataset, choices = question
    letter = data.draw(st.sampled_from(LETTERS[: len(choices)]))
    assume(_no_choice_spells(letter, choices))
    if dataset == "aqua":
        assert (
            careful.read_choice(f"The answer is {shape.format(letter)}", choices, dataset=dataset).value
            == letter
        )
    else:
        assert careful.read_choice(shape.format(letter), choices, dataset=dataset).value == letter


@settings(max_examples=200, deadline=None)
@given(
    questions(),
    st.data(),
    st.sampled_from(["({}) or ({})", "either {} or {}", "{} or {}", "({}) and/or ({})"]),
)
def test_two_letters_offered_together_are_a_hedge(question, data, shape):
    dataset, choices = question
    assume(len(choices) >= 2)
    first, second = data.draw(st.permutations(LETTERS[: len(choices)]))[:2]
    assume(_no_choice_spells(first, choices) and _no_choice_spells(second, choices))
    # a choice spelled "OR" or "either" makes the joining word its text: "(A) or (B)" is then ambiguous
    assume(all(_no_choice_spells(word, choices) for word in ("or", "either", "and")))
    output = shape.format(first, second)
    if dataset == "aqua":
        output = "So the answer is " + output
    assert careful.read_choice(output, choices, dataset=dataset) == Reading(None, "hedge")


def test_a_hedge_is_not_read_as_the_content_its_letters_share_with_a_choice():
    # found by the test above: the choice "0B" has the distinctive word "b", which "(B)" also holds
    assert careful.read_choice("(A) or (B)", ["0", "0B"], dataset="realtimeqa") == Reading(None, "hedge")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_recovery_never_rewrites_the_sentence(output):
    """What the careful reader keeps is a piece of the output as it was: it only cuts things away."""
    reading = careful.read_recovery(output)
    assert reading.value is None or (reading.value in output and reading.value == reading.value.strip())
    assert re.fullmatch(r"[a-z]+(?:-[a-z]+)*", reading.rule)


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=st.characters(categories=["L", "N", "Zs"], include_characters=".,;!?'-"), max_size=200)
)
def test_a_sentence_without_wrapping_is_kept_as_it_is(sentence):
    assume(sentence.strip() and not (sentence.strip()[0] == sentence.strip()[-1] == "'"))
    assert careful.read_recovery(sentence).value == sentence.strip()


# ---------------------------------------------------------------- on the authors' released outputs


def _rows(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_where_the_careful_reader_departs_from_the_paper_on_the_released_outputs(shared_data):
    """The disagreements ``docs/readers/history.md`` discusses, counted by the careful reader's rule.

    If a change to the careful reader moves these numbers, the document is out of date: update both.
    """
    base = shared_data / "paper_outputs" / "scrambled_qa"
    datasets = {
        "scrambled_realtimeQA": "realtimeqa",
        "scrambled_DREAM_test": "dream",
        "scrambled_DREAM_dev": "dream",
    }
    datasets["scrambled_AQuA"] = "aqua"
    paper = READERS["paper"]
    rows = disagreements = 0
    by_rule: Counter = Counter()
    for path in sorted(base.rglob("*.jsonl.gz")):
        dataset = datasets[path.relative_to(base).parts[0]]
        for row in _rows(path):
            choices = parse_choices(row["input"])
            ours = careful.read_choice(row["output"], choices, dataset=dataset)
            rows += 1
            if ours.value != paper.read_choice(row["output"], choices, dataset=dataset).value:
                disagreements += 1
                by_rule[(dataset, ours.rule)] += 1
    assert rows == 32855
    assert dict(by_rule) == EXPECTED_DISAGREEMENTS
    assert disagreements == sum(EXPECTED_DISAGREEMENTS.values())


# Measured; each is discussed, with examples and who is right, in docs/readers/history.md.
EXPECTED_DISAGREEMENTS = {
    ("aqua", "answer-is"): 171,  # mostly "The closest answer choice is (C)": the paper wants "answer is "
    ("aqua", "boxed"): 35,  # a final \\boxed{\\textbf{(C)}...} without "answer is"
    ("aqua", "named-letter"): 16,  # "Since choice (C) works, ...", "... = (A)." at the end
    ("aqua", "answer-after-echo"): 2,  # the question restated, then answered
    ("aqua", "no-answer"): 3,  # no answer given; the paper reads the "A" of "Alan" and the like
    ("dream", "choice-text"): 4,  # "Room 205" for the choice "Room 205."
    ("dream", "leading-letter"): 1,  # "(C)At seven fifty": the paper reads the choice "At seven"
}
