"""The one place where :class:`~.base.GenerationSettings` become each API's decoding parameters.

Every backend sends what one of these functions returns, so the paper's decoding (greedy, the task's stop
sequences, a seed) means the same on every API, and a harness export can state which parameters differ.
The length cap is left to the caller where the API names it differently per endpoint (OpenAI chat:
``max_tokens`` or ``max_completion_tokens``).
"""

from __future__ import annotations

from typing import Any

from scrambled_bench.evaluation.backends.base import GenerationSettings


def openai_parameters(settings: GenerationSettings) -> dict[str, Any]:
    """OpenAI-compatible ``/chat/completions`` and ``/completions`` bodies (without the length cap).

    >>> openai_parameters(GenerationSettings(stop=("\\nQ:",), seed=3))
    {'temperature': 0.0, 'stop': ['\\nQ:'], 'seed': 3}
    """
    parameters: dict[str, Any] = {"temperature": settings.temperature}
    if settings.stop:
        parameters["stop"] = list(settings.stop)
    if settings.seed is not None:
        parameters["seed"] = settings.seed
    return parameters


def chat_completion_parameters(settings: GenerationSettings) -> dict[str, Any]:
    """huggingface_hub's ``chat_completion`` (TGI's Messages API, Inference Providers).

    >>> chat_completion_parameters(GenerationSettings(max_new_tokens=8))
    {'max_tokens': 8, 'temperature': 0.0, 'stop': None, 'seed': 0}
    """
    return {
        "max_tokens": settings.max_new_tokens,
        "temperature": settings.temperature,
        "stop": list(settings.stop) or None,
        "seed": settings.seed,
    }


def text_generation_parameters(settings: GenerationSettings) -> dict[str, Any]:
    """huggingface_hub's ``text_generation`` (TGI's native ``/generate``): greedy is ``do_sample=False``.

    >>> text_generation_parameters(GenerationSettings(max_new_tokens=8))
    {'max_new_tokens': 8, 'do_sample': False, 'temperature': None, 'stop': None, 'seed': 0, 'return_full_text': False}
    """
    greedy = settings.temperature == 0
    return {
        "max_new_tokens": settings.max_new_tokens,
        "do_sample": not greedy,
        "temperature": None if greedy else settings.temperature,
        "stop": list(settings.stop) or None,
        "seed": settings.seed,
        "return_full_text": False,
    }


def llama_cpp_parameters(settings: GenerationSettings) -> dict[str, Any]:
    """llama-cpp-python's ``create_completion`` / ``create_chat_completion``: greedy is ``top_k=1``.

    >>> llama_cpp_parameters(GenerationSettings(max_new_tokens=8))
    {'max_tokens': 8, 'temperature': 0.0, 'stop': None, 'seed': 0, 'top_k': 1}
    """
    parameters: dict[str, Any] = {
        "max_tokens": settings.max_new_tokens,
        "temperature": settings.temperature,
        "stop": list(settings.stop) or None,
        "seed": settings.seed,
    }
    if settings.temperature == 0:
        parameters["top_k"] = 1
    return parameters


def transformers_parameters(settings: GenerationSettings) -> dict[str, Any]:
    """transformers' ``generate`` (the length cap and stop strings need the model and tokenizer, so the
    backend adds them): greedy is ``do_sample=False``.

    >>> transformers_parameters(GenerationSettings()), transformers_parameters(GenerationSettings(temperature=0.7))
    ({'do_sample': False}, {'do_sample': True, 'temperature': 0.7})
    """
    if settings.temperature == 0:
        return {"do_sample": False}
    return {"do_sample": True, "temperature": settings.temperature}
