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

import functools
import hashlib
import json
import math
import platform
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.backends.base import GenerationRequest
from scrambled_bench.evaluate_cli.tasks import AQUA_COT, SCRQA, TaskConfig, score_output
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
                    **score_output(request.meta, record.get("output", ""), chat=request.chat),
                }
                samples.scored.append(scored)
            elif key in errors:
                samples.errors.append({**request.meta, "key": key, "error_type": errors[key].get("error_type", "error")})
            else:
                samples.missing += 1
        collected[config] = samples
    return collected


def _interval(ci: Any) -> list[float] | None:
    """A metric's confidence interval as ``[low, high]`` (metrics return a pair or a dict)."""
    if ci is None:
        return None
    if isinstance(ci, Mapping):
        low, high = ci.get("low", ci.get("lower")), ci.get("high", ci.get("upper"))
    else:
        low, high = ci
    return [float(low), float(high)]


def bootstrap_accuracy(correct: Sequence[bool], *, confidence_level: float, n_resamples: int, seed: int) -> dict:
    """Accuracy in percent with a percentile-bootstrap interval (for configs without RPG anchors).

    Computed by the ``relative_performance_gain`` module's accuracy part, as ``scrambled-bench score``
    does, so a run, ``score`` and ``evaluate.load`` give the same accuracy and interval: a correct answer
    is the gold letter, a wrong one an empty answer, and the gold letters stand in as the "original"
    answers (no "substituted" ones), which keeps the module's RPG defined.

    >>> bootstrap_accuracy([True, True, False, True], confidence_level=0.95, n_resamples=200, seed=0)["value"]
    75.0
    """
    if not correct:
        return {"value": None, "ci": None}
    gold = ["A"] * len(correct)
    scores = _compute_with_interval(
        _metric("relative_performance_gain"),
        dict(
            predictions=["A" if answer_is_correct else "" for answer_is_correct in correct],
            references=gold,
            original_predictions=gold,
            substituted_predictions=[""] * len(correct),
        ),
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        seed=seed,
    )
    return {"value": _percent(scores["accuracy"]), "ci": _percent_interval(scores.get("accuracy_ci"))}


def _percent(value: Any) -> float | None:
    """Metrics report fractions; the paper's tables (and results.json) use percent."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value * 100.0 + 0.0  # + 0.0 turns -0.0 into 0.0


def _percent_interval(ci: Any) -> list[float] | None:
    interval = _interval(ci)
    return None if interval is None else [bound * 100.0 + 0.0 for bound in interval]


@functools.lru_cache(maxsize=None)
def _metric(name: str) -> Any:
    """The packaged ``evaluate`` module, loaded once per process (loading costs a second or two)."""
    from scrambled_bench.metrics import load

    return load(name)


def _compute_with_interval(metric: Any, inputs: Mapping[str, Any], *, confidence_level: float, n_resamples: int,
                           seed: int) -> dict[str, Any]:
    """``metric.compute`` with a bootstrap interval; without one when no resample is defined (tiny
    samples); ``{"undefined": reason}`` when the score itself is undefined."""
    try:
        return metric.compute(**inputs, confidence_level=confidence_level, n_resamples=n_resamples, seed=seed)
    except ValueError:
        pass
    try:
        return metric.compute(**inputs)
    except ValueError as exc:
        return {"undefined": str(exc).splitlines()[0]}


def recovery_scores(samples: Sequence[Mapping[str, Any]], *, confidence_level: float, n_resamples: int, seed: int) -> dict:
    """ED (mean character Levenshtein distance) and RR with intervals, via the ``recovery_rate`` metric."""
    if not samples:
        return {"edit_distance": {"value": None, "ci": None}, "recovery_rate": {"value": None, "ci": None}}
    scores = _compute_with_interval(
        _metric("recovery_rate"),
        dict(
            predictions=[s["prediction"] for s in samples],
            references=[s["original"] for s in samples],
            scrambled=[s["scrambled"] for s in samples],
        ),
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        seed=seed,
    )
    if "undefined" in scores:
        return {
            "edit_distance": {"value": None, "ci": None},
            "recovery_rate": {"value": None, "ci": None, "undefined": scores["undefined"]},
        }
    return {
        "edit_distance": {"value": float(scores["edit_distance"]), "ci": _interval(scores.get("edit_distance_ci"))},
        "scrambled_edit_distance": {"value": float(scores["scrambled_edit_distance"])},
        "recovery_rate": {
            "value": _percent(scores["recovery_rate"]),
            "ci": _percent_interval(scores.get("recovery_rate_ci")),
        },
    }


def rpg_scores(
    samples: Sequence[Mapping[str, Any]],
    original: Mapping[str, Mapping[str, Any]],
    substituted: Mapping[str, Mapping[str, Any]],
    *,
    confidence_level: float,
    n_resamples: int,
    seed: int,
) -> dict | None:
    """RPG (and the accuracies it rests on) over the ids answered in this config, original and sub alike."""
    common = [s for s in samples if s["id"] in original and s["id"] in substituted]
    if not common:
        return None
    scores = _compute_with_interval(
        _metric("relative_performance_gain"),
        dict(
            predictions=[s["prediction"] or "" for s in common],
            references=[s["answer"] for s in common],
            original_predictions=[original[s["id"]]["prediction"] or "" for s in common],
            substituted_predictions=[substituted[s["id"]]["prediction"] or "" for s in common],
        ),
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        seed=seed,
    )
    if "undefined" in scores:
        # RPG is undefined when the original and substituted accuracies are equal: say so, never NaN
        return {"value": None, "ci": None, "n": len(common), "undefined": scores["undefined"]}
    value = _percent(scores.get("relative_performance_gain"))
    original_accuracy = _percent(scores.get("original_accuracy"))
    substituted_accuracy = _percent(scores.get("substituted_accuracy"))
    result = {
        "value": value,
        "ci": _percent_interval(scores.get("relative_performance_gain_ci")),
        "n": len(common),
        "original_accuracy": original_accuracy,
        "substituted_accuracy": substituted_accuracy,
    }
    if value is None:
        result["undefined"] = "original and substituted accuracies are equal"
    elif original_accuracy is not None and substituted_accuracy is not None and original_accuracy < substituted_accuracy:
        # RPG is the share of the gain of the original text over the substituted one that survives scrambling;
        # with no gain (a model at chance) the ratio flips sign and reads as a recovery that did not happen:
        # Acc 12.5 at rs50 against 0 original and 25 sub came out as RPG 50%
        # the formula's number is kept beside the verdict, so nothing is hidden from a reader who wants it
        result["ratio_as_defined"] = value
        result.update(value=None, ci=None, undefined=(
            f"original accuracy {original_accuracy:.2f}% is below the substituted {substituted_accuracy:.2f}%: "
            "no gain to recover"
        ))
    return result


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
    """The ``configs`` section of results.json, keyed by config name, in the order given."""
    by_name = {config.name: samples for config, samples in collected.items()}
    scored_by_id = {
        name: {s["id"]: s for s in samples.scored} for name, samples in by_name.items()
    }
    boot = {"confidence_level": confidence_level, "n_resamples": n_resamples, "seed": seed}
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
        if config.is_multiple_choice:
            entry["accuracy"] = bootstrap_accuracy([bool(s["correct"]) for s in samples.scored], **boot)
            if config.task == SCRQA:
                anchors = _anchor_names(config)
                original, substituted = (scored_by_id.get(name) for name in anchors)
                if original is not None and substituted is not None:
                    entry["relative_performance_gain"] = rpg_scores(samples.scored, original, substituted, **boot)
                if config.dataset == "dream":
                    entry["categories"] = _category_scores(samples.scored, original, substituted, boot)
        else:
            entry.update(recovery_scores(samples.scored, **boot))
        results[config.name] = entry
    _add_token_inflation(results, collected)
    return results


def _anchor_names(config: TaskConfig) -> tuple[str, str]:
    return (
        TaskConfig(config.task, config.dataset, "original").name,
        TaskConfig(config.task, config.dataset, "sub").name,
    )


def _category_scores(
    samples: Sequence[Mapping[str, Any]],
    original: Mapping[str, Mapping[str, Any]] | None,
    substituted: Mapping[str, Mapping[str, Any]] | None,
    boot: Mapping[str, Any],
) -> dict[str, Any]:
    """DREAM per question category (a question can have several): accuracy, and RPG where the anchors ran."""
    members: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for sample in samples:
        for category in sample.get("categories") or ["(none)"]:
            members[category].append(sample)
    scores = {}
    for category in sorted(members):
        group = members[category]
        item: dict[str, Any] = {"n": len(group), "accuracy": bootstrap_accuracy([bool(s["correct"]) for s in group], **boot)}
        if original is not None and substituted is not None:
            item["relative_performance_gain"] = rpg_scores(group, original, substituted, **boot)
        scores[category] = item
    return scores


def _add_token_inflation(results: dict[str, Any], collected: Mapping[TaskConfig, ConfigSamples]) -> None:
    """Mean prompt tokens of each config over those of the unscrambled prompts of the same samples."""
    tokens = {
        config.name: {s["id"]: s["prompt_tokens"] for s in samples.scored if isinstance(s.get("prompt_tokens"), int)}
        for config, samples in collected.items()
    }
    for config in collected:
        if config.task == AQUA_COT:
            baseline = TaskConfig(config.task, config.dataset, "original", config.exemplar_rate).name
        elif config.task == SCRQA:
            baseline = TaskConfig(config.task, config.dataset, "original").name
        else:
            continue  # ScrRec has no unscrambled prompt to compare with
        mine, base = tokens.get(config.name, {}), tokens.get(baseline, {})
        common = [i for i in mine if i in base]
        if common and sum(base[i] for i in common):
            ratio = sum(mine[i] for i in common) / sum(base[i] for i in common)
            results[config.name]["prompt_tokens"]["vs_original"] = ratio


def results_document(configs: dict[str, Any], *, run_config: Mapping[str, Any], engine: Mapping[str, Any]) -> dict:
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


def manifest_info(data_dir: Path | None) -> dict[str, Any]:
    """The dataset build's version, seed and manifest hash (sha256 of manifest.json), where it has one."""
    from scrambled_bench.builder.manifest import Manifest

    if data_dir is None or not Manifest.exists(data_dir):
        return {}
    return Manifest.read(data_dir).provenance()


def environment_info() -> dict[str, str]:
    """Versions that can change a result without changing a setting."""
    from scrambled_bench import __version__

    return {"package_version": __version__, "python": platform.python_version(), "platform": platform.platform()}


SECRET_SETTINGS = frozenset({"api_key", "token", "hf_token"})


def scrub_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Settings safe to write: keys are dropped, only whether one was given is kept.

    >>> scrub_settings({"model": "m", "api_key": "sk-secret"})
    {'model': 'm', 'api_key_given': True}
    """
    clean: dict[str, Any] = {}
    for name, value in settings.items():
        if name in SECRET_SETTINGS:
            clean[f"{name}_given"] = bool(value)
        elif isinstance(value, str):
            clean[name] = redact_url(value)
        else:
            clean[name] = value
    return clean


def redact_url(value: str) -> str:
    """A URL without the credentials it may carry (``user:key@`` or a query string); other text unchanged.

    >>> redact_url("https://user:sk-123@host:8000/v1?api-key=abc")
    'https://***@host:8000/v1?***'
    >>> redact_url("http://127.0.0.1:8080/v1"), redact_url("gpt-4o")
    ('http://127.0.0.1:8080/v1', 'gpt-4o')
    """
    from urllib.parse import urlsplit, urlunsplit

    if not value.startswith(("http://", "https://")):
        return value
    try:
        parts = urlsplit(value)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return value
    netloc = ("***@" if parts.username or parts.password else "") + host + (f":{port}" if port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "***" if parts.query else "", ""))
