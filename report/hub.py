"""Publishing run results to the Hugging Face Hub as a leaderboard dataset: one row per (model, task,
dataset, scramble type[, exemplar rate]) with every metric, its interval, the error rate, the answer reader,
the build version and the run fingerprint; each run's files; and a card with the report's tables over every
run the dataset holds (built with huggingface_hub's card API).

A run's rows live in ``data/<run fingerprint>.jsonl``: pushing the same runs again finds their files there
and adds nothing (no commit at all).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.results import (
    FRACTION,
    failed_requests,
    incomplete_configs,
    is_complete,
    scores_in,
)
from scrambled_bench.hub import check_repo_id, hub_error
from scrambled_bench.report.render import render_markdown
from scrambled_bench.report.runs import Run, label_runs, load_run, run_fingerprint
from scrambled_bench.report.tables import build_tables

SCORES = ("edit_distance", "recovery_rate", "accuracy", "relative_performance_gain")
RUN_FILES = ("results.json", "config.json", "samples.jsonl")
DATA_DIR = "data"
RUNS_DIR = "runs"

RESULTS_CARD_TEMPLATE = """---
{{ card_data }}
---

# {{ name }}

Scrambled Bench (Cao et al., EMNLP 2023, arXiv:2311.18805) results made with `scrambled-bench run` and
published with `scrambled-bench report --push`. The `leaderboard` split holds one row per model, task,
dataset and scramble type (and AQuA exemplar rate) with every metric and its bootstrap interval, the error
rate, the answer reader, the dataset build's version and the run's fingerprint; `data/<fingerprint>.jsonl`
holds one run's rows and `runs/<fingerprint>/` its results, settings (no keys) and every sample's prompt and
raw output.

{{ tables }}
"""
"""The results card (a Jinja template; ``card_data`` is the YAML header, as in huggingface_hub's templates)."""


def refuse_incomplete(runs: Sequence[Run], flag: str, *, allow_incomplete: bool) -> None:
    """A one-line error before anything is published where a run is incomplete (requests failed after
    their retries, or never answered), unless ``allow_incomplete``: then its rows carry the flag.

    >>> run = Run(Path("runs/a"), {"configs": {"c": {"n_requests": 2, "n_scored": 1, "n_failed": 1,
    ...     "complete": False}}}, {})
    >>> refuse_incomplete([run], "--push", allow_incomplete=True)
    >>> refuse_incomplete([run], "--push", allow_incomplete=False)
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --push: runs/a is incomplete (c: 1 of 2 requests scored: 1 failed after their retries); rerun its `run` command to complete it, or add --allow-incomplete to publish it marked as incomplete
    """
    if allow_incomplete:
        return
    for run in runs:
        incomplete = incomplete_configs(run.results)
        if incomplete:
            listed = "; ".join(f"{name}: {what}" for name, what in list(incomplete.items())[:2])
            more = f"; and {len(incomplete) - 2} more config(s)" if len(incomplete) > 2 else ""
            raise ScrambledBenchError(
                f"{flag}: {run.path} is incomplete ({listed}{more}); rerun its `run` command to complete it, "
                "or add --allow-incomplete to publish it marked as incomplete"
            )


def leaderboard_rows(run: Run) -> list[dict[str, Any]]:
    """One row per config of a run, every column present in every row (``None`` where it does not apply),
    so that the Hub's viewer and ``load_dataset`` read one schema. Scores are fractions, as in results.json
    (ED: characters).

    >>> run = Run(Path("runs/a"), {"model": "m", "configs": {"scrqa/dream/rs50": {
    ...     "task": "scrqa", "dataset": "dream", "scramble_type": "rs50", "exemplar_rate": None,
    ...     "n_scored": 4, "n_errors": 0, "error_rate": 0.0, "unparsed": 1, "prompt_tokens": {"mean": 20.0},
    ...     "accuracy": {"value": 50.0, "ci": [25.0, 75.0]}}}}, {"dataset": {"version": "1.0.0"}})
    >>> [row] = leaderboard_rows(run)
    >>> row["accuracy"], row["accuracy_ci_low"], row["edit_distance"], row["build_version"], row["reader"]
    (0.5, 0.25, None, '1.0.0', 'careful/unknown')
    >>> row["complete"], row["n_failed"]
    (True, 0)
    """
    fingerprint = run_fingerprint(run)
    build, settings = run.build, run.settings
    rows = []
    for name, entry in scores_in(run.results, FRACTION)["configs"].items():
        row: dict[str, Any] = {
            "model": run.results.get("model"),
            "backend": run.results.get("backend"),
            "task": entry["task"],
            "dataset": entry["dataset"],
            "scramble_type": entry["scramble_type"],
            "exemplar_rate": entry.get("exemplar_rate"),
            "config": name,
        }
        for metric in SCORES:
            score = entry.get(metric) or {}
            ci = score.get("ci") or [None, None]
            row[metric] = score.get("value")
            row[f"{metric}_ci_low"], row[f"{metric}_ci_high"] = ci[0], ci[1]
            row[f"{metric}_undefined"] = score.get("undefined")
        row.update(
            {
                "n_scored": entry.get("n_scored"),
                "n_errors": entry.get("n_errors"),
                # published with --allow-incomplete: the row says it rests on fewer samples than it asked for
                "complete": is_complete(entry),
                "n_requests": entry.get("n_requests"),
                "n_failed": failed_requests(entry),
                "n_missing": entry.get("n_missing", 0),
                "error_rate": entry.get("error_rate"),
                "unparsed": entry.get("unparsed"),
                "prompt_tokens_mean": (entry.get("prompt_tokens") or {}).get("mean"),
                "reader": run.reader or "careful/unknown",
                "prompt_mode": settings.get("prompt_mode"),
                "limit": settings.get("limit"),
                "seed": settings.get("seed"),
                "build_version": build.get("version"),
                "build_seed": build.get("seed"),
                "build_manifest_sha256": build.get("manifest_sha256"),
                "package_version": run.results.get("package_version"),
                "created": run.results.get("created"),
                "run_fingerprint": fingerprint,
            }
        )
        rows.append(row)
    return rows


def results_card(runs: Sequence[Run], repo_id: str) -> str:
    """The results dataset's README: a ``configs`` block loading every ``data/*.jsonl`` as the
    ``leaderboard`` split, and the report's tables (with intervals) over ``runs``.

    >>> print(results_card([], "org/results").splitlines()[1])
    configs:
    """
    # deferred: huggingface_hub is heavy; only a publication needs it
    from huggingface_hub import DatasetCard, DatasetCardData

    data = DatasetCardData(
        configs=[
            {
                "config_name": "default",
                "data_files": [{"split": "leaderboard", "path": f"{DATA_DIR}/*.jsonl"}],
            }
        ],
        tags=["scrambled-bench", "evaluation", "leaderboard"],
    )
    tables = render_markdown(build_tables(runs, ci=True))
    return DatasetCard.from_template(
        data, template_str=RESULTS_CARD_TEMPLATE, name=repo_id.split("/", 1)[1], tables=tables
    ).content


def _published_runs(api: Any, repo_id: str, files: set[str], skip: set[str]) -> list[Run]:
    """The runs already in the dataset (but those in ``skip``), read back for the card."""
    runs = []
    for path in sorted(files):
        parts = path.split("/")
        if len(parts) == 3 and parts[0] == RUNS_DIR and parts[2] == "results.json" and parts[1] not in skip:
            results = api.hf_hub_download(repo_id=repo_id, filename=path, repo_type="dataset")
            config_name = f"{RUNS_DIR}/{parts[1]}/config.json"
            if config_name in files:
                api.hf_hub_download(repo_id=repo_id, filename=config_name, repo_type="dataset")
            runs.append(load_run(Path(results).parent))
    return runs


def push_to_hub(runs: Sequence[Run], repo_id: str, *, private: bool = False, api: Any = None) -> str | None:
    """Add the runs to the Hub dataset ``repo_id`` (created if missing): their leaderboard rows, their files,
    and a card over every run the dataset then holds. Returns the commit URL, or None when every run is
    already there (nothing is committed). The token comes from HF_TOKEN or the login cache, never from here.

    >>> push_to_hub([], "not a repo")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --push: expected a Hub repository id ORG/NAME, got 'not a repo'
    """
    # deferred: huggingface_hub is heavy; only a publication needs it
    from huggingface_hub import CommitOperationAdd, HfApi

    check_repo_id(repo_id, "--push")
    api = api or HfApi()
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        files = set(api.list_repo_files(repo_id, repo_type="dataset"))
        fingerprints = {run_fingerprint(run): run for run in runs}
        new = {fp: run for fp, run in fingerprints.items() if f"{DATA_DIR}/{fp}.jsonl" not in files}
        if not new:
            return None
        published = _published_runs(api, repo_id, files, skip=set(new))
        everyone = label_runs([*published, *new.values()])
        operations = [CommitOperationAdd("README.md", results_card(everyone, repo_id).encode("utf-8"))]
        for fp, run in new.items():
            rows = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in leaderboard_rows(run))
            operations.append(CommitOperationAdd(f"{DATA_DIR}/{fp}.jsonl", rows.encode("utf-8")))
            for name in RUN_FILES:
                path = run.path / name
                if path.is_file():
                    operations.append(CommitOperationAdd(f"{RUNS_DIR}/{fp}/{name}", str(path)))
        commit = api.create_commit(
            repo_id,
            operations,
            repo_type="dataset",
            commit_message=f"scrambled-bench results: {', '.join(run.label for run in new.values())}",
        )
    except Exception as exc:  # noqa: BLE001 - every Hub failure becomes one line
        raise hub_error("push to", repo_id, exc) from None
    return getattr(commit, "commit_url", None) or str(commit)
