"""A prompt inside a GGUF's chat template, as llama.cpp renders it: what the ``llama-cpp`` backend and the
dry run's token counts (``evaluation.tokens``) both count."""

from __future__ import annotations

from typing import Any

from scrambled_bench.evaluation.backends.base import GenerationRequest


def user_message(prompt: str) -> list[dict[str, str]]:
    """A chat prompt as the backends send it: one user message.

    >>> user_message("hi")
    [{'role': 'user', 'content': 'hi'}]
    """
    return [{"role": "user", "content": prompt}]


def gguf_request_tokens(llama: Any, request: GenerationRequest) -> int:
    """The prompt tokens llama.cpp evaluates for ``request``: for chat, the prompt inside the GGUF's chat
    template, as llama-cpp-python formats it for ``create_chat_completion`` (what ``usage.prompt_tokens``
    reports), not the bare text, which is a fifth fewer for the quick suite."""
    rendered = render_gguf_chat(llama, request.prompt) if request.chat else None
    if rendered is None:
        # raw prompts, and chat on a model whose GGUF has no template (llama.cpp then picks a built-in one)
        return len(llama.tokenize(request.prompt.encode("utf-8"), add_bos=True, special=True))
    text, added_special = rendered
    return len(llama.tokenize(text.encode("utf-8"), add_bos=not added_special, special=True))


def render_gguf_chat(llama: Any, prompt: str) -> tuple[str, bool] | None:
    """``(text, added_special)``: ``prompt`` as one user message inside the GGUF's chat template, and
    whether the template wrote the special tokens itself; None where the GGUF has no template."""
    template = llama.metadata.get("tokenizer.chat_template")
    if template is None:
        return None
    from llama_cpp import llama_chat_format

    def token_text(token_id: int) -> str:
        return llama._model.token_get_text(token_id) if token_id != -1 else ""

    # the same formatter llama.cpp builds from the GGUF's template for create_chat_completion
    formatter = llama_chat_format.Jinja2ChatFormatter(
        template=template, eos_token=token_text(llama.token_eos()), bos_token=token_text(llama.token_bos())
    )
    formatted = formatter(messages=user_message(prompt))
    return formatted.prompt, formatted.added_special
