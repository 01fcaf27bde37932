"""llama-cpp-python's own OpenAI-compatible server (``python -m llama_cpp.server``), made repeatable.

The stock server keeps one model and reuses the longest prefix a new prompt shares with the previous one,
evaluating only the rest. Evaluated in other batches, the same prompt then gets slightly other logits,
and a small model's greedy decoding can branch: two identical requests answered differently depending
on what was asked before (seen with SmolLM2 and llama-cpp-python 0.3.16). The tests compare runs made
through different paths (a clean run and one behind a fault proxy; our harness, lm-eval and lighteval),
so every request here evaluates its whole prompt from an empty cache, as the embedded llama-cpp backend
does. Everything else (routes, schemas, chat templates, sampling) is the stock server's.

Usage: the same arguments as ``python -m llama_cpp.server``.
"""

from __future__ import annotations

import llama_cpp
from llama_cpp.server.__main__ import main

_stock_generate = llama_cpp.Llama.generate


def _generate_from_an_empty_cache(self, tokens, *args, **kwargs):
    self.reset()  # forget the previous prompt: no prefix reuse
    yield from _stock_generate(self, tokens, *args, **kwargs)


llama_cpp.Llama.generate = _generate_from_an_empty_cache

if __name__ == "__main__":
    main()
