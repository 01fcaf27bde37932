"""A minimal server that follows text-generation-inference's published HTTP schema, for testing the
``tgi`` backend's native ``/generate`` path where TGI itself cannot run (no Docker, no GPU).

It is backed by a real model: the GGUF given by ``--model`` run in-process by llama.cpp (greedy, one
generation at a time), so answers are real SmolLM2 outputs, not canned text. Routes, after TGI's OpenAPI
document (https://huggingface.github.io/text-generation-inference/):

- ``POST /generate``: ``{"inputs", "parameters": {max_new_tokens, stop, seed, details, do_sample, ...}}``
  -> ``{"generated_text", "details": {"finish_reason", "generated_tokens", "seed", "prefill", "tokens"}}``
  (``details.prefill`` lists the input tokens when ``decoder_input_details`` is set, with null logprobs;
  ``details.tokens`` is left empty: llama.cpp's completion API does not return per-token ids here);
  an over-long input gets TGI's 422 ``{"error": "Input validation error: ...", "error_type": "validation"}``.
- ``GET /info``: model_id, model_sha (the GGUF's SHA-256), max_input_tokens, max_total_tokens, version...
- ``GET /health``: 200 once the model is loaded.
- ``POST /v1/chat/completions``: TGI's Messages API (OpenAI schema).
- ``POST /tokenize``: ``{"inputs"}`` -> ``[{"id", "text", "start", "stop"}]``, the input tokens as
  ``/generate`` reads them; ``POST /chat_tokenize``: a Messages API body -> ``{"tokenize_response": [...],
  "templated_text"}``, the messages inside the GGUF's chat template, as ``/v1/chat/completions`` reads them.

    python tgi_schema_server.py --model path/to/model.gguf --port 8125 --n-ctx 2048
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import threading
import time
from pathlib import Path
from typing import Any

from aiohttp import web

FINISH_REASONS = {"length": "length", "stop": "eos_token"}


def build_app(model_path: Path, n_ctx: int, model_id: str) -> web.Application:
    from llama_cpp import Llama

    from scrambled_bench.evaluation.backends.llama_cpp import default_threads

    # the threads the embedded backend uses (OMP_NUM_THREADS under `pytest -n`), for the prompts too
    threads = default_threads()
    llama = Llama(
        model_path=str(model_path),
        n_ctx=n_ctx,
        n_threads=threads,
        n_threads_batch=threads,
        seed=0,
        verbose=False,
    )
    lock = threading.Lock()
    model_sha = hashlib.sha256(model_path.read_bytes()).hexdigest()

    def run(fn: Any, **kwargs: Any) -> dict[str, Any]:
        with lock:
            llama.reset()
            return fn(**kwargs)

    def validation_error(message: str) -> web.Response:
        return web.json_response(
            {"error": f"Input validation error: {message}", "error_type": "validation"}, status=422
        )

    async def generate(request: web.Request) -> web.Response:
        try:
            body = await request.json()
            inputs = body["inputs"]
        except (ValueError, KeyError):
            return validation_error("expected a JSON body with `inputs`")
        parameters = body.get("parameters") or {}
        max_new_tokens = int(parameters.get("max_new_tokens") or 100)
        stop = list(parameters.get("stop") or [])
        seed = parameters.get("seed")
        temperature = float(parameters.get("temperature") or 0.0) if parameters.get("do_sample") else 0.0
        input_ids = llama.tokenize(inputs.encode("utf-8"), add_bos=True, special=False)
        input_tokens = len(input_ids)
        if input_tokens + max_new_tokens > n_ctx:
            return validation_error(
                f"`inputs` tokens + `max_new_tokens` must be <= {n_ctx}. "
                f"Given: {input_tokens} `inputs` tokens and {max_new_tokens} `max_new_tokens`"
            )
        reply = await asyncio.to_thread(
            run,
            llama.create_completion,
            prompt=inputs,
            max_tokens=max_new_tokens,
            temperature=temperature,
            top_k=1 if temperature == 0 else 40,
            stop=stop or None,
            seed=seed if seed is not None else 0,
        )
        choice = reply["choices"][0]
        text = choice["text"]
        finish = FINISH_REASONS.get(choice.get("finish_reason") or "stop", "eos_token")
        if finish == "eos_token" and stop and any(text.endswith(s) or s in text for s in stop):
            finish = "stop_sequence"
        output: dict[str, Any] = {"generated_text": text}
        if parameters.get("details"):
            output["details"] = {
                "finish_reason": finish,
                "generated_tokens": reply["usage"]["completion_tokens"],
                "seed": seed,
                # with decoder_input_details TGI lists the input tokens (logprob null for the first)
                "prefill": [
                    {
                        "id": token,
                        "text": llama.detokenize([token]).decode("utf-8", "replace"),
                        "logprob": None,
                    }
                    for token in input_ids
                ]
                if parameters.get("decoder_input_details")
                else [],
                "tokens": [],
            }
        return web.json_response(output)

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        reply = await asyncio.to_thread(
            run,
            llama.create_chat_completion,
            messages=body["messages"],
            max_tokens=body.get("max_tokens") or 100,
            temperature=float(body.get("temperature") or 0.0),
            top_k=1,
            stop=body.get("stop"),
            seed=body.get("seed") or 0,
        )
        reply["model"] = model_id
        reply["system_fingerprint"] = f"tgi-schema-test-{model_sha[:12]}"
        return web.json_response(reply)

    def simple_tokens(ids: list[int]) -> list[dict[str, Any]]:
        """TGI's SimpleToken list: id, text and the character span of each token."""
        tokens, offset = [], 0
        for token in ids:
            text = llama.detokenize([token]).decode("utf-8", "replace")
            tokens.append({"id": token, "text": text, "start": offset, "stop": offset + len(text)})
            offset += len(text)
        return tokens

    async def tokenize(request: web.Request) -> web.Response:
        try:
            inputs = (await request.json())["inputs"]
        except (ValueError, KeyError):
            return validation_error("expected a JSON body with `inputs`")
        return web.json_response(
            simple_tokens(llama.tokenize(inputs.encode("utf-8"), add_bos=True, special=False))
        )

    async def chat_tokenize(request: web.Request) -> web.Response:
        from llama_cpp import llama_chat_format

        try:
            messages = (await request.json())["messages"]
        except (ValueError, KeyError):
            return validation_error("expected a JSON body with `messages`")

        def token_text(token_id: int) -> str:
            return llama._model.token_get_text(token_id) if token_id != -1 else ""

        # the formatter llama.cpp's create_chat_completion builds from the GGUF's template
        formatter = llama_chat_format.Jinja2ChatFormatter(
            template=llama.metadata["tokenizer.chat_template"],
            eos_token=token_text(llama.token_eos()),
            bos_token=token_text(llama.token_bos()),
        )
        formatted = formatter(messages=messages)
        ids = llama.tokenize(
            formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True
        )
        return web.json_response(
            {"tokenize_response": simple_tokens(ids), "templated_text": formatted.prompt}
        )

    async def info(_: web.Request) -> web.Response:
        return web.json_response(
            {
                "model_id": model_id,
                "model_sha": model_sha,
                "model_pipeline_tag": "text-generation",
                "max_concurrent_requests": 128,
                "max_best_of": 1,
                "max_stop_sequences": 4,
                "max_input_tokens": n_ctx - 1,
                "max_total_tokens": n_ctx,
                "validation_workers": 1,
                "max_client_batch_size": 1,
                "router": "text-generation-router",
                "version": "tgi-schema-test-server",
                "sha": None,
                "docker_label": None,
            }
        )

    async def health(_: web.Request) -> web.Response:
        return web.Response(status=200)

    app = web.Application()
    app.router.add_post("/generate", generate)
    app.router.add_post("/", generate)  # TGI's compat route: the same as /generate without streaming
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_post("/tokenize", tokenize)
    app.router.add_post("/chat_tokenize", chat_tokenize)
    app.router.add_get("/info", info)
    app.router.add_get("/health", health)
    app["started"] = time.time()
    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, type=Path, help="a .gguf file")
    parser.add_argument("--model-id", default="HuggingFaceTB/SmolLM2-135M-Instruct")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n-ctx", type=int, default=2048)
    args = parser.parse_args()
    web.run_app(
        build_app(args.model, args.n_ctx, args.model_id),
        host=args.host,
        port=args.port,
        print=None,
        access_log=None,
    )


if __name__ == "__main__":
    main()
