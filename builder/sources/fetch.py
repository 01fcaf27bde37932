"""Where upstream files come from: a local mirror ``DIR/<owner>/<repo>/<path>``, or GitHub.

With a mirror no network access is attempted at all: a missing file is an error naming the path.
Without one, files are downloaded from ``raw.githubusercontent.com`` and folders are listed through the
GitHub contents API, with the standard library only (no Hugging Face download machinery).
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from scrambled_bench.errors import ScrambledBenchError

SOURCE_DIR_ENV = "SCRAMBLED_BENCH_SOURCE_DIR"
"""Environment variable naming the default mirror folder."""

RAW_URL = "https://raw.githubusercontent.com/{owner}/{repo}/{branch}/{path}"
LIST_URL = "https://api.github.com/repos/{owner}/{repo}/contents/{path}?ref={branch}"
USER_AGENT = "scrambled-bench (+https://arxiv.org/abs/2311.18805)"


@dataclass(frozen=True)
class Upstream:
    """One upstream GitHub repository and branch."""

    owner: str
    repo: str
    branch: str

    @property
    def url(self) -> str:
        """The repository's web address.

        >>> Upstream("nlpdata", "dream", "master").url
        'https://github.com/nlpdata/dream'
        """
        return f"https://github.com/{self.owner}/{self.repo}"


def _default_urlopen(url: str) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read()


@dataclass
class SourceReader:
    """Reads upstream files from ``mirror`` when given, else from GitHub, recording a sha256 per file.

    ``urlopen`` (url -> bytes) is the only network access; tests pass a fake one.

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "o" / "r").mkdir(parents=True)
    >>> _ = (root / "o" / "r" / "f.txt").write_text("hi")
    >>> reader = SourceReader(mirror=root)
    >>> reader.read_bytes(Upstream("o", "r", "main"), "f.txt")
    b'hi'
    >>> sorted(reader.hashes)
    ['o/r/f.txt']
    """

    mirror: Path | None = None
    urlopen: Callable[[str], bytes] = _default_urlopen
    hashes: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mirror is not None:
            self.mirror = Path(self.mirror).expanduser()
            if not self.mirror.is_dir():
                raise ScrambledBenchError(f"source mirror {self.mirror} is not a folder")

    def origin(self, upstream: Upstream, path: str) -> str:
        """Where ``path`` is read from: the mirror file or the raw GitHub URL (used in error messages)."""
        if self.mirror is not None:
            return str(self.mirror / upstream.owner / upstream.repo / path)
        return RAW_URL.format(owner=upstream.owner, repo=upstream.repo, branch=upstream.branch, path=path)

    def read_bytes(self, upstream: Upstream, path: str) -> bytes:
        """The bytes of one upstream file; its sha256 is recorded under ``owner/repo/path``."""
        location = self.origin(upstream, path)
        if self.mirror is not None:
            try:
                data = Path(location).read_bytes()
            except FileNotFoundError:
                raise ScrambledBenchError(f"source file missing from the mirror: {location}") from None
            except OSError as exc:
                raise ScrambledBenchError(f"cannot read {location}: {exc.strerror or exc}") from None
        else:
            data = self._download(location)
        self.hashes[f"{upstream.owner}/{upstream.repo}/{path}"] = hashlib.sha256(data).hexdigest()
        return data

    def read_text(self, upstream: Upstream, path: str) -> str:
        """One upstream file decoded as UTF-8 (a one-line error names the file otherwise)."""
        data = self.read_bytes(upstream, path)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ScrambledBenchError(
                f"{self.origin(upstream, path)}: not UTF-8 text ({exc.reason})"
            ) from None

    def read_json(self, upstream: Upstream, path: str) -> object:
        """One upstream JSON document, with the file and line named when it is broken."""
        text = self.read_text(upstream, path)
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScrambledBenchError(
                f"{self.origin(upstream, path)}:{exc.lineno}: not valid JSON ({exc.msg})"
            ) from None

    def list_files(self, upstream: Upstream, folder: str) -> list[str]:
        """The names of the files directly inside ``folder`` (sorted); an absent folder gives ``[]``."""
        if self.mirror is not None:
            directory = self.mirror / upstream.owner / upstream.repo / folder
            if not directory.is_dir():
                return []
            return sorted(entry.name for entry in os.scandir(directory) if entry.is_file())
        url = LIST_URL.format(owner=upstream.owner, repo=upstream.repo, branch=upstream.branch, path=folder)
        try:
            listing = json.loads(self._download(url, missing_ok=True) or b"[]")
        except json.JSONDecodeError:
            raise ScrambledBenchError(f"{url}: the GitHub API did not answer with JSON") from None
        if not isinstance(listing, list):
            raise ScrambledBenchError(f"{url}: unexpected GitHub API answer (rate limited?)")
        return sorted(
            item["name"] for item in listing if isinstance(item, dict) and item.get("type") == "file"
        )

    def _download(self, url: str, *, missing_ok: bool = False) -> bytes:
        try:
            return self.urlopen(url)
        except urllib.error.HTTPError as exc:
            if missing_ok and exc.code == 404:
                return b""
            raise ScrambledBenchError(
                f"download failed: {url} (HTTP {exc.code}); without internet pass --source-dir "
                f"or set {SOURCE_DIR_ENV} to a mirror laid out <owner>/<repo>/<path>"
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ScrambledBenchError(
                f"download failed: {url} ({reason}); without internet pass --source-dir "
                f"or set {SOURCE_DIR_ENV} to a mirror laid out <owner>/<repo>/<path>"
            ) from None


def resolve_source_dir(source_dir: Path | str | None) -> Path | None:
    """The mirror to read: ``source_dir`` when given, else ``$SCRAMBLED_BENCH_SOURCE_DIR``, else ``None`` (GitHub).

    >>> resolve_source_dir("/tmp")
    PosixPath('/tmp')
    """
    if source_dir is not None and str(source_dir) != "":
        return Path(source_dir).expanduser()
    value = os.environ.get(SOURCE_DIR_ENV)
    return Path(value).expanduser() if value else None
