"""Whose answers a run takes: an answer is reused, from the run folder or a folder beside it, only for the
endpoint that gave it, unless the run says its endpoints are replicas; records of before endpoints were
recorded are taken as the endpoint their folder's config.json named, as far as it named one."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from scrambled_bench.evaluation.backends import BACKENDS
from scrambled_bench.evaluation.store import (
    Reuse,
    answers_by_endpoint,
    foreign_answers,
    legacy_endpoint,
    shared_records,
)

A = {"backend": "openai", "base_url": "http://127.0.0.1:8080/v1", "model": "smollm2"}
B = {**A, "base_url": "http://127.0.0.1:8081/v1"}


def folder(root: Path, name: str, records: list[dict], config: dict | None = None) -> Path:
    path = root / name
    path.mkdir(parents=True)
    (path / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    if config is not None:
        (path / "config.json").write_text(json.dumps(config))
    return path


def legacy_config(endpoint: dict) -> dict:
    """config.json as runs wrote it before records named their endpoint: the health check's fingerprint."""
    return {"fingerprint": {**endpoint, "served_models": [endpoint["model"]]}}


def test_siblings_give_only_the_same_endpoints_answers(tmp_path: Path) -> None:
    folder(tmp_path, "a", [{"key": "k1", "output": "from A", "endpoint": A}])
    folder(
        tmp_path,
        "b",
        [{"key": "k1", "output": "from B", "endpoint": B}, {"key": "k2", "output": "B", "endpoint": B}],
    )
    mine = tmp_path / "mine"
    taken = shared_records(mine, {"k1", "k2"}, Reuse(B))
    assert sorted((r["key"], r["output"], r["adopted_from"]) for r in taken) == [
        ("k1", "from B", "b"),
        ("k2", "B", "b"),
    ]
    assert shared_records(mine, {"k1", "k2"}, Reuse({**B, "base_url": "http://elsewhere/v1"})) == []
    # replicas: the first folder's answer, whoever gave it, and it keeps its endpoint
    taken = {r["key"]: r for r in shared_records(mine, {"k1", "k2"}, Reuse(B, replicas=True))}
    assert taken["k1"]["endpoint"] == A and taken["k2"]["endpoint"] == B


def test_records_of_before_endpoints_were_recorded_are_their_folders_endpoint(tmp_path: Path) -> None:
    old = folder(tmp_path, "old", [{"key": "k1", "output": "old A"}], legacy_config(A))
    unknown = folder(tmp_path, "unknown", [{"key": "k2", "output": "who?"}])  # no config.json at all
    assert legacy_endpoint(old) == A and legacy_endpoint(unknown) is None
    # a health check now may say more (a model root) than the old config.json did: it agrees on what it says
    now = {**A, "model_root": "/models/smollm2.gguf"}
    [taken] = shared_records(tmp_path / "mine", {"k1", "k2"}, Reuse(now))
    assert (taken["key"], taken["endpoint"]) == ("k1", A)
    assert shared_records(tmp_path / "mine", {"k1", "k2"}, Reuse(B)) == []
    # a config.json written since says which endpoint its old records are, and is not read for a fingerprint
    since = folder(
        tmp_path, "since", [{"key": "k3"}], {"endpoint": B, "legacy_endpoint": A, "fingerprint": B}
    )
    assert legacy_endpoint(since) == A


def test_the_run_folders_own_answers_of_another_endpoint_are_counted(tmp_path: Path) -> None:
    records = {"k1": {"endpoint": A}, "k2": {"endpoint": B}, "k3": {}, "k4": {"endpoint": A}}
    foreign = foreign_answers(records, {"k1", "k2", "k3"}, Reuse(B), legacy=A)
    assert foreign == {
        "openai http://127.0.0.1:8080/v1 model smollm2": 2
    }  # k1, and k3 by its folder's config
    assert not foreign_answers(records, {"k1", "k2", "k3"}, Reuse(B, replicas=True), legacy=A)
    listed = answers_by_endpoint(records, {"k1", "k2", "k3"}, legacy=A)
    assert [(entry["endpoint"], entry["answers"]) for entry in listed] == [(A, 2), (B, 1)]


@given(st.dictionaries(st.sampled_from(["base_url", "model", "model_sha", "provider"]), st.text(max_size=5)))
def test_an_answer_is_taken_exactly_when_its_endpoint_is_this_one(fields: dict) -> None:
    this = {"backend": "tgi", **fields}
    other = {**this, "base_url": this.get("base_url", "") + "x"}
    assert Reuse(this).accepts({"endpoint": dict(this)})
    assert not Reuse(this).accepts({"endpoint": other})
    assert Reuse(this, replicas=True).accepts({"endpoint": other})


def test_every_backend_says_which_endpoint_answers() -> None:
    """Each backend's endpoint fields are among what its health check records (a renamed field would make every
    endpoint look alike)."""
    checks = {
        "openai": {
            "backend": "openai",
            "base_url": "u",
            "model": "m",
            "model_root": "r",
            "served_models": ["m"],
        },
        "tgi": {
            "backend": "tgi",
            "base_url": "u",
            "model": "m",
            "model_id": "m",
            "model_sha": "s",
            "version": "3",
        },
        "hf": {"backend": "hf", "model": "m", "provider": "together", "providers": {}},
        "llama-cpp": {"backend": "llama-cpp", "model": "m.gguf", "model_sha256": "abc", "n_ctx": 2048},
        "transformers": {"backend": "transformers", "model": "m", "device": "cpu"},
    }
    for kind, backend in BACKENDS.items():
        endpoint = backend.endpoint_of(checks[kind])
        assert set(endpoint) == set(backend.endpoint_fields) & set(checks[kind]), kind
        assert endpoint["backend"] == kind
