"""The Scrambled Bench for Inspect AI: ``inspect eval scrambled_bench/<slug> --model ...``.

One ``@task`` per config of the paper suite, named ``scrambled_bench/<slug>`` (``scrambled_bench/scrqa_dream_kfl``,
``scrambled_bench/scrrec_realtimeqa_rs50_fewshot``...), registered through the ``inspect_ai`` entry point in
pyproject.toml, so an installed package is enough for ``inspect eval`` to find them. Each is made from the
package's :class:`~.task_export.ExportedTask`, as the lm-eval and lighteval exports are:

- its samples are the rows ``run`` evaluates, with the paper's prompt as the one user message and the
  scoring metadata as the sample's ``metadata`` (so a log can be scored again: ``score --from inspect``);
- ``generate()`` with the task's stop sequences, greedy decoding and ``run``'s 256-token cap (``inspect eval
  --max-tokens`` lowers it: the command line's generation options win over a task's);
- every output is read by the task (careful reader) and the config's accuracy, RR and ED come from the
  packaged metric modules (the ``scrambled_bench/accuracy``, ``recovery_rate`` and ``edit_distance``
  metrics here). RPG pairs three configs, which no single Inspect log holds: ``score --from inspect``.

The data is ``-T data=PATH|ORG/NAME [-T revision=REV]``, else ``SCRAMBLED_BENCH_DATA`` (and
``SCRAMBLED_BENCH_DATA_REVISION``), else ``./scrambled_bench``, built there when missing as ``run`` builds it
(from ``SCRAMBLED_BENCH_SOURCE_DIR`` or GitHub); a local build lacking the config grows as under ``run``.

Importing this module also registers ``scrambled_bench/scrambled``, a scrambled variant of any Inspect task
(:mod:`.scrambled`), and points tiktoken at litellm's bundled copy of ``o200k_base`` where no cache is set (:func:`bundled_tiktoken_cache`):
Inspect counts tokens with it, and tiktoken would otherwise download it on first use.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState, generate

from scrambled_bench import __version__
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.data import DataSource, resolve_data
from scrambled_bench.evaluation.settings import DEFAULT_DATA
from scrambled_bench.hub import is_repo_id
from scrambled_bench.integrations.exported import (
    MAX_NEW_TOKENS,
    PER_CONFIG_METRICS,
    PREFIX,
    VERSION,
    ExportedTask,
    aggregate,
    data_from_environment,
    document_meta,
    exported_tasks,
    metric_items,
    score_sample,
)

# the generic wrapper (``scrambled_bench/scrambled``) registers itself on import: Inspect loads this module alone
# for every `scrambled_bench/` name
from scrambled_bench.integrations.inspect.scrambled import endpoint_metadata
from scrambled_bench.metrics.readers import DEFAULT_READER

TIKTOKEN_CACHE_ENV = "TIKTOKEN_CACHE_DIR"
O200K_CACHE_FILE = "fb374d419588a4632f3f557e76b4b70aebbca790"
"""tiktoken's cache name for ``o200k_base`` (the sha1 of its download URL), as litellm ships it."""


def inspect_name(exported: ExportedTask) -> str:
    """A config's task name in Inspect: ``scrambled_bench/<slug>`` (the package's registry namespace).

    >>> from scrambled_bench.evaluation.tasks import TaskConfig
    >>> inspect_name(ExportedTask(TaskConfig("scrqa", "dream", "kfl")))
    'scrambled_bench/scrqa_dream_kfl'
    """
    return f"{PREFIX}/{exported.slug}"


def bundled_tiktoken_cache() -> Path | None:
    """litellm's folder of tiktoken cache files when it holds ``o200k_base`` (found without importing
    litellm, which fetches a price list at import), else None.

    >>> folder = bundled_tiktoken_cache()
    >>> folder is None or (folder / O200K_CACHE_FILE).is_file()
    True
    """
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        folder = Path(location) / "litellm_core_utils" / "tokenizers"
        if (folder / O200K_CACHE_FILE).is_file():
            return folder
    return None


def use_bundled_tiktoken_cache(environ: dict[str, str] | os._Environ[str] = os.environ) -> str | None:
    """Point ``TIKTOKEN_CACHE_DIR`` at :func:`bundled_tiktoken_cache` unless the user set it; the folder
    used (None: left alone). tiktoken checks a cached file's sha256 before use, so this is the very file
    a download would give.

    >>> use_bundled_tiktoken_cache({TIKTOKEN_CACHE_ENV: "/mine"}) is None
    True
    """
    if environ.get(TIKTOKEN_CACHE_ENV):
        return None
    folder = bundled_tiktoken_cache()
    if folder is None:
        return None
    environ[TIKTOKEN_CACHE_ENV] = str(folder)
    return str(folder)


# ------------------------------------------------------------------------------------------------ scoring


def _aggregate_metric(key: str) -> Callable[[], Metric]:
    """An Inspect metric computing ``key`` by the packaged module from the samples' logged items."""

    def factory() -> Metric:
        def compute(scores: list[SampleScore]) -> float:
            return aggregate(key, [score.score.metadata["items"][key] for score in scores])

        return compute

    factory.__name__ = factory.__qualname__ = key
    return metric(name=key)(factory)


METRICS: dict[str, Callable[[], Metric]] = {key: _aggregate_metric(key) for key in PER_CONFIG_METRICS}
"""Each of :data:`~.task_export.PER_CONFIG_METRICS` as an Inspect metric (``scrambled_bench/<key>``); the log
names them by their key, as results.json does."""


@scorer(metrics=[])
def bench_score(reader: str = DEFAULT_READER) -> Scorer:
    """A sample's output read and scored by its task: the value is 1/0 (right/wrong) for a question, the
    character edit distance for a recovery; the metadata keeps the items the metrics aggregate."""

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        scored = score_sample(meta, state.output.completion, reader=reader)
        value = float(scored["correct"]) if "correct" in scored else float(scored["edit_distance"])
        return Score(
            value=value,
            answer=scored["prediction"],
            explanation=scored.get("rule"),
            metadata={"items": metric_items(meta, scored), "unparsed": bool(scored.get("unparsed"))},
        )

    return score


# ------------------------------------------------------------------------------------------------ tasks


def _announce(message: str) -> None:
    print(f"scrambled_bench: {message}", file=sys.stderr)


def config_rows(
    exported: ExportedTask, data: str | None, revision: str | None
) -> tuple[list[dict], DataSource]:
    """The dataset rows of a config from ``data`` (else the environment's, else ``./scrambled_bench``),
    the default build made or grown as ``run`` does, and where they were read."""
    if data is None:
        data, environment_revision = data_from_environment()
        revision = revision if revision is not None else environment_revision
    if not _readable_location(data):
        raise ScrambledBenchError(
            f"data={data}: no such folder (and not a Hub id owner/name); build it with "
            f"`scrambled-bench build --out {data}`"
        )
    config = exported.config
    source = resolve_data(data, revision=revision, types=[config.scramble_type], announce=_announce)
    source.ensure_configs([(config.dataset, config.scramble_type)], announce=_announce)
    return source.rows(exported.data_config), source


def _readable_location(data: str) -> bool:
    """Whether ``data`` is a folder, a Hub id, or the default build folder (made when missing).

    >>> _readable_location("org/scrambled_bench"), _readable_location("./no/such/build")
    (True, False)
    """
    path = Path(data).expanduser()
    if path.exists() or path.resolve() == Path(DEFAULT_DATA).resolve():
        return True
    return is_repo_id(data) and not data.startswith(".")


def samples(exported: ExportedTask, rows: Sequence[Mapping[str, Any]]) -> list[Sample]:
    """The Inspect samples of a config's rows: the prompt as one user message, the gold as target, the
    scoring metadata as metadata (pure).

    >>> from scrambled_bench.evaluation.tasks import TaskConfig
    >>> rows = [{"id": 7, "original": "Bob won.", "scrambled": "Bob nwo.", "question": "Who won?",
    ...          "choices": ["Ann", "Bob"], "answer": "B", "used_for_qa": True}]
    >>> [sample] = samples(ExportedTask(TaskConfig("scrqa", "realtimeqa", "rs50")), rows)
    >>> sample.id, sample.target, sample.metadata["config"], sample.input.splitlines()[2]
    ('7', 'B', 'scrqa/realtimeqa/rs50', 'Evidence: Bob nwo.')
    """
    return [
        Sample(id=doc["id"], input=doc["prompt"], target=doc["target"], metadata=document_meta(doc))
        for doc in exported.documents(rows)
    ]


def task_metadata(exported: ExportedTask, source: DataSource | None = None) -> dict[str, Any]:
    """What a task's log records about it: its config, the data it read and, as the wrapped tasks name
    theirs, the Inspect names of the configs its scores pair with (``canonical_task``: ``original``;
    ``substituted_task``: ``sub``).

    >>> from scrambled_bench.evaluation.tasks import TaskConfig
    >>> task_metadata(ExportedTask(TaskConfig("scrqa", "dream", "kfl")))["substituted_task"]
    'scrambled_bench/scrqa_dream_sub'
    """
    metadata: dict[str, Any] = {
        "scrambled_bench_config": exported.config.name,
        "scrambled_bench_version": __version__,
        "scramble_type": exported.config.scramble_type,
    }
    if source is not None:
        metadata["data"] = {"location": source.location, "revision": source.revision}
    anchors = exported.anchors()
    for key, scramble_type in (("canonical_task", "original"), ("substituted_task", "sub")):
        if scramble_type in anchors:
            metadata[key] = inspect_name(anchors[scramble_type])
    return metadata


def bench_task(exported: ExportedTask, data: str | None = None, revision: str | None = None) -> Task:
    """The Inspect task of one config (a one-line error for data that cannot be read); created by an eval,
    its metadata records the endpoint of the model it runs against (RPG pairs three configs' logs, which
    must share it: :func:`~.scrambled.endpoint_metadata`)."""
    try:
        dataset_rows, source = config_rows(exported, data, revision)
    except ScrambledBenchError as exc:
        raise PrerequisiteError(f"error: {inspect_name(exported)}: {exc}") from None
    return Task(
        dataset=MemoryDataset(samples(exported, dataset_rows), name=exported.data_config),
        solver=generate(),
        scorer=bench_score(),
        metrics=[METRICS[metric.key]() for metric in exported.metrics],
        config=GenerateConfig(temperature=0.0, max_tokens=MAX_NEW_TOKENS, stop_seqs=list(exported.task.stop)),
        version=VERSION,
        metadata={**task_metadata(exported, source), **endpoint_metadata()},
    )


def _registered(exported: ExportedTask) -> Callable[..., Task]:
    def config_task(data: str | None = None, revision: str | None = None) -> Task:
        # `-T` values are read as YAML: a revision such as 1.0 arrives as a number
        return bench_task(
            exported, None if data is None else str(data), None if revision is None else str(revision)
        )

    config_task.__name__ = config_task.__qualname__ = exported.slug
    config_task.__doc__ = f"The Scrambled Bench's {exported.config.name}: {exported.task.description}"
    return task(name=exported.slug)(config_task)


TASKS: dict[str, Callable[..., Task]] = {
    exported.slug: _registered(exported) for exported in exported_tasks()
}
"""Every exported config's ``@task`` by slug, registered as ``scrambled_bench/<slug>``."""

use_bundled_tiktoken_cache()
