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

**Whose answer.** A key hashes the request (model, prompt, chat, decoding), not who answered it. Every
record names the endpoint that gave it (``endpoint``: what the backend's ``endpoint_of`` reads from its
health check, e.g. the URL and the model's id, or TGI's model sha), and an answer is reused, from the run
folder or from another one beside it, only for that endpoint (:class:`Reuse`); replicas of one model's
weights share answers only when the run says so. Records written before records named their endpoint
(:func:`legacy_endpoint`) are taken as the endpoint their folder's config.json named, as far as it named one.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends import BACKENDS
from scrambled_bench.io import atomic_write_text, creation_mode, lock_folder

SAMPLES_FILE = "samples.jsonl"
ERRORS_FILE = "errors.jsonl"
LOCK_FILE = ".lock"
CONFIG_FILE = "config.json"
ENDPOINT = "endpoint"
"""The field of a record (and of config.json) that names the endpoint that answered."""


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
        key hashes the model, prompt and decoding settings, so a record with the same key answers this very
        request; :func:`shared_records` picks only those of the endpoints the run accepts."""
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


def read_config(folder: Path) -> dict[str, Any]:
    """A run folder's config.json, or ``{}`` where it is missing or unreadable (a folder read only for its
    answers must not stop a run)."""
    try:
        config = json.loads((Path(folder) / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return config if isinstance(config, dict) else {}


def legacy_endpoint(folder: Path, config: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The endpoint of the records ``folder`` holds from before records named theirs: what config.json
    says. One written since says it outright (``legacy_endpoint``, carried from run to run); an older one is
    read for it: its backend's fields of the health check it recorded (``fingerprint``), which may be fewer
    than a health check gives now (no model root, say). None where config.json cannot tell.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "config.json").write_text(json.dumps({"fingerprint": {
    ...     "backend": "openai", "base_url": "http://h:8080/v1", "model": "m", "served_models": ["m"]}}))
    >>> legacy_endpoint(folder)
    {'backend': 'openai', 'base_url': 'http://h:8080/v1', 'model': 'm'}
    """
    config = read_config(folder) if config is None else config
    if ENDPOINT in config:  # written since records name their endpoint
        stated = config.get("legacy_endpoint")
        return dict(stated) if isinstance(stated, Mapping) else None
    fingerprint = config.get("fingerprint")
    if not isinstance(fingerprint, Mapping) or fingerprint.get("backend") not in BACKENDS:
        return None
    return BACKENDS[fingerprint["backend"]].endpoint_of(fingerprint) or None


@dataclass(frozen=True)
class Reuse:
    """Which stored answers a run takes as its own: those its ``endpoint`` gave, or, for ``replicas`` (the
    run says every endpoint serving its model serves the same weights), any endpoint's.

    A record written before records named their endpoint is taken as the endpoint its folder's config.json
    named (``legacy``, see :func:`legacy_endpoint`) where that agrees with this endpoint on everything it
    names; a folder that named none gives none of them.

    >>> reuse = Reuse({"backend": "openai", "base_url": "http://a/v1", "model": "m"})
    >>> reuse.accepts({"endpoint": {"backend": "openai", "base_url": "http://b/v1", "model": "m"}})
    False
    >>> reuse.accepts({"key": "k"}, legacy={"backend": "openai", "base_url": "http://a/v1"}), reuse.accepts({"key": "k"})
    (True, False)
    """

    endpoint: Mapping[str, Any]
    replicas: bool = False

    def answered_by(
        self, record: Mapping[str, Any], legacy: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The endpoint that gave ``record`` (``{}``: unknown, a record of before endpoints were recorded,
        in a folder whose config.json names none)."""
        if ENDPOINT in record:
            return dict(record[ENDPOINT] or {})
        return dict(legacy or {})

    def accepts(self, record: Mapping[str, Any], legacy: Mapping[str, Any] | None = None) -> bool:
        if self.replicas:
            return True
        if ENDPOINT in record:
            return dict(record[ENDPOINT] or {}) == dict(self.endpoint)
        return bool(legacy) and all(self.endpoint.get(name) == value for name, value in legacy.items())


def endpoint_text(endpoint: Mapping[str, Any]) -> str:
    """An endpoint in a line: its fields' values, the backend first.

    >>> endpoint_text({"backend": "tgi", "base_url": "http://h:8080", "model_sha": "abc"})
    'tgi http://h:8080 model_sha=abc'
    >>> endpoint_text({})
    'an endpoint not recorded'
    """
    if not endpoint:
        return "an endpoint not recorded"
    named = {"backend", "base_url", "model"}
    parts = [str(endpoint[name]) for name in ("backend", "base_url") if endpoint.get(name) is not None]
    if endpoint.get("model") is not None:
        parts.append(f"model {endpoint['model']}")
    parts += [f"{name}={value}" for name, value in endpoint.items() if name not in named]
    return " ".join(parts)


def shared_records(run_dir: Path, keys: set[str], reuse: Reuse) -> list[dict[str, Any]]:
    """Records for ``keys`` that the other run folders beside ``run_dir`` already hold from an endpoint
    ``reuse`` accepts (the first found of each), for :meth:`RunStore.adopt`; each says the folder it came
    from (``adopted_from``) and the endpoint that gave it (a record of before endpoints were recorded: the
    one its folder's config.json named). A folder being written by another process is read as far as it is
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
        legacy = legacy_endpoint(folder)
        for record in records:
            key = record["key"]
            if key in wanted and key not in found and reuse.accepts(record, legacy):
                found[key] = {
                    **record,
                    ENDPOINT: reuse.answered_by(record, legacy),
                    "adopted_from": folder.name,
                }
        wanted -= set(found)
    return list(found.values())


def foreign_answers(
    records: Mapping[str, Mapping[str, Any]], keys: set[str], reuse: Reuse, legacy: Mapping[str, Any] | None
) -> Counter[str]:
    """How many of the answers to ``keys`` in a run folder's ``records`` came from endpoints ``reuse``
    does not accept, by endpoint (as :func:`endpoint_text` writes it)."""
    return Counter(
        endpoint_text(reuse.answered_by(record, legacy))
        for key, record in records.items()
        if key in keys and not reuse.accepts(record, legacy)
    )


def answers_by_endpoint(
    records: Mapping[str, Mapping[str, Any]], keys: set[str], legacy: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    """Every endpoint that gave the answers to ``keys`` in ``records``: the endpoint, how many answers,
    the ``system_fingerprint`` values its replies carried (with their counts), and the run folders the
    answers were taken from. Most answers first.

    >>> records = {"a": {"endpoint": {"backend": "openai", "base_url": "http://a/v1"}, "system_fingerprint": "fp1"},
    ...            "b": {"endpoint": {"backend": "openai", "base_url": "http://b/v1"}, "adopted_from": "run-b"}}
    >>> [(e["endpoint"]["base_url"], e["answers"], e["system_fingerprints"], e["adopted_from"]) for e in answers_by_endpoint(records, {"a", "b"}, None)]
    [('http://a/v1', 1, {'fp1': 1}, {}), ('http://b/v1', 1, {}, {'run-b': 1})]
    """
    reader = Reuse({})
    groups: dict[str, dict[str, Any]] = {}
    for key, record in records.items():
        if key not in keys:
            continue
        endpoint = reader.answered_by(record, legacy)
        entry = groups.setdefault(
            json.dumps(endpoint, sort_keys=True, default=str),
            {"endpoint": endpoint, "answers": 0, "system_fingerprints": Counter(), "adopted_from": Counter()},
        )
        entry["answers"] += 1
        if record.get("system_fingerprint"):
            entry["system_fingerprints"][str(record["system_fingerprint"])] += 1
        if record.get("adopted_from"):
            entry["adopted_from"][str(record["adopted_from"])] += 1
    listed = sorted(groups.values(), key=lambda entry: -entry["answers"])
    return [
        {
            **entry,
            "system_fingerprints": dict(entry["system_fingerprints"]),
            "adopted_from": dict(entry["adopted_from"]),
        }
        for entry in listed
    ]
