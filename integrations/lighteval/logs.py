"""lighteval's log folder (``--output-dir`` with ``--save-details``) read into
:class:`~..base.LoggedTask` records.

lighteval writes, per invocation, ``results/<model>/results_<timestamp>.json`` (the run's configuration,
each task's config and aggregated metrics) and ``details/<model>/<timestamp>/details_<task>|<shots>_<timestamp>.parquet``
per task (one row per document: the ``Doc``, the model's response, the per-document metrics). Each details
file is read with the results file of the same timestamp, which gives the run's identity (the model, the
endpoint, the generation parameters, the chat template and system prompt) and the task's config.

A derived task (``scramble lighteval:SPEC``) is recognised by its name and data: ``<canonical>_<type>|<shots>``
whose ``hf_subset`` is the scramble type ``<type>``. Documents are keyed by ``Doc.id`` (the document's index
in its split); the target is the gold choices' texts. The prompt is the rendered user turn: the last user
message of the request lighteval sent where it logged one, else ``Doc.query``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

from scrambled_bench.builder.scrambler import parse_type
from scrambled_bench.errors import ScrambledBenchError, first_line
from scrambled_bench.integrations.base import LoggedDocument, LoggedTask, MetricValue, RunIdentity
from scrambled_bench.integrations.logs import ResultsLayout, TaskLog, first_text, logged_meta

RESULTS = re.compile(r"^results_(?P<date>\d{4}-\d{2}-\d{2}T[\d.:-]+)\.json$")
DETAILS = re.compile(r"^details_(?P<task>.+\|\d+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d.:-]+)\.parquet$")
LAYOUT = ResultsLayout(
    "lighteval",
    "lighteval command",
    RESULTS,
    DETAILS,
    "details_*.parquet",
    ("config_tasks", "results"),
    beside=False,
)
"""An invocation's ``results/<model>/results_<date>.json`` and, in another folder, its
``details/<model>/<date>/details_<task>_<date>.parquet`` files: paired by the date alone."""
BENCH_PREFIX = "scrambled_bench:"
"""The bench's own exported tasks are named ``scrambled_bench:<slug>``."""


def run_identity(results: Mapping[str, Any], source: str) -> RunIdentity:
    """The identity of the run a results file records: ``config_general``'s model (its name and, for an
    endpoint, ``base_url``) and the generation settings (generation parameters, chat template, system prompt).

    >>> results = {"config_general": {"model_config": {"model_name": "openai/m", "base_url": "http://h/v1",
    ...     "generation_parameters": {"temperature": 0.0}}, "model_name": "openai/m"}}
    >>> identity = run_identity(results, "r.json")
    >>> identity.model, identity.endpoint, identity.settings["generation_parameters"]
    ('openai/m', 'http://h/v1', '{"temperature": 0.0}')
    """
    general = results.get("config_general") or {}
    config = general.get("model_config") or {}
    if not isinstance(config, Mapping):
        config = {}
    generation = {
        key: value for key, value in (config.get("generation_parameters") or {}).items() if value is not None
    }
    settings = {
        "model_class": general.get("model_class") or config.get("model_class"),
        "generation_parameters": json.dumps(generation, sort_keys=True) if generation else None,
        "use_chat_template": config.get("use_chat_template", general.get("use_chat_template")),
        "system_prompt": config.get("system_prompt", general.get("system_prompt")) or None,
    }
    model = str(config.get("model_name") or general.get("model_name") or "")
    return RunIdentity(model, config.get("base_url"), settings, source)


def derived_tasks(config_tasks: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """Derived ``task|shots`` -> (canonical ``task|shots``, scramble type), from lighteval's ``config_tasks``
    (the canonical task may have run in another command: the pairing looks for it in the folder).

    >>> derived_tasks({"arc:easy|0": {"name": "arc:easy", "hf_subset": "ARC-Easy"},
    ...                "arc:easy_kfl|0": {"name": "arc:easy_kfl", "hf_subset": "kfl"},
    ...                "gsm8k_main|0": {"name": "gsm8k_main", "hf_subset": "main"}})
    {'arc:easy_kfl|0': ('arc:easy|0', 'kfl')}
    """
    found = {}
    for key, config in config_tasks.items():
        name, _, shots = key.rpartition("|")
        canonical, _, scramble_type = name.rpartition("_")
        if not canonical or (config or {}).get("hf_subset") != scramble_type:
            continue
        try:
            parse_type(scramble_type)
        except (ValueError, ScrambledBenchError):
            continue
        found[key] = (f"{canonical}|{shots}", scramble_type)
    return found


def mean_metrics(config: Mapping[str, Any]) -> frozenset[str]:
    """The metrics of a task (as its results file records its config) that lighteval aggregates as the mean
    of per-document scores.

    >>> sorted(mean_metrics({"metrics": [{"metric_name": ["em", "f1"], "corpus_level_fn": {"em": "mean", "f1": "f1"}}]}))
    ['em']
    """
    means = set()
    for metric in config.get("metrics") or []:
        if not isinstance(metric, Mapping):
            continue
        names, corpus = metric.get("metric_name"), metric.get("corpus_level_fn")
        names = names if isinstance(names, list) else [names]
        for name in names:
            fn = corpus.get(name) if isinstance(corpus, Mapping) else corpus
            if fn == "mean":
                means.add(str(name))
    return frozenset(means)


def rendered_user_turn(doc: Mapping[str, Any], response: Mapping[str, Any]) -> str | None:
    """The prompt as the model saw it: the last user message of the request lighteval logged (a list of
    chat messages, or their JSON), else the document's query.

    >>> rendered_user_turn({"query": "Q?"}, {"input": [{"role": "user", "content": "Q: x"}]})
    'Q: x'
    >>> rendered_user_turn({"query": "Q?"}, {})
    'Q?'
    """
    sent: Any = response.get("input")
    if isinstance(sent, str) and sent.strip().startswith("["):
        try:
            sent = json.loads(sent)
        except ValueError:
            sent = None
    if isinstance(sent, list):
        users = [m for m in sent if isinstance(m, Mapping) and m.get("role") == "user"]
        if users:
            content = users[-1].get("content")
            if isinstance(content, list):
                return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
            if content is not None:
                return str(content)
    query = doc.get("query")
    return None if query is None else str(query)


def in_dataset_order(rows: list[Mapping[str, Any]]) -> list[tuple[int, Mapping[str, Any]]]:
    """lighteval's detail rows (with their row numbers in the file) in dataset order, as ``run`` scores them.

    lighteval writes its details in the order its model client answered (it sorts requests by length); its
    ``Doc.id`` is the document's index in the dataset split. Bootstrap intervals resample by position, so
    the order matters; rows without a numeric id keep their place after the numbered ones.

    >>> rows = [{"doc": {"id": "3"}}, {"doc": {"id": "0"}}, {"doc": {"id": "12"}}]
    >>> [index for index, _ in in_dataset_order(rows)]
    [1, 0, 2]
    """

    def dataset_index(item: tuple[int, Mapping[str, Any]]) -> tuple[int, int]:
        identifier = str((item[1].get("doc") or {}).get("id", ""))
        return (0, int(identifier)) if identifier.isdigit() else (1, item[0])

    return sorted(enumerate(rows), key=dataset_index)


def _output(response: Mapping[str, Any], choices: tuple[str, ...] | None) -> str | None:
    text = response.get("text")
    while isinstance(text, list) and text:
        text = text[0]
    if isinstance(text, str):
        return text
    logprobs = response.get("logprobs")
    if choices and isinstance(logprobs, list) and len(logprobs) == len(choices):
        return choices[max(range(len(choices)), key=lambda i: logprobs[i])]
    return None


def log_likelihoods(response: Mapping[str, Any], choices: tuple[str, ...] | None) -> tuple[float, ...] | None:
    """The log-likelihood of each choice, for a document scored by log-likelihood: lighteval's response
    then holds no text and one ``logprobs`` value per choice (a generation's ``logprobs``, where logged,
    are per generated token, beside its text).

    >>> log_likelihoods({"text": [], "logprobs": [-0.5, 0.0]}, ("A", "B"))
    (-0.5, 0.0)
    >>> log_likelihoods({"text": ["B"], "logprobs": [-0.5, -0.1]}, ("A", "B")) is None
    True
    """
    text, logprobs = response.get("text"), response.get("logprobs")
    if text or not choices or not isinstance(logprobs, list) or len(logprobs) != len(choices):
        return None
    if not all(isinstance(value, int | float) and not isinstance(value, bool) for value in logprobs):
        return None
    return tuple(float(value) for value in logprobs)


def read_details(path: Path, *, bench: bool = False) -> dict[Hashable, LoggedDocument]:
    """One details file's documents by ``Doc.id``: the per-document metrics, the gold choices' texts as the
    target, the prompt, the choices, the output and, for a document scored by log-likelihood, each choice's
    log-likelihood; for the bench's own tasks (``bench``) also the scoring metadata each document carries
    (``Doc.specific``) and the raw output, which ``score`` reads again."""
    import pyarrow.parquet as pq  # deferred: pyarrow is read only when a details file is

    documents: dict[Hashable, LoggedDocument] = {}
    try:
        rows = pq.read_table(path).to_pylist()
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise ScrambledBenchError(f"{path}: unreadable lighteval details file ({first_line(exc)})") from None
    for index, row in in_dataset_order(rows):
        where = f"{path}: row {index}"
        doc, response = row.get("doc") or {}, row.get("model_response") or {}
        doc_id = doc.get("id")
        if doc_id in documents:
            raise ScrambledBenchError(f"{where}: document {doc_id} is logged twice")
        listed = doc.get("choices") or []
        gold = doc.get("gold_index")
        golds = gold if isinstance(gold, list) else [gold]
        target = json.dumps([listed[i] for i in golds if isinstance(i, int) and i < len(listed)])
        scores = {
            str(metric): float(value)
            for metric, value in (row.get("metric") or {}).items()
            if isinstance(value, int | float) and not isinstance(value, bool)
        }
        # a generative task lists only its gold(s) as choices: no choice was shown to the model
        choices = tuple(str(choice) for choice in listed) if len(listed) > 1 else None
        documents[doc_id] = LoggedDocument(
            doc_id,
            scores,
            target,
            rendered_user_turn(doc, response),
            choices,
            first_text(response.get("text"), where) if bench else _output(response, choices),
            logged_meta({"meta": doc.get("specific")}, where) if bench else None,
            where,
            log_likelihoods(response, choices),
        )
    return documents


def aggregated_metrics(entry: Mapping[str, Any]) -> dict[str, MetricValue]:
    """A task's entry of the results file's ``results`` as metrics: each value with its ``<metric>_stderr``.

    >>> aggregated_metrics({"em": 0.5, "em_stderr": 0.1, "flag": True})
    {'em': MetricValue(value=0.5, stderr=0.1)}
    """
    return {
        key: MetricValue(
            float(value),
            float(entry[f"{key}_stderr"]) if isinstance(entry.get(f"{key}_stderr"), int | float) else None,
        )
        for key, value in entry.items()
        if not key.endswith("_stderr") and isinstance(value, int | float) and not isinstance(value, bool)
    }


def logged_task(log: TaskLog) -> LoggedTask:
    """One details file as a task run: its documents, the identity of its invocation, whether it is a derived
    task (and of which canonical task and type) or one of the bench's own, its metrics as lighteval
    aggregated them."""
    config_tasks = log.results.get("config_tasks") or {}
    derived = derived_tasks(config_tasks).get(log.task)
    bench = log.task.startswith(BENCH_PREFIX)
    return LoggedTask(
        name=log.task,
        run=run_identity(log.results, str(log.results_path)),
        created=log.date,
        documents=read_details(log.path, bench=bench),
        location=str(log.path),
        canonical=derived[0] if derived else None,
        scramble_type=derived[1] if derived else None,
        bench=bench,
        metrics=aggregated_metrics((log.results.get("results") or {}).get(log.task) or {}),
        means=mean_metrics(config_tasks.get(log.task) or {}),
    )


__all__ = [
    "LAYOUT",
    "aggregated_metrics",
    "derived_tasks",
    "in_dataset_order",
    "log_likelihoods",
    "logged_task",
    "mean_metrics",
    "read_details",
    "run_identity",
]
