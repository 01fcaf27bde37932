"""Publishing run results to the Hugging Face Hub as a dataset: one row per (run, config), each run's files,
and a card with the report's tables (built with huggingface_hub's card API)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from scrambled_bench.harness.report.render import render_markdown
from scrambled_bench.harness.report.tables import Run, build_tables
from scrambled_bench.hub import check_repo_id, hub_error

SCORES = ("edit_distance", "recovery_rate", "accuracy", "relative_performance_gain")

RESULTS_CARD_TEMPLATE = """---
{{ card_data }}
---

# {{ name }}

Scrambled Bench (Cao et al., EMNLP 2023, arXiv:2311.18805) results made with `scrambled-bench run`.
`data/results.jsonl` holds one row per model and task config; `runs/` holds each run's results,
settings (no keys) and every sample's prompt and raw output.

{{ tables }}
"""
"""The results card (a Jinja template; ``card_data`` is the YAML header, as in huggingface_hub's templates)."""


def flat_rows(run: Run) -> list[dict[str, Any]]:
    """One row per (run, config): what a Hub dataset viewer shows and ``load_dataset`` loads."""
    rows = []
    for name, entry in run.results["configs"].items():
        row = {
            "model": run.results.get("model"),
            "backend": run.results.get("backend"),
            "run": run.path.name,
            "config": name,
            "task": entry["task"],
            "dataset": entry["dataset"],
            "scramble_type": entry["scramble_type"],
            "exemplar_rate": entry.get("exemplar_rate"),
            "n_scored": entry["n_scored"],
            "n_errors": entry["n_errors"],
            "error_rate": entry["error_rate"],
            "unparsed": entry["unparsed"],
            "prompt_tokens_mean": entry["prompt_tokens"]["mean"],
        }
        for metric in SCORES:
            score = entry.get(metric) or {}
            row[metric] = score.get("value")
            ci = score.get("ci") or [None, None]
            row[f"{metric}_ci_low"], row[f"{metric}_ci_high"] = ci[0], ci[1]
        rows.append(row)
    return rows


def results_card(runs: Sequence[Run], repo_id: str) -> str:
    """The results dataset's README: a ``configs`` block loading ``data/results.jsonl`` and the tables."""
    from huggingface_hub import DatasetCard, DatasetCardData

    data = DatasetCardData(
        configs=[
            {"config_name": "default", "data_files": [{"split": "results", "path": "data/results.jsonl"}]}
        ],
        tags=["scrambled-bench", "evaluation"],
    )
    template = RESULTS_CARD_TEMPLATE
    tables = render_markdown(build_tables(runs, ci=True))
    return DatasetCard.from_template(
        data, template_str=template, name=repo_id.split("/", 1)[1], tables=tables
    ).content


def push_to_hub(runs: Sequence[Run], repo_id: str, *, private: bool = False, api: Any = None) -> str:
    """Upload the runs' results as a Hub dataset ``repo_id``: a flat ``data/results.jsonl``, each run's
    results.json / config.json / samples.jsonl under ``runs/<folder>/``, and a card with the tables.
    Returns the commit URL. The token comes from HF_TOKEN or the login cache, never from here."""
    from huggingface_hub import CommitOperationAdd, HfApi

    check_repo_id(repo_id, "--push")
    api = api or HfApi()
    rows = [row for run in runs for row in flat_rows(run)]
    operations = [
        CommitOperationAdd("README.md", results_card(runs, repo_id).encode("utf-8")),
        CommitOperationAdd("data/results.jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")),
    ]
    for run in runs:
        for name in ("results.json", "config.json", "samples.jsonl"):
            path = run.path / name
            if path.is_file():
                operations.append(CommitOperationAdd(f"runs/{run.path.name}/{name}", str(path)))
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        commit = api.create_commit(
            repo_id,
            operations,
            repo_type="dataset",
            commit_message=f"scrambled-bench results: {', '.join(run.label for run in runs)}",
        )
    except Exception as exc:  # noqa: BLE001 - every Hub failure becomes one line
        raise hub_error("push to", repo_id, exc) from None
    return getattr(commit, "commit_url", None) or str(commit)
