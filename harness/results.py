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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from scrambled_bench.harness.aggregate import Bootstrap
from scrambled_bench.harness.backends.base import GenerationRequest
from scrambled_bench.harness.tasks import TaskConfig

from scrambled_bench.io import atomic_write_text

RESULTS_FILE = "results.json"
CONFIG_FILE = "config.json"
RESULTS_SCHEMA = 1


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
) -> dict[TaskConfig, ConfigSamples]:
    """Join each config's requests with the run folder's records by resume key and score them.

    A record is re-scored from its raw ``output`` with the *request's* meta (two configs can send the
    identical prompt, and then share one record).
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
                    **config.definition.score(request.meta, record.get("output", ""), chat=request.chat),
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
    scored = {config: samples.scored for config, samples in collected.items()}
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
            "error_rate": (len(samples.errors) / attempted) if attempted else None,
            "unparsed": sum(1 for s in samples.scored if s.get("unparsed")),
            "prompt_tokens": _token_summary(samples.scored, "prompt_tokens"),
            "completion_tokens": _token_summary(samples.scored, "completion_tokens"),
        }
        entry.update(config.definition.aggregate(config, samples.scored, scored, boot))
        results[config.name] = entry
    _add_token_inflation(results, collected)
    return results


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
    configs: dict[str, Any], *, run_config: Mapping[str, Any], engine: Mapping[str, Any]
) -> dict:
    """The whole results.json: who/what/when, then the per-config scores."""
    return {
        "schema": RESULTS_SCHEMA,
        "model": run_config.get("model"),
        "backend": run_config.get("backend"),
        "suite": run_config.get("suite"),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "package_version": run_config.get("package_version"),
        "dataset": run_config.get("dataset"),
        "engine": dict(engine),
        # the metric modules return fractions; results.json follows the paper's tables instead
        "units": {
            "recovery_rate": "percent",
            "accuracy": "percent",
            "relative_performance_gain": "percent",
            "edit_distance": "characters (mean Levenshtein distance)",
            "error_rate": "fraction",
        },
        "totals": _totals(configs),
        "configs": configs,
    }


def _totals(configs: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    keys = ("n_requests", "n_scored", "n_errors", "n_context_too_long", "n_missing", "unparsed")
    totals: dict[str, Any] = {key: sum(entry[key] for entry in configs.values()) for key in keys}
    totals["prompt_tokens"] = sum(entry["prompt_tokens"]["total"] for entry in configs.values())
    totals["completion_tokens"] = sum(entry["completion_tokens"]["total"] for entry in configs.values())
    attempted = totals["n_scored"] + totals["n_errors"]
    totals["error_rate"] = (totals["n_errors"] / attempted) if attempted else None
    return totals


def write_json(path: Path, document: Mapping[str, Any]) -> None:
    """Atomically write a JSON document (readers never see half a results file)."""
    atomic_write_text(path, json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def environment_info() -> dict[str, str]:
    """Versions that can change a result without changing a setting."""
    from scrambled_bench import __version__

    return {
        "package_version": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
