"""Run-folder persistence: every answer is on disk the moment it arrives, so a run can always resume.

A run folder holds two append-only JSON Lines files:

- ``samples.jsonl``: one object per completed request, keyed by ``key`` (the request's resume key);
- ``errors.jsonl``: requests that still failed after all retries (``key``, ``error_type``, ``message``...).
  They are not in ``samples.jsonl``, so the next resume sends them again.

Each record is written with a single ``os.write`` on an ``O_APPEND`` descriptor and ``fsync``-ed before the
next one, so a process killed with SIGKILL leaves at most one cut-off last line. On the next open that
fragment (or any other line that is not a JSON object with a ``key``) is moved to ``<file>.corrupt``,
reported in :attr:`RunStore.warnings`, and every other line is kept. An advisory ``flock`` on the folder
stops two processes from appending to the same run at once (the kernel drops it when a process dies).

Methods are thread-safe, so the engine can write from a worker thread (an ``fsync`` takes milliseconds
and must not stall the event loop) and commit several records with one ``fsync`` (:meth:`append_many`).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.io import atomic_write_text, creation_mode, lock_folder

SAMPLES_FILE = "samples.jsonl"
ERRORS_FILE = "errors.jsonl"
LOCK_FILE = ".lock"


def encode_record(record: dict[str, Any]) -> bytes:
    """One record as one JSON line (UTF-8, newline-terminated).

    >>> encode_record({"key": "k", "output": "é"})
    b'{"key": "k", "output": "\\xc3\\xa9"}\\n'
    """
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")


def parse_lines(data: bytes) -> tuple[list[dict[str, Any]], list[tuple[int, bytes, str]]]:
    """Split a JSONL file's bytes into valid records and bad lines ``(line_number, raw, reason)``.

    A record is valid when it is a JSON object with a string ``key``; a last line without its newline is
    bad even if it parses (it may be a cut-off prefix that happens to be valid JSON).

    >>> good, bad = parse_lines(b'{"key": "a"}\\n[1]\\n{"key": "b"')
    >>> [r["key"] for r in good], [(n, reason) for n, _, reason in bad]
    (['a'], [(2, 'not a JSON object with a "key"'), (3, 'truncated (no newline at the end of the file)')])
    """
    records: list[dict[str, Any]] = []
    bad: list[tuple[int, bytes, str]] = []
    lines = data.split(b"\n")
    # the element after the final "\n" is b"" for a well-formed file, a fragment otherwise
    for index, raw in enumerate(lines):
        line_number = index + 1
        is_last = index == len(lines) - 1
        if not raw.strip():
            continue
        if is_last:
            bad.append((line_number, raw, "truncated (no newline at the end of the file)"))
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            bad.append((line_number, raw, f"not valid JSON ({exc.__class__.__name__})"))
            continue
        if not isinstance(record, dict) or not isinstance(record.get("key"), str):
            bad.append((line_number, raw, 'not a JSON object with a "key"'))
            continue
        records.append(record)
    return records, bad


class RunStore:
    """The samples and errors of one run folder; see the module docstring for the guarantees.

    >>> import tempfile, pathlib
    >>> store = RunStore(pathlib.Path(tempfile.mkdtemp()))
    >>> store.append({"key": "k1", "output": "hello"})
    True
    >>> store.append({"key": "k1", "output": "again"})  # a key is never written twice
    False
    >>> store.record_error("k2", error_type="timeout", message="no answer after 120 s")
    >>> sorted(store.completed()), sorted(store.errors())
    (['k1'], ['k2'])
    >>> store.close()
    """

    def __init__(self, run_dir: str | os.PathLike[str]):
        self.run_dir = Path(run_dir)
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ScrambledBenchError(
                f"cannot create run folder {self.run_dir}: {exc.strerror or exc}"
            ) from None
        self.samples_path = self.run_dir / SAMPLES_FILE
        self.errors_path = self.run_dir / ERRORS_FILE
        #: one line per problem found while loading (corrupt lines, duplicated keys), for the CLI to print
        self.warnings: list[str] = []
        self._mutex = threading.Lock()
        self._lock_fd = self._acquire_lock()
        try:
            self._completed = self._load_unique(self.samples_path)
            self._errors = self._load_latest(self.errors_path)
            self._samples_fd = self._open_append(self.samples_path)
            self._errors_fd = self._open_append(self.errors_path)
        except BaseException:
            self.close()  # release the folder lock now, not whenever the object is collected
            raise

    # -- reading -----------------------------------------------------------------------------------------

    def completed(self) -> dict[str, dict[str, Any]]:
        """Completed requests, key -> record (a copy; each key once)."""
        with self._mutex:
            return dict(self._completed)

    def errors(self) -> dict[str, dict[str, Any]]:
        """Unresolved failures: the latest error record of every key that has no sample yet."""
        with self._mutex:
            return {key: record for key, record in self._errors.items() if key not in self._completed}

    # -- writing -----------------------------------------------------------------------------------------

    def append(self, record: dict[str, Any]) -> bool:
        """Persist one completed request (durably, before returning). Returns ``False``, writing nothing,
        when its key is already stored."""
        return self.append_many([record])[0]

    def append_many(self, records: list[dict[str, Any]]) -> list[bool]:
        """Persist several completed requests with one write and one ``fsync`` ("group commit").
        Returns, per record, whether it was written (``False`` for a key already stored or repeated)."""
        for record in records:
            key = record.get("key")
            if not isinstance(key, str) or not key:
                raise ValueError(f"a sample record needs a non-empty string 'key', got {key!r}")
        with self._mutex:
            fresh: dict[str, dict[str, Any]] = {}
            written = []
            for record in records:
                is_new = record["key"] not in self._completed and record["key"] not in fresh
                if is_new:
                    fresh[record["key"]] = record
                written.append(is_new)
            if fresh:
                self._write(
                    self._samples_fd, self.samples_path, b"".join(encode_record(r) for r in fresh.values())
                )
                self._completed.update(fresh)
            return written

    def adopt(self, records: list[dict[str, Any]]) -> int:
        """Add answers found in other run folders (:func:`shared_records`); returns how many were added. A
        key hashes the model, prompt and decoding settings, so a record with the same key is the answer to
        this very request, wherever it was sent from."""
        return sum(self.append_many(records)) if records else 0

    def record_error(self, key: str, *, error_type: str, message: str, **fields: Any) -> None:
        """Persist a request that failed after all its retries; it is re-sent on the next resume."""
        record = {"key": key, "error_type": error_type, "message": message, **fields}
        with self._mutex:
            self._write(self._errors_fd, self.errors_path, encode_record(record))
            self._errors[key] = record

    def close(self) -> None:
        """Close the files and release the folder lock (also released if the process dies); the lock file
        goes with it, so a finished run folder holds only its results."""
        mutex = getattr(self, "_mutex", None)
        if mutex is None:  # __init__ failed before any file was opened
            return
        with mutex:
            for name in ("_samples_fd", "_errors_fd"):
                fd = getattr(self, name, None)
                if fd is not None:
                    os.close(fd)
                    setattr(self, name, None)
            if getattr(self, "_lock_fd", None) is not None:
                # removed while still held: a process that opened it meanwhile finds it unlinked when it gets
                # the lock, and starts over on a new file (see _acquire_lock)
                (self.run_dir / LOCK_FILE).unlink(missing_ok=True)
                os.close(self._lock_fd)
                self._lock_fd = None

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort when a caller forgets close()
        try:
            self.close()
        except OSError:
            pass

    # -- internals ---------------------------------------------------------------------------------------

    def _acquire_lock(self) -> int:
        return lock_folder(self.run_dir, LOCK_FILE, "another scrambled-bench process")

    def _open_append(self, path: Path) -> int:
        try:
            return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, creation_mode())
        except OSError as exc:
            raise ScrambledBenchError(f"cannot write {path}: {exc.strerror or exc}") from None

    @staticmethod
    def _write(fd: int | None, path: Path, data: bytes) -> None:
        if fd is None:
            raise ValueError(f"{path} is closed")
        view = memoryview(data)
        try:
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        except OSError as exc:
            raise ScrambledBenchError(f"cannot write {path}: {exc.strerror or exc}") from None

    def _read_valid(self, path: Path) -> list[dict[str, Any]]:
        """Valid records of ``path``; bad lines are moved to ``<path>.corrupt`` and reported."""
        if not path.exists():
            return []
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ScrambledBenchError(f"cannot read {path}: {exc.strerror or exc}") from None
        records, bad = parse_lines(data)
        if bad:
            quarantine = path.with_name(path.name + ".corrupt")
            with quarantine.open("ab") as handle:
                for _, raw, _ in bad:
                    handle.write(raw + b"\n")
                handle.flush()
                os.fsync(handle.fileno())
            # rewrite without the bad lines (atomically), so later appends start on a clean line
            atomic_write_text(path, "".join(encode_record(r).decode("utf-8") for r in records))
            for line_number, _, reason in bad:
                self.warnings.append(
                    f"{path}:{line_number}: {reason}; line moved to {quarantine.name}, the rest kept"
                )
        return records

    def _load_unique(self, path: Path) -> dict[str, dict[str, Any]]:
        unique: dict[str, dict[str, Any]] = {}
        for record in self._read_valid(path):
            key = record["key"]
            if key in unique:
                self.warnings.append(f"{path}: key {key} appears more than once; the first record is kept")
                continue
            unique[key] = record
        return unique

    def _load_latest(self, path: Path) -> dict[str, dict[str, Any]]:
        latest: dict[str, dict[str, Any]] = {}
        for record in self._read_valid(path):
            latest[record["key"]] = record
        return latest


def shared_records(run_dir: Path, keys: set[str]) -> list[dict[str, Any]]:
    """Records for ``keys`` that the other run folders beside ``run_dir`` already hold (the first found of
    each), for :meth:`RunStore.adopt`; a folder being written by another process is read as far as it is
    whole."""
    run_dir = Path(run_dir)
    found: dict[str, dict[str, Any]] = {}
    parent = run_dir.parent
    if not keys or not parent.is_dir():
        return []
    have = set()
    if (run_dir / SAMPLES_FILE).is_file():
        have = {record["key"] for record in parse_lines((run_dir / SAMPLES_FILE).read_bytes())[0]}
    wanted = keys - have
    for folder in sorted(parent.iterdir()):
        samples = folder / SAMPLES_FILE
        if not wanted or folder.resolve() == run_dir.resolve() or not samples.is_file():
            continue
        try:
            records, _ = parse_lines(samples.read_bytes())
        except OSError:
            continue
        for record in records:
            key = record["key"]
            if key in wanted and key not in found:
                found[key] = {**record, "adopted_from": folder.name}
        wanted -= set(found)
    return list(found.values())
