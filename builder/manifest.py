"""The manifest of a build (``manifest.json``): what a build holds and how it was made, as one type.

The builder writes it; ``push`` compares it with the Hub's copy; a run records its hash as the identity of
the data it evaluated and asks it which configs a build has. Every reader of a manifest goes through
:class:`Manifest`, so the checks and the one-line errors are the same everywhere.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError

MANIFEST_NAME = "manifest.json"
DEFAULT_BUILD_DIR = Path("scrambled_bench")
"""Where ``build`` writes and ``run`` looks by default: named like the dataset, so that
``load_dataset("scrambled_bench", "dream_kfl")`` finds it from the folder above."""


@dataclass(frozen=True)
class Manifest:
    """A parsed ``manifest.json`` and the bytes it was parsed from.

    >>> manifest = Manifest.parse(b'{"version": "1.0.0", "seed": 0, "outputs": {"data/x.parquet": {"config": "dream_kf", "rows": 3}}}')
    >>> manifest.version, sorted(manifest.configs), manifest.sha256[:12]
    ('1.0.0', ['dream_kf'], '9abb92cfd633')
    """

    data: Mapping[str, Any]
    raw: bytes
    location: str = MANIFEST_NAME

    @classmethod
    def parse(cls, raw: bytes, location: str = MANIFEST_NAME) -> Manifest:
        """Parse manifest bytes; anything that is not a scrambled-bench manifest is a one-line error."""
        try:
            data = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise ScrambledBenchError(f"{location}: unreadable manifest (not UTF-8: {exc.reason})") from None
        except json.JSONDecodeError as exc:
            raise ScrambledBenchError(f"{location}:{exc.lineno}: unreadable manifest ({exc.msg})") from None
        if not isinstance(data, dict) or "version" not in data or not isinstance(data.get("outputs"), dict):
            raise ScrambledBenchError(f"{location}: not a scrambled-bench manifest (no version/outputs)")
        return cls(data=data, raw=raw, location=location)

    @classmethod
    def read(cls, build: str | Path) -> Manifest:
        """The manifest of the build folder ``build``, with a one-line error naming the fix when there is none."""
        path = Path(build) / MANIFEST_NAME
        if not path.is_file():
            raise ScrambledBenchError(
                f"{build} is not a scrambled-bench build (no {MANIFEST_NAME}); "
                f"run `scrambled-bench build --out {build}`"
            )
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise ScrambledBenchError(f"cannot read {path}: {exc.strerror or exc}") from None
        return cls.parse(raw, str(path))

    @staticmethod
    def exists(build: str | Path) -> bool:
        """Whether ``build`` holds a manifest (is a build, or what is left of one)."""
        return (Path(build) / MANIFEST_NAME).is_file()

    @property
    def sha256(self) -> str:
        """The hash of the manifest's bytes: the identity of a build's content (it lists every file's hash)."""
        return hashlib.sha256(self.raw).hexdigest()

    @property
    def version(self) -> str:
        return str(self.data["version"])

    @property
    def seed(self) -> int | None:
        return self.data.get("seed")

    @property
    def tag(self) -> str:
        """The build's git tag on the Hub (``v{version}``, with a seed or window suffix where not the default)."""
        return self.data.get("tag") or f"v{self.version}"

    @property
    def outputs(self) -> Mapping[str, Mapping[str, Any]]:
        """Relative path -> ``{"config", "rows", "sha256"}`` of every file the build wrote."""
        return self.data["outputs"]

    @property
    def configs(self) -> set[str]:
        """The config names the build holds."""
        return {
            entry["config"]
            for entry in self.outputs.values()
            if isinstance(entry, dict) and "config" in entry
        }

    @property
    def parquet_writer(self) -> str | None:
        """The pyarrow version that wrote the parquet files (byte identity holds for the same writer)."""
        return (self.data.get("built_with") or {}).get("pyarrow")

    def same_content(self, other: Manifest | None) -> bool:
        """Whether ``other`` lists the same files with the same hashes under the same tag."""
        return other is not None and other.outputs == self.outputs and other.tag == self.tag

    def config_hashes(self) -> dict[str, str]:
        """Config name -> the sha256 of its data file: what a run's data identity is made of.

        >>> raw = b'{"version": "1.0.0", "outputs": {"data/x.parquet": {"config": "dream_kf", "sha256": "ab"}}}'
        >>> Manifest.parse(raw).config_hashes()
        {'dream_kf': 'ab'}
        """
        return {
            entry["config"]: entry.get("sha256", "")
            for entry in self.outputs.values()
            if isinstance(entry, dict) and "config" in entry
        }

    def provenance(self) -> dict[str, Any]:
        """What a run records about the data it read: the manifest's hash, the version, the seed and the tag
        (which names the version, seed and window: what a config's rows depend on; a build grown since keeps
        its tag and changes its manifest hash).

        >>> Manifest.parse(b'{"version": "1.0.0", "seed": 7, "outputs": {}}').provenance()["seed"]
        7
        """
        return {"manifest_sha256": self.sha256, "version": self.version, "seed": self.seed, "tag": self.tag}
