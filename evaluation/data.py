"""Where a run's dataset configs come from: a local build folder (built first when missing) or a Hub
dataset at a revision, and what the run records about it."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrambled_bench.builder.build import DATASET_VERSION, DEFAULT_TYPES, build_dataset, config_name
from scrambled_bench.builder.manifest import MANIFEST_NAME, Manifest
from scrambled_bench.builder.sources.fetch import SOURCE_DIR_ENV
from scrambled_bench.errors import ScrambledBenchError, first_line
from scrambled_bench.evaluation.hub_benchmark import eval_yaml_for
from scrambled_bench.evaluation.settings import DEFAULT_DATA
from scrambled_bench.hub import is_repo_id

BuildProgress = Callable[[str, int], None]
"""``progress(config, rows)``, called after each config a build writes."""


@dataclass
class DataSource:
    """A local build folder or a Hub dataset at a revision.

    >>> source = DataSource("org/scrambled_bench", None, revision="v1.0.0")
    >>> source.is_local, source.available_configs() is None
    (False, True)
    """

    location: str
    local_dir: Path | None
    revision: str | None = None
    built_now: bool = False
    _cache: dict[str, list[dict]] = field(default_factory=dict, repr=False)

    @property
    def is_local(self) -> bool:
        return self.local_dir is not None

    def identity(self, data_configs: Sequence[str]) -> str:
        """What a run records as its data in its identity: the sha256 of each config it reads from a local
        build's manifest (the same files at another path, or in a build grown since, are the same data),
        else the Hub id and revision, else the folder.

        >>> DataSource("org/scrambled_bench", None, revision="v1.0.0").identity(["dream_kfl"])
        'hub:org/scrambled_bench@v1.0.0'
        """
        if self.local_dir is not None:
            if Manifest.exists(self.local_dir):
                hashes = Manifest.read(self.local_dir).config_hashes()
                read = {name: hashes.get(name) for name in sorted(set(data_configs))}
                return "configs:" + hashlib.sha256(json.dumps(read, sort_keys=True).encode()).hexdigest()
            return f"folder:{self.local_dir}"
        return f"hub:{self.location}@{self.revision or 'main'}"

    def describe(self) -> dict[str, Any]:
        """What config.json records about the data: where, which revision, and the build's manifest hash."""
        info: dict[str, Any] = {
            "location": self.location,
            "revision": self.revision,
            "built_now": self.built_now,
        }
        if self.local_dir is not None:
            if Manifest.exists(self.local_dir):
                info.update(Manifest.read(self.local_dir).provenance())
        else:
            info.update(_hub_provenance(self.location, self.revision))
        return info

    def available_configs(self) -> set[str] | None:
        """The configs a local build's manifest lists; ``None`` where that is unknown (Hub, no manifest)."""
        if self.local_dir is None or not Manifest.exists(self.local_dir):
            return None
        return Manifest.read(self.local_dir).configs

    def ensure_configs(
        self,
        needed: Sequence[tuple[str, str]],
        *,
        announce: Callable[[str], None] | None = None,
        progress: BuildProgress | None = None,
    ) -> list[str]:
        """Make sure the data has every ``(source, scramble_type)`` config the run reads, before any request.

        A local build that lacks some grows: they are built into it with its own seed and window (a config
        depends only on those and the version, so no file it holds changes), and the added config names are
        returned. A build of another version cannot grow (that would mix two builds): the error names the
        command that rebuilds it. Hub datasets are checked when their configs load."""
        available = self.available_configs()
        if available is None:
            return []
        missing = [pair for pair in dict.fromkeys(needed) if config_name(*pair) not in available]
        if not missing:
            return []
        names = ", ".join(config_name(*pair) for pair in missing)
        manifest = Manifest.read(self.local_dir)
        if manifest.version != DATASET_VERSION:
            raise ScrambledBenchError(
                f"the build {self.location} (version {manifest.version}) lacks config(s) {names}, and this "
                f"scrambled-bench builds version {DATASET_VERSION}; rebuild it with `scrambled-bench build "
                f"--out {self.location} --replace`, or point --data at another build"
            )
        if announce is not None:
            announce(f"adding {names} to the build {self.location}")
        before = manifest.configs
        grow_build(
            self.local_dir,
            sources=[source for source, _ in missing],
            types=[scramble_type for _, scramble_type in missing],
            seed=manifest.seed,
            window=manifest.data.get("window"),
            progress=progress,
        )
        self._cache.clear()
        return sorted(Manifest.read(self.local_dir).configs - before)

    def rows(self, data_config: str) -> list[dict]:
        """The ``test`` split of one dataset config, as plain dicts (cached: configs share data)."""
        if data_config not in self._cache:
            self._cache[data_config] = _load_split(self, data_config)
        return self._cache[data_config]


def _hub_provenance(repo_id: str, revision: str | None) -> dict[str, Any]:
    """The manifest of a Hub build at ``revision`` (hash, version, seed), and the commit it resolved to."""
    from huggingface_hub import HfApi, hf_hub_download

    try:
        path = hf_hub_download(repo_id, MANIFEST_NAME, repo_type="dataset", revision=revision)
        info = Manifest.read(Path(path).parent).provenance()
        info["commit"] = HfApi().dataset_info(repo_id, revision=revision).sha
        return info
    except Exception as exc:  # noqa: BLE001 - provenance is best effort; the rows themselves already loaded
        return {"manifest_error": f"{exc.__class__.__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}


def _load_split(source: DataSource, data_config: str) -> list[dict]:
    import datasets

    datasets.disable_progress_bars()
    try:
        if source.is_local:
            dataset = datasets.load_dataset(str(source.local_dir), data_config, split="test")
        else:
            dataset = datasets.load_dataset(
                source.location, data_config, split="test", revision=source.revision
            )
    except ValueError as exc:
        message = first_line(exc)
        raise ScrambledBenchError(
            f"dataset config {data_config!r} not loadable from {source.location}: {message}"
        ) from None
    except (FileNotFoundError, ConnectionError, OSError) as exc:
        raise ScrambledBenchError(f"cannot read dataset {source.location} ({data_config}): {exc}") from None
    return [dict(row) for row in dataset]


def resolve_data(
    data: str,
    *,
    revision: str | None,
    types: Sequence[str] = (),
    build_missing: bool | None = None,
    announce: Callable[[str], None] | None = None,
    progress: BuildProgress | None = None,
) -> DataSource:
    """A local build folder (built first when missing) or a Hub dataset id (``owner/name`` + ``revision``).

    A missing folder is built only where that is what was meant: the default folder, or any folder with
    ``build_missing``; a mistyped path is an error, not a silent new build. The build gets every source at
    the default types plus ``types`` (what this run needs), so a later run of another suite finds its
    configs in the same folder. ``announce(message)`` is told before a build starts; ``progress`` follows it.
    """
    path = Path(data).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ScrambledBenchError(f"--data {data}: not a folder (give a local build folder or a Hub id)")
        if revision is not None:
            raise ScrambledBenchError(
                f"--revision applies to a Hub dataset id (owner/name), not to the local folder {data}"
            )
        return DataSource(str(path), path.resolve())
    if is_repo_id(data) and not data.startswith("."):
        return DataSource(data, None, revision)
    if revision is not None:
        raise ScrambledBenchError(
            f"--revision applies to a Hub dataset id (owner/name), not to the local folder {data}"
        )
    if build_missing is None:
        build_missing = path.resolve() == Path(DEFAULT_DATA).resolve()
    if not build_missing:
        raise ScrambledBenchError(
            f"--data {data}: no such folder (and not a Hub id owner/name); to build the datasets there, add "
            "--build-missing"
        )
    built = build_into(path, types, announce=announce, progress=progress)
    return DataSource(str(path), built.resolve(), revision, built_now=True)


def build_into(
    path: Path,
    needed_types: Sequence[str],
    *,
    announce: Callable[[str], None] | None = None,
    progress: BuildProgress | None = None,
) -> Path:
    """Build every source at the default types and ``needed_types`` into ``path`` (from
    SCRAMBLED_BENCH_SOURCE_DIR or GitHub); the whole default build takes seconds."""
    types = list(dict.fromkeys([*DEFAULT_TYPES, *needed_types]))
    if announce is not None:
        announce(
            f"building the datasets into {path} from {_source_dir() or 'the upstream GitHub repositories'}"
        )
    return grow_build(path, types=types, progress=progress)


def grow_build(
    path: Path,
    *,
    types: Sequence[str],
    sources: Sequence[str] | None = None,
    seed: int = 0,
    window: str | None = None,
    progress: BuildProgress | None = None,
) -> Path:
    """Build ``sources`` (default: all) at ``types`` into ``path``, adding to the build already there."""
    return Path(
        build_dataset(
            path,
            sources=sources,
            types=types,
            seed=seed,
            window=window,
            source_dir=_source_dir(),
            progress=progress,
            benchmark=eval_yaml_for,
        )
    )


def _source_dir() -> Path | None:
    """The source mirror SCRAMBLED_BENCH_SOURCE_DIR names, if any."""
    source_dir = os.environ.get(SOURCE_DIR_ENV)
    return Path(source_dir) if source_dir else None
