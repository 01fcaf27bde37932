"""The folder ``scramble HARNESS:SPEC --out DIR`` writes: its manifest, and the previous output it grows.

As ``scramble`` of a dataset grows (``builder.scramble.previous``), scrambling a harness task again into a
previous output of the same source, columns, seed and demonstrations (by the same version and random
streams) adds the types asked for and keeps those it held: the task files name them all. An output made
otherwise is refused in one line (adding to it would mix two scrambles) unless ``--replace``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrambled_bench import __version__
from scrambled_bench.builder.build import swap_into_place
from scrambled_bench.builder.manifest import Manifest
from scrambled_bench.builder.scramble import MANIFEST_KIND, is_scramble_output
from scrambled_bench.builder.scrambler import STREAM_VERSION
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.integrations.base import ScrambleRequest
from scrambled_bench.integrations.registry import get_harness


def previous_types(out: Path, replace: bool, **settings: Any) -> tuple[str, ...]:
    """The types of a previous harness-task output in ``out`` that the new one grows (none: there is no
    previous output, or ``replace``); a one-line error where it was made with other ``settings`` (source,
    columns, seed, demonstrations), another version or other streams, or is not a harness task's output.

    >>> import tempfile
    >>> previous_types(Path(tempfile.mkdtemp()) / "new", False, source="lm-eval:arc_easy")
    ()
    """
    if replace or not is_scramble_output(out):
        return ()
    previous = Manifest.read(out).data
    if previous.get("tasks") is None:
        raise ScrambledBenchError(
            f"output {out} holds a scramble of {previous.get('source', {}).get('source')}, not of a harness "
            "task; pass --replace to replace it, or --out another folder"
        )
    asked = {**settings, "version": __version__, "stream_version": STREAM_VERSION}
    differences = [
        f"{key.replace('_', ' ')} {previous.get(key)} (asked: {value})"
        for key, value in asked.items()
        if previous.get(key) != value
    ]
    if differences:
        raise ScrambledBenchError(
            f"output {out} holds a scramble of {'; '.join(differences)}: adding to it would mix two scrambles; "
            "pass --replace to replace it, or --out another folder"
        )
    return tuple(previous.get("types") or ())


@contextmanager
def staged_output(out: Path) -> Iterator[Path]:
    """A new folder beside ``out`` to write a whole output into: it replaces ``out`` when the block ends and
    is removed when the block raises, so ``out`` is never half-written.

    >>> out = Path(tempfile.mkdtemp()) / "variants"
    >>> with staged_output(out) as folder:
    ...     write_manifest(folder, {"tasks": ["t"]})
    >>> json.loads((out / "manifest.json").read_text())
    {'tasks': ['t']}
    """
    folder = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.tmp-"))
    try:
        yield folder
        swap_into_place(folder, out)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def write_manifest(folder: Path, manifest: Mapping[str, Any]) -> None:
    """``folder/manifest.json``, indented, as every harness's output holds it."""
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def manifest_head(request: ScrambleRequest, harness: str, tasks: Sequence[str]) -> dict[str, Any]:
    """What every harness's ``DIR/manifest.json`` starts with: the kind, versions, source, harness, tasks,
    every type the output holds, the columns and the seed.

    >>> request = ScrambleRequest("inspect:t.py@p", "t.py@p", ("input",), ("kfl",), Path("o"), previous_types=("sub",))
    >>> head = manifest_head(request, "inspect", ["p"])
    >>> head["harness"], head["types"], head["columns"], head["stream_version"] > 0
    ('inspect', ['sub', 'kfl'], ['input'], True)
    """
    head: Mapping[str, Any] = {
        "kind": MANIFEST_KIND,
        "version": __version__,
        "stream_version": STREAM_VERSION,
        "source": request.source,
        "harness": harness,
        "tasks": list(tasks),
        "types": list(request.all_types),
        "columns": list(request.columns),
        "seed": request.seed,
    }
    return dict(head)


@dataclass(frozen=True)
class OutputVariants:
    """What a ``scramble`` output holds to run: for a harness task's output, the harness, its canonical tasks
    and their variants by the names the harness runs them under; for a dataset's output (``harness`` None),
    its configs (one per type or recipe) as ``variants``."""

    folder: Path
    harness: str | None
    canonical: tuple[str, ...]
    variants: tuple[str, ...]


def output_variants(folder: Path) -> OutputVariants:
    """The variants a ``scramble`` output in ``folder`` holds, read from its ``manifest.json``; a one-line
    error where the folder is missing or not a ``scramble`` output.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> write_manifest(out, {"kind": MANIFEST_KIND, "version": "1", "outputs": {}, "harness": "lm-eval",
    ...                      "tasks": ["arc_easy"], "types": ["kfl", "sub"]})
    >>> output_variants(out).variants
    ('arc_easy_kfl', 'arc_easy_sub')
    >>> output_variants(out / "missing")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: ...missing: no such folder
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ScrambledBenchError(
            f"{folder}: {'a file, not a folder' if folder.exists() else 'no such folder'}"
        )
    if not Manifest.exists(folder):
        raise ScrambledBenchError(f"{folder} is not a `scrambled-bench scramble` output (no manifest.json)")
    manifest = Manifest.read(folder).data  # one line where it is not a manifest this package writes
    if manifest.get("kind") != MANIFEST_KIND:
        raise ScrambledBenchError(
            f"{folder} is not a `scrambled-bench scramble` output (its manifest.json is a build's: its configs "
            "are the dataset's, `scrambled-bench build`)"
        )
    harness = manifest.get("harness")
    if harness is None:
        return OutputVariants(folder, None, (), tuple(manifest.get("configs") or ()))
    tasks, types = manifest.get("tasks"), manifest.get("types")
    if not tasks or not types:
        raise ScrambledBenchError(
            f"{folder}/manifest.json names no tasks and types (written by the harness {harness!r})"
        )
    named = get_harness(str(harness))
    variants = [name for task in tasks for name in named.variant_names(str(task), [str(t) for t in types])]
    return OutputVariants(folder, named.name, tuple(map(str, tasks)), tuple(variants))


__all__ = ["OutputVariants", "manifest_head", "output_variants", "previous_types"]
