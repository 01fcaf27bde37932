"""Run folders as ``scrambled-bench run`` writes them (config.json, samples.jsonl with every request's meta,
results.json computed by the harness itself), from synthetic outputs: the report's tests read real files
without running a model."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from scrambled_bench.evaluation.backends.base import Generation
from scrambled_bench.evaluation.engine import sample_record
from scrambled_bench.evaluation.results import collect_samples, compute_results, results_document, write_json
from scrambled_bench.evaluation.tasks import TaskConfig, build_requests, on_result

CATEGORIES = ("arithmetic", "commonsense", "logic", "matching", "summary")
CHOICES = ["Ann", "Bob", "Cy", "Di"]
BUILD = {"location": "scrambled_bench", "version": "1.0.0", "seed": 0, "manifest_sha256": "f" * 64}
RECOVERY = [  # (original, scrambled): scrambled edit distances 4, 4, 6, 2
    ("Rain fell all day.", "Rian flel all day."),
    ("The cat sat on the mat.", "The cta sat on teh mat."),
    ("Bob ate green apples.", "Bbo aet green apples."),
    ("We walked home.", "We wlaked home."),
]


def qa_rows(config: TaskConfig, n: int) -> list[dict[str, Any]]:
    """``n`` questions whose gold answer is A; DREAM rows carry a question category each."""
    rows = []
    for i in range(n):
        row = {
            "id": f"{config.dataset[0]}{i}",
            "original": f"W: Hello number {i}.",
            "scrambled": f"W: Hello number {i} ({config.scramble_type}).",
            "question": f"Which name, {i}?",
            "choices": CHOICES[:3] if config.dataset == "dream" else CHOICES,
            "answer": "A",
            "used_for_qa": True,
        }
        if config.dataset == "dream":
            row["categories"] = [CATEGORIES[i % len(CATEGORIES)]]
        if config.dataset == "aqua":
            row["choices"] = ["1", "2", "3", "4", "5"]
        rows.append(row)
    return rows


def recovery_rows(config: TaskConfig, n: int) -> list[dict[str, Any]]:
    # the type in both texts: one prompt per config (configs with identical prompts share one record)
    return [
        {
            "id": f"r{i}",
            "original": f"{RECOVERY[i % 4][0]} [{config.scramble_type} {i}]",
            "scrambled": f"{RECOVERY[i % 4][1]} [{config.scramble_type} {i}]",
        }
        for i in range(n)
    ]


def rows_for(config: TaskConfig, n: int) -> list[dict[str, Any]]:
    return recovery_rows(config, n) if config.task.startswith("scrrec") else qa_rows(config, n)


def answer(config: TaskConfig, row: Mapping[str, Any], right: bool) -> str:
    """An output that is right or wrong for one row."""
    if config.task.startswith("scrrec"):
        return row["original"] if right else row["scrambled"]
    if config.task == "aqua-cot":
        return "So the answer is (A)." if right else "So the answer is (B)."
    return "A" if right else "B"


def write_run(
    folder: Path,
    model: str,
    outputs: Mapping[TaskConfig, Sequence[str]],
    *,
    rows: Callable[[TaskConfig], list[dict[str, Any]]] | None = None,
    settings: Mapping[str, Any] | None = None,
    build: Mapping[str, Any] | None = BUILD,
    fingerprint: Mapping[str, Any] | None = None,
    schema: int | None = None,
    n_resamples: int = 50,
) -> Path:
    """A run folder whose samples.jsonl holds ``outputs`` (one per row, in row order) for each config."""
    rows = rows or (lambda config: rows_for(config, len(outputs[config])))
    requests = {config: build_requests(config, rows(config))[: len(outputs[config])] for config in outputs}
    completed: dict[str, dict[str, Any]] = {}
    for config, config_requests in requests.items():
        for index, (request, text) in enumerate(zip(config_requests, outputs[config], strict=True)):
            generation = Generation(text, 20 + index % 5, 3, "stop")
            key = request.key(model)
            completed.setdefault(
                key, {**sample_record(key, model, request, generation), **on_result(request, generation)}
            )
    reader = (settings or {}).get("parser", "careful")  # as a run records it: in config.json and results.json
    collected = collect_samples(requests, completed, {}, model, reader=reader)
    configs = compute_results(collected, n_resamples=n_resamples)
    run_config = {"model": model, "backend": "openai", "dataset": dict(build) if build else None}
    document = results_document(configs, run_config=run_config, engine={}, reader=reader)
    if schema is not None:
        document["schema"] = schema
    folder.mkdir(parents=True)
    write_json(folder / "results.json", document)
    config_json = {
        "model": model,
        "backend": "openai",
        "package_version": "1.0.0",
        "settings": {
            "prompt_mode": "chat",
            "seed": 0,
            "limit": None,
            "api_key_given": True,
            **(settings or {}),
        },
        "dataset": dict(build) if build else None,
        "fingerprint": dict(fingerprint or {"backend": "openai", "model": model, "served_models": [model]}),
        "configs": [config.name for config in outputs],
    }
    write_json(folder / "config.json", config_json)
    (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in completed.values()))
    return folder


PAPER_GRID: tuple[TaskConfig, ...] = (
    *(TaskConfig("scrrec-few-shot", "realtimeqa", t) for t in ("rs20", "rs100", "kf")),
    *(TaskConfig("scrrec-zero-shot", "realtimeqa", t) for t in ("rs50", "rs100", "kr2")),
    *(TaskConfig("scrqa", "realtimeqa", t) for t in ("original", "rs50", "rs100", "sub")),
    *(TaskConfig("scrqa", "dream", t) for t in ("original", "rs20", "rs100", "kfl", "kr2", "sub")),
    *(TaskConfig("aqua-cot", "aqua", t, rate) for t in ("original", "rs100") for rate in (0, 100)),
)
"""A config or more of every table and figure of the report (and a letter-position type)."""


def skilled_run(
    folder: Path,
    model: str,
    skill: float,
    *,
    n: int = 10,
    seed: int = 0,
    configs: Sequence[TaskConfig] = PAPER_GRID,
    **kwargs: Any,
) -> Path:
    """A run over ``configs`` whose answers are right with probability ``skill`` (always right on the
    unscrambled text, wrong on the substituted one, so that RPG is defined)."""
    rng = random.Random(seed)
    outputs = {}
    for config in configs:
        rows = rows_for(config, n)
        right = {"original": True, "sub": False}.get(config.scramble_type)
        outputs[config] = [
            answer(config, row, rng.random() < skill if right is None else right) for row in rows
        ]
    return write_run(folder, model, outputs, **kwargs)
