"""Small I/O helpers shared by the builder, the metrics CLI and the evaluation runner.

They live at the edges: everything else in the package is pure functions over strings and lists.
"""

from __future__ import annotations

import fcntl
import gzip
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError


def parse_jsonl_lines(
    lines: Iterable[str], location: str, required: Sequence[str] = ()
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line_number, object)`` for every non-blank line of JSON Lines text, each an object with the
    ``required`` fields; anything else is a one-line :class:`ScrambledBenchError` naming ``location`` and line.

    >>> text = chr(10).join(['{"a": 1}', '', '{"a": 2}'])
    >>> [(n, row["a"]) for n, row in parse_jsonl_lines(text.splitlines(), "x.jsonl", required=("a",))]
    [(1, 1), (3, 2)]
    >>> list(parse_jsonl_lines(['{"b": 1}'], "x.jsonl", required=("a",)))
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: x.jsonl:1: missing field(s) a
    """
    for line_number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ScrambledBenchError(f"{location}:{line_number}: not valid JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise ScrambledBenchError(
                f"{location}:{line_number}: expected a JSON object, got {type(row).__name__}"
            )
        missing = [field for field in required if field not in row]
        if missing:
            raise ScrambledBenchError(f"{location}:{line_number}: missing field(s) {', '.join(missing)}")
        yield line_number, row


def read_jsonl(
    path: str | os.PathLike[str], *, required: tuple[str, ...] = ()
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, row)`` for every non-blank line of a JSONL file (``.gz`` is read transparently).

    A line that is not a JSON object, or lacks a ``required`` field, raises a
    :class:`ScrambledBenchError` naming the file and line.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
    >>> _ = p.write_text('{"a": 1}\\n\\n{"a": 2}\\n')
    >>> [(n, r["a"]) for n, r in read_jsonl(p, required=("a",))]
    [(1, 1), (3, 2)]
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        handle = opener(path, "rt", encoding="utf-8")
    except OSError as exc:
        raise ScrambledBenchError(f"cannot read {path}: {exc.strerror or exc}") from None
    with handle:
        try:
            yield from parse_jsonl_lines(handle, str(path), required)
        except (UnicodeDecodeError, EOFError, gzip.BadGzipFile) as exc:
            raise ScrambledBenchError(f"{path}: unreadable ({exc})") from None


def read_json(path: str | os.PathLike[str]) -> Any:
    """Read a whole JSON document, with a one-line error naming the file and position on failure."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScrambledBenchError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ScrambledBenchError(f"{path}: not UTF-8 text ({exc.reason})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScrambledBenchError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` so that readers see either the old or the new file, never half of one.

    >>> import os, stat, tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "results.json"
    >>> atomic_write_text(target, "{}")
    >>> target.read_text(), oct(stat.S_IMODE(target.stat().st_mode)) == oct(0o666 & ~_UMASK)
    ('{}', True)
    """
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see either the old or the new file, never half of one: a
    temporary file beside it, synced, then renamed over it (its folder is made where missing).

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "cache" / "shard.bin"
    >>> atomic_write_bytes(target, b"GGUF")
    >>> target.read_bytes(), [p.name for p in target.parent.iterdir()]
    (b'GGUF', ['shard.bin'])
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp creates the file 0600; give it the mode an ordinary open() would (0666 less the umask)
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def file_sha256(path: str | os.PathLike[str], chunk_size: int = 1 << 20) -> str:
    """Hex SHA-256 of a file, read in chunks (a model or data file's fingerprint).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "empty.gguf"
    >>> _ = path.write_bytes(b"")
    >>> file_sha256(path)[:16]
    'e3b0c44298fc1c14'
    """
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# read once, at import: os.umask can only be read by setting it, which would race with other threads
_UMASK = _read_umask()


def creation_mode(*, folder: bool = False) -> int:
    """The mode a plain ``open()`` or ``mkdir()`` gives under the user's umask, for files and folders the
    package creates otherwise (``mkstemp`` and ``mkdtemp`` create them private, which would keep colleagues
    on a shared server out of a build or a run).

    >>> creation_mode(folder=True) == 0o777 & ~_UMASK, creation_mode() == 0o666 & ~_UMASK
    (True, True)
    """
    return (0o777 if folder else 0o666) & ~_UMASK


def lock_folder(folder: Path, lock_name: str, user: str) -> int:
    """Hold ``folder`` for this process: an exclusive ``flock`` on ``folder/lock_name``, which records this
    process's pid. Returns the descriptor that holds the lock (close it to release); a folder already held is
    a one-line error naming the holder's pid as ``user``. If the holder removed the lock file as it finished,
    the file now there is locked instead (the inode re-check), so two processes never both hold the folder.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> held = lock_folder(folder, ".lock", "another run")
    >>> lock_folder(folder, ".lock", "another run")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: run folder ... is in use by another run (pid ...)
    >>> os.close(held)
    """
    lock_path = folder / lock_name
    while True:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, creation_mode())
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise ScrambledBenchError(f"run folder {folder} is in use by {user} (pid {holder})") from None
        try:
            current = os.stat(lock_path).st_ino
        except FileNotFoundError:
            current = None
        if current == os.fstat(fd).st_ino:
            break
        os.close(fd)  # the holder removed this file as it finished: lock the one there now
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
    return fd


def shared_data_dir() -> Path | None:
    """The developers' data mirror (``../shared/data``), from ``SCRAMBLED_BENCH_SHARED``; ``None`` when unset or absent.

    It exists for the project's CI and developers only; nothing a user runs depends on it.
    """
    value = os.environ.get("SCRAMBLED_BENCH_SHARED")
    if not value:
        return None
    path = Path(value).expanduser()
    if (path / "data").is_dir():
        path = path / "data"
    return path if path.is_dir() else None


def user_cache_dir(*parts: str) -> Path:
    """The package's folder in the user's cache, ``$XDG_CACHE_HOME/scrambled_bench`` (default
    ``~/.cache/scrambled_bench``), joined with ``parts``; nothing is created.

    >>> user_cache_dir("gguf-dequantised").parts[-2:]
    ('scrambled_bench', 'gguf-dequantised')
    """
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root.joinpath("scrambled_bench", *parts)
