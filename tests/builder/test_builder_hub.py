"""Pushing a build, tested at the HfApi boundary with a fake that keeps the uploaded repository on disk."""

from __future__ import annotations

import fnmatch
import hashlib
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from huggingface_hub import errors

from scrambled_bench.builder.build import build_dataset
from scrambled_bench.builder.hub import push_build
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.main import main

FIXTURES = Path(__file__).parent / "fixtures" / "sources"


class FakeHfApi:
    """The HfApi methods push_build uses, over a folder standing for the remote repository's main branch."""

    def __init__(self, remote: Path):
        self.remote = remote
        self.calls: list[tuple[str, dict]] = []
        self.tags: dict[str, Path] = {}
        self.commits = 0

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", {"repo_id": repo_id, **kwargs}))
        self.remote.mkdir(parents=True, exist_ok=True)

    def hf_hub_download(self, repo_id, filename, **kwargs):
        self.calls.append(("hf_hub_download", {"repo_id": repo_id, "filename": filename, **kwargs}))
        revision = kwargs.get("revision")
        source = (self.tags[revision] if revision in self.tags else self.remote) / filename
        if not source.is_file():
            raise errors.EntryNotFoundError(f"{filename} not in {repo_id}")
        target = Path(kwargs["local_dir"]) / filename
        shutil.copy(source, target)
        return str(target)

    def upload_folder(self, *, repo_id, folder_path, allow_patterns, delete_patterns, **kwargs):
        self.calls.append(("upload_folder", {"repo_id": repo_id, "folder_path": folder_path, **kwargs}))
        folder = Path(folder_path)
        uploaded = {
            str(p.relative_to(folder))
            for p in folder.rglob("*")
            if p.is_file()
            and any(fnmatch.fnmatch(str(p.relative_to(folder)), pattern) for pattern in allow_patterns)
        }
        for stale in [p for p in self.remote.rglob("*") if p.is_file()]:
            relative = str(stale.relative_to(self.remote))
            if relative not in uploaded and any(
                fnmatch.fnmatch(relative, pattern) for pattern in delete_patterns
            ):
                stale.unlink()
        for relative in uploaded:
            (self.remote / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(folder / relative, self.remote / relative)
        self.commits += 1
        return SimpleNamespace(oid=hashlib.sha1(str(self.commits).encode()).hexdigest())

    def list_repo_refs(self, repo_id, **kwargs):
        self.calls.append(("list_repo_refs", {"repo_id": repo_id, **kwargs}))
        return SimpleNamespace(tags=[SimpleNamespace(name=name) for name in self.tags])

    def create_tag(self, repo_id, *, tag, **kwargs):
        self.calls.append(("create_tag", {"repo_id": repo_id, "tag": tag, **kwargs}))
        snapshot = self.remote.parent / f"{self.remote.name}@{tag}"
        shutil.copytree(self.remote, snapshot)
        self.tags[tag] = snapshot

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


@pytest.fixture
def build(tmp_path: Path) -> Path:
    return build_dataset(
        tmp_path / "scrambled_bench",
        sources=["dream", "aqua"],
        types=["original", "kfl"],
        source_dir=FIXTURES,
    )


def test_first_push_creates_uploads_and_tags_and_the_repo_loads(build: Path, tmp_path: Path):
    from datasets import load_dataset

    api = FakeHfApi(tmp_path / "remote")
    result = push_build(build, "org/scrambled_bench", private=True, api=api)
    assert (result.uploaded, result.tagged, result.tag) == (True, True, "v1.1.0")
    assert api.names() == ["create_repo", "list_repo_refs", "hf_hub_download", "upload_folder", "create_tag"]
    create = api.calls[0][1]
    assert create == {
        "repo_id": "org/scrambled_bench",
        "repo_type": "dataset",
        "private": True,
        "exist_ok": True,
    }
    tag_call = api.calls[-1][1]
    assert tag_call["revision"] == result.commit and tag_call["repo_type"] == "dataset"
    uploaded = sorted(str(p.relative_to(api.remote)) for p in api.remote.rglob("*") if p.is_file())
    assert uploaded == sorted(str(p.relative_to(build)) for p in build.rglob("*") if p.is_file())
    # the exact uploaded layout, at the tag, loads with datasets as the Hub would serve it
    ds = load_dataset(str(api.tags["v1.1.0"]), "dream_kfl", split="test", cache_dir=str(tmp_path / "cache"))
    assert ds["id"] == ["test/4-199/1", "test/5-806/1", "test/5-806/2", "dev/1-5/1"]
    assert (
        load_dataset(
            str(api.remote), "aqua_original", split="test", cache_dir=str(tmp_path / "cache")
        ).num_rows
        == 3
    )


def test_an_untagged_main_with_the_same_content_is_only_tagged(build: Path, tmp_path: Path):
    api = FakeHfApi(tmp_path / "remote")
    api.create_repo("org/scrambled_bench")
    api.upload_folder(
        repo_id="org/scrambled_bench",
        folder_path=str(build),
        allow_patterns=["*", "data/**"],
        delete_patterns=[],
    )
    api.calls.clear()
    result = push_build(build, "org/scrambled_bench", api=api)
    assert (result.uploaded, result.tagged) == (False, True)
    assert "upload_folder" not in api.names() and api.calls[-1][1]["revision"] == "main"


def test_pushing_a_rebuild_of_the_same_version_uploads_nothing(build: Path, tmp_path: Path):
    api = FakeHfApi(tmp_path / "remote")
    push_build(build, "org/scrambled_bench", api=api)
    rebuilt = build_dataset(
        tmp_path / "rebuilt", sources=["dream", "aqua"], types=["original", "kfl"], source_dir=FIXTURES
    )
    api.calls.clear()
    result = push_build(rebuilt, "org/scrambled_bench", api=api)
    assert (result.uploaded, result.tagged) == (False, False)
    assert "upload_folder" not in api.names() and "create_tag" not in api.names()


def test_changed_content_under_an_existing_tag_is_refused_before_uploading(build: Path, tmp_path: Path):
    api = FakeHfApi(tmp_path / "remote")
    push_build(build, "org/scrambled_bench", api=api)
    other = build_dataset(tmp_path / "other", sources=["dream"], types=["kfl"], source_dir=FIXTURES)
    api.calls.clear()
    with pytest.raises(
        ScrambledBenchError, match="already has tag v1.1.0 with different content; bump the dataset version"
    ):
        push_build(other, "org/scrambled_bench", api=api)
    assert "upload_folder" not in api.names()


def test_a_new_seed_is_a_new_tag_and_stale_configs_are_removed(build: Path, tmp_path: Path):
    api = FakeHfApi(tmp_path / "remote")
    push_build(build, "org/scrambled_bench", api=api)
    seeded = build_dataset(tmp_path / "seeded", sources=["dream"], types=["kfl"], seed=3, source_dir=FIXTURES)
    result = push_build(seeded, "org/scrambled_bench", api=api)
    assert (result.uploaded, result.tag) == (True, "v1.1.0-seed3")
    assert sorted(p.parent.name for p in (api.remote / "data").rglob("*.parquet")) == ["dream_kfl"]
    at_first_tag = sorted(p.parent.name for p in (api.tags["v1.1.0"] / "data").rglob("*.parquet"))
    assert at_first_tag == ["aqua_kfl", "aqua_original", "dream_kfl", "dream_original"]
    # re-pushing the first version after main moved on is still a no-op: its tag holds that content
    api.calls.clear()
    again = push_build(build, "org/scrambled_bench", api=api)
    assert (again.uploaded, again.tagged) == (False, False)
    assert "upload_folder" not in api.names() and "create_tag" not in api.names()


def test_a_corrupted_build_is_not_pushed(build: Path, tmp_path: Path):
    parquet = next((build / "data").rglob("*.parquet"))
    parquet.write_bytes(parquet.read_bytes()[:-10])
    api = FakeHfApi(tmp_path / "remote")
    with pytest.raises(ScrambledBenchError, match="sha256 differs from the manifest"):
        push_build(build, "org/scrambled_bench", api=api)
    assert api.calls == []


@pytest.mark.parametrize("repo", ["scrambled_bench", "a/b/c", "/x", "org/"])
def test_repo_id_must_be_org_slash_name(build: Path, repo: str, tmp_path: Path):
    with pytest.raises(ScrambledBenchError, match="expected a Hub repository id ORG/NAME"):
        push_build(build, repo, api=FakeHfApi(tmp_path / "remote"))


def test_cli_push_fails_in_one_line_and_never_prints_the_token(build: Path, capsys, monkeypatch, hub_offline):
    secret = "hf_" + "s3cr3t" * 6
    monkeypatch.setenv("HF_TOKEN", secret)
    code = main(["push", "--repo", "org/scrambled_bench", "--build", str(build)])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.strip() == "error: cannot create org/scrambled_bench: HF_HUB_OFFLINE is set"
    assert secret not in captured.out + captured.err


def test_cli_push_of_a_folder_that_is_not_a_build(tmp_path: Path, capsys):
    code = main(["push", "--repo", "org/scrambled_bench", "--build", str(tmp_path)])
    assert code == 2
    assert capsys.readouterr().err.startswith(
        f"error: {tmp_path} is not a scrambled-bench build (no manifest.json)"
    )
