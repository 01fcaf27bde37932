"""The metric modules published as Hugging Face Spaces, so ``evaluate.load("ORG/recovery_rate")`` works.

``evaluate.load`` resolves a bare name only to a folder in the working directory or to a Space of Hugging
Face's own ``evaluate-metric`` organisation, and has no plugin mechanism: a community metric is a Space.
Each folder ``metrics/<name>/`` already has the layout ``evaluate-cli create`` gives a new metric Space
(a card ``README.md`` whose header names the gradio SDK, ``app_file: app.py`` and the tags ``evaluate``
and ``metric``; ``app.py``, the widget; ``requirements.txt``; the script ``<name>.py``), plus the sibling
file the script imports, which ``evaluate.load`` fetches with it. :func:`push_metric` uploads a folder as
it is to the Space ``ORG/<name>`` and tags it ``v<package version>``, like ``push`` does for the datasets:

- the Space is compared with the folder file by file (git blob ids, which the Hub lists for free): an
  unchanged Space gets no commit, only the tag if it lacks one;
- a published tag is never moved: the same content under it is a no-op, other content is refused (bump the
  package version).

The token comes from ``HF_TOKEN`` or ``hf auth login``, read by huggingface_hub; it is never printed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from scrambled_bench import __version__
from scrambled_bench.builder.hub import PushResult, create_and_list_tags, upload_and_tag
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.hub import check_repo_id, hub_error, is_repo_id, require_token
from scrambled_bench.metrics import METRIC_NAMES, metric_path

REPO_TYPE = "space"
SPACE_SDK = "gradio"
REQUIRED_TAGS = ("evaluate", "metric")
#: the kinds of file a metric Space holds; a remote one the folder no longer has is deleted on upload
SPACE_FILE_PATTERNS = ("*.py", "*.md", "*.txt")


def space_tag() -> str:
    """The tag every pushed metric gets: the package version, which the metric files ship with.

    >>> space_tag().startswith("v")
    True
    """
    return f"v{__version__}"


def git_blob_id(data: bytes) -> str:
    """The id git (and the Hub's file listing) gives a file's content.

    >>> git_blob_id(b"hello\\n")
    'ce013625030ba8dba906f756967f9e9ca394464a'
    """
    # sha1 because git names contents so; no security rests on it
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


def space_files(folder: Path) -> dict[str, bytes]:
    """The files of a metric folder that go to its Space, by path inside it (compiled caches left out).

    >>> sorted(space_files(metric_path("edit_distance")))
    ['README.md', '__init__.py', 'app.py', 'edit_distance.py', 'requirements.txt', 'scrambled_bench_shared.py']
    """
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def check_space_layout(name: str, folder: Path) -> None:
    """A one-line error unless ``folder`` has what ``evaluate-cli create`` gives a metric Space.

    >>> for metric in METRIC_NAMES:
    ...     check_space_layout(metric, metric_path(metric))
    >>> check_space_layout("edit_distance", metric_path("recovery_rate"))
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: metric folder .../recovery_rate lacks edit_distance.py (a metric Space needs README.md, app.py, requirements.txt and its script)
    """
    from huggingface_hub.repocard import metadata_load  # heavy; only pushing a Space reads a card

    for required in ("README.md", "app.py", "requirements.txt", f"{name}.py"):
        if not (folder / required).is_file():
            raise ScrambledBenchError(
                f"metric folder {folder} lacks {required} (a metric Space needs README.md, app.py, "
                "requirements.txt and its script)"
            )
    header = metadata_load(folder / "README.md") or {}
    problems = []
    if header.get("sdk") != SPACE_SDK:
        problems.append(f"sdk: {SPACE_SDK}")
    if header.get("app_file") != "app.py":
        problems.append("app_file: app.py")
    missing_tags = [tag for tag in REQUIRED_TAGS if tag not in (header.get("tags") or [])]
    if missing_tags:
        problems.append(f"tags {', '.join(missing_tags)}")
    if not header.get("title"):
        problems.append("a title")
    if problems:
        raise ScrambledBenchError(f"{folder / 'README.md'}: the card's header lacks {'; '.join(problems)}")


def remote_blobs(api: Any, repo_id: str, revision: str | None = None) -> dict[str, str]:
    """The Space's files (path to git blob id) at ``revision`` (default ``main``)."""
    try:
        entries = api.list_repo_tree(repo_id, recursive=True, revision=revision, repo_type=REPO_TYPE)
        return {entry.path: entry.blob_id for entry in entries if getattr(entry, "blob_id", None)}
    except Exception as exc:  # noqa: BLE001 - every Hub failure becomes one line
        raise hub_error("list the files of", repo_id, exc) from None


def same_content(local: Mapping[str, bytes], remote: Mapping[str, str]) -> bool:
    """Whether the Space holds exactly the folder's files (the Space's own ``.gitattributes`` aside).

    >>> same_content({"a.py": b"x"}, {"a.py": git_blob_id(b"x"), ".gitattributes": "..."})
    True
    >>> same_content({"a.py": b"x"}, {"a.py": git_blob_id(b"x"), "old.py": "..."})
    False
    """
    ours = {path for path in remote if any(fnmatch(path, pattern) for pattern in SPACE_FILE_PATTERNS)}
    return ours == set(local) and all(remote[path] == git_blob_id(data) for path, data in local.items())


def push_metric(name: str, folder: Path, org: str, *, private: bool, api: Any) -> PushResult:
    """Create or update the Space ``org/<name>`` from ``folder`` and tag it (see the module's rules)."""
    repo_id = check_repo_id(f"{org}/{name}", "--org")
    tag = space_tag()
    local = space_files(folder)
    if tag in create_and_list_tags(api, repo_id, repo_type=REPO_TYPE, private=private, space_sdk=SPACE_SDK):
        if same_content(local, remote_blobs(api, repo_id, tag)):
            return PushResult(repo_id, tag, uploaded=False, tagged=False, commit=None, repo_type=REPO_TYPE)
        raise ScrambledBenchError(
            f"{repo_id} already has tag {tag} with other files; bump the package version "
            "(scrambled_bench.__version__) before pushing changed metrics"
        )
    return upload_and_tag(
        api,
        repo_id,
        folder,
        repo_type=REPO_TYPE,
        tag=tag,
        tag_message=f"{name} {tag}",
        upload=not same_content(local, remote_blobs(api, repo_id)),
        commit_message=f"{name} {tag} (scrambled-bench)",
        allow_patterns=sorted(local),
        delete_patterns=list(SPACE_FILE_PATTERNS),
    )


def check_org(org: str) -> str:
    """``org`` when it can own a Space (a Hub user or organisation name), else a one-line error.

    >>> check_org("my-org")
    'my-org'
    >>> check_org("my-org/recovery_rate")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --org: expected a Hub user or organisation name, got 'my-org/recovery_rate'
    """
    if not isinstance(org, str) or "/" in org or not is_repo_id(f"{org}/x"):
        raise ScrambledBenchError(f"--org: expected a Hub user or organisation name, got {org!r}")
    return org


def push_metrics(
    org: str, *, private: bool = False, names: Sequence[str] | None = None, api: Any | None = None
) -> list[PushResult]:
    """Push every metric folder (or ``names``) to its Space under ``org``. Every folder's layout and the
    token are checked before anything is created; ``api`` is an ``HfApi`` (default: one reading the token
    from ``HF_TOKEN`` or the login store)."""
    check_org(org)
    chosen = list(names) if names is not None else list(METRIC_NAMES)
    folders = {name: metric_path(name) for name in chosen}
    for name, folder in folders.items():
        check_space_layout(name, folder)
    if api is None:
        from huggingface_hub import HfApi  # heavy; `push-metrics --help` must not pay for it

        require_token()
        api = HfApi()
    return [push_metric(name, folder, org, private=private, api=api) for name, folder in folders.items()]
