"""llama-cpp-python's own OpenAI-compatible server (``python -m llama_cpp.server``), made repeatable.

The stock server keeps one model and reuses the longest prefix a new prompt shares with the previous one,
evaluating only the rest. Evaluated in other batches, the same prompt then gets slightly other logits,
and a small model's greedy decoding can branch: two identical requests answered differently depending
on what was asked before (seen with SmolLM2 and llama-cpp-python 0.3.16). The tests compare runs made
through different paths (a clean run and one behind a fault proxy; our harness, lm-eval and lighteval),
so every request here evaluates its whole prompt from an empty cache, as the embedded llama-cpp backend
does. Everything else (routes, schemas, chat templates, sampling) is the stock server's.

A prompt this server has evaluated before is not evaluated again: the state llama.cpp held right after
evaluating it from the empty cache (its KV cells, the logits of that evaluation) and the logits
llama-cpp-python copied from it are kept, least recently used out first, and put back when the same prompt
tokens come again. That is the very state the evaluation would compute again, not an approximation of it:
the answer is still generated token by token from it, sampled as always, and it equals the one an empty
cache gives, bit for bit (tests/test_llama_server.py checks text and log-probabilities). It is the tests' own
saving: several tests send the same prompts through different harnesses and paths (the suite's session
servers saw the same prompt again in almost half of their requests), and evaluating a prompt is most of a
request's cost on a CPU.

Usage: the same arguments as ``python -m llama_cpp.server``.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import llama_cpp
import numpy as np

#: bytes of prompt states one server keeps. A state holds the logits of every prompt token twice (the
#: server computes them all, for log-probabilities), about 0.4 MB a token for SmolLM2's 49,152 tokens:
#: 40 MB for a 100-token prompt, so this keeps the last few dozen prompts, which is what the tests repeat.
MAX_STATE_BYTES = 1 << 30


@dataclass(frozen=True)
class PromptState:
    """What evaluating one prompt from the empty cache left: llama.cpp's state and the copied logits."""

    llama_state: ctypes.Array[ctypes.c_uint8]
    scores: np.ndarray

    @property
    def nbytes(self) -> int:
        return ctypes.sizeof(self.llama_state) + self.scores.nbytes


class PromptStates:
    """Prompt states by their prompt tokens, the least recently used dropped beyond ``max_bytes``."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.nbytes = 0
        self._states: OrderedDict[tuple[int, ...], PromptState] = OrderedDict()

    def __len__(self) -> int:
        return len(self._states)

    def get(self, tokens: tuple[int, ...]) -> PromptState | None:
        state = self._states.get(tokens)
        if state is not None:
            self._states.move_to_end(tokens)
        return state

    def put(self, tokens: tuple[int, ...], state: PromptState) -> None:
        if tokens in self._states or state.nbytes > self.max_bytes:
            return
        self._states[tokens] = state
        self.nbytes += state.nbytes
        while self.nbytes > self.max_bytes:
            _, dropped = self._states.popitem(last=False)
            self.nbytes -= dropped.nbytes


def snapshot(llama: llama_cpp.Llama) -> PromptState:
    """``llama``'s state now, right after it evaluated a prompt from the empty cache."""
    context = llama._ctx.ctx
    size = llama_cpp.llama_state_get_size(context)
    buffer = (ctypes.c_uint8 * size)()
    if llama_cpp.llama_state_get_data(context, buffer, size) != size:
        raise RuntimeError("llama.cpp wrote a prompt state of another size than it announced")
    # llama-cpp-python copies every token's logits only when it keeps them all (the server's default)
    scores = llama.scores[: llama.n_tokens].copy() if llama._logits_all else np.empty((0, 0), np.single)
    return PromptState(buffer, scores)


def restore(llama: llama_cpp.Llama, tokens: Sequence[int], state: PromptState) -> None:
    """Put ``llama`` back in the state ``snapshot`` kept for ``tokens``."""
    # llama.cpp only reads the kept buffer: no copy of it is needed
    size = ctypes.sizeof(state.llama_state)
    if llama_cpp.llama_state_set_data(llama._ctx.ctx, state.llama_state, size) != size:
        raise RuntimeError("llama.cpp did not take back a saved prompt state")
    n_tokens = len(tokens)
    llama.input_ids[:n_tokens] = tokens
    if llama._logits_all:
        llama.scores[:n_tokens] = state.scores
    llama.n_tokens = n_tokens


_stock_generate = llama_cpp.Llama.generate


def repeatable_generate(states: PromptStates | None) -> Callable[..., Iterator[int]]:
    """``Llama.generate`` evaluating every prompt from an empty cache; a prompt whose state ``states`` keeps
    is put back in it instead of being evaluated again (``None``: every prompt is evaluated)."""

    def generate(self: llama_cpp.Llama, tokens: Sequence[int], **kwargs: Any) -> Iterator[int]:
        self.reset()  # forget the previous prompt: no prefix reuse
        prompt = tuple(int(token) for token in tokens)
        if states is None or not prompt:
            yield from _stock_generate(self, tokens, **kwargs)
            return
        state = states.get(prompt)
        if state is None:
            self.eval(prompt)  # what the stock generate does first after a reset
            states.put(prompt, snapshot(self))
        else:
            restore(self, prompt, state)
        # the prompt is evaluated: the stock generate samples from its last logits, as after its own eval
        yield from _stock_generate(self, [], **{**kwargs, "reset": False})

    return generate


if __name__ == "__main__":
    from llama_cpp.server.__main__ import main

    llama_cpp.Llama.generate = repeatable_generate(PromptStates(MAX_STATE_BYTES))
    main()
