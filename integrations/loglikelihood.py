"""The log-likelihood guard: harness logs whose choices were given probability exactly 1 are refused.

A log-likelihood task (multiple choice such as ARC or MMLU, scored by the log-probability of each choice
after the context) through an OpenAI-compatible ``/v1/completions`` endpoint rests on one request per
choice: the context and the choice as the prompt, ``echo`` and ``logprobs`` on, one token generated.
lm-eval's completions models (``local-completions``) expect the echoed tokens to cover the prompt and the
generated token, and cut the choice's log-probabilities as ``token_logprobs[ctxlen:-1]``. An endpoint that
echoes the prompt alone (llama-cpp-python's server, llama.cpp's family: see ``check-endpoint``) loses each
choice's last token that way, and a single-token choice (`` A``, `` B``...) keeps no token at all: its
log-likelihood is a sum over nothing, exactly 0.0, for every choice alike. The task then scores at chance
and nothing in the harness says so.

:func:`zero_log_likelihoods` finds that sign in what a harness logged (each
:class:`~.base.LoggedDocument`'s ``log_likelihoods``, whichever harness read them: lm-eval's ``resps``,
lighteval's details' ``logprobs``), and :func:`check_log_likelihoods` refuses it in one line that names
the cause and the endpoint check, unless the user accepts it (``--allow-zero-loglikelihood``): a healthy
model may, rarely, give one choice a probability that rounds to exactly 1. A run whose choices are all
several tokens long loses a token per choice without a 0.0 anywhere: only the endpoint check, before the
run, can tell that one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.integrations.base import LoggedTask

ENDPOINT_CHECK = "scrambled-bench check-endpoint"
"""The command that tells, before a run, whether an endpoint can serve log-likelihood tasks."""
ALLOW_OPTION = "--allow-zero-loglikelihood"
"""The option of ``score --from`` and ``report --from`` that accepts such logs (recorded in the output)."""


@dataclass(frozen=True)
class ZeroLogLikelihoods:
    """A task run whose logged log-likelihoods hold exactly 0.0: how many of how many, in how many of its
    documents, the first such document, and the run's model and endpoint (for the check's command)."""

    task: str
    zeros: int
    logged: int
    documents: int
    logged_documents: int
    first_document: Any
    model: str
    endpoint: str | None

    def as_dict(self) -> dict[str, Any]:
        """What ``score``'s document records of an accepted task."""
        return {
            "task": self.task,
            "zero_log_likelihoods": self.zeros,
            "log_likelihoods": self.logged,
            "documents": self.documents,
            "logged_documents": self.logged_documents,
        }


def zero_log_likelihoods(task: LoggedTask) -> ZeroLogLikelihoods | None:
    """The log-likelihoods of exactly 0.0 a task run logged, or None where it logged none (or none at all:
    a generation task).

    >>> from scrambled_bench.integrations.base import LoggedDocument, RunIdentity
    >>> run = RunIdentity("smollm2", "http://127.0.0.1:8080/v1/completions")
    >>> docs = {0: LoggedDocument(0, log_likelihoods=(0.0, 0.0)), 1: LoggedDocument(1, log_likelihoods=(-1.5, -0.2))}
    >>> found = zero_log_likelihoods(LoggedTask("quiz", run, "2026", docs))
    >>> found.zeros, found.logged, found.documents, found.logged_documents, found.first_document
    (2, 4, 1, 2, 0)
    >>> zero_log_likelihoods(LoggedTask("quiz", run, "2026", {1: docs[1]})) is None
    True
    """
    zeros = logged = documents = logged_documents = 0
    first: Any = None
    for doc_id, document in task.documents.items():
        values = document.log_likelihoods
        if not values:
            continue
        logged_documents += 1
        logged += len(values)
        found = sum(1 for value in values if value == 0.0)
        if found:
            zeros += found
            documents += 1
            first = doc_id if first is None else first
    if not zeros:
        return None
    return ZeroLogLikelihoods(
        task.name, zeros, logged, documents, logged_documents, first, task.run.model, task.run.endpoint
    )


def check_command(model: str | None, endpoint: str | None) -> str:
    """The endpoint check's command line for a run's model and endpoint (placeholders where unknown).

    >>> check_command("smollm2", "http://127.0.0.1:8080/v1/completions")
    'scrambled-bench check-endpoint --base-url http://127.0.0.1:8080/v1/completions --model smollm2'
    >>> check_command("", None)
    'scrambled-bench check-endpoint --base-url URL --model NAME'
    """
    return f"{ENDPOINT_CHECK} --base-url {endpoint or 'URL'} --model {model or 'NAME'}"


def refusal(folder: Any, found: Sequence[ZeroLogLikelihoods]) -> str:
    """The one line that refuses ``found`` (the first task named, the others counted).

    >>> from scrambled_bench.integrations.base import LoggedDocument, RunIdentity
    >>> first = ZeroLogLikelihoods("quiz", 24, 24, 6, 6, 0, "smollm2", "http://h/v1/completions")
    >>> print(refusal("lm-out", [first, first]))  # doctest: +NORMALIZE_WHITESPACE
    lm-out: quiz logged a log-likelihood of exactly 0.0 (probability 1) for 24 of its 24 choices, in 6 of 6
    documents (first: document 0), and 1 other task likewise: an endpoint that echoes the prompt without the
    generated token gives that to every single-token choice, so these scores are not the model's (at chance);
    check the endpoint with `scrambled-bench check-endpoint --base-url http://h/v1/completions --model smollm2`
    before a log-likelihood run, or pass --allow-zero-loglikelihood if the model did give those choices
    probability 1
    """
    head = found[0]
    others = len(found) - 1
    also = f", and {others} other task{'s' if others > 1 else ''} likewise" if others else ""
    return (
        f"{folder}: {head.task} logged a log-likelihood of exactly 0.0 (probability 1) for {head.zeros} of its "
        f"{head.logged} choices, in {head.documents} of {head.logged_documents} documents (first: document "
        f"{head.first_document}){also}: an endpoint that echoes the prompt without the generated token gives "
        "that to every single-token choice, so these scores are not the model's (at chance); check the "
        f"endpoint with `{check_command(head.model, head.endpoint)}` before a log-likelihood run, or pass "
        f"{ALLOW_OPTION} if the model did give those choices probability 1"
    )


def check_log_likelihoods(
    folder: Any, tasks: Sequence[LoggedTask], *, allow: bool = False
) -> list[ZeroLogLikelihoods]:
    """Refuse (one line, :func:`refusal`) task runs that logged a log-likelihood of exactly 0.0; with
    ``allow``, return them instead (the caller records them). Runs without one pass: ``[]``.

    >>> from scrambled_bench.integrations.base import LoggedDocument, RunIdentity
    >>> run = RunIdentity("m")
    >>> healthy = LoggedTask("t", run, "1", {0: LoggedDocument(0, log_likelihoods=(-0.87, -1.83))})
    >>> truncated = LoggedTask("u", run, "1", {0: LoggedDocument(0, log_likelihoods=(0.0, -4.1))})
    >>> check_log_likelihoods("out", [healthy])
    []
    >>> [found.task for found in check_log_likelihoods("out", [healthy, truncated], allow=True)]
    ['u']
    >>> check_log_likelihoods("out", [truncated])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: out: u logged a log-likelihood of exactly 0.0 (probability 1) for 1 of its 2 choices, in 1 of 1 documents (first: document 0): an endpoint that echoes the prompt without the generated token gives that to every single-token choice, so these scores are not the model's (at chance); check the endpoint with `scrambled-bench check-endpoint --base-url URL --model m` before a log-likelihood run, or pass --allow-zero-loglikelihood if the model did give those choices probability 1
    """
    found = [record for task in tasks if (record := zero_log_likelihoods(task)) is not None]
    if found and not allow:
        raise ScrambledBenchError(refusal(folder, found))
    return found


__all__ = [
    "ALLOW_OPTION",
    "ENDPOINT_CHECK",
    "ZeroLogLikelihoods",
    "check_command",
    "check_log_likelihoods",
    "refusal",
    "zero_log_likelihoods",
]
