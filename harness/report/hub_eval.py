"""The Hub's "Evaluation Results" (https://huggingface.co/docs/hub/eval-results): the ``eval.yaml`` at the
root of a dataset build, which makes the dataset a Hub benchmark with one task per scrambled config, and a
model repository's ``.eval_results/*.yaml``, which puts a run's scores on the model page and on the
benchmark's leaderboard.

Each file is checked against the fields the Hub documents before it is written: required fields present
with the right types, nothing else. Every task and value comes from the task registry: a task's headline
metric (``View.headline``: RR for ScrRec, RPG for ScrQA, Acc for AQuA) at each scrambled type; the
unscrambled and substituted texts are RPG's anchors, 100 and 0 by definition, so they are no tasks.

The builder writes ``eval.yaml`` with :func:`benchmark_eval_yaml`; import this module inside the function
that calls it (it reads the task registry, which imports the builder).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scrambled_bench.builder.build import EVAL_YAML_NAME
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.harness.report.runs import Run, run_fingerprint
from scrambled_bench.harness.results import PERCENT, incompleteness, scores_in
from scrambled_bench.harness.tasks import TASKS, Task, TaskConfig
from scrambled_bench.hub import check_repo_id, hub_error, is_repo_id

EVALUATION_FRAMEWORK = "scrambled-bench"
"""The harness named in eval.yaml and in each result, so that results show which harness made them."""
EVAL_YAML = EVAL_YAML_NAME
EVAL_RESULTS_DIR = ".eval_results"
BENCHMARK_NAME = "Scrambled Bench"
BENCHMARK_DESCRIPTION = (
    "Scrambled Bench (Cao et al., EMNLP 2023, arXiv:2311.18805): how well language models recover "
    "scrambled sentences (ScrRec, recovery rate RR) and answer questions over scrambled context (ScrQA on "
    "RealtimeQA and DREAM, relative performance gain RPG; AQuA-RAT chain of thought, accuracy). One task per "
    "task, dataset and scramble type; run it with `scrambled-bench run`."
)
SPLIT = "test"


class _HubDocument(BaseModel):
    """An object the Hub documents: its fields and no other, strictly typed (``"0.5"`` is no number, nor is
    ``True``). An optional field is absent or of its type: its ``None`` default is never validated, so an
    explicit ``null`` is a wrong type, as the Hub documents no nulls."""

    model_config = ConfigDict(extra="forbid", strict=True)


# The documented objects and fields, in the order of hub-docs' docs/hub/eval-results.md
class EvalYamlTask(_HubDocument):
    """One task of a benchmark's ``eval.yaml``."""

    id: str = Field(description="the id results name as their dataset.task_id")
    config: str = Field(description="the dataset config the task reads")
    split: str = Field(description="the split it evaluates")


class EvalYaml(_HubDocument):
    """The ``eval.yaml`` at the root of a dataset repository, which makes it a benchmark."""

    name: str = Field(description="the benchmark's display name")
    description: str = Field(None, description="what it measures")
    evaluation_framework: str = Field(None, description="the tool that runs it")
    tasks: list[EvalYamlTask] = Field(description="its tasks, one leaderboard each")


class ResultDataset(_HubDocument):
    """Which benchmark task a result is for."""

    id: str = Field(description="the benchmark dataset's Hub id")
    task_id: str = Field(description="a task id of its eval.yaml")
    revision: str = Field(None, description="the dataset revision evaluated")


class ResultSource(_HubDocument):
    """Where a result was published."""

    url: str = Field(description="a page that shows it")
    name: str = Field(None, description="that page's name")
    user: str = Field(None, description="the Hub user who published it")


class EvalResult(_HubDocument):
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


def hub_task_id(config: TaskConfig) -> str:
    """A config's task id on the Hub (letters, digits and ``-`` only).

    >>> hub_task_id(TaskConfig("scrqa", "dream", "rs100")), hub_task_id(TaskConfig("aqua-cot", "aqua", "rs50", 20))
    ('scrqa-dream-rs100', 'aqua-cot-aqua-rs50-exemplars-20')
    """
    return config.name.replace("/", "-")


def headline(task: Task) -> Any:
    """The metric a task's Hub results report.

    >>> [headline(task).label for task in TASKS.values()]
    ['RR', 'RR', 'RPG', 'Acc']
    """
    return task.view.headline or task.metrics[-1]


def benchmark_configs(data_configs: Iterable[str]) -> list[TaskConfig]:
    """Every config a build with ``data_configs`` (``dream_kfl``...) can run that a leaderboard ranks: each
    task at each scrambled type its build has, not at the types that anchor its metric.

    >>> [hub_task_id(c) for c in benchmark_configs(["dream_original", "dream_rs50", "dream_sub"])]
    ['scrqa-dream-rs50']
    >>> benchmark_configs(["dream_original", "dream_rs50"])
    []
    """
    available = set(data_configs)
    configs = []
    for task in TASKS.values():
        anchors = set(task.anchors)
        for dataset in task.datasets:
            types = sorted(
                {name.split("_", 1)[1] for name in available if name.split("_", 1)[0] == dataset},
                key=_type_order,
            )
            if not anchors <= set(types):
                continue  # the headline metric needs its anchors (RPG: the original and substituted texts)
            configs.extend(task.configs([dataset], [t for t in types if t not in anchors]))
    return configs


def _type_order(name: str) -> tuple:
    from scrambled_bench.builder.scrambler import type_order

    return type_order(name)


def benchmark_eval_yaml(
    data_configs: Iterable[str],
    *,
    name: str = BENCHMARK_NAME,
    description: str = BENCHMARK_DESCRIPTION,
) -> str:
    """The ``eval.yaml`` that makes a dataset build a Hub benchmark: a task per config
    (:func:`benchmark_configs`) on the build's dataset config and split. Validated before it is returned.

    >>> import yaml
    >>> document = yaml.safe_load(benchmark_eval_yaml(["realtimeqa_rs50", "realtimeqa_original"]))
    >>> document["evaluation_framework"], [task["id"] for task in document["tasks"]]
    ('scrambled-bench', ['scrrec-zero-shot-realtimeqa-rs50', 'scrrec-few-shot-realtimeqa-rs50'])
    """
    import yaml

    configs = benchmark_configs(data_configs)
    if not configs:
        raise ScrambledBenchError("eval.yaml: the build holds no scrambled config a task runs on")
    tasks: list[dict[str, str]] = []
    seen: set[str] = set()
    for config in configs:
        task_id = hub_task_id(config)
        if task_id not in seen:
            seen.add(task_id)
            tasks.append({"id": task_id, "config": config.data_config, "split": SPLIT})
    document = {
        "name": name,
        "description": description,
        "evaluation_framework": EVALUATION_FRAMEWORK,
        "tasks": tasks,
    }
    validate_eval_yaml(document)
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)


def _check_fields(where: str, value: Any, model: type[BaseModel]) -> None:
    """A one-line error naming the first thing in ``value`` that ``model`` does not document: unknown
    fields first, then a missing or mistyped one, at its path (``where.tasks[0]``)."""
    try:
        model.model_validate(value)
    except ValidationError as exc:
        raise ScrambledBenchError(_first_problem(where, exc.errors())) from None


def _first_problem(where: str, errors: Sequence[Any]) -> str:
    def at(loc: Sequence[str | int]) -> str:
        return where + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)

    unknown = [error["loc"] for error in errors if error["type"] == "extra_forbidden"]
    if unknown:
        names = ", ".join(sorted(str(loc[-1]) for loc in unknown))
        return f"{at(unknown[0][:-1])}: fields the Hub does not document: {names}"
    error = errors[0]
    loc, value = error["loc"], error["input"]
    if error["type"] == "missing":
        return f"{at(loc[:-1])}: missing required field {loc[-1]!r}"
    if error["type"] == "model_type":
        return f"{at(loc)}: expected a mapping, got {type(value).__name__}"
    return f"{at(loc)}: wrong type {type(value).__name__}"


def validate_eval_yaml(document: Any) -> None:
    """A one-line error where ``document`` is not an eval.yaml as the Hub documents it.

    >>> validate_eval_yaml({"name": "HLE", "tasks": [{"id": "hle", "config": "default", "split": "test"}]})
    >>> validate_eval_yaml({"name": "HLE", "tasks": [{"id": "hle", "config": "default"}]})
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: eval.yaml.tasks[0]: missing required field 'split'
    """
    _check_fields(EVAL_YAML, document, EvalYaml)
    if not document["tasks"]:
        raise ScrambledBenchError(f"{EVAL_YAML}: no tasks")
    ids = [task["id"] for task in document["tasks"]]
    if len(ids) != len(set(ids)):
        raise ScrambledBenchError(f"{EVAL_YAML}: task ids repeat")


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
        _check_fields(where, entry, EvalResult)
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
    from scrambled_bench.harness.tasks import get_task

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
    import yaml
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
