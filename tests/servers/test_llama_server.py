"""The tests' llama.cpp server (servers/llama_server.py) keeps prompt states without changing an answer.

A prompt seen before is put back in the state its evaluation from the empty cache left, instead of being
evaluated again. The answers must be those of evaluating every prompt (text, log-probabilities of an echoed
prompt, seeded sampling), whatever came before, and the kept states must really be used.
"""

from __future__ import annotations

import ctypes
import types
from pathlib import Path

import numpy as np
import pytest
from llama_server import MAX_STATE_BYTES, PromptState, PromptStates, repeatable_generate

README = Path(__file__).parents[2] / "README.md"


def _state(nbytes: int) -> PromptState:
    return PromptState((ctypes.c_uint8 * nbytes)(), np.empty((0, 0), np.single))


def test_the_least_recently_used_states_go_first_beyond_the_byte_budget() -> None:
    states = PromptStates(max_bytes=300)
    states.put((1,), _state(100))
    states.put((2,), _state(100))
    states.put((3,), _state(100))
    assert states.get((1,)) is not None  # (2,) is now the least recently used
    states.put((4,), _state(100))
    assert states.get((2,)) is None
    assert [states.get(key) is not None for key in [(1,), (3,), (4,)]] == [True, True, True]
    assert states.nbytes == 300
    states.put((5,), _state(301))  # larger than the budget: not kept, nothing dropped for it
    assert states.get((5,)) is None and states.nbytes == 300


@pytest.mark.slow
def test_a_kept_prompt_state_gives_the_answer_of_evaluating_the_prompt(smollm2_gguf: Path) -> None:
    from llama_cpp import Llama

    # the server's settings (tests/conftest.py, llama_cpp.server's defaults: every token's logits kept), but
    # batches of 64 tokens, not 512, so that a prompt of a few sentences is evaluated in several batches, as
    # the server's longest prompts are: llama.cpp's state then holds the last batch's logits only
    llama = Llama(
        model_path=str(smollm2_gguf), n_ctx=2048, n_batch=64, n_threads=1, n_threads_batch=1, seed=0,
        logits_all=True, verbose=False,
    )  # fmt: skip
    text = README.read_text(encoding="utf-8")
    short, medium = text[:100], text[150:450]
    assert len(llama.tokenize(short.encode())) < 64 < len(llama.tokenize(medium.encode()))
    requests = [
        ("completion", {"prompt": medium, "max_tokens": 12, "temperature": 0}),
        ("completion", {"prompt": short, "max_tokens": 2, "temperature": 0, "echo": True, "logprobs": 2}),
        ("chat", {"messages": [{"role": "user", "content": medium}], "max_tokens": 12, "temperature": 0}),
        ("completion", {"prompt": medium, "max_tokens": 4, "temperature": 0.8, "seed": 7}),
    ]

    def answer(kind: str, arguments: dict) -> dict:
        reply = (
            llama.create_completion(**arguments)
            if kind == "completion"
            else llama.create_chat_completion(**arguments)
        )
        return {key: value for key, value in reply.items() if key not in ("id", "created")}

    llama.generate = types.MethodType(repeatable_generate(None), llama)
    evaluated = [answer(*request) for request in requests]

    states = PromptStates(MAX_STATE_BYTES)
    llama.generate = types.MethodType(repeatable_generate(states), llama)
    first = [answer(*request) for request in requests]
    evaluations: list[int] = []
    stock_eval = llama.eval
    llama.eval = lambda tokens: (evaluations.append(len(tokens)), stock_eval(tokens))[1]
    again = [answer(*request) for request in reversed(requests)][::-1]

    assert first == evaluated
    assert again == evaluated
    assert evaluations and max(evaluations) == 1  # the second time, only the generated tokens, one by one
    assert len(states) == 3  # three prompts (the chat one in its template)
