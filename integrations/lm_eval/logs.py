"""lm-eval's log folder (``--output_path`` with ``--log_samples``) read into :class:`~..base.LoggedTask`
records.

lm-eval writes, per invocation, ``<output_path>/<model>/results_<date>.json`` (the run's configuration, each
task's config and its aggregated metrics) and beside it ``samples_<task>_<date>.jsonl`` per task (one row
per document and filter). A folder may hold several invocations: each samples file is read with the
results file of the same invocation (same folder, same date), which gives the run's identity (the model
class, the model, the endpoint, the chat template, the generation options) and the task's config (a
derived task's ``metadata.canonical_task`` and ``scramble_type``; which metrics are means).

A logged row's prompt is the request's context: a completions run logs it as text; a chat run
(``local-chat-completions --apply_chat_template``) logs the rendered messages, in lm-eval 0.4.13 as a
one-element list holding them as a JSON string: the last user turn is read from it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.integrations.base import LoggedDocument, LoggedTask, MetricValue, RunIdentity
from scrambled_bench.integrations.logs import ResultsLayout, TaskLog, first_text, hashable_target, logged_meta
from scrambled_bench.io import read_jsonl

#: lm-eval names its per-task logs samples_<task>_<date>.jsonl (date like 2026-11-23T13-22-33.501500)
SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d.-]+)\.jsonl$")
RESULTS = re.compile(r"^results_(?P<date>\d{4}-\d{2}-\d{2}T[\d.-]+)\.json$")
LAYOUT = ResultsLayout(
    "lm-eval", "lm_eval invocation", RESULTS, SAMPLES, "samples_*.jsonl", ("configs", "results"), beside=True
)
"""An invocation's ``results_<date>.json`` beside its ``samples_<task>_<date>.jsonl`` files."""
DERIVED_KEY = "canonical_task"
"""The ``metadata`` key that marks a derived task (``scramble lm-eval:TASK`` writes it)."""
BENCH_KEY = "scrambled_bench_config"
"""The ``metadata`` key of the bench's own exported tasks."""
MODEL_ARG_KEYS = ("model", "pretrained", "model_name", "engine")
LOG_LIKELIHOOD_TYPES = frozenset({"loglikelihood", "loglikelihood_rolling", "multiple_choice"})
"""lm-eval's output types whose responses are log-likelihoods (``[loglik, is_greedy]`` per request)."""


def parse_model_args(model_args: Any) -> dict[str, str]:
    """lm-eval's ``--model_args`` (``k=v,k=v``, or a mapping) as a dict.

    >>> parse_model_args("model=smollm2,base_url=http://h/v1/completions,num_concurrent=1")["base_url"]
    'http://h/v1/completions'
    >>> parse_model_args({"pretrained": "gpt2"})
    {'pretrained': 'gpt2'}
    """
    if isinstance(model_args, Mapping):
        return {str(key): str(value) for key, value in model_args.items()}
    found = {}
    for part in str(model_args or "").split(","):
        key, equals, value = part.partition("=")
        if equals:
            found[key.strip()] = value.strip()
    return found


def run_identity(results: Mapping[str, Any], source: str) -> RunIdentity:
    """The identity of the run a results file records: the model (``--model_args`` ``model`` or
    ``pretrained``), the endpoint (``base_url``) and the generation settings: the model class (chat against
    completions), whether ``--apply_chat_template`` was given (lm-eval records the template, empty for an API
    that applies its own, and nothing without the option), the system instruction, multi-turn few-shot and
    ``--gen_kwargs``.

    >>> results = {"config": {"model": "local-chat-completions", "model_args": {"model": "m", "base_url": "http://h/v1"},
    ...            "gen_kwargs": {"max_gen_toks": 64}}, "chat_template": "", "model_name": "m"}
    >>> identity = run_identity(results, "r.json")
    >>> identity.model, identity.endpoint, identity.settings["model_class"], identity.settings["apply_chat_template"]
    ('m', 'http://h/v1', 'local-chat-completions', True)
    """
    config = results.get("config") or {}
    args = parse_model_args(config.get("model_args"))
    model = next((args[key] for key in MODEL_ARG_KEYS if args.get(key)), None) or str(
        results.get("model_name") or ""
    )
    gen_kwargs = config.get("gen_kwargs")
    settings = {
        "model_class": config.get("model"),
        "apply_chat_template": results.get("chat_template") is not None,
        "system_instruction": results.get("system_instruction") or None,
        "fewshot_as_multiturn": bool(results.get("fewshot_as_multiturn")),
        "gen_kwargs": json.dumps(gen_kwargs, sort_keys=True) if gen_kwargs else None,
    }
    return RunIdentity(model, args.get("base_url"), settings, source)


def rendered_user_turn(prompt: Any) -> str | None:
    """The prompt a request logged, as the model saw it: the text itself, or for chat messages (a list of
    role/content mappings, a JSON string of one, or a one-element list holding that string, as lm-eval
    0.4.13 logs a chat request) the content of the last user turn.

    >>> rendered_user_turn("Question: 2+2?")
    'Question: 2+2?'
    >>> rendered_user_turn(['[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}]'])
    '2+2?'
    >>> rendered_user_turn([{"role": "user", "content": [{"type": "text", "text": "Hi"}]}])
    'Hi'
    """
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    if isinstance(prompt, str):
        stripped = prompt.strip()
        if not (stripped.startswith("[") and stripped.endswith("]")):
            return prompt
        try:
            prompt = json.loads(stripped)
        except ValueError:
            return prompt
    if isinstance(prompt, list) and prompt and all(isinstance(m, Mapping) and "role" in m for m in prompt):
        users = [m for m in prompt if m.get("role") == "user"]
        if not users:
            return None
        content = users[-1].get("content")
        if isinstance(content, list):
            return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
        return None if content is None else str(content)
    return None if prompt is None else str(prompt)


def _requests(arguments: Any) -> list[list[Any]]:
    """A logged row's requests as argument lists: ``{"gen_args_0": {"arg_0": ..., "arg_1": ...}}`` (0.4.x)
    or ``[[context, continuation], ...]`` (older)."""
    if isinstance(arguments, Mapping):
        return [
            [value[key] for key in sorted(value)] if isinstance(value, Mapping) else [value]
            for _, value in sorted(arguments.items(), key=lambda item: int(re.sub(r"\D", "", item[0]) or 0))
        ]
    if isinstance(arguments, list):
        return [list(item) if isinstance(item, list | tuple) else [item] for item in arguments]
    return []


def _log_likelihood(response: Any) -> float | None:
    """A logged log-likelihood response's value: ``[[ll, is_greedy]]`` (lm-eval 0.4.13 logs both as strings).

    >>> _log_likelihood([["-30.25", "False"]]), _log_likelihood([[-1.5, True]]), _log_likelihood(["text"])
    (-30.25, -1.5, None)
    """
    value = response
    while isinstance(value, list | tuple) and value:
        value = value[0]
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _output(row: Mapping[str, Any], choices: tuple[str, ...] | None) -> str | None:
    """What the model answered: the first generation, or, for a choice among continuations, the one it
    gave the highest log-likelihood."""
    responses = row.get("resps") or []
    if choices is not None and len(responses) == len(choices):
        scores = _log_likelihoods(responses)
        if scores is not None:
            return choices[max(range(len(scores)), key=scores.__getitem__)]
    value: Any = responses
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def _log_likelihoods(responses: Any) -> tuple[float, ...] | None:
    """A log-likelihood row's raw responses (``resps``: per request, per repeat ``[loglik, is_greedy]``, as
    strings in lm-eval 0.4.13) as one log-likelihood per request; None where one is not a number.

    >>> _log_likelihoods([[["-0.87", "False"]], [["0", "True"]]]), _log_likelihoods([["x"]])
    ((-0.87, 0.0), None)
    """
    if not isinstance(responses, list) or not responses:
        return None
    values = []
    for response in responses:
        value = _log_likelihood(response)
        if value is None:
            return None
        values.append(value)
    return tuple(values)


def read_samples(path: Path, *, log_likelihood: bool = False) -> dict[Hashable, LoggedDocument]:
    """One samples file's documents by ``doc_id``: every filter's metrics as ``metric,filter`` keys, the
    target, the prompt (the rendered user turn of a chat run), the choices of a multiple-choice request,
    the output, the bench's scoring metadata where the document carries it (``doc.meta``) and, for a task
    whose output type is a log-likelihood one (``log_likelihood``), each request's log-likelihood."""
    documents: dict[Hashable, dict[str, Any]] = {}
    for line, row in read_jsonl(path, required=("doc_id", "metrics")):
        where = f"{path}:{line}"
        doc_id = row["doc_id"]
        entry = documents.setdefault(doc_id, {"scores": {}, "where": where})
        filter_name = row.get("filter", "none")
        for metric in row["metrics"]:
            value = row.get(metric)
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue  # a metric whose per-document value is not a number (a corpus metric's inputs)
            key = f"{metric},{filter_name}"
            if key in entry["scores"]:
                raise ScrambledBenchError(f"{where}: document {doc_id} is logged twice")
            entry["scores"][key] = float(value)
        if "target" in entry:
            continue  # the other filters' rows log the same document and request
        requests = _requests(row.get("arguments"))
        prompt = rendered_user_turn(requests[0][0]) if requests and requests[0] else None
        continuations = [
            request[1] for request in requests if len(request) > 1 and isinstance(request[1], str)
        ]
        choices = tuple(continuations) if len(requests) > 1 and len(continuations) == len(requests) else None
        doc = row.get("doc") or {}
        entry.update(
            target=hashable_target(row.get("target")),
            prompt=prompt,
            choices=choices,
            output=_output(row, choices),
            meta=logged_meta(doc, where) if isinstance(doc, Mapping) and doc.get("meta") else None,
            raw=first_text(row.get("resps"), where) if isinstance(doc, Mapping) and doc.get("meta") else None,
            log_likelihoods=_log_likelihoods(row.get("resps")) if log_likelihood else None,
        )
    return {
        doc_id: LoggedDocument(
            doc_id,
            entry["scores"],
            entry.get("target"),
            entry.get("prompt"),
            entry.get("choices"),
            entry.get("raw") if entry.get("meta") is not None else entry.get("output"),
            entry.get("meta"),
            entry["where"],
            entry.get("log_likelihoods"),
        )
        for doc_id, entry in documents.items()
    }


def mean_metrics(config: Mapping[str, Any]) -> frozenset[str]:
    """The ``metric,filter`` keys a task aggregates as a mean of per-document scores (its ``metric_list``;
    filters are lm-eval's, so any filter of a mean metric).

    >>> sorted(mean_metrics({"metric_list": [{"metric": "acc"}, {"metric": "f1", "aggregation": "f1"}]}))
    ['acc']
    """
    return frozenset(
        str(entry.get("metric"))
        for entry in config.get("metric_list") or []
        if isinstance(entry, Mapping) and entry.get("aggregation", "mean") == "mean"
    )


def aggregated_metrics(entry: Mapping[str, Any]) -> dict[str, MetricValue]:
    """A task's entry of the results file's ``results`` as metrics: each ``metric,filter`` value with its
    ``metric_stderr,filter``.

    >>> aggregated_metrics({"acc,none": 0.5, "acc_stderr,none": 0.1, "alias": "t"})
    {'acc,none': MetricValue(value=0.5, stderr=0.1)}
    """
    metrics = {}
    for key, value in entry.items():
        metric, comma, filter_name = key.partition(",")
        if comma and not metric.endswith("_stderr") and isinstance(value, int | float):
            stderr = entry.get(f"{metric}_stderr,{filter_name}")
            metrics[key] = MetricValue(
                float(value), float(stderr) if isinstance(stderr, int | float) else None
            )
    return metrics


def logged_task(log: TaskLog) -> LoggedTask:
    """One samples file as a task run: its documents, the identity of its invocation, its metadata (a derived
    task's canonical task and type; the bench's own tasks) and its metrics as lm-eval aggregated them."""
    config = (log.results.get("configs") or {}).get(log.task) or {}
    found = config.get("metadata")
    metadata: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    derived = bool(metadata.get(DERIVED_KEY)) and bool(metadata.get("scramble_type"))
    means = mean_metrics(config)
    documents = read_samples(log.path, log_likelihood=config.get("output_type") in LOG_LIKELIHOOD_TYPES)
    return LoggedTask(
        name=log.task,
        run=run_identity(log.results, str(log.results_path)),
        created=log.date,
        documents=documents,
        location=str(log.path),
        canonical=str(metadata[DERIVED_KEY]) if derived else None,
        scramble_type=str(metadata["scramble_type"]) if derived else None,
        bench=BENCH_KEY in metadata and any(doc.meta is not None for doc in documents.values()),
        metrics=aggregated_metrics((log.results.get("results") or {}).get(log.task) or {}),
        means=frozenset(
            key for doc in documents.values() for key in doc.scores if key.partition(",")[0] in means
        ),
    )


__all__ = [
    "LAYOUT",
    "aggregated_metrics",
    "logged_task",
    "mean_metrics",
    "parse_model_args",
    "read_samples",
    "rendered_user_turn",
    "run_identity",
]
