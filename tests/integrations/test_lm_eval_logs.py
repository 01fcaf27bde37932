"""lm-eval's logs read without a model, in the shapes lm-eval 0.4.13 writes them (copied from real runs
against the llama.cpp server): a chat run's request is a one-element list holding the rendered messages as
JSON (its prompt is the last user turn), a multiple-choice request is one (context, continuation) pair per
choice with the log-likelihoods logged as strings (the output is the likeliest choice)."""

from __future__ import annotations

import json
from pathlib import Path

from scrambled_bench.integrations.lm_eval.logs import read_samples

CHAT = {
    "doc_id": 0,
    "doc": {"question": "Which animal carries its house?", "choices": ["Snail", "Horse"], "answer": "Snail"},
    "target": " Snail",
    "arguments": {
        "gen_args_0": {
            "arg_0": [
                json.dumps(
                    [
                        {"role": "user", "content": "Question: What colour is the sky?\nAnswer:"},
                        {"role": "assistant", "content": " Blue"},
                        {"role": "user", "content": "Question: Which animal carries its house?\nAnswer:"},
                    ]
                )
            ],
            "arg_1": {"until": ["\n"], "max_gen_toks": 6},
        }
    },
    "resps": [["Eagle"]],
    "filtered_resps": ["Eagle"],
    "filter": "strip",
    "metrics": ["exact_match"],
    "exact_match": 0.0,
}
MULTIPLE_CHOICE = {
    "doc_id": 3,
    "doc": {"question": "Which planet is closest to the sun?", "label": 0},
    "target": 0,
    "arguments": {
        f"gen_args_{index}": {
            "arg_0": "Question: Which planet is closest to the sun?\nAnswer:",
            "arg_1": choice,
        }
        for index, choice in enumerate([" Mercury", " Neptune", " Saturn"])
    },
    "resps": [[["-30.26", "False"]], [["-33.80", "False"]], [["-6.50", "False"]]],
    "filtered_resps": [["-30.26", "False"], ["-33.80", "False"], ["-6.50", "False"]],
    "filter": "none",
    "metrics": ["acc"],
    "acc": 0.0,
}


def _samples(tmp_path: Path, *rows: dict) -> Path:
    path = tmp_path / "samples_t_2026-01-01T00-00-00.1.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_a_chat_runs_prompt_is_the_rendered_user_turn(tmp_path: Path) -> None:
    [document] = read_samples(_samples(tmp_path, CHAT)).values()
    assert document.prompt == "Question: Which animal carries its house?\nAnswer:"
    assert document.output == "Eagle" and document.scores == {"exact_match,strip": 0.0}
    assert document.choices is None and document.target == " Snail"


def test_a_multiple_choice_request_gives_its_choices_and_the_likeliest_as_output(tmp_path: Path) -> None:
    [document] = read_samples(_samples(tmp_path, MULTIPLE_CHOICE)).values()
    assert document.doc_id == 3 and document.choices == (" Mercury", " Neptune", " Saturn")
    assert document.output == " Saturn" and document.scores == {"acc,none": 0.0}
    assert document.prompt == "Question: Which planet is closest to the sun?\nAnswer:"
