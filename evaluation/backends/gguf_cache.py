"""A GGUF de-quantised once: the float32 checkpoint transformers makes of a ``.gguf`` file, kept as
safetensors in the user's cache so that every later load reads it instead of de-quantising again.

transformers reads a GGUF by de-quantising every tensor to float32 in Python (about 20 s of CPU for the
135M-parameter SmolLM2, minutes for a 7B model) and converting its tokenizer. The result, saved with
``save_pretrained`` (weights, config, generation config, tokenizer), loads in seconds. An entry is
``$XDG_CACHE_HOME/scrambled_bench/gguf-dequantised/<sha256 of the .gguf>/`` (default
``~/.cache/scrambled_bench/...``), about four bytes a parameter on disk; deleting the folder is always safe.

An entry is written into a temporary folder beside it and renamed into place only once complete, its
``manifest.json`` last, so a killed process leaves no entry that looks whole. It is used only when its
manifest names the same GGUF digest and the same transformers and gguf versions (a newer de-quantiser may
give other weights), and when every file it lists has its recorded size and sha256; anything else is
rebuilt from the GGUF, said once on stderr.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrambled_bench.io import creation_mode, file_sha256, user_cache_dir

MANIFEST = "manifest.json"
#: bump when an entry's layout changes: older entries are then rebuilt, never misread
CACHE_FORMAT = 1


def cache_root() -> Path:
    """Where de-quantised GGUFs are kept (``$XDG_CACHE_HOME/scrambled_bench/gguf-dequantised``)."""
    return user_cache_dir("gguf-dequantised")


def dequantiser_versions() -> dict[str, str]:
    """The versions that make the weights of a de-quantised GGUF: an entry made by others is rebuilt."""
    from importlib import metadata

    found = {"format": str(CACHE_FORMAT)}
    for name in ("transformers", "gguf"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "absent"
    return found


@dataclass(frozen=True)
class CachedGGUF:
    """A usable entry: the folder ``from_pretrained`` loads, and the GGUF it was made from."""

    folder: Path
    gguf_sha256: str


def entry_folder(gguf_sha256: str, root: Path | None = None) -> Path:
    """The entry of the GGUF whose sha256 is ``gguf_sha256``.

    >>> entry_folder("ab" * 32, Path("/cache")).as_posix() == "/cache/" + "ab" * 32
    True
    """
    return (root or cache_root()) / gguf_sha256


def problem_with(folder: Path, gguf_sha256: str) -> str | None:
    """Why the entry in ``folder`` cannot be used (``None``: it can): no manifest, another GGUF or
    de-quantiser, or a file missing, of another size or another sha256 than recorded.

    >>> import tempfile
    >>> problem_with(Path(tempfile.mkdtemp()), "00")
    'no manifest.json'
    """
    manifest_path = folder / MANIFEST
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"no {MANIFEST}"
    except (OSError, ValueError) as exc:
        return f"unreadable {MANIFEST} ({exc})"
    if not isinstance(manifest, dict) or manifest.get("gguf_sha256") != gguf_sha256:
        return f"{MANIFEST} names another GGUF"
    if manifest.get("made_by") != dequantiser_versions():
        return f"made by {manifest.get('made_by')}, not {dequantiser_versions()}"
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return f"{MANIFEST} lists no files"
    for name, recorded in files.items():
        path = folder / name
        if not path.is_file():
            return f"{name} is missing"
        if path.stat().st_size != recorded.get("size"):
            return f"{name} has {path.stat().st_size} bytes, not {recorded.get('size')}"
    for name, recorded in files.items():  # sizes first: a truncated file is told without reading it
        if file_sha256(folder / name) != recorded.get("sha256"):
            return f"{name} is not the file that was written (sha256 differs)"
    return None


def find_entry(gguf_sha256: str, root: Path | None = None) -> tuple[CachedGGUF | None, str | None]:
    """The usable entry of a GGUF, or ``(None, why not)``; ``why not`` is ``None`` where there is none at all."""
    folder = entry_folder(gguf_sha256, root)
    if not folder.exists():
        return None, None
    problem = problem_with(folder, gguf_sha256)
    if problem is not None:
        return None, problem
    return CachedGGUF(folder, gguf_sha256), None


def store_entry(
    gguf_sha256: str,
    gguf_name: str,
    model: Any,
    tokenizer: Any,
    root: Path | None = None,
    *,
    replace: bool = False,
) -> CachedGGUF:
    """Save a GGUF's de-quantised ``model`` (float32, as transformers made it) and ``tokenizer`` as its
    entry, atomically: written and synced in a temporary folder beside it, renamed into place last. An
    unusable entry already there is replaced, and so is any with ``replace`` (one that looked whole but
    did not load); otherwise a usable one another process put there first is kept."""
    folder = entry_folder(gguf_sha256, root)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{gguf_sha256[:16]}.", suffix=".tmp"))
    try:
        os.chmod(staging, creation_mode(folder=True))  # mkdtemp makes it private; an entry is shareable
        model.save_pretrained(staging, safe_serialization=True)
        tokenizer.save_pretrained(staging)
        files = {}
        for path in sorted(p for p in staging.iterdir() if p.is_file()):
            with path.open("rb") as handle:
                os.fsync(handle.fileno())
            files[path.name] = {"size": path.stat().st_size, "sha256": file_sha256(path)}
        manifest = {
            "kind": "scrambled-bench de-quantised GGUF",
            "gguf_sha256": gguf_sha256,
            "gguf_name": gguf_name,
            "dtype": str(model.dtype).removeprefix("torch."),
            "made_by": dequantiser_versions(),
            "files": files,
        }
        with (staging / MANIFEST).open("w", encoding="utf-8") as handle:
            json.dump(manifest, handle, indent=2)
            handle.flush()
            os.fsync(handle.fileno())
        if folder.exists():
            if not replace and problem_with(folder, gguf_sha256) is None:  # another process came first
                return CachedGGUF(folder, gguf_sha256)
            _remove(folder)
        try:
            os.rename(staging, folder)
        except OSError:
            if problem_with(folder, gguf_sha256) is not None:
                raise
        return CachedGGUF(folder, gguf_sha256)
    finally:
        if staging.exists():
            _remove(staging)


def _remove(folder: Path) -> None:
    """Delete an entry (or a staging folder): renamed aside first, so no reader ever sees half of one."""
    aside = folder.with_name(f".{folder.name}.{os.getpid()}.deleting")
    try:
        os.rename(folder, aside)
    except OSError:
        return
    shutil.rmtree(aside, ignore_errors=True)


def say(message: str) -> None:
    """One line on stderr (the cache is used by the backend and the probe alike, CLI or not)."""
    print(message, file=sys.stderr, flush=True)
