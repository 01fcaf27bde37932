"""The Hub's "Evaluation Results" (https://huggingface.co/docs/hub/eval-results): the ``eval.yaml`` at the
root of a dataset build, which makes the dataset a Hub benchmark with one task per scrambled config, and a
model repository's ``.eval_results/*.yaml``, which puts a run's scores on the model page and on the
benchmark's leaderboard.

Each file is checked against the fields the Hub documents before it is written: required fields present
with the right types, nothing else. Every task and value comes from the task registry: a task's headline
metric (``View.headline``: RR for ScrRec, RPG for ScrQA, Acc for AQuA) at each scrambled type; the
unscrambled and substituted texts are RPG's anchors, 100 and 0 by definition, so they are no tasks.

``eval.yaml`` itself, and the task ids results name, are the tasks' (``harness.hub_benchmark``); the
builder writes it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import yaml
from pydantic import Field

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.hub_benchmark import (
    EVALUATION_FRAMEWORK,
    HubDocument,
    check_fields,
    headline,
    hub_task_id,
)
from scrambled_bench.evaluation.results import PERCENT, incompleteness, scores_in
from scrambled_bench.evaluation.tasks import TaskConfig, get_task
from scrambled_bench.hub import check_repo_id, hub_error, is_repo_id
from scrambled_bench.report.runs import Run, run_fingerprint

EVAL_RESULTS_DIR = ".eval_results"


class ResultDataset(HubDocument):
    """Which benchmark task a result is for."""

    id: str = Field(description="the benchmark dataset's Hub id")
    task_id: str = Field(description="a task id of its eval.yaml")
    revision: str = Field(None, description="the dataset revision evaluated")


class ResultSource(HubDocument):
    """Where a result was published."""

    url: str = Field(description="a page that shows it")
    name: str = Field(None, description="that page's name")
    user: str = Field(None, description="the Hub user who published it")


class EvalResult(HubDocument):
    """One entry of a model repository's ``.eval_results/*.yaml`` list."""

    dataset: ResultDataset = Field(description="the benchmark task it is for")
    value: float = Field(description="the score, in the benchmark's units")
    # (camelCase: the Hub's spelling)
    verifyToken: str = Field(None, description="proof that the Hub's evaluator produced it")
    date: str = Field(None, description="when it was produced (ISO-8601)")
    source: ResultSource = Field(None, description="where it was published")
    evaluation_framework: str = Field(None, description="the tool that produced it")
    notes: str = Field(None, description="conditions worth knowing (prompt, reader, samples)")


ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")


def validate_eval_results(entries: Any, task_ids: Iterable[str] | None = None) -> None:
    """A one-line error where ``entries`` is not a ``.eval_results/*.yaml`` list as the Hub documents it
    (and, given the benchmark's ``task_ids``, where a result names a task the benchmark lacks).

    >>> validate_eval_results([{"dataset": {"id": "Idavidrein/gpqa", "task_id": "gpqa_diamond"}, "value": 0.412}])
    >>> validate_eval_results([{"dataset": {"id": "Idavidrein/gpqa"}, "value": 0.412}])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: .eval_results[0].dataset: missing required field 'task_id'
    """
    if not isinstance(entries, list) or not entries:
        raise ScrambledBenchError(f"{EVAL_RESULTS_DIR}: expected a non-empty list of results")
    known = set(task_ids) if task_ids is not None else None
    for index, entry in enumerate(entries):
        where = f"{EVAL_RESULTS_DIR}[{index}]"
        check_fields(where, entry, EvalResult)
        if not is_repo_id(entry["dataset"]["id"]):
            raise ScrambledBenchError(f"{where}.dataset.id: not a Hub dataset id: {entry['dataset']['id']!r}")
        if known is not None and entry["dataset"]["task_id"] not in known:
            raise ScrambledBenchError(
                f"{where}.dataset.task_id: the benchmark has no task {entry['dataset']['task_id']!r}"
            )
        if "date" in entry and not ISO_DATE.match(entry["date"]):
            raise ScrambledBenchError(f"{where}.date: not an ISO-8601 date: {entry['date']!r}")


def run_notes(run: Run) -> str:
    """How a run was made, in a few words (the result's ``notes``).

    >>> from pathlib import Path
    >>> run_notes(Run(Path("r"), {"configs": {}, "package_version": "1.0.0"}, {"settings": {"limit": 8}}))
    'scrambled-bench 1.0.0; careful answer reader; chat prompts; first 8 samples per config; run ...'
    """
    settings = run.settings
    samples = (
        "every sample" if settings.get("limit") is None else f"first {settings['limit']} samples per config"
    )
    return (
        f"scrambled-bench {run.results.get('package_version') or '?'}; {run.reader or 'careful'} answer reader; "
        f"{settings.get('prompt_mode', 'chat')} prompts; {samples}; run {run_fingerprint(run)}"
    )


def model_eval_results(
    run: Run, benchmark: str, *, revision: str | None = None, source_url: str | None = None
) -> list[dict[str, Any]]:
    """A run's ``.eval_results`` entries for the benchmark dataset ``benchmark``: per config it holds, its
    task's headline metric in percent (the paper's unit, and the unit the entry's notes name), where
    defined. Validated against the documented fields.

    >>> from pathlib import Path
    >>> run = Run(Path("r"), {"configs": {"scrqa/dream/rs50": {"task": "scrqa", "dataset": "dream",
    ...     "scramble_type": "rs50", "relative_performance_gain": {"value": 81.5}}}}, {})
    >>> [(e["dataset"]["task_id"], e["value"]) for e in model_eval_results(run, "org/scrambled_bench")]
    [('scrqa-dream-rs50', 81.5)]
    """
    entries = []
    for entry in scores_in(run.results, PERCENT)["configs"].values():
        task = get_task(entry["task"])
        if entry["scramble_type"] in task.anchors:
            continue
        metric = headline(task)
        value = (entry.get(metric.key) or {}).get("value")
        if value is None:
            continue
        config = TaskConfig(
            entry["task"], entry["dataset"], entry["scramble_type"], entry.get("exemplar_rate")
        )
        dataset: dict[str, Any] = {"id": benchmark, "task_id": hub_task_id(config)}
        if revision:
            dataset["revision"] = revision
        result: dict[str, Any] = {"dataset": dataset, "value": round(float(value), 4)}
        if run.results.get("created"):
            result["date"] = str(run.results["created"])
        if source_url:
            result["source"] = {"url": source_url, "name": "scrambled-bench results"}
        result["evaluation_framework"] = EVALUATION_FRAMEWORK
        result["notes"] = f"{metric.label} ({metric.unit}); {run_notes(run)}"
        if incompleteness(entry):  # published with --allow-incomplete: the entry says so
            result["notes"] += f"; INCOMPLETE: {incompleteness(entry)}"
        entries.append(result)
    if not entries:
        raise ScrambledBenchError(f"{run.path}: no scrambled config with a defined value to publish")
    validate_eval_results(entries)
    return entries


def benchmark_of(runs: Sequence[Run], benchmark: str | None) -> tuple[str, str | None]:
    """The benchmark dataset (and its revision) the runs' results belong to: ``--benchmark`` where given,
    else the Hub build the runs read; a one-line error where neither names one.

    >>> from pathlib import Path
    >>> build = {"location": "org/scrambled_bench", "commit": "abc"}
    >>> benchmark_of([], "org/bench"), benchmark_of([Run(Path("r"), {"configs": {}}, {"dataset": build})], None)
    (('org/bench', None), ('org/scrambled_bench', 'abc'))
    """
    if benchmark is not None:
        return check_repo_id(benchmark, "--benchmark"), None
    sources = {(run.build.get("location"), run.build.get("commit")) for run in runs}
    if len(sources) == 1:
        location, commit = next(iter(sources))
        if commit and isinstance(location, str) and is_repo_id(location):
            return location, commit
    raise ScrambledBenchError(
        "--model-card-results: the runs read a local build; name the benchmark's Hub dataset with "
        "--benchmark ORG/NAME (the build pushed with `scrambled-bench push`)"
    )


def push_model_card_results(
    runs: Sequence[Run],
    repo_id: str,
    *,
    benchmark: str | None = None,
    source_url: str | None = None,
    api: Any = None,
) -> tuple[list[str], str | None]:
    """Write each run's ``.eval_results/scrambled-bench-<run fingerprint>.yaml`` to the model repository
    ``repo_id``. Returns the files and the commit URL; (files, None) where the repository already holds
    them unchanged (nothing is committed).

    >>> push_model_card_results([], "model")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --model-card-results: expected a Hub repository id ORG/NAME, got 'model'
    """
    # deferred: huggingface_hub is heavy; only a publication needs it
    from huggingface_hub import CommitOperationAdd, HfApi

    check_repo_id(repo_id, "--model-card-results")
    models = sorted({str(run.results.get("model")) for run in runs})
    if len(models) > 1:
        raise ScrambledBenchError(
            f"--model-card-results {repo_id}: the runs are of several models ({', '.join(models)}); "
            "write one model's runs to its repository"
        )
    dataset, revision = benchmark_of(runs, benchmark)
    contents = {
        f"{EVAL_RESULTS_DIR}/{EVALUATION_FRAMEWORK}-{run_fingerprint(run)}.yaml": yaml.safe_dump(
            model_eval_results(run, dataset, revision=revision, source_url=source_url),
            sort_keys=False,
            allow_unicode=True,
            width=100,
        )
        for run in runs
    }
    api = api or HfApi()
    try:
        existing = set(api.list_repo_files(repo_id, repo_type="model"))
        changed = {}
        for path, text in contents.items():
            if path in existing:
                local = api.hf_hub_download(repo_id=repo_id, filename=path, repo_type="model")
                with open(local, encoding="utf-8") as handle:
                    if handle.read() == text:
                        continue
            changed[path] = text
        if not changed:
            return list(contents), None
        commit = api.create_commit(
            repo_id,
            [CommitOperationAdd(path, text.encode("utf-8")) for path, text in changed.items()],
            repo_type="model",
            commit_message=f"Scrambled Bench evaluation results ({len(changed)} run(s))",
        )
    except Exception as exc:  # noqa: BLE001 - every Hub failure becomes one line
        raise hub_error("write evaluation results to", repo_id, exc) from None
    return list(contents), getattr(commit, "commit_url", None) or str(commit)
