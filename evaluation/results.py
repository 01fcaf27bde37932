"""A run's ``results.json`` and ``config.json``.

``results.json`` holds, per task config (one cell of the paper's tables): ED and RR (ScrRec) or Acc and
RPG (ScrQA, AQuA), each with a bootstrap interval, and beside every score the counts it rests on:
samples scored, requests that failed after their retries (left out of the denominators, as an error
rate), context-window skips, outputs that could not be parsed (scored wrong), and the prompt tokens the
endpoint reported (token inflation: how much each scramble type grows the prompt). DREAM configs add
accuracy and RPG per question category.

Scores are recomputed here from ``(request meta, raw output)`` with :func:`tasks.score_output`, so a
results file always agrees with the samples on disk, whatever wrote them.
"""

from __future__ import annotations

import json
import platform
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from scrambled_bench import __version__
from scrambled_bench.evaluation.aggregate import Bootstrap
from scrambled_bench.evaluation.backends.base import GenerationRequest
from scrambled_bench.evaluation.tasks import TaskConfig
from scrambled_bench.evaluation.tasks.base import METRICS
from scrambled_bench.io import atomic_write_text
from scrambled_bench.metrics.readers import DEFAULT_READER

RESULTS_FILE = "results.json"
CONFIG_FILE = "config.json"
SCORES_FILE = "scores.jsonl"
"""One line per (config, sample) of results.json: the sample's key in samples.jsonl and its scores. It says
which samples each config rests on (two configs that sent an identical prompt share one sample), which is
what re-reading a run with another answer reader, or pairing two runs sample by sample, needs."""
SCORE_FIELDS = ("prediction", "correct", "unparsed", "edit_distance", "scrambled_edit_distance", "rule")
RESULTS_SCHEMA = 2
"""2: scores in "%" units (Acc, RPG, RR) are fractions, as the metric modules return them (1: percent)."""
PERCENT, FRACTION = "percent", "fraction"
SCORE_PARTS = (
    "value",
    "ci",
    "original_accuracy",
    "original_accuracy_ci",
    "substituted_accuracy",
    "chance",
    "formula",
    "ratio_as_defined",
)
"""The numbers in a score's entry that are in the metric's unit (``ratio_as_defined``: ``formula``'s name
in results files written before the module's vocabulary was used throughout)."""


@dataclass
class ConfigSamples:
    """What a config's requests came to: scored samples, failures, and requests never answered."""

    config: TaskConfig
    scored: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    missing: int = 0


def collect_samples(
    requests: Mapping[TaskConfig, Sequence[GenerationRequest]],
    completed: Mapping[str, Mapping[str, Any]],
    errors: Mapping[str, Mapping[str, Any]],
    model: str,
    *,
    reader: str = DEFAULT_READER,
) -> dict[TaskConfig, ConfigSamples]:
    """Join each config's requests with the run folder's records by resume key and score them.

    A record is re-scored from its raw ``output`` with the *request's* meta (two configs can send the
    identical prompt, and then share one record) and the answer ``reader``, so one run's outputs can be
    read by either reader.
    """
    collected: dict[TaskConfig, ConfigSamples] = {}
    for config, config_requests in requests.items():
        samples = ConfigSamples(config)
        for request in config_requests:
            key = request.key(model)
            record = completed.get(key)
            if record is not None:
                scored = {
                    **request.meta,
                    "key": key,
                    "output": record.get("output", ""),
                    "prompt_tokens": record.get("prompt_tokens"),
                    "completion_tokens": record.get("completion_tokens"),
                    **config.definition.score(
                        request.meta, record.get("output", ""), chat=request.chat, reader=reader
                    ),
                }
                samples.scored.append(scored)
            elif key in errors:
                samples.errors.append(
                    {**request.meta, "key": key, "error_type": errors[key].get("error_type", "error")}
                )
            else:
                samples.missing += 1
        collected[config] = samples
    return collected


def score_rows(collected: Mapping[TaskConfig, ConfigSamples]) -> list[dict[str, Any]]:
    """The rows of scores.jsonl: every scored sample of every config, in order."""
    return [
        {
            "config": config.name,
            "id": sample["id"],
            "key": sample["key"],
            **{f: sample[f] for f in SCORE_FIELDS if f in sample},
        }
        for config, samples in collected.items()
        for sample in samples.scored
    ]


def rescore(
    results: Mapping[str, Any],
    scores: Sequence[Mapping[str, Any]],
    records: Mapping[str, Mapping[str, Any]],
    *,
    reader: str,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """A results document re-read with another answer ``reader``, from the run's stored outputs.

    ``scores`` are the rows of scores.jsonl (which samples each config rests on), ``records`` the
    samples.jsonl records by key; failed and missing requests are carried over as counted.
    """
    from collections import defaultdict

    keys: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in scores:
        keys[row["config"]].append(row)
    collected: dict[TaskConfig, ConfigSamples] = {}
    for name, entry in results["configs"].items():
        config = TaskConfig(
            entry["task"], entry["dataset"], entry["scramble_type"], entry.get("exemplar_rate")
        )
        samples = ConfigSamples(config, missing=entry.get("n_missing", 0))
        for row in keys[name]:
            record = records[row["key"]]
            # a shared sample's record carries the meta of the config that sent it first; only the config differs
            meta = {**record, "config": name, "scramble_type": config.scramble_type, "key": row["key"]}
            scored = config.definition.score(
                meta, record.get("output", ""), chat=record.get("chat", True), reader=reader
            )
            samples.scored.append({**meta, **scored})
        skips = entry.get("n_context_too_long", 0)
        samples.errors = [{"error_type": "context_too_long"}] * skips + [{"error_type": "error"}] * (
            entry.get("n_errors", 0) - skips
        )
        collected[config] = samples
    configs = compute_results(
        collected, confidence_level=confidence_level, n_resamples=n_resamples, seed=seed
    )
    return {
        **results,
        "reader": reader,
        "intervals": {"confidence_level": confidence_level, "n_resamples": n_resamples, "seed": seed},
        "units": units(FRACTION),
        "totals": _totals(configs),
        "configs": configs,
    }


def _token_summary(samples: Sequence[Mapping[str, Any]], field_name: str) -> dict:
    reported = [s[field_name] for s in samples if isinstance(s.get(field_name), int)]
    return {
        "total": sum(reported),
        "mean": (sum(reported) / len(reported)) if reported else None,
        "reported": len(reported),
    }


def compute_results(
    collected: Mapping[TaskConfig, ConfigSamples],
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """The ``configs`` section of results.json, keyed by config name, in the order given: the counts every
    score rests on, then the scores the config's task reports (:meth:`Task.aggregate`)."""
    boot = Bootstrap(confidence_level=confidence_level, n_resamples=n_resamples, seed=seed)
    # in id order: a bootstrap's resamples are drawn by position, so an interval must not depend on the order
    # in which the samples arrived (a harness's log, a resumed run)
    scored = {config: sorted(samples.scored, key=_sample_order) for config, samples in collected.items()}
    results: dict[str, Any] = {}
    for config, samples in collected.items():
        attempted = len(samples.scored) + len(samples.errors)
        context_skips = sum(1 for e in samples.errors if e.get("error_type") == "context_too_long")
        entry: dict[str, Any] = {
            "task": config.task,
            "dataset": config.dataset,
            "scramble_type": config.scramble_type,
            "exemplar_rate": config.exemplar_rate,
            "n_requests": attempted + samples.missing,
            "n_scored": len(samples.scored),
            "n_errors": len(samples.errors),
            "n_context_too_long": context_skips,
            "n_missing": samples.missing,
            "n_failed": len(samples.errors) - context_skips,
            # a context-window skip is a property of the prompt (a rerun skips it again); a failure or a
            # request never answered is not: the config is incomplete until a rerun sends it again
            "complete": len(samples.errors) == context_skips and samples.missing == 0,
            "error_rate": (len(samples.errors) / attempted) if attempted else None,
            "unparsed": sum(1 for s in samples.scored if s.get("unparsed")),
            # which of the reader's rules decided, how often: where the reading was not plain, it shows
            "rules": dict(sorted(Counter(s["rule"] for s in samples.scored if s.get("rule")).items())),
            "prompt_tokens": _token_summary(samples.scored, "prompt_tokens"),
            "completion_tokens": _token_summary(samples.scored, "completion_tokens"),
        }
        entry.update(config.definition.aggregate(config, scored[config], scored, boot))
        results[config.name] = entry
    _add_token_inflation(results, collected)
    return results


def _sample_order(sample: Mapping[str, Any]) -> str:
    """The order a config's scored samples are aggregated in: by id, whatever order they arrived in."""
    return str(sample.get("id"))


def _add_token_inflation(results: dict[str, Any], collected: Mapping[TaskConfig, ConfigSamples]) -> None:
    """Mean prompt tokens of each config over those of the unscrambled prompts of the same samples."""
    tokens = {
        config.name: {
            s["id"]: s["prompt_tokens"] for s in samples.scored if isinstance(s.get("prompt_tokens"), int)
        }
        for config, samples in collected.items()
    }
    for config in collected:
        baseline = config.definition.baseline(config)
        if baseline is None:
            continue  # e.g. ScrRec has no unscrambled prompt to compare with
        mine, base = tokens.get(config.name, {}), tokens.get(baseline.name, {})
        common = [i for i in mine if i in base]
        if common and sum(base[i] for i in common):
            ratio = sum(mine[i] for i in common) / sum(base[i] for i in common)
            results[config.name]["prompt_tokens"]["vs_original"] = ratio


def results_document(
    configs: dict[str, Any],
    *,
    run_config: Mapping[str, Any],
    engine: Mapping[str, Any],
    reader: str = DEFAULT_READER,
) -> dict:
    """The whole results.json: who/what/when and which answer reader scored it, then the per-config scores."""
    return {
        "schema": RESULTS_SCHEMA,
        "model": run_config.get("model"),
        "backend": run_config.get("backend"),
        "suite": run_config.get("suite"),
        # the identity of the settings it was computed with: report checks it against config.json's
        "run_id": run_config.get("run_id"),
        "limit": (run_config.get("identity") or {}).get("limit"),
        "reader": reader,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "package_version": run_config.get("package_version"),
        "dataset": run_config.get("dataset"),
        "engine": dict(engine),
        # how every interval below was made (each names its method beside it: ci_method)
        "intervals": {
            key: (run_config.get("settings") or {}).get(key, default)
            for key, default in (("confidence_level", 0.95), ("n_resamples", 1000), ("seed", 0))
        },
        "units": units(FRACTION),
        "totals": _totals(configs),
        "configs": configs,
    }


def _totals(configs: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    keys = ("n_requests", "n_scored", "n_errors", "n_context_too_long", "n_missing", "unparsed")
    totals: dict[str, Any] = {key: sum(entry[key] for entry in configs.values()) for key in keys}
    totals["n_failed"] = sum(failed_requests(entry) for entry in configs.values())
    totals["complete"] = all(is_complete(entry) for entry in configs.values())
    totals["incomplete_configs"] = [name for name, entry in configs.items() if not is_complete(entry)]
    totals["prompt_tokens"] = sum(entry["prompt_tokens"]["total"] for entry in configs.values())
    totals["completion_tokens"] = sum(entry["completion_tokens"]["total"] for entry in configs.values())
    attempted = totals["n_scored"] + totals["n_errors"]
    totals["error_rate"] = (totals["n_errors"] / attempted) if attempted else None
    return totals


def failed_requests(entry: Mapping[str, Any]) -> int:
    """A config's requests that failed after their retries, context-window skips aside (a results.json
    written before ``n_failed`` existed says it through its counts).

    >>> failed_requests({"n_errors": 3, "n_context_too_long": 1}), failed_requests({"n_failed": 2})
    (2, 2)
    """
    if "n_failed" in entry:
        return int(entry["n_failed"])
    return int(entry.get("n_errors", 0)) - int(entry.get("n_context_too_long", 0))


def is_complete(entry: Mapping[str, Any]) -> bool:
    """Whether a config of results.json rests on every request it asked: none failed after its retries and
    none is unanswered (context-window skips are counted, not missing: a rerun skips them again).

    >>> is_complete({"complete": False}), is_complete({"n_errors": 1, "n_context_too_long": 1, "n_missing": 0})
    (False, True)
    """
    if "complete" in entry:
        return bool(entry["complete"])
    return failed_requests(entry) == 0 and int(entry.get("n_missing", 0)) == 0


def incompleteness(entry: Mapping[str, Any]) -> str:
    """What an incomplete config lacks, in words ("" for a complete one).

    >>> incompleteness({"n_requests": 10, "n_scored": 8, "n_failed": 2, "n_missing": 0, "complete": False})
    '8 of 10 requests scored: 2 failed after their retries'
    >>> incompleteness({"n_requests": 10, "n_scored": 10, "n_failed": 0, "n_missing": 0, "complete": True})
    ''
    """
    if is_complete(entry):
        return ""
    parts = []
    if failed_requests(entry):
        parts.append(f"{failed_requests(entry)} failed after their retries")
    if entry.get("n_missing"):
        parts.append(f"{entry['n_missing']} never answered")
    return f"{entry.get('n_scored', 0)} of {entry.get('n_requests', '?')} requests scored: " + ", ".join(
        parts
    )


def incomplete_configs(document: Mapping[str, Any]) -> dict[str, str]:
    """Config name -> what it lacks (:func:`incompleteness`), for every incomplete config of a results
    document; empty for a complete run.

    >>> incomplete_configs({"configs": {"a": {"complete": True}, "b": {"n_requests": 2, "n_scored": 0,
    ...     "n_failed": 2, "n_missing": 0, "complete": False}}})
    {'b': '0 of 2 requests scored: 2 failed after their retries'}
    """
    return {
        name: incompleteness(entry)
        for name, entry in (document.get("configs") or {}).items()
        if not is_complete(entry)
    }


def write_json(path: Path, document: Mapping[str, Any]) -> None:
    """Atomically write a JSON document (readers never see half a results file)."""
    atomic_write_text(path, json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def write_jsonl(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """Atomically write JSON Lines."""
    atomic_write_text(
        path, "".join(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n" for row in rows)
    )


def environment_info() -> dict[str, str]:
    """Versions that can change a result without changing a setting."""
    return {
        "package_version": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def units(scale: str) -> dict[str, str]:
    """The ``units`` of a results document whose "%" scores are on ``scale`` (fraction or percent).

    >>> units("fraction")["accuracy"], units("fraction")["edit_distance"]
    ('fraction', 'characters (mean Levenshtein distance)')
    """
    named = {
        metric.key: scale if metric.unit == "%" else f"{metric.unit} (mean Levenshtein distance)"
        for metric in METRICS
    }
    return {**named, "error_rate": FRACTION}


def scores_in(document: Mapping[str, Any], scale: str) -> dict[str, Any]:
    """``document`` (a results.json) with its "%" scores on ``scale``: results.json holds fractions, a
    person reads percent (tables, figures, the terminal). A document without ``units`` is of schema 1,
    whose scores were percent. The document itself is not changed.

    >>> doc = {"units": units("fraction"), "configs": {"c": {"accuracy": {"value": 0.5, "ci": [0.25, 0.75]}}}}
    >>> shown = scores_in(doc, "percent")
    >>> shown["configs"]["c"]["accuracy"], shown["units"]["accuracy"], doc["configs"]["c"]["accuracy"]["value"]
    ({'value': 50.0, 'ci': [25.0, 75.0]}, 'percent', 0.5)
    >>> scores_in(shown, "fraction")["configs"]["c"]["accuracy"]["value"]
    0.5
    """
    current = (document.get("units") or {}).get("accuracy", PERCENT)
    if current == scale:
        return dict(document)
    factor = 100.0 if scale == PERCENT else 0.01
    keys = [metric.key for metric in METRICS if metric.unit == "%"]

    def convert(value: Any) -> Any:
        if isinstance(value, list):
            return [convert(v) for v in value]
        return (
            value * factor + 0.0 if isinstance(value, (int, float)) and not isinstance(value, bool) else value
        )

    def scaled(entry: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(entry)
        for key in keys:
            if isinstance(out.get(key), Mapping):
                out[key] = {part: convert(v) if part in SCORE_PARTS else v for part, v in out[key].items()}
        if isinstance(out.get("categories"), Mapping):
            out["categories"] = {name: scaled(item) for name, item in out["categories"].items()}
        return out

    return {
        **document,
        "units": units(scale),
        "configs": {name: scaled(entry) for name, entry in (document.get("configs") or {}).items()},
    }
