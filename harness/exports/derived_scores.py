"""``score --from-lm-eval`` (and ``--from-lighteval``) on derived tasks: each scrambled variant against its
canonical task. :func:`pair_variants` is the one comparison; lighteval's output is read by
``harness.exports.lighteval_variants``.

lm-eval's results file names every task it ran with its config; a derived task
(``harness.exports.lm_eval_variants``) carries ``metadata.canonical_task`` and ``metadata.scramble_type``.
For each canonical task, per type, the section gives:

- the harness's own metric(s), as the harness computed them (its results file), with the number of
  documents it logged;
- for a metric aggregated as a mean of per-document scores: the paired difference from the canonical task
  over the same documents (``doc_id``, targets checked), with its bootstrap interval and, for 0/1 scores,
  McNemar's exact test (``harness.paired``);
- RPG where ``sub`` ran, for 0/1 metrics.

Every value is a fraction, as in results.json.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.harness.exports.lm_eval_variants import DERIVED_KEY
from scrambled_bench.harness.paired import CompareSettings, DocScore, paired_difference, rpg

RESULTS_GLOB = "results_*.json"
SUB = "sub"


def newest_results(folder: Path) -> dict[str, Any] | None:
    """The newest lm-eval results file under ``folder`` (any depth), parsed; None where there is none."""
    files = sorted(folder.rglob(RESULTS_GLOB), key=lambda path: path.name)
    if not files:
        return None
    try:
        return json.loads(files[-1].read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ScrambledBenchError(f"{files[-1]}: unreadable lm-eval results file ({exc})") from None


def derived_tasks(results: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """Canonical task -> scramble type -> derived task, from a results file's configs.

    >>> derived_tasks({"configs": {"arc_kfl": {"metadata": {"canonical_task": "arc", "scramble_type": "kfl"}},
    ...                            "arc": {"metadata": {"version": 1}}}})
    {'arc': {'kfl': 'arc_kfl'}}
    """
    found: dict[str, dict[str, str]] = {}
    for task, config in (results.get("configs") or {}).items():
        metadata = (config or {}).get("metadata") or {}
        if isinstance(metadata, Mapping) and metadata.get(DERIVED_KEY) and metadata.get("scramble_type"):
            found.setdefault(str(metadata[DERIVED_KEY]), {})[str(metadata["scramble_type"])] = task
    return {task: dict(sorted(types.items())) for task, types in sorted(found.items())}


def _mean_metrics(config: Mapping[str, Any]) -> set[str]:
    """The metrics a task aggregates as a mean of per-document scores."""
    return {
        str(entry.get("metric"))
        for entry in config.get("metric_list") or []
        if isinstance(entry, Mapping) and entry.get("aggregation", "mean") == "mean"
    }


def logged_scores(path: Path, *, multiple_choice: bool = False) -> dict[str, dict[Any, DocScore]]:
    """``metric,filter`` -> doc_id -> its score and target, from one samples file; for a ``multiple_choice``
    task also each document's number of choices (one logged request per choice: RPG's chance level).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "samples_t_2026-01-01T00-00-00.1.jsonl"
    >>> row = {"doc_id": 0, "target": "A", "filter": "none", "metrics": ["exact_match"], "exact_match": 1.0}
    >>> _ = path.write_text(json.dumps(row) + "\\n")
    >>> logged_scores(path)
    {'exact_match,none': {0: DocScore(score=1.0, target='A', choices=None)}}
    """
    from scrambled_bench.io import read_jsonl

    scores: dict[str, dict[Any, DocScore]] = {}
    for line, row in read_jsonl(path, required=("doc_id", "metrics")):
        arguments = row.get("arguments")
        choices = (
            len(arguments) if multiple_choice and isinstance(arguments, list | dict) and arguments else None
        )
        for metric in row["metrics"]:
            value = row.get(metric)
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue  # a metric whose per-document value is not a number (a corpus metric's inputs)
            key = f"{metric},{row.get('filter', 'none')}"
            if row["doc_id"] in scores.setdefault(key, {}):
                raise ScrambledBenchError(f"{path}:{line}: document {row['doc_id']} is logged twice")
            scores[key][row["doc_id"]] = DocScore(float(value), _hashable(row.get("target")), choices)
    return scores


def _hashable(target: Any) -> Any:
    return json.dumps(target, sort_keys=True) if isinstance(target, list | dict) else target


def _harness_value(results: Mapping[str, Any], task: str, key: str) -> dict[str, Any]:
    metric, _, filter_name = key.partition(",")
    entry = (results.get("results") or {}).get(task) or {}
    stderr = entry.get(f"{metric}_stderr,{filter_name}")
    return {
        "value": entry.get(key),
        "stderr": stderr if isinstance(stderr, int | float) else None,
        "n": ((results.get("n-samples") or {}).get(task) or {}).get("effective"),
    }


def score_derived(
    folder: Path, samples: Mapping[str, Path], results: Mapping[str, Any], settings: CompareSettings
) -> dict[str, Any]:
    """The ``scrambled_tasks`` section: per canonical task, the canonical task's metrics and, per type,
    the variant's metrics with their paired differences (and RPG where ``sub`` ran).

    ``samples`` maps each task to its newest samples file; a task without one is a one-line error (lm-eval
    was run without ``--log_samples``)."""
    section: dict[str, Any] = {}
    for canonical, variants in derived_tasks(results).items():
        needed = [canonical, *variants.values()]
        missing = [task for task in needed if task not in samples]
        if missing:
            raise ScrambledBenchError(
                f"{folder}: no logged samples of {', '.join(missing)}; run lm_eval with --log_samples "
                f"and --tasks {canonical}_scrambled (the canonical task beside its variants)"
            )
        configs = results.get("configs") or {}
        means = _mean_metrics(configs.get(canonical) or {})
        multiple_choice = (configs.get(canonical) or {}).get("output_type") == "multiple_choice"
        section[canonical] = pair_variants(
            canonical,
            variants,
            {task: logged_scores(samples[task], multiple_choice=multiple_choice) for task in needed},
            lambda task, key: _harness_value(results, task, key),
            lambda key, means=means: key.partition(",")[0] in means,
            settings,
        )
    return section


def pair_variants(
    canonical: str,
    variants: Mapping[str, str],
    logged: Mapping[str, Mapping[str, Mapping[Any, DocScore]]],
    value_of: Callable[[str, str], dict[str, Any]],
    pairable: Callable[[str], bool],
    settings: CompareSettings,
) -> dict[str, Any]:
    """One canonical task's entry of ``scrambled_tasks``, whichever harness logged it: its metrics and, per
    type, the variant's, each with its paired difference where ``pairable(metric)`` (a mean of per-document
    scores) and RPG where ``sub`` ran (0/1 metrics).

    ``logged`` maps each task to metric -> document id -> :class:`DocScore`; ``value_of(task, metric)`` is
    the harness's own record of the metric (``value``, ``stderr``, ``n``).

    >>> from scrambled_bench.harness.paired import CompareSettings
    >>> logged = {"t": {"acc": {0: DocScore(1.0, "A"), 1: DocScore(1.0, "B")}},
    ...           "t_kfl": {"acc": {0: DocScore(0.0, "A"), 1: DocScore(1.0, "B")}}}
    >>> entry = pair_variants("t", {"kfl": "t_kfl"}, logged, lambda task, m: {"value": None},
    ...                       lambda m: True, CompareSettings(n_resamples=50))
    >>> entry["types"]["kfl"]["metrics"]["acc"]["difference"], entry["types"]["kfl"]["metrics"]["acc"]["n_paired"]
    (-0.5, 2)
    """
    entry: dict[str, Any] = {"task": canonical, "metrics": {}, "types": {}}
    for key in logged[canonical]:
        entry["metrics"][key] = value_of(canonical, key)
    for scramble_type, task in variants.items():
        metrics: dict[str, Any] = {}
        for key, scores in logged[task].items():
            metrics[key] = value_of(task, key)
            if not pairable(key) or key not in logged[canonical]:
                metrics[key]["note"] = "not a mean of per-document scores: no paired difference"
                continue
            try:
                metrics[key].update(paired_difference(logged[canonical][key], scores, settings))
                sub_task = variants.get(SUB)
                if sub_task is not None and scramble_type != SUB and key in logged[sub_task]:
                    gain = rpg(logged[canonical][key], scores, logged[sub_task][key], settings)
                    if gain is not None:
                        metrics[key]["relative_performance_gain"] = gain
            except ScrambledBenchError as exc:
                raise ScrambledBenchError(f"{task} against {canonical}, {key}: {exc}") from None
        entry["types"][scramble_type] = {"task": task, "metrics": metrics}
    return entry
