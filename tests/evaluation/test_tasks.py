"""Task configs, request building and scoring of raw outputs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation import prompts
from scrambled_bench.evaluation.backends.base import Generation
from scrambled_bench.evaluation.tasks import (
    TaskConfig,
    build_requests,
    configs_from,
    on_result,
    score_output,
    select_rows,
)

RTQA_ROWS = [
    {"id": "a", "original": "Bob won the race.", "scrambled": "Bob nwo the erac.", "question": "Who won?",
     "choices": ["Ann", "Bob", "Cy", "Di"], "answer": "B", "used_for_qa": True},
    {"id": "b", "original": "Bob won the race.", "scrambled": "Bob now the care.", "question": "Who lost?",
     "choices": ["Ann", "Bob", "Cy", "Di"], "answer": "A", "used_for_qa": False},
    {"id": "c", "original": "Rain fell all day.", "scrambled": "Rian flel all day.", "question": "What fell?",
     "choices": ["Snow", "Rain", "Hail", "Ash"], "answer": "B", "used_for_qa": True},
]
DREAM_ROWS = [
    {"id": "d1", "original": "W: Hi.\nM: Hello.", "scrambled": "W: iH.\nM: olelH.", "question": "Who speaks first?",
     "choices": ["The woman.", "The man.", "Nobody."], "answer": "A", "categories": ["matching"]},
]
AQUA_ROWS = [
    {"id": "q1", "original": "What is 2 + 2?", "scrambled": "hWta is 2 + 2?", "question": "hWta is 2 + 2?",
     "choices": ["1", "2", "3", "4", "5"], "answer": "D", "rationale": "2 + 2 = 4"},
]


def test_config_names_and_validation() -> None:
    assert TaskConfig("scrrec-few-shot", "realtimeqa", "kfl").data_config == "realtimeqa_kfl"
    with pytest.raises(ScrambledBenchError, match="unknown task 'scrqx'"):
        TaskConfig("scrqx", "dream", "kfl")
    with pytest.raises(ScrambledBenchError, match="unknown scramble type 'rsx'"):
        TaskConfig("scrqa", "dream", "rsx")
    with pytest.raises(ScrambledBenchError, match="rate 150 is outside"):
        TaskConfig("scrqa", "dream", "rs150")
    assert TaskConfig("scrqa", "dream", "adj30").data_config == "dream_adj30"  # any type the builder makes
    with pytest.raises(ScrambledBenchError, match="does not run on dataset 'aqua'"):
        TaskConfig("scrqa", "aqua", "rs50")
    with pytest.raises(ScrambledBenchError, match="does not run at scramble type 'original'"):
        TaskConfig("scrrec-zero-shot", "realtimeqa", "original")
    with pytest.raises(ScrambledBenchError, match="exemplar rate"):
        TaskConfig("aqua-cot", "aqua", "rs50", exemplar_rate=30)


def test_scrrec_dedupes_evidence_and_scrqa_keeps_only_questions_used_for_qa() -> None:
    assert [r["id"] for r in select_rows(TaskConfig("scrrec-zero-shot", "realtimeqa", "rs50"), RTQA_ROWS)] == ["a", "c"]
    assert [r["id"] for r in select_rows(TaskConfig("scrqa", "realtimeqa", "rs50"), RTQA_ROWS)] == ["a", "c"]
    assert [r["id"] for r in select_rows(TaskConfig("scrqa", "realtimeqa", "rs50"), RTQA_ROWS, limit=1)] == ["a"]


def test_scrqa_requests_carry_the_paper_prompt_and_the_gold() -> None:
    requests = build_requests(TaskConfig("scrqa", "realtimeqa", "rs50"), RTQA_ROWS, max_new_tokens=32, chat=False)
    assert [r.meta["id"] for r in requests] == ["a", "c"]
    first = requests[0]
    assert first.prompt == prompts.realtimeqa_prompt("Who won?", ["Ann", "Bob", "Cy", "Di"], "Bob nwo the erac.")
    assert first.chat is False
    assert first.settings.max_new_tokens == 32 and first.settings.temperature == 0.0
    assert first.settings.stop == prompts.QA_STOP
    assert first.meta == {
        "task": "scrqa", "dataset": "realtimeqa", "config": "scrqa/realtimeqa/rs50", "data_config": "realtimeqa_rs50",
        "scramble_type": "rs50", "id": "a", "choices": ["Ann", "Bob", "Cy", "Di"], "answer": "B",
    }


def test_dream_and_aqua_requests() -> None:
    [dream] = build_requests(TaskConfig("scrqa", "dream", "rs50"), DREAM_ROWS)
    assert dream.prompt.startswith("Dialogue:\nW: iH.\nM: olelH.\nQuestion: Who speaks first?")
    assert dream.meta["categories"] == ["matching"]
    [aqua] = build_requests(TaskConfig("aqua-cot", "aqua", "rs50", exemplar_rate=100), AQUA_ROWS, seed=7)
    demo = prompts.aqua_demonstration(prompts.scrambled_aqua_exemplar_questions(100, seed=7))
    assert aqua.prompt == demo + "Question: hWta is 2 + 2?\nChoices: (A)1 (B)2 (C)3 (D)4 (E)5\nAnswer:"
    assert aqua.meta["exemplar_rate"] == 100 and aqua.settings.stop == prompts.AQUA_STOP


def test_few_shot_scrrec_request_uses_the_seeded_exemplars() -> None:
    [request] = build_requests(TaskConfig("scrrec-few-shot", "realtimeqa", "rs50"), RTQA_ROWS[:1], seed=5)
    demo = prompts.scrrec_demonstration(prompts.scrambled_scrrec_exemplars(5))
    assert request.prompt == demo + "Scrambled sentence: Bob nwo the erac.\nRecovered sentence:"
    assert request.meta["original"] == "Bob won the race."
    # a different seed scrambles the exemplars differently, so the resume key changes too
    [other] = build_requests(TaskConfig("scrrec-few-shot", "realtimeqa", "rs50"), RTQA_ROWS[:1], seed=6)
    assert other.key("m") != request.key("m")


def test_scoring_multiple_choice_outputs() -> None:
    meta = {"task": "scrqa", "dataset": "realtimeqa", "choices": ["Ann", "Bob", "Cy", "Di"], "answer": "B"}
    assert score_output(meta, " B.\nQuestion: next")["correct"] is True
    assert score_output(meta, "The answer is (A).") == {
        "prediction": "A", "correct": False, "unparsed": False, "rule": "answer-is",
    }
    garbage = score_output(meta, "\u0000\u0001 ??? lorem")
    assert garbage == {"prediction": None, "correct": False, "unparsed": True, "rule": "no-answer"}
    cot = {"task": "aqua-cot", "dataset": "aqua", "choices": ["1", "2", "3", "4", "5"], "answer": "D"}
    assert score_output(cot, "2 + 2 = 4. The answer is (D).")["correct"] is True
    # the paper's reader reads a chain of thought only after "answer is"; the careful one reads its conclusion
    assert score_output(cot, "So it must be 4. I think it is D", reader="paper")["unparsed"] is True
    assert score_output(cot, "So it must be 4. I think it is D")["prediction"] == "D"


def test_scoring_recovery_outputs() -> None:
    meta = {"task": "scrrec-zero-shot", "original": "Rain fell all day.", "scrambled": "Rian flel all day."}
    assert score_output(meta, " Rain fell all day.\n") == {
        "prediction": "Rain fell all day.", "edit_distance": 0, "scrambled_edit_distance": 4, "unparsed": False,
        "rule": "plain",
    }
    wrapped = 'Here is the recovered sentence: "Rain fell all day."'
    assert score_output(meta, wrapped)["edit_distance"] == 0  # the careful reader drops what wraps it
    assert score_output(meta, wrapped, reader="paper")["edit_distance"] > 0  # the paper's reader does not
    empty = score_output(meta, "")
    assert empty["unparsed"] is True and empty["edit_distance"] == len("Rain fell all day.")
    # raw completions keep the first line only (the paper's open models stopped at the newline)
    assert score_output(meta, "Rain fell all day.\nMore text", chat=False)["edit_distance"] == 0
    assert score_output(meta, "Rain fell all day.\nMore text", chat=True)["edit_distance"] > 0


def test_on_result_hook_scores_the_generation() -> None:
    [request] = build_requests(TaskConfig("scrqa", "dream", "original"), DREAM_ROWS)
    assert on_result(request, Generation(" A")) == {
        "prediction": "A", "correct": True, "unparsed": False, "rule": "leading-letter", "reader": "careful",
    }


def test_configs_from_skips_what_a_task_excludes() -> None:
    names = [c.name for c in configs_from(["scrrec-zero-shot", "scrqa"], ["realtimeqa"], ["original", "sub", "kf"])]
    assert names == [
        "scrrec-zero-shot/realtimeqa/kf",
        "scrqa/realtimeqa/original", "scrqa/realtimeqa/sub", "scrqa/realtimeqa/kf",
    ]
    with pytest.raises(ScrambledBenchError, match="unknown scramble type 'zz'"):
        configs_from(["scrqa"], None, ["zz"])


@given(st.text(max_size=200))
def test_any_output_scores_without_error_and_unparsed_is_never_correct(output: str) -> None:
    meta = {"task": "scrqa", "dataset": "dream", "choices": ["Ann", "Bob", "Cy"], "answer": "C"}
    scored = score_output(meta, output)
    assert scored["prediction"] in (None, "A", "B", "C")
    assert not (scored["unparsed"] and scored["correct"])
    rec = score_output({"task": "scrrec-zero-shot", "original": "Abc def.", "scrambled": "Bac fed."}, output)
    assert rec["edit_distance"] >= 0 and rec["unparsed"] == (output.strip() == "")
