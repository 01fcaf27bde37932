"""``scramble lm-eval:TASK|lighteval:SPEC --push ORG/NAME``: the task's scrambled data goes to the Hub by
``scramble``'s own push, and the derived task files read the Hub id at the commit the push made.

The Hub is the in-memory ``FakeDatasetApi`` below (the pattern of the suite's other push tests: the HfApi
methods the push calls, over a local folder per repository), so what is pushed can be loaded back with
``datasets``; the real upload cannot run here (no network)."""

from __future__ import annotations

import fnmatch
import hashlib
import importlib.util
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from scrambled_bench.integrations.scramble import scramble_harness_task


class FakeDatasetApi:
    """``create_repo`` and ``upload_folder`` of HfApi over ``root/<repo_id>`` (the main branch); each upload
    is a commit whose id it returns, as the Hub's ``CommitInfo.oid``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.commits: list[str] = []
        self.created: list[tuple[str, str, bool]] = []

    def create_repo(self, repo_id, *, repo_type=None, private=False, exist_ok=False):
        self.created.append((repo_id, repo_type, private))
        (self.root / repo_id).mkdir(parents=True, exist_ok=True)

    def upload_folder(self, *, repo_id, folder_path, allow_patterns, delete_patterns, **kwargs):
        folder, remote = Path(folder_path), self.root / repo_id
        for stale in [p for p in remote.rglob("*") if p.is_file()]:
            if any(fnmatch.fnmatch(str(stale.relative_to(remote)), pattern) for pattern in delete_patterns):
                stale.unlink()
        for path in folder.rglob("*"):
            relative = str(path.relative_to(folder))
            if path.is_file() and any(fnmatch.fnmatch(relative, pattern) for pattern in allow_patterns):
                (remote / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, remote / relative)
        self.commits.append(hashlib.sha1(f"{repo_id}:{len(self.commits)}".encode()).hexdigest())
        return SimpleNamespace(oid=self.commits[-1])


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "datasets_cache"))


def _pushed_data_loads(api: FakeDatasetApi, repo_id: str) -> None:
    """What the push put in the repository is the scrambled dataset, one config per type."""
    import datasets

    pushed = datasets.load_dataset(str(api.root / repo_id), "kfl")
    assert set(pushed) == {"test", "train"} and pushed["test"]["scrambled"] == [True] * 4


@pytest.mark.skipif(importlib.util.find_spec("lm_eval") is None, reason="needs lm_eval")
def test_lm_eval_derived_tasks_read_the_pushed_commit(tmp_path: Path):
    from lm_eval_canonical import write_canonical_task

    api = FakeDatasetApi(tmp_path / "hub")
    out = tmp_path / "out"
    result = scramble_harness_task(
        "lm-eval:planets", columns=["question", "choices"], types=["kfl", "sub"], out=out,
        task_sources={"--include-path": write_canonical_task(tmp_path)}, push="my-org/planets-scr", private=True,
        api=api,
    )  # fmt: skip
    assert api.created == [("my-org/planets-scr", "dataset", True)] and len(api.commits) == 1
    assert result.hub == ("my-org/planets-scr", api.commits[0])
    for scramble_type in ("kfl", "sub"):
        variant = yaml.safe_load((out / "lm_eval" / "planets" / f"planets_{scramble_type}.yaml").read_text())
        assert variant["dataset_path"] == "my-org/planets-scr" and variant["dataset_name"] == scramble_type
        assert variant["dataset_kwargs"] == {"revision": api.commits[0]}
    assert json.loads((out / "manifest.json").read_text())["hub"] == {
        "repo_id": "my-org/planets-scr",
        "revision": api.commits[0],
    }
    _pushed_data_loads(api, "my-org/planets-scr")


@pytest.mark.skipif(importlib.util.find_spec("lighteval") is None, reason="needs lighteval")
def test_lighteval_derived_tasks_read_the_pushed_commit(tmp_path: Path):
    from lighteval_canonical import write_canonical_task

    from scrambled_bench.integrations.lighteval.variants import derived_tasks_table

    api = FakeDatasetApi(tmp_path / "hub")
    out = tmp_path / "out"
    scramble_harness_task(
        "lighteval:custom|planets|2", columns=["question"], types=["kfl", "sub"], out=out,
        task_sources={"--custom-tasks": str(write_canonical_task(tmp_path))}, push="my-org/planets-scr", api=api,
    )  # fmt: skip
    [commit] = api.commits
    table = {config.name: config for config in derived_tasks_table(out)}
    for scramble_type in ("kfl", "sub"):
        variant = table[f"planets_{scramble_type}"]
        assert (variant.hf_repo, variant.hf_subset, variant.hf_revision) == (
            "my-org/planets-scr",
            scramble_type,
            commit,
        )
    _pushed_data_loads(api, "my-org/planets-scr")


@pytest.mark.skipif(importlib.util.find_spec("lm_eval") is None, reason="needs lm_eval")
def test_push_takes_one_task(tmp_path: Path):
    from scrambled_bench.errors import ScrambledBenchError

    api = FakeDatasetApi(tmp_path / "hub")
    with pytest.raises(ScrambledBenchError, match=r"--push takes one task; ai2_arc is 2 tasks"):
        scramble_harness_task(
            "lm-eval:ai2_arc", columns=["question"], types=["kfl"], out=tmp_path / "out", push="o/n", api=api
        )
    assert not api.commits and not (tmp_path / "out").exists()
