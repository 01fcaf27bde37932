"""push-metrics, tested at the HfApi boundary with a fake that keeps each Space on disk; every uploaded tree
is then loaded back with ``evaluate.load(<local snapshot folder>)`` and its card's examples are run on it."""

from __future__ import annotations

import doctest
import fnmatch
import hashlib
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from huggingface_hub import errors
from huggingface_hub.repocard import metadata_load

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.metrics import METRIC_NAMES, metric_path
from scrambled_bench.metrics.spaces import git_blob_id, push_metrics, space_tag

PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


class FakeSpacesApi:
    """The HfApi methods push_metrics uses. A Space ``org/name`` is the folder ``spaces/org/name`` (its main
    branch) and a tag a copy ``tags/<tag>/org/name``: both end in the metric's name, as evaluate.load needs."""

    def __init__(self, root: Path):
        self.root = root
        self.calls: list[tuple[str, dict]] = []
        self.tags: dict[str, dict[str, Path]] = {}
        self.commits = 0

    def space(self, repo_id: str) -> Path:
        return self.root / "spaces" / repo_id

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", {"repo_id": repo_id, **kwargs}))
        if not self.space(repo_id).exists():
            self.space(repo_id).mkdir(parents=True)
            (self.space(repo_id) / ".gitattributes").write_text("*.bin filter=lfs\n")  # as the Hub creates it

    def list_repo_refs(self, repo_id, **kwargs):
        self.calls.append(("list_repo_refs", {"repo_id": repo_id, **kwargs}))
        return SimpleNamespace(tags=[SimpleNamespace(name=tag) for tag in self.tags.get(repo_id, {})])

    def list_repo_tree(self, repo_id, *, recursive, revision=None, repo_type=None):
        self.calls.append(
            ("list_repo_tree", {"repo_id": repo_id, "revision": revision, "repo_type": repo_type})
        )
        folder = self.tags[repo_id][revision] if revision else self.space(repo_id)
        return [
            SimpleNamespace(path=str(path.relative_to(folder)), blob_id=git_blob_id(path.read_bytes()))
            for path in sorted(folder.rglob("*"))
            if path.is_file()
        ]

    def upload_folder(self, *, repo_id, folder_path, allow_patterns, delete_patterns, **kwargs):
        self.calls.append(("upload_folder", {"repo_id": repo_id, "folder_path": folder_path, **kwargs}))
        folder, remote = Path(folder_path), self.space(repo_id)
        uploaded = {
            str(p.relative_to(folder))
            for p in folder.rglob("*")
            if p.is_file() and any(fnmatch.fnmatch(str(p.relative_to(folder)), pat) for pat in allow_patterns)
        }
        for stale in [p for p in remote.rglob("*") if p.is_file()]:
            relative = str(stale.relative_to(remote))
            if relative not in uploaded and any(fnmatch.fnmatch(relative, pat) for pat in delete_patterns):
                stale.unlink()
        for relative in uploaded:
            (remote / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(folder / relative, remote / relative)
        self.commits += 1
        return SimpleNamespace(oid=hashlib.sha1(str(self.commits).encode()).hexdigest())

    def create_tag(self, repo_id, *, tag, **kwargs):
        self.calls.append(("create_tag", {"repo_id": repo_id, "tag": tag, **kwargs}))
        snapshot = self.root / "tags" / tag / repo_id
        shutil.copytree(self.space(repo_id), snapshot)
        self.tags.setdefault(repo_id, {})[tag] = snapshot

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


def _local_files(name: str) -> list[str]:
    folder = metric_path(name)
    return sorted(
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts
    )


def test_first_push_creates_a_gradio_space_per_metric_uploads_its_folder_and_tags_it(tmp_path: Path):
    api = FakeSpacesApi(tmp_path)
    results = push_metrics("my-org", private=True, api=api)
    assert [r.repo_id for r in results] == [f"my-org/{name}" for name in METRIC_NAMES]
    assert all(r.uploaded and r.tagged and r.tag == space_tag() for r in results)
    creates = [kwargs for name, kwargs in api.calls if name == "create_repo"]
    assert creates[0] == {
        "repo_id": "my-org/recovery_rate",
        "repo_type": "space",
        "space_sdk": "gradio",
        "private": True,
        "exist_ok": True,
    }
    for name in METRIC_NAMES:
        space = api.space(f"my-org/{name}")
        assert sorted(str(p.relative_to(space)) for p in space.rglob("*") if p.is_file()) == sorted(
            [".gitattributes", *_local_files(name)]
        )
        # the card metadata evaluate-cli create writes for a metric Space
        header = metadata_load(space / "README.md")
        assert header["sdk"] == "gradio" and header["app_file"] == "app.py"
        assert {"evaluate", "metric"} <= set(header["tags"])
        assert (space / "app.py").is_file() and (space / "requirements.txt").is_file()


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_each_uploaded_tree_loads_with_evaluate_and_its_card_examples_hold(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import evaluate

    api = FakeSpacesApi(tmp_path / "hub")
    push_metrics("my-org", names=[name], api=api)
    snapshot = api.tags[f"my-org/{name}"][space_tag()]  # what evaluate.load("my-org/<name>@tag") downloads
    module = evaluate.load(str(snapshot))
    assert module.name == name
    # the card's examples load "metrics/<name>" (a checkout's path): point that at the uploaded tree
    workdir = tmp_path / "user"
    (workdir / "metrics").mkdir(parents=True)
    (workdir / "metrics" / name).symlink_to(snapshot, target_is_directory=True)
    monkeypatch.chdir(workdir)
    card = (snapshot / "README.md").read_text(encoding="utf-8")
    test = doctest.DocTestParser().get_doctest("\n".join(PYTHON_BLOCK.findall(card)), {}, name, name, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.attempted >= 3 and results.failed == 0


def test_pushing_again_uploads_and_tags_nothing(tmp_path: Path):
    api = FakeSpacesApi(tmp_path)
    push_metrics("my-org", api=api)
    api.calls.clear()
    results = push_metrics("my-org", api=api)
    assert not any(r.uploaded or r.tagged for r in results)
    assert "upload_folder" not in api.names() and "create_tag" not in api.names()


def test_a_space_holding_the_same_files_untagged_is_only_tagged(tmp_path: Path):
    api = FakeSpacesApi(tmp_path)
    api.create_repo("my-org/edit_distance")
    api.upload_folder(
        repo_id="my-org/edit_distance",
        folder_path=str(metric_path("edit_distance")),
        allow_patterns=_local_files("edit_distance"),
        delete_patterns=[],
    )
    api.calls.clear()
    [result] = push_metrics("my-org", names=["edit_distance"], api=api)
    assert (result.uploaded, result.tagged) == (False, True)
    assert "upload_folder" not in api.names() and api.calls[-1][1]["revision"] == "main"


def test_a_stale_file_in_the_space_is_removed_by_the_upload(tmp_path: Path):
    api = FakeSpacesApi(tmp_path)
    api.create_repo("my-org/edit_distance")
    (api.space("my-org/edit_distance") / "old_helper.py").write_text("x = 1\n")
    [result] = push_metrics("my-org", names=["edit_distance"], api=api)
    assert result.uploaded
    assert not (api.space("my-org/edit_distance") / "old_helper.py").exists()
    assert (api.space("my-org/edit_distance") / ".gitattributes").exists()


def test_other_files_under_a_published_tag_are_refused_before_uploading(tmp_path: Path):
    api = FakeSpacesApi(tmp_path)
    push_metrics("my-org", names=["edit_distance"], api=api)
    tagged = api.tags["my-org/edit_distance"][space_tag()]
    (tagged / "app.py").write_text("# edited on the Hub\n")
    api.calls.clear()
    with pytest.raises(ScrambledBenchError, match=f"already has tag {space_tag()} with other files; bump"):
        push_metrics("my-org", names=["edit_distance"], api=api)
    assert "upload_folder" not in api.names()


@pytest.mark.parametrize("org", ["my-org/recovery_rate", "", "-x", "a b"])
def test_org_must_be_a_user_or_organisation_name(org: str, tmp_path: Path):
    api = FakeSpacesApi(tmp_path)
    with pytest.raises(ScrambledBenchError, match="--org: expected a Hub user or organisation name"):
        push_metrics(org, api=api)
    assert api.calls == []


def test_a_hub_failure_is_one_line(tmp_path: Path):
    class Refusing(FakeSpacesApi):
        def create_repo(self, repo_id, **kwargs):
            response = SimpleNamespace(status_code=403, headers={}, request=None)
            raise errors.HfHubHTTPError("403 Forbidden", response=response)

    with pytest.raises(ScrambledBenchError) as raised:
        push_metrics("my-org", api=Refusing(tmp_path))
    assert str(raised.value).startswith("cannot create my-org/recovery_rate: not authorised (HTTP 403)")


def test_cli_without_a_token_is_one_line_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    import huggingface_hub
    import huggingface_hub.constants

    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_TOKEN_PATH", str(tmp_path / "no_token"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_STORED_TOKENS_PATH", str(tmp_path / "no_tokens"))
    created = []
    monkeypatch.setattr(huggingface_hub.HfApi, "create_repo", lambda self, *a, **k: created.append(a))
    code = main(["push-metrics", "--org", "my-org"])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.strip() == "error: no Hugging Face token: set HF_TOKEN or run `hf auth login`"
    assert captured.out == "" and created == []


def test_cli_reports_each_space(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    import scrambled_bench.metrics.spaces as spaces

    api = FakeSpacesApi(tmp_path)
    real = spaces.push_metrics
    monkeypatch.setattr(
        spaces, "push_metrics", lambda org, private=False: real(org, private=private, api=api)
    )
    assert main(["push-metrics", "--org", "my-org"]) == 0
    assert main(["push-metrics", "--org", "my-org"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"https://huggingface.co/spaces/my-org/recovery_rate: uploaded; tagged {space_tag()}"
    assert lines[-1] == (
        f"https://huggingface.co/spaces/my-org/edit_distance: unchanged, nothing uploaded; tag {space_tag()} already there"
    )
