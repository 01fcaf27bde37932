"""A previous output in the folder a scramble writes to, and what the new output keeps of it.

``scramble`` grows as ``build`` does: scrambling again into a previous output of the same source, columns,
row key, seed and sample rate adds the types asked for and keeps every config it held, its files byte for
byte (a config depends only on those settings, so the grown output equals one made at once). An output made
with other settings is never grown into (that would mix two scrambles): the error says to ``--replace`` it
or write elsewhere. ``--replace`` writes exactly what is asked for.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrambled_bench.builder.scramble.variants import Variant
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.io import file_sha256

COMPARED = (
    "version",
    "stream_version",
    "source",
    "source_files",
    "columns",
    "row_key",
    "recipe",
    "sample_rate",
    "seed",
    "splits",
    "kept_splits",
)
"""The manifest's settings that two outputs must share for one to grow into the other."""


@dataclass(frozen=True)
class KeptConfig:
    """A config of the previous output the new one keeps as it is: its variant, its data files (relative
    path -> manifest entry), rows per split and its count of texts left unchanged."""

    variant: Variant
    files: dict[str, Mapping[str, Any]]
    rows: dict[str, int]
    unchanged: dict[str, int]

    def copy(self, previous: Path, into: Path) -> None:
        """Copy the config's files from the previous output into the new one (their bytes, as they are)."""
        for relative in self.files:
            (into / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(previous / relative, into / relative)


def _shown(value: Any) -> str:
    text = ",".join(map(str, value)) if isinstance(value, list) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def differences(previous: Mapping[str, Any], settings: Mapping[str, Any]) -> list[str]:
    """What differs between a previous output's manifest and the settings of a new scramble, in words.

    >>> differences({"seed": 0, "columns": ["q"], "version": "1"}, {"seed": 3, "columns": ["q"], "version": "1"})
    ['seed 0 (asked: 3)']
    >>> differences({"source_files": {"a.jsonl": "ab"}}, {"source_files": {"a.jsonl": "cd"}})
    ['other input files']
    >>> differences({"source": {"source": "a.jsonl"}}, {"source": {"source": "b.jsonl"}})
    ['source a.jsonl (asked: b.jsonl)']
    """
    found = []
    for key in COMPARED:
        theirs, mine = previous.get(key), settings.get(key)
        if key == "kept_splits":
            theirs, mine = theirs or [], mine or []
        if theirs == mine:
            continue
        if key == "source_files":
            found.append("other input files")
        elif key == "source" and (theirs or {}).get("source") != (mine or {}).get("source"):
            found.append(f"source {(theirs or {}).get('source')} (asked: {(mine or {}).get('source')})")
        else:
            found.append(f"{key.replace('_', ' ')} {_shown(theirs)} (asked: {_shown(mine)})")
    return found


def kept_configs(
    out: Path, previous: Mapping[str, Any], settings: Mapping[str, Any], asked: Sequence[Variant]
) -> tuple[list[KeptConfig], list[Variant]]:
    """The configs of the previous output in ``out`` the new output keeps, and those it must scramble again
    (a file changed since, or an output written before the counts of unchanged texts were recorded); a
    one-line error where the previous output was made with other settings.

    >>> import tempfile
    >>> kept_configs(Path(tempfile.mkdtemp()), {"seed": 0, "configs": ["kfl"]}, {"seed": 1}, [Variant("sub", "sub")])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: output ... holds a scramble of seed 0 (asked: 1): adding sub to it would mix two scrambles; pass --replace to replace it, or --out another folder
    """
    if previous.get("tasks") is not None:  # the top of a harness-task output (`scramble lm-eval:TASK`)
        raise ScrambledBenchError(
            f"output {out} holds the scramble of harness tasks ({previous.get('source')}); scramble that source "
            "again to add types to it, or pass --replace to replace it, or --out another folder"
        )
    found = differences(previous, settings)
    if found:
        names = ",".join(variant.config for variant in asked)
        raise ScrambledBenchError(
            f"output {out} holds a scramble of {'; '.join(found)}: adding {names} to it would mix two "
            "scrambles; pass --replace to replace it, or --out another folder"
        )
    asked_configs = {variant.config for variant in asked}
    outputs = previous.get("outputs") or {}
    counts = previous.get("unchanged") or {}
    kept, again = [], []
    for config in previous.get("configs") or []:
        if config in asked_configs:
            continue
        variant = Variant(config, config, float(previous.get("sample_rate", 100.0)))
        files = {
            relative: entry
            for relative, entry in outputs.items()
            if isinstance(entry, Mapping) and entry.get("config") == config
        }
        intact = bool(files) and all(
            (out / relative).is_file() and file_sha256(out / relative) == entry.get("sha256")
            for relative, entry in files.items()
        )
        if not intact or config not in counts:
            again.append(variant)
            continue
        rows: dict[str, int] = {}
        for entry in files.values():
            rows[entry["split"]] = rows.get(entry["split"], 0) + int(entry["rows"])
        kept.append(KeptConfig(variant, files, rows, dict(counts[config])))
    return kept, again


@dataclass(frozen=True)
class GrownOutput:
    """A previous output in ``out`` that a scramble grows: its manifest, the configs the new output keeps as
    they are (``kept``) and those it scrambles again (``again``: :func:`kept_configs`)."""

    out: Path
    manifest: Mapping[str, Any]
    kept: tuple[KeptConfig, ...]
    again: tuple[Variant, ...]

    @classmethod
    def of(
        cls, out: Path, manifest: Mapping[str, Any], settings: Mapping[str, Any], asked: Sequence[Variant]
    ) -> GrownOutput:
        """The previous output in ``out`` grown by the ``asked`` variants; refused (one line) where its
        ``settings`` differ."""
        kept, again = kept_configs(out, manifest, settings, asked)
        return cls(out, manifest, tuple(kept), tuple(again))

    def merge(
        self,
        tmp: Path,
        written: Sequence[Variant],
        rows: Mapping[str, dict[str, int]],
        unchanged: Mapping[str, dict[str, int]],
    ) -> tuple[tuple[Variant, ...], dict[str, dict[str, int]], dict[str, dict[str, int]]]:
        """Copy the kept configs into ``tmp``, beside the ``written`` ones, and return the grown output's
        variants (the previous output's configs in their order, then the new ones) with, in that order, the
        rows per split and the counts of unchanged texts of each."""
        for config in self.kept:
            config.copy(self.out, tmp)
        rows = {**rows, **{config.variant.config: config.rows for config in self.kept}}
        unchanged = {**unchanged, **{config.variant.config: config.unchanged for config in self.kept}}
        variants = self._order(written)
        return (
            variants,
            {variant.config: rows[variant.config] for variant in variants},
            {variant.config: unchanged[variant.config] for variant in variants},
        )

    def _order(self, written: Sequence[Variant]) -> tuple[Variant, ...]:
        by_config = {config.variant.config: config.variant for config in self.kept}
        by_config.update({variant.config: variant for variant in written})
        order = [config for config in self.manifest.get("configs") or [] if config in by_config]
        order += [config for config in by_config if config not in order]
        return tuple(by_config[config] for config in order)
