"""The report on the Hub, tested at the HfApi boundary (no network): the leaderboard dataset of `report --push`
(re-pushing the same runs adds nothing), a model's `.eval_results/*.yaml` (`--model-card-results`) and the
build's `eval.yaml`, each validated against the fields the Hub documents."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.hub_benchmark import benchmark_eval_yaml, validate_eval_yaml
from scrambled_bench.evaluation.results import FRACTION, scores_in
from scrambled_bench.evaluation.tasks import TaskConfig
from scrambled_bench.report import label_runs, load_run, push_to_hub, run_fingerprint
from scrambled_bench.report.hub import leaderboard_rows
from scrambled_bench.report.hub_eval import (
    model_eval_results,
    push_model_card_results,
    validate_eval_results,
)

# The Hub's own examples (hub-docs, docs/hub/eval-results.md), which the validators must accept as they are
DOCS_EVAL_YAML = """
name: Humanity's Last Exam
description: >
  Humanity's Last Exam (HLE) is a multi-modal benchmark at the frontier of human knowledge.
evaluation_framework: inspect-ai
tasks:
  - id: hle
    config: default
    split: test
"""
DOCS_EVAL_RESULTS = """
- dataset:
    id: cais/hle
    task_id: default
    revision: abc123
  value: 20.90
  verifyToken: token
  date: "2025-01-15"
  source:
    url: https://huggingface.co/spaces/SaylorTwift/smollm3-mmlu-pro
    name: Eval traces
    user: SaylorTwift
  evaluation_framework: hle
  notes: "no-tools"
- dataset:
    id: Idavidrein/gpqa
    task_id: gpqa_diamond
  value: 0.412
"""


class FakeHfApi:
    """The HfApi methods the report calls, over an in-memory repository store: what a test pushes is what a
    later call lists and downloads; each commit is recorded."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: dict[tuple[str, str], dict[str, bytes]] = {}
        self.commits: list[dict[str, Any]] = []
        self.created: list[tuple[str, str, bool]] = []

    def create_repo(self, repo_id, *, repo_type=None, private=False, exist_ok=False):
        self.created.append((repo_id, repo_type, private))
        self.files.setdefault((repo_type or "model", repo_id), {})
        return f"https://huggingface.co/{repo_id}"

    def list_repo_files(self, repo_id, *, repo_type=None):
        return sorted(self.files.get((repo_type or "model", repo_id), {}))

    def hf_hub_download(self, repo_id, filename, *, repo_type=None):
        content = self.files[(repo_type or "model", repo_id)][filename]
        path = self.root / (repo_type or "model") / repo_id / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        return str(path)

    def create_commit(self, repo_id, operations, *, repo_type=None, commit_message=""):
        store = self.files.setdefault((repo_type or "model", repo_id), {})
        for op in operations:
            source = op.path_or_fileobj
            store[op.path_in_repo] = source if isinstance(source, bytes) else Path(source).read_bytes()
        self.commits.append(
            {
                "repo_id": repo_id,
                "paths": [op.path_in_repo for op in operations],
                "repo_type": repo_type,
                "message": commit_message,
            }
        )

        class Info:
            commit_url = f"https://huggingface.co/{repo_id}/commit/{len(self.commits):06d}"

        return Info()


@pytest.fixture
def two_runs(run_paths: list[Path]) -> list:
    return label_runs([load_run(p) for p in run_paths])


def test_push_is_a_leaderboard_and_repushing_adds_nothing(two_runs: list, tmp_path: Path) -> None:
    api = FakeHfApi(tmp_path / "hub")
    url = push_to_hub(two_runs[:1], "my-org/scrambled-results", private=True, api=api)
    assert url.endswith("/commit/000001") and api.created[0] == ("my-org/scrambled-results", "dataset", True)
    store = api.files[("dataset", "my-org/scrambled-results")]
    big = run_fingerprint(two_runs[0])
    assert {"README.md", f"data/{big}.jsonl", f"runs/{big}/results.json", f"runs/{big}/samples.jsonl"} <= set(
        store
    )
    rows = [json.loads(line) for line in store[f"data/{big}.jsonl"].decode().splitlines()]
    assert len(rows) == len(two_runs[0].results["configs"])
    keys = {(r["model"], r["task"], r["dataset"], r["scramble_type"], r["exemplar_rate"]) for r in rows}
    assert len(keys) == len(rows)  # one row per (model, task, dataset, type[, exemplar rate])
    row = next(r for r in rows if r["config"] == "scrqa/dream/rs100")
    entry = scores_in(two_runs[0].results, FRACTION)["configs"]["scrqa/dream/rs100"]  # the rows are fractions
    assert 0 <= row["accuracy"] <= 1 and row["accuracy"] == entry["accuracy"]["value"]
    assert [row["accuracy_ci_low"], row["accuracy_ci_high"]] == entry["accuracy"]["ci"]
    assert row["error_rate"] == 0.0 and row["reader"] == "careful"
    assert row["build_version"] == "1.0.0" and row["run_fingerprint"] == big
    assert all(set(r) == set(rows[0]) for r in rows)  # one schema for the viewer

    # the same run again: nothing committed
    assert push_to_hub(two_runs[:1], "my-org/scrambled-results", api=api) is None and len(api.commits) == 1
    # both runs: only the new one is added, and the card covers both
    push_to_hub(two_runs, "my-org/scrambled-results", api=api)
    small = run_fingerprint(two_runs[1])
    assert (
        f"data/{big}.jsonl" not in api.commits[1]["paths"]
        and f"data/{small}.jsonl" in api.commits[1]["paths"]
    )
    card = store["README.md"].decode()
    assert card.startswith("---\nconfigs:") and "path: data/*.jsonl" in card and "split: leaderboard" in card
    assert "| big-model |" in card and "| small-model |" in card and "sk-" not in card
    assert push_to_hub(list(reversed(two_runs)), "my-org/scrambled-results", api=api) is None


def test_leaderboard_rows_keep_undefined_reasons(two_runs: list) -> None:
    run = two_runs[0]
    run.results["configs"]["scrqa/dream/rs100"]["relative_performance_gain"] = {
        "value": None,
        "ci": None,
        "undefined": "equal anchors",
    }
    row = next(r for r in leaderboard_rows(run) if r["config"] == "scrqa/dream/rs100")
    assert (
        row["relative_performance_gain"] is None
        and row["relative_performance_gain_undefined"] == "equal anchors"
    )


def test_eval_yaml_of_a_build_is_a_valid_benchmark() -> None:
    configs = [
        f"{dataset}_{t}"
        for dataset in ("realtimeqa", "dream", "aqua")
        for t in ("original", "rs20", "rs50", "rs100", "kf", "kfl", "sub")
    ]
    document = yaml.safe_load(benchmark_eval_yaml(configs))
    validate_eval_yaml(document)
    ids = [task["id"] for task in document["tasks"]]
    assert document["evaluation_framework"] == "scrambled-bench" and document["name"] == "Scrambled Bench"
    assert "scrqa-dream-rs100" in ids and "scrqa-dream-original" not in ids and "scrqa-dream-sub" not in ids
    assert "scrrec-few-shot-realtimeqa-kfl" in ids and "aqua-cot-aqua-rs50-exemplars-20" in ids
    task = next(t for t in document["tasks"] if t["id"] == "scrqa-dream-rs100")
    assert task == {"id": "scrqa-dream-rs100", "config": "dream_rs100", "split": "test"}
    assert all(t["config"] in configs for t in document["tasks"])


def test_validators_accept_the_docs_examples_and_name_what_is_wrong() -> None:
    validate_eval_yaml(yaml.safe_load(DOCS_EVAL_YAML))
    validate_eval_results(yaml.safe_load(DOCS_EVAL_RESULTS))
    bad = [
        ({"name": "x", "tasks": []}, "eval.yaml: no tasks"),
        (
            {"name": "x", "tasks": [{"id": "a", "config": "c", "split": "test", "metric": "acc"}]},
            "does not document: metric",
        ),
        ({"tasks": [{"id": "a", "config": "c", "split": "test"}]}, "missing required field 'name'"),
    ]
    for document, message in bad:
        with pytest.raises(ScrambledBenchError, match=message):
            validate_eval_yaml(document)
    results = yaml.safe_load(DOCS_EVAL_RESULTS)
    for change, message in [
        (lambda e: e[0].pop("value"), "missing required field 'value'"),
        (lambda e: e[0].update(value="high"), "value: wrong type str"),
        (lambda e: e[0]["source"].pop("url"), "source: missing required field 'url'"),
        (lambda e: e[0].update(date="yesterday"), "not an ISO-8601 date"),
        (lambda e: e[0]["dataset"].update(id="hle"), "not a Hub dataset id"),
    ]:
        broken = yaml.safe_load(DOCS_EVAL_RESULTS)
        change(broken)
        with pytest.raises(ScrambledBenchError, match=message):
            validate_eval_results(broken)
    with pytest.raises(ScrambledBenchError, match="the benchmark has no task 'gpqa_diamond'"):
        validate_eval_results(results, task_ids=["default"])


def test_model_card_results_name_the_benchmark_tasks(two_runs: list, tmp_path: Path) -> None:
    run = two_runs[0]
    entries = model_eval_results(
        run, "my-org/scrambled_bench", source_url="https://huggingface.co/datasets/o/r"
    )
    benchmark = yaml.safe_load(
        benchmark_eval_yaml(
            [
                f"{d}_{t}"
                for d in ("realtimeqa", "dream", "aqua")
                for t in ("original", "rs20", "rs50", "rs100", "kf", "kfl", "kr2", "sub")
            ]
        )
    )
    validate_eval_results(entries, task_ids=[t["id"] for t in benchmark["tasks"]])
    by_task = {e["dataset"]["task_id"]: e for e in entries}
    # ScrQA's headline is RPG, ScrRec's RR, AQuA's Acc; anchors (original, sub) are no tasks
    configs = run.results["configs"]
    assert by_task["scrqa-dream-rs100"]["value"] == round(
        configs["scrqa/dream/rs100"]["relative_performance_gain"]["value"], 4
    )
    assert by_task["scrrec-zero-shot-realtimeqa-rs50"]["value"] == round(
        configs["scrrec-zero-shot/realtimeqa/rs50"]["recovery_rate"]["value"], 4
    )
    assert by_task["aqua-cot-aqua-rs100-exemplars-0"]["value"] == round(
        configs["aqua-cot/aqua/rs100/exemplars-0"]["accuracy"]["value"], 4
    )
    assert "scrqa-dream-original" not in by_task and "scrqa-dream-sub" not in by_task
    assert by_task["scrqa-dream-rs100"]["evaluation_framework"] == "scrambled-bench"
    assert "careful answer reader" in by_task["scrqa-dream-rs100"]["notes"]

    api = FakeHfApi(tmp_path / "hub")
    files, url = push_model_card_results(
        [run], "my-org/big-model", benchmark="my-org/scrambled_bench", api=api
    )
    assert files == [f".eval_results/scrambled-bench-{run_fingerprint(run)}.yaml"] and url
    written = yaml.safe_load(api.files[("model", "my-org/big-model")][files[0]])
    assert written == model_eval_results(run, "my-org/scrambled_bench")
    assert api.commits[0]["repo_type"] == "model"
    # unchanged: nothing committed
    assert (
        push_model_card_results([run], "my-org/big-model", benchmark="my-org/scrambled_bench", api=api)[1]
        is None
    )
    assert len(api.commits) == 1


def test_model_card_results_one_line_errors(two_runs: list, tmp_path: Path) -> None:
    api = FakeHfApi(tmp_path / "hub")
    with pytest.raises(ScrambledBenchError, match="runs are of several models"):
        push_model_card_results(two_runs, "my-org/m", benchmark="my-org/b", api=api)
    with pytest.raises(ScrambledBenchError, match="the runs read a local build; name the benchmark"):
        push_model_card_results(two_runs[:1], "my-org/m", api=api)
    # a run that read the Hub build names the benchmark and its revision itself
    run = two_runs[0]
    run.config["dataset"] = {"location": "my-org/scrambled_bench", "commit": "a" * 40, "version": "1.0.0"}
    push_model_card_results([run], "my-org/m", api=api)
    [name] = [p for p in api.files[("model", "my-org/m")] if p.startswith(".eval_results/")]
    entry = yaml.safe_load(api.files[("model", "my-org/m")][name])[0]
    assert entry["dataset"]["id"] == "my-org/scrambled_bench" and entry["dataset"]["revision"] == "a" * 40


@pytest.mark.parametrize("option", ["--push", "--model-card-results", "--benchmark"])
def test_cli_rejects_a_bad_repo_id_in_one_line(two_runs: list, option: str) -> None:
    from scrambled_bench.evaluate_cli.main import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["report", str(two_runs[0].path), option, "not a repo"])
    assert (
        code == 2
        and err.getvalue() == f"error: {option}: expected a Hub repository id ORG/NAME, got 'not a repo'\n"
    )


def test_cli_push_and_model_card_results_through_the_api(two_runs: list, tmp_path: Path, monkeypatch) -> None:
    import huggingface_hub

    from scrambled_bench.evaluate_cli.main import main

    api = FakeHfApi(tmp_path / "hub")
    monkeypatch.setattr(huggingface_hub, "HfApi", lambda: api)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(
            [
                "report",
                str(two_runs[0].path),
                "--push",
                "o/results",
                "--model-card-results",
                "o/big",
                "--benchmark",
                "o/scrambled_bench",
            ]
        )
    assert code == 0, err.getvalue()
    assert "pushed to https://huggingface.co/datasets/o/results" in err.getvalue()
    model_files = api.files[("model", "o/big")]
    [entry, *_] = yaml.safe_load(next(iter(model_files.values())))
    assert entry["source"]["url"] == "https://huggingface.co/datasets/o/results"
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        main(["report", str(two_runs[0].path), "--push", "o/results"])
    assert "o/results already holds these runs: nothing pushed" in err.getvalue()
    assert TaskConfig("scrqa", "dream", "rs100").name in two_runs[0].results["configs"]


def test_an_incomplete_run_is_published_only_when_allowed_and_then_marked(
    two_runs: list, tmp_path: Path, monkeypatch
) -> None:
    """A config with failed requests makes the run incomplete: --push and --model-card-results refuse it
    before calling the Hub; --allow-incomplete publishes it with complete false and the counts in its rows,
    and INCOMPLETE in its evaluation results' notes."""
    import huggingface_hub

    from scrambled_bench.evaluate_cli.main import main
    from scrambled_bench.evaluation.results import write_json

    folder = two_runs[0].path
    results = json.loads((folder / "results.json").read_text())
    entry = results["configs"]["scrqa/dream/rs100"]
    entry.update(n_requests=entry["n_requests"] + 2, n_errors=2, n_failed=2, complete=False)
    write_json(folder / "results.json", results)
    api = FakeHfApi(tmp_path / "hub")
    monkeypatch.setattr(huggingface_hub, "HfApi", lambda: api)
    publish = ["--push", "o/results", "--model-card-results", "o/big", "--benchmark", "o/scrambled_bench"]
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        refused = main(["report", str(folder), *publish])
    assert refused == 2 and "is incomplete (scrqa/dream/rs100: " in err.getvalue()
    assert not api.commits and not api.created  # nothing reached the Hub
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main(["report", str(folder), *publish, "--allow-incomplete"]) == 0, err.getvalue()
    [rows_file] = [v for k, v in api.files[("dataset", "o/results")].items() if k.startswith("data/")]
    rows = {row["config"]: row for row in map(json.loads, rows_file.decode().splitlines())}
    assert (rows["scrqa/dream/rs100"]["complete"], rows["scrqa/dream/rs100"]["n_failed"]) == (False, 2)
    assert all(row["complete"] for name, row in rows.items() if name != "scrqa/dream/rs100")
    [entries] = [yaml.safe_load(v) for v in api.files[("model", "o/big")].values()]
    notes = {e["dataset"]["task_id"]: e["notes"] for e in entries}
    assert "INCOMPLETE: " in notes.pop("scrqa-dream-rs100") and notes
    assert not any("INCOMPLETE" in note for note in notes.values())  # the complete configs are not marked
