"""Publishing a build to the Hugging Face Hub: create the dataset repository, upload, tag ``v{version}``.

The build folder is uploaded as it is (README.md card, manifest.json, data/), so the repository loads with
``load_dataset("ORG/scrambled_bench", "dream_kfl", revision="v1.0.0")``. Before uploading, the remote
``manifest.json`` is compared with the local one: when the build's tag already exists and its manifest
lists the same sha256 for every file, nothing is uploaded or tagged, so re-pushing a rebuild of an
unchanged version is a no-op; a tag is never moved to other content. The steps of such a push that do
not depend on what is pushed (:func:`create_and_list_tags`, :func:`upload_and_tag`, :class:`PushResult`)
serve the metric Spaces too (``scrambled_bench.metrics.spaces``). :func:`push_scrambled` uploads a
``scramble`` output (``builder.scramble``) the same way, without a tag.

The token comes from ``HF_TOKEN`` or the ``hf auth login`` store, read by ``huggingface_hub`` itself; it
is never printed, logged or written by this module.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrambled_bench.builder.build import CARD_NAME, EVAL_YAML_NAME
from scrambled_bench.builder.manifest import MANIFEST_NAME, Manifest
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.hub import check_repo_id, hub_error, require_token
from scrambled_bench.io import file_sha256

REPO_TYPE = "dataset"
UPLOAD_PATTERNS = [CARD_NAME, EVAL_YAML_NAME, MANIFEST_NAME, "data/**"]
STALE_PATTERNS = ["data/**"]
"""Remote files under data/ that the build does not have are deleted (a config dropped from the build)."""


@dataclass(frozen=True)
class PushResult:
    """What a push did (of a build to a dataset repository, or of a metric to a Space)."""

    repo_id: str
    tag: str
    uploaded: bool
    tagged: bool
    commit: str | None
    repo_type: str = REPO_TYPE

    @property
    def url(self) -> str:
        """The repository's page.

        >>> PushResult("org/scrambled_bench", "v1.0.0", False, False, None).url
        'https://huggingface.co/datasets/org/scrambled_bench'
        >>> PushResult("org/recovery_rate", "v1.0.0", False, False, None, repo_type="space").url
        'https://huggingface.co/spaces/org/recovery_rate'
        """
        return f"https://huggingface.co/{self.repo_type}s/{self.repo_id}"


def create_and_list_tags(api: Any, repo_id: str, *, repo_type: str, private: bool, **create: Any) -> set[str]:
    """Create the repository ``repo_id`` unless it exists (``create``: further ``create_repo`` options, such
    as a Space's SDK), and return the names of its tags."""
    try:
        api.create_repo(repo_id, repo_type=repo_type, private=private, exist_ok=True, **create)
    except Exception as exc:  # noqa: BLE001 - every Hub failure becomes one line
        raise hub_error("create", repo_id, exc) from None
    try:
        return {ref.name for ref in api.list_repo_refs(repo_id, repo_type=repo_type).tags}
    except Exception as exc:  # noqa: BLE001
        raise hub_error("list the tags of", repo_id, exc) from None


def upload_and_tag(
    api: Any,
    repo_id: str,
    folder: Path,
    *,
    repo_type: str,
    tag: str,
    tag_message: str,
    upload: bool,
    **upload_options: Any,
) -> PushResult:
    """Upload ``folder`` when ``upload`` (the repository's main branch lacks its content; ``upload_options``:
    ``commit_message``, ``allow_patterns`` and ``delete_patterns`` of ``upload_folder``), then tag the new
    commit, or ``main`` when nothing was uploaded, with ``tag``."""
    commit = None
    if upload:
        try:
            info = api.upload_folder(
                repo_id=repo_id, folder_path=str(folder), repo_type=repo_type, **upload_options
            )
        except Exception as exc:  # noqa: BLE001
            raise hub_error("upload to", repo_id, exc) from None
        commit = getattr(info, "oid", None)
    try:
        api.create_tag(
            repo_id, tag=tag, tag_message=tag_message, revision=commit or "main", repo_type=repo_type
        )
    except Exception as exc:  # noqa: BLE001
        raise hub_error(f"tag {tag} on", repo_id, exc) from None
    return PushResult(repo_id, tag, uploaded=upload, tagged=True, commit=commit, repo_type=repo_type)


def verify_build(build: Path) -> Manifest:
    """The manifest of ``build`` after checking every output file against its recorded sha256."""
    manifest = Manifest.read(build)
    for relative, entry in manifest.outputs.items():
        path = Path(build) / relative
        if not path.is_file():
            raise ScrambledBenchError(
                f"{path}: listed in the manifest but missing; rebuild with `scrambled-bench build`"
            )
        if file_sha256(path) != entry.get("sha256"):
            raise ScrambledBenchError(
                f"{path}: sha256 differs from the manifest; rebuild with `scrambled-bench build`"
            )
    return manifest


def remote_manifest(api: Any, repo_id: str, revision: str | None = None) -> Manifest | None:
    """The manifest on the Hub at ``revision`` (default ``main``); ``None`` when there is none yet."""
    from huggingface_hub import errors  # deferred: huggingface_hub is heavy

    with tempfile.TemporaryDirectory() as scratch:
        try:
            path = api.hf_hub_download(
                repo_id, MANIFEST_NAME, repo_type=REPO_TYPE, revision=revision, local_dir=scratch
            )
        except (errors.EntryNotFoundError, errors.RepositoryNotFoundError, errors.RevisionNotFoundError):
            return None
        except Exception as exc:  # noqa: BLE001 - every Hub failure becomes one line
            raise hub_error("read the manifest of", repo_id, exc) from None
        try:
            return Manifest.parse(Path(path).read_bytes(), f"{repo_id}/{MANIFEST_NAME}")
        except (OSError, ScrambledBenchError):
            return None  # an unreadable remote manifest: the push replaces it


def _writer_hint(local: Manifest, remote: Manifest | None) -> str:
    """Name a parquet-writer difference, the usual reason an unchanged version rebuilds to other bytes.

    >>> def built_by(version):
    ...     return Manifest.parse(('{"version": "1", "outputs": {}, "built_with": {"pyarrow": "%s"}}' % version).encode())
    >>> _writer_hint(built_by("27.0.0"), built_by("26.0.1"))
    ' (the published files were written by pyarrow 26.0.1, these by 27.0.0: rebuild with pyarrow==26.0.1 to match)'
    >>> _writer_hint(built_by("26.0.1"), built_by("26.0.1"))
    ''
    """
    mine = local.parquet_writer
    theirs = remote.parquet_writer if remote is not None else None
    if mine and theirs and mine != theirs:
        return (
            f" (the published files were written by pyarrow {theirs}, these by {mine}: "
            f"rebuild with pyarrow=={theirs} to match)"
        )
    return ""


def push_build(build: Path, repo_id: str, *, private: bool = False, api: Any | None = None) -> PushResult:
    """Upload ``build`` to the dataset repository ``repo_id`` and tag it with the build's tag.

    ``api`` is an ``huggingface_hub.HfApi`` (default: one that reads the token from ``HF_TOKEN`` or the
    login store). An existing tag that points at different content is an error: bump the version.
    """
    check_repo_id(repo_id, "--repo")
    build = Path(build)
    manifest = verify_build(build)
    tag = manifest.tag
    if api is None:
        from huggingface_hub import HfApi  # deferred: huggingface_hub is heavy

        require_token()
        api = HfApi()

    if tag in create_and_list_tags(api, repo_id, repo_type=REPO_TYPE, private=private):
        # A published version is immutable: the same content is a no-op, other content needs a new version.
        published = remote_manifest(api, repo_id, revision=tag)
        if manifest.same_content(published):
            return PushResult(repo_id=repo_id, tag=tag, uploaded=False, tagged=False, commit=None)
        raise ScrambledBenchError(
            f"{repo_id} already has tag {tag} with different content{_writer_hint(manifest, published)}; "
            "bump the dataset version (scrambled_bench.builder.build.DATASET_VERSION and dataset_cards/CHANGELOG.md) "
            "before pushing"
        )
    return upload_and_tag(
        api,
        repo_id,
        build,
        repo_type=REPO_TYPE,
        tag=tag,
        tag_message=f"Scrambled Bench {tag}",
        upload=not manifest.same_content(remote_manifest(api, repo_id)),
        commit_message=f"Scrambled Bench {tag}",
        allow_patterns=UPLOAD_PATTERNS,
        delete_patterns=STALE_PATTERNS,
    )


@dataclass(frozen=True)
class ScramblePush:
    """Where a scramble output went: the dataset's URL and the commit the upload made (what derived harness
    tasks pin, so that they read the very data pushed)."""

    url: str
    commit: str | None


def push_scrambled(
    folder: Path, repo_id: str, *, private: bool = False, api: Any | None = None
) -> ScramblePush:
    """Upload a scramble output (card, manifest, data) to the dataset repository ``repo_id``.

    Files are checked against the manifest first; files under ``data/`` that the output does not have are
    deleted from the repository (a config dropped). Hub failures are one-line errors; the token is never
    printed.
    """
    check_repo_id(repo_id, "--push")
    verify_build(folder)
    if api is None:
        from huggingface_hub import HfApi  # deferred: huggingface_hub is heavy

        require_token()
        api = HfApi()
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    except Exception as exc:  # noqa: BLE001
        raise hub_error("create", repo_id, exc) from None
    try:
        commit = api.upload_folder(
            repo_id=repo_id,
            folder_path=str(folder),
            repo_type="dataset",
            commit_message="scrambled-bench scramble",
            allow_patterns=[CARD_NAME, MANIFEST_NAME, "data/**"],
            delete_patterns=["data/**"],
        )
    except Exception as exc:  # noqa: BLE001
        raise hub_error("upload to", repo_id, exc) from None
    return ScramblePush(f"https://huggingface.co/datasets/{repo_id}", getattr(commit, "oid", None))
