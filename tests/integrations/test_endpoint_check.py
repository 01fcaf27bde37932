"""``scrambled-bench check-endpoint`` (integrations/endpoint_check.py): whether an OpenAI-compatible endpoint
can serve log-likelihood tasks (the echoed tokens cover the prompt AND the generated token, with their
log-probabilities, as lm-eval's ``local-completions`` cuts them), generation tasks (a chat request
answers), or both; one line each, and an exit status a script can branch on.

- the judging, over every way a tokenizer may cut the prompt (hypothesis): an echo of the prompt alone is
  refused, with or without usage counts; the prompt and one more token, each with its log-probability, is
  served;
- the exit statuses: 0 both, 4 no log-likelihood, 5 no generation, 2 bad input (a URL that is not http(s),
  a closed port, a refused key, a model the endpoint does not list), with ``--json``;
- for real: llama-cpp-python's server (the session's ``llama_server``) cannot serve log-likelihood tasks.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from typing import Any

import pytest
from harness_support import one_error_line
from hypothesis import given
from hypothesis import strategies as st

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.integrations import endpoint_check
from scrambled_bench.integrations.endpoint_check import (
    PROBE_PROMPT,
    check_endpoint,
    judge_log_likelihood,
)

PROMPT = PROBE_PROMPT


@st.composite
def cuts(draw: st.DrawFn) -> list[str]:
    """The prompt cut into tokens at any positions (every tokenizer's split is one of them)."""
    positions = sorted(draw(st.sets(st.integers(1, len(PROMPT) - 1), max_size=len(PROMPT) - 1)))
    bounds = [0, *positions, len(PROMPT)]
    return [PROMPT[a:b] for a, b in itertools.pairwise(bounds)]


def _echo(tokens: list[str], values: list[Any], usage: Mapping[str, int] | None) -> dict[str, Any]:
    reply: dict[str, Any] = {
        "choices": [{"text": "".join(tokens), "logprobs": {"tokens": tokens, "token_logprobs": values}}]
    }
    if usage is not None:
        reply["usage"] = dict(usage)
    return reply


@given(cuts(), st.booleans(), st.floats(-20, -0.01))
def test_an_echo_of_the_prompt_alone_cannot_serve_log_likelihoods(
    tokens: list[str], with_usage: bool, value: float
) -> None:
    usage = {"prompt_tokens": len(tokens), "completion_tokens": 1} if with_usage else None
    values = [None, *([value] * (len(tokens) - 1))]
    served, reason = judge_log_likelihood(PROMPT, _echo(tokens, values, usage))
    assert not served
    assert reason.startswith(
        f"the echoed tokens cover the prompt ({len(tokens)} tokens) but not the generated token"
    )


@given(cuts(), st.booleans(), st.sampled_from([",", "\n", " yes"]), st.floats(-20, -0.01))
def test_the_prompt_and_the_generated_token_with_log_probabilities_serve_them(
    tokens: list[str], with_usage: bool, generated: str, value: float
) -> None:
    usage = {"prompt_tokens": len(tokens), "completion_tokens": 1} if with_usage else None
    echoed = [*tokens, generated]
    values = [None, *([value] * len(tokens))]
    assert judge_log_likelihood(PROMPT, _echo(echoed, values, usage))[0]
    values[-1] = None  # the generated token without its log-probability
    served, reason = judge_log_likelihood(PROMPT, _echo(echoed, values, usage))
    assert not served and reason.startswith("the echoed tokens lack log-probabilities")


def test_a_reply_that_does_not_echo_the_prompt_is_refused() -> None:
    served, reason = judge_log_likelihood(PROMPT, _echo([","], [-1.3], {"prompt_tokens": 3}))
    assert (
        not served
        and reason
        == 'the echoed tokens do not spell the prompt ("," for "Answer: yeast"): echo is not honoured'
    )


# --- check_endpoint over canned answers ----------------------------------------------------------------------

ECHO_OK = _echo(
    ["Answer", ":", " yeast", ","], [None, -12.2, -6.2, -1.3], {"prompt_tokens": 3, "completion_tokens": 1}
)
ECHO_TRUNCATED = _echo(
    ["Answer", ":", " yeast"], [None, -12.2, -6.2], {"prompt_tokens": 3, "completion_tokens": 1}
)
CHAT_OK = {"choices": [{"message": {"role": "assistant", "content": "Yes."}}]}
MODELS = {"data": [{"id": "smollm2"}]}


def _endpoint(answers: Mapping[str, tuple[int, Any]], sent: list[tuple[str, Any]] | None = None):
    """A ``Post`` that answers each route (the URL's end) from ``answers``; records what was sent."""

    def post(url: str, body: Mapping[str, Any] | None) -> tuple[int, Any]:
        if sent is not None:
            sent.append((url, body))
        for route in sorted(answers, key=len, reverse=True):  # /chat/completions before /completions
            if url.endswith(route):
                return answers[route]
        return 404, {"error": {"message": "no route"}}

    return post


def test_the_request_is_the_one_lm_evals_local_completions_sends() -> None:
    sent: list[tuple[str, Any]] = []
    post = _endpoint(
        {"/models": (200, MODELS), "/chat/completions": (200, CHAT_OK), "/completions": (200, ECHO_OK)}, sent
    )
    report = check_endpoint("http://h:8000/v1/completions", "smollm2", post=post)
    assert [url for url, _ in sent] == [
        "http://h:8000/v1/models",
        "http://h:8000/v1/completions",
        "http://h:8000/v1/chat/completions",
    ]
    assert sent[1][1] == {"model": "smollm2", "prompt": PROMPT, "temperature": 0, "max_tokens": 1, "logprobs": 1,
                          "seed": 1234, "echo": True}  # fmt: skip
    assert report.exit_status == 0 and report.served == ["smollm2"]
    assert report.lines()[0].startswith(
        "log-likelihood tasks: yes: the echoed tokens cover the prompt and the generated"
    )
    assert report.lines()[1] == "generation tasks: yes: /v1/chat/completions answered ('Yes.')"


@pytest.mark.parametrize(
    ("answers", "status", "lines"),
    [
        ({"/completions": (200, ECHO_TRUNCATED), "/chat/completions": (200, CHAT_OK)}, 4, ("no", "yes")),
        ({"/completions": (200, ECHO_OK), "/chat/completions": (400, {"error": {"message": "no chat template"}})}, 5, ("yes", "no")),
        ({"/completions": (404, {"detail": "Not Found"}), "/chat/completions": (200, CHAT_OK)}, 4, ("no", "yes")),
        ({"/completions": (422, "echo is not supported"), "/chat/completions": (500, "")}, 4, ("no", "no")),
    ],
)  # fmt: skip
def test_the_exit_status_says_which_task_types_are_served(
    answers: dict,
    status: int,
    lines: tuple[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(endpoint_check, "http_post", lambda api_key, timeout: _endpoint(answers))
    assert main(["check-endpoint", "--base-url", "http://h:8000/v1", "--model", "m"]) == status
    out = capsys.readouterr().out.splitlines()
    assert [line.split(": ")[:2] for line in out] == [
        ["log-likelihood tasks", lines[0]],
        ["generation tasks", lines[1]],
    ]
    if answers["/completions"][0] == 404:
        assert out[0] == "log-likelihood tasks: no: http://h:8000/v1/completions answered HTTP 404: Not Found"
    assert main(["check-endpoint", "--base-url", "http://h:8000/v1", "--model", "m", "--json"]) == status
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert document["exit_status"] == status and document["base_url"] == "http://h:8000/v1"
    assert document["log_likelihood"]["supported"] == (lines[0] == "yes")
    assert document["generation"]["supported"] == (lines[1] == "yes")
    assert captured.err.splitlines() == out  # the verdict lines go to stderr beside the JSON


def test_bad_input_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], closed_port_url: str
) -> None:
    assert main(["check-endpoint", "--base-url", "127.0.0.1:8080", "--model", "m"]) == 2
    assert one_error_line(capsys).startswith("error: --base-url '127.0.0.1:8080' is not an http(s) URL")
    assert main(["check-endpoint", "--base-url", closed_port_url, "--model", "m", "--timeout", "5"]) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"error: cannot reach {closed_port_url}/v1/models (") and line.endswith(
        "is the server running?"
    )
    monkeypatch.setattr(
        endpoint_check, "http_post", lambda api_key, timeout: _endpoint({"/models": (200, MODELS)})
    )
    assert main(["check-endpoint", "--base-url", "http://h/v1", "--model", "other"]) == 2
    assert one_error_line(capsys) == "error: model 'other' is not served at http://h/v1; served: smollm2"
    monkeypatch.setattr(
        endpoint_check, "http_post", lambda api_key, timeout: _endpoint({"/models": (401, {})})
    )
    assert (
        main(
            ["check-endpoint", "--base-url", "http://h/v1", "--model", "m", "--api-key", "sk-wrong-key-0123"]
        )
        == 2
    )
    line = one_error_line(capsys)
    assert line == "error: http://h/v1/models refused the API key (HTTP 401); set --api-key or OPENAI_API_KEY"
    with pytest.raises(ScrambledBenchError, match="--model is empty"):
        check_endpoint("http://h/v1", " ", post=_endpoint({}))


# --- for real ------------------------------------------------------------------------------------------------


@pytest.mark.server
@pytest.mark.slow
def test_llama_cpp_pythons_server_cannot_serve_log_likelihood_tasks(
    llama_server, capsys: pytest.CaptureFixture[str]
) -> None:
    """Measured: llama-cpp-python 0.3.16's /v1/completions echoes the prompt's tokens (``['Answer', ':',
    ' yeast']``) and not the token it generated, though its usage counts one; its chat answers."""
    capsys.readouterr()
    code = main(["check-endpoint", "--base-url", llama_server.base_url, "--model", "smollm2", "--json"])
    captured = capsys.readouterr()
    assert code == endpoint_check.EXIT_NO_LOG_LIKELIHOOD == 4, captured.err
    log_likelihood, generation = captured.err.splitlines()
    assert log_likelihood.startswith(
        "log-likelihood tasks: no: the echoed tokens cover the prompt (3 tokens) but not the generated token"
    )
    assert generation.startswith("generation tasks: yes: /v1/chat/completions answered (")
    document = json.loads(captured.out)
    reply = document["log_likelihood"]["reply"]
    assert reply["choices"][0]["logprobs"]["tokens"] == ["Answer", ":", " yeast"]
    assert reply["usage"]["completion_tokens"] == 1 and len(reply["choices"][0]["text"]) > len(PROMPT)
