"""The versioned, deterministic build: parquet per config, a dataset card and a manifest, written atomically.

Layout of a build folder (also the Hub repository's layout)::

    README.md                                   dataset card with the YAML ``configs:`` block
    manifest.json                               version, seed, window, sha256 of every source and output file
    data/{source}_{type}/test-00000-of-00001.parquet

Everything is written to a temporary folder beside ``out`` and renamed into place at the end, so a failed
build leaves no half-written folder behind and a previous build stays intact until the new one is whole.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrambled_bench import __version__
from scrambled_bench.builder import card
from scrambled_bench.builder.manifest import MANIFEST_NAME, Manifest
from scrambled_bench.builder.scrambler import (
    ALL_TYPES,
    STREAM_VERSION,
    TextPlace,
    parse_type,
    scramble_many,
    types_in,
)
from scrambled_bench.builder.sources import aqua, dream, realtimeqa
from scrambled_bench.builder.sources.common import SourceData, SourceRecord
from scrambled_bench.builder.sources.fetch import SourceReader, resolve_source_dir
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.io import creation_mode, file_sha256

DATASET_VERSION = "1.1.0"
"""The dataset's version (tag ``v{version}`` on the Hub); bump it when rows change. See dataset_cards/CHANGELOG.md."""

TEXT_PLACE = TextPlace("original")
"""Where a build's scrambled text lies in its row: the column ``original`` (its scrambled form is ``scrambled``),
the place its random stream is derived from (``builder.scrambler.text_rng``). The probes scramble DREAM's
dialogues at the same place, so that they see the built configs' texts."""

SOURCES = {"realtimeqa": realtimeqa, "dream": dream, "aqua": aqua}
"""Source name -> reader module (``load(reader, window=...)`` and ``INFO``)."""

PAPER_TYPES = types_in("paper", tables=True)
"""The types of the paper's main tables."""

DEFAULT_TYPES = PAPER_TYPES + types_in("letters")
"""What a build includes unless told otherwise: the paper's types plus its Appendix A.2 types."""

__all__ = ["ALL_TYPES", "DEFAULT_TYPES", "SOURCES", "build_dataset", "config_name", "scramble_source"]

CARD_NAME = "README.md"
EVAL_YAML_NAME = "eval.yaml"
"""The Hub's benchmark file (https://huggingface.co/docs/hub/eval-results), beside the card."""
ROWS_PER_GROUP = 1_000
"""Rows per parquet row group and per in-memory batch (keeps memory flat as a source grows)."""


def config_name(source: str, scramble_type: str) -> str:
    """The config name of a source and type.

    >>> config_name("dream", "kfl")
    'dream_kfl'
    """
    return f"{source}_{scramble_type}"


def data_file(config: str) -> str:
    """The parquet path of a config inside a build (the layout ``datasets`` and the Hub expect).

    >>> data_file("dream_kfl")
    'data/dream_kfl/test-00000-of-00001.parquet'
    """
    return f"data/{config}/test-00000-of-00001.parquet"


def resolve_sources(names: Sequence[str] | None) -> list[str]:
    """Validate source names (``None`` or ``all`` -> every source), keeping the canonical order.

    >>> resolve_sources(["aqua", "dream"])
    ['dream', 'aqua']
    >>> resolve_sources(["squad"])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: unknown source 'squad' (known: realtimeqa, dream, aqua)
    """
    if not names or list(names) == ["all"]:
        return list(SOURCES)
    for name in names:
        if name not in SOURCES:
            raise ScrambledBenchError(f"unknown source {name!r} (known: {', '.join(SOURCES)})")
    return [name for name in SOURCES if name in set(names)]


def resolve_types(names: Sequence[str] | None) -> list[str]:
    """Validate type names (``None``/``default`` -> :data:`DEFAULT_TYPES`, ``all`` -> :data:`ALL_TYPES`).

    The order is the order given, without repeats.

    >>> resolve_types(["kfl", "rs20", "kfl"])
    ['kfl', 'rs20']
    >>> resolve_types(["rs150"])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: scramble type 'rs150': rate 150 is outside (0, 100]
    """
    if not names or list(names) == ["default"]:
        return list(DEFAULT_TYPES)
    if list(names) == ["all"]:
        return list(ALL_TYPES)
    for name in names:
        parse_type(name)
    return list(dict.fromkeys(names))


def grown_selection(
    previous: Manifest, sources: Sequence[str], types: Sequence[str], seed: int, window: str | None
) -> tuple[list[str], list[str]]:
    """The sources and types of a build grown from ``previous`` by ``sources`` and ``types``: everything it
    had, then what is new, in order. A build of another version, seed or window is refused (one line).

    >>> old = Manifest.parse(b'{"version": "%s", "seed": 0, "window": "2023-03-17:2023-08-04", "outputs": {},'
    ...                      b' "sources": {"aqua": {}}, "types": ["original", "kfl"]}' % DATASET_VERSION.encode())
    >>> grown_selection(old, ["dream"], ["rs50", "kfl"], 0, None)
    (['dream', 'aqua'], ['original', 'kfl', 'rs50'])
    """
    asked_window = realtimeqa.format_window(realtimeqa.parse_window(window))
    differences = [
        f"{what} {theirs} (asked: {mine})"
        for what, theirs, mine in (
            ("version", previous.version, DATASET_VERSION),
            ("seed", previous.seed, seed),
            ("RealtimeQA window", previous.data.get("window"), asked_window),
        )
        if theirs != mine
    ]
    if differences:
        raise ScrambledBenchError(
            f"{previous.location}: a build of {'; '.join(differences)}: adding to it would mix two builds; "
            "pass --replace to rebuild it, or --out another folder"
        )
    had_sources = list(previous.data.get("sources") or {})
    wanted = set(had_sources) | set(sources)
    return [name for name in SOURCES if name in wanted], list(
        dict.fromkeys([*previous.data.get("types", []), *types])
    )


def build_tag(version: str, *, seed: int, window: str | None) -> str:
    """The git tag of a build: ``v{version}``, suffixed when the seed or the window is not the default.

    >>> build_tag("1.0.0", seed=0, window=None)
    'v1.0.0'
    >>> build_tag("1.0.0", seed=7, window="2026-01-01:2026-07-17")
    'v1.0.0-seed7-rtqa2026-01-01_2026-07-17'
    """
    tag = f"v{version}"
    if seed != 0:
        tag += f"-seed{seed}"
    if window is not None:
        tag += "-rtqa" + window.replace(":", "_")
    return tag


def scrambled_texts(record: SourceRecord, scramble_types: Sequence[str], *, seed: int) -> list[str]:
    """A record's text (its ``original``) under each of ``scramble_types``, at the build's place
    (:data:`TEXT_PLACE`), keyed by the record's ``scramble_key``: what every built config holds.

    >>> from scrambled_bench.builder.sources.common import SourceRecord
    >>> scrambled_texts(SourceRecord("aqua/1", {"original": "Hello there"}), ["original", "kf"], seed=0)
    ['Hello there', 'Heoll trhee']
    """
    return scramble_many(
        record.fields["original"], scramble_types, seed=seed, sample_id=record.scramble_key, place=TEXT_PLACE
    )


def _row(record: SourceRecord, columns: Sequence[tuple[str, str]], scrambled: str) -> dict[str, Any]:
    row = {"id": record.fields["id"], "original": record.fields["original"], "scrambled": scrambled}
    for column, _ in columns:
        row[column] = record.fields[column]
    return row


def scramble_source(data: SourceData, scramble_type: str, *, seed: int) -> Iterable[dict[str, Any]]:
    """The rows of one config: every record with ``scrambled`` added after ``original`` (pure, lazy).

    >>> from scrambled_bench.builder.sources.common import SourceData, SourceRecord
    >>> fields = {"id": "1", "original": "Hello there", "question": "Hello there", "choices": ["a", "b"],
    ...           "answer": "A", "rationale": "..."}
    >>> data = SourceData(info=aqua.INFO, records=[SourceRecord("aqua/1", fields)])
    >>> [(row["original"], row["scrambled"]) for row in scramble_source(data, "kf", seed=0)]
    [('Hello there', 'Heoll trhee')]
    """
    for record in data.records:
        yield _row(record, data.info.columns, scrambled_texts(record, [scramble_type], seed=seed)[0])


def family_groups(type_names: Sequence[str]) -> list[list[str]]:
    """Types grouped by family, in first-seen order: one word plan per text serves a whole group.

    >>> family_groups(["original", "rs20", "kf", "rs50"])
    [['original'], ['rs20', 'rs50'], ['kf']]
    """
    groups: dict[str, list[str]] = {}
    for name in type_names:
        groups.setdefault(parse_type(name).family, []).append(name)
    return list(groups.values())


def _arrow_schema(data: SourceData):
    import pyarrow as pa  # deferred: heavy, and `scrambled-bench --help` imports this module

    arrow = {"string": pa.string(), "bool": pa.bool_(), "list<string>": pa.list_(pa.string())}
    fields = [
        pa.field("id", pa.string()),
        pa.field("original", pa.string()),
        pa.field("scrambled", pa.string()),
    ]
    fields += [pa.field(name, arrow[kind]) for name, kind in data.info.columns]
    return pa.schema(fields)


def write_configs(
    paths: Sequence[Path], data: SourceData, scramble_types: Sequence[str], *, seed: int
) -> list[int]:
    """Write one parquet file per type of ``scramble_types`` (one family) and return their row counts.

    Records are scrambled once per family and streamed in batches of :data:`ROWS_PER_GROUP` rows, which
    are also the row groups, so memory does not grow with the source. No timestamps or paths go into
    the files: the same rows give the same bytes.
    """
    import pyarrow as pa  # deferred: heavy, and `scrambled-bench --help` imports this module
    import pyarrow.parquet as pq  # deferred: heavy

    schema = _arrow_schema(data)
    counts = [0] * len(paths)
    writers = []
    try:
        for path in paths:
            path.parent.mkdir(parents=True, exist_ok=True)
            writers.append(
                pq.ParquetWriter(
                    path, schema, compression="zstd", compression_level=9, write_statistics=False
                )
            )
        for start in range(0, len(data.records), ROWS_PER_GROUP):
            batch = data.records[start : start + ROWS_PER_GROUP]
            scrambled: list[list[str]] = [[] for _ in paths]
            for record in batch:
                for column, text in zip(scrambled, scrambled_texts(record, scramble_types, seed=seed)):
                    column.append(text)
            # every config of the family shares the columns other than `scrambled`: convert them once
            shared = {
                field.name: pa.array([record.fields[field.name] for record in batch], type=field.type)
                for field in schema
                if field.name != "scrambled"
            }
            for index, (writer, column) in enumerate(zip(writers, scrambled)):
                arrays = [
                    pa.array(column, type=field.type) if field.name == "scrambled" else shared[field.name]
                    for field in schema
                ]
                writer.write_table(pa.Table.from_arrays(arrays, schema=schema), row_group_size=ROWS_PER_GROUP)
                counts[index] += len(column)
    finally:
        for writer in writers:
            writer.close()
    return counts


def check_output_folder(out: Path, *, replaceable: Callable[[Path], bool], refusal: str) -> None:
    """Refuse to replace a non-empty ``out`` unless ``replaceable(out)`` (a previous output of the same
    command), and fail early, in one line, where the output cannot be written. ``refusal`` is the message
    for a folder that is in the way."""
    if out.exists() and not out.is_dir():
        raise ScrambledBenchError(f"output {out} exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not replaceable(out):
        raise ScrambledBenchError(refusal)
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ScrambledBenchError(
            f"cannot create the output folder {parent}: part of that path is a file, not a folder"
        ) from None
    except OSError as exc:
        raise ScrambledBenchError(
            f"cannot create the output folder {parent}: {exc.strerror or exc}"
        ) from None
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ScrambledBenchError(f"cannot write to the output folder {parent}: permission denied")


def _check_output(out: Path) -> None:
    """Refuse to replace anything that is not a previous build, and fail early on unwritable places."""
    check_output_folder(
        out,
        replaceable=lambda folder: (folder / MANIFEST_NAME).is_file(),
        refusal=f"output folder {out} is not empty and holds no {MANIFEST_NAME}; refusing to replace it",
    )


def swap_into_place(tmp: Path, out: Path) -> None:
    """Rename the finished ``tmp`` to ``out``, replacing a previous output only once the new one is whole."""
    if out.exists():
        old = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.old-"))
        os.replace(out, old / out.name)
        try:
            os.replace(tmp, out)
        except OSError:
            os.replace(old / out.name, out)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, out)


def make_temporary_folder(parent: Path, name: str, *, mode: int | None = None) -> Path:
    """A new folder ``parent/.{name}.tmp-*`` for an output to be written into before :func:`swap_into_place`:
    private, or of ``mode``; a one-line error where ``parent`` cannot be written to."""
    try:
        tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{name}.tmp-"))
        if mode is not None:
            tmp.chmod(mode)
        return tmp
    except OSError as exc:
        raise ScrambledBenchError(
            f"cannot write to the output folder {parent}: {exc.strerror or exc}"
        ) from None


def custom_window(window: str | None) -> str | None:
    """The RealtimeQA window a build records as asked: ``None`` for the paper's, however it is written.

    >>> custom_window("2023-03-17:2023-08-04"), custom_window("2026-01-01:2026-07-17")
    (None, '2026-01-01:2026-07-17')
    """
    if window is not None and realtimeqa.parse_window(window) == realtimeqa.PAPER_WINDOW:
        return None
    return window


def planned_build(
    out: Path,
    *,
    sources: Sequence[str] | None,
    types: Sequence[str] | None,
    seed: int = 0,
    window: str | None = None,
    replace: bool = False,
) -> tuple[list[str], list[str]]:
    """The sources and types :func:`build_dataset` will hold in ``out``: those asked for, plus what a
    previous build there had (unless ``replace``). Everything that can be refused is refused here, before
    any work: unknown names, a bad seed, a folder that is not a build, a build that cannot grow.

    >>> import tempfile, pathlib
    >>> planned_build(pathlib.Path(tempfile.mkdtemp()) / "sb", sources=["dream"], types=["kfl"])
    (['dream'], ['kfl'])
    """
    source_names = resolve_sources(sources)
    type_names = resolve_types(types)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ScrambledBenchError(f"seed must be a non-negative integer, got {seed!r}")
    window = custom_window(window)
    _check_output(out)
    if replace or not Manifest.exists(out):
        return source_names, type_names
    return grown_selection(Manifest.read(out), source_names, type_names, seed, window)


def build_dataset(
    out: Path,
    *,
    sources: Sequence[str] | None = None,
    types: Sequence[str] | None = None,
    seed: int = 0,
    source_dir: Path | None = None,
    window: str | None = None,
    reader: SourceReader | None = None,
    progress: Callable[[str, int], None] | None = None,
    replace: bool = False,
    benchmark: Callable[[list[str]], str | None] | None = None,
) -> Path:
    """Build the Scrambled Bench into ``out`` and return ``out``.

    ``source_dir`` is a mirror laid out ``<owner>/<repo>/<path>``; ``None`` reads
    ``$SCRAMBLED_BENCH_SOURCE_DIR``, else downloads from GitHub. ``window`` (``START:END``) selects the
    RealtimeQA weeks (default: the paper's). ``progress(config, rows)`` is called after every config.
    ``reader`` replaces the file access entirely (tests). ``benchmark(configs)`` gives the Hub benchmark
    file (``eval.yaml``) of the configs built, or None where it has no task: the tasks define it, and they sit
    above the builder, so the caller hands it in (``harness.hub_benchmark.eval_yaml_for``); without it the
    build has no ``eval.yaml``.

    A previous build in ``out`` grows: it keeps every source and type it had, and gains those asked for
    (a config's bytes depend only on the version, the seed and the window, so no existing file changes).
    ``replace`` builds exactly what is asked for instead; a build of another version, seed or window is
    never grown into (that would mix data), and the error says to ``--replace`` or build elsewhere.

    >>> import tempfile, pathlib
    >>> build_dataset(pathlib.Path(tempfile.mkdtemp()) / "sb", sources=["squad"])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: unknown source 'squad' (known: realtimeqa, dream, aqua)
    """
    out = Path(out).expanduser()
    source_names, type_names = planned_build(
        out, sources=sources, types=types, seed=seed, window=window, replace=replace
    )
    window = custom_window(window)
    kept = _kept_outputs(out, None if replace else Manifest.read(out) if Manifest.exists(out) else None)
    if reader is None:
        reader = SourceReader(mirror=resolve_source_dir(source_dir))
    loaded = [SOURCES[name].load(reader, window=window) for name in source_names]

    # mkdtemp makes the folder private; the build gets the mode a plain mkdir would (the user's umask)
    tmp = make_temporary_folder(out.parent, out.name, mode=creation_mode(folder=True))
    try:
        written = BuildOutputs(tmp, out, kept, seed=seed, progress=progress)
        configs = [summary for data in loaded for summary in written.add_source(data, type_names)]
        _write_card_and_manifest(
            written, loaded, reader, type_names, configs, benchmark, seed=seed, window=window
        )
        swap_into_place(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


@dataclass
class BuildOutputs:
    """The files of a build as they are written into ``tmp``: per config its summary for the card
    (``summaries``), per file its manifest entry (``outputs``). A config a grown build keeps (``kept``, from
    :func:`_kept_outputs`) is copied from ``out`` as it is; the others are written, one family at a time."""

    tmp: Path
    out: Path
    kept: Mapping[str, tuple[str, Mapping[str, Any]]]
    seed: int
    progress: Callable[[str, int], None] | None = None
    summaries: dict[str, card.ConfigSummary] = field(default_factory=dict)
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add_source(self, data: SourceData, type_names: Sequence[str]) -> list[card.ConfigSummary]:
        """Every config of ``data`` (one per type), kept or written; their summaries in the order of
        ``type_names``, the order the card lists them in."""
        for group in family_groups(type_names):
            new = []
            for scramble_type in group:
                name = config_name(data.info.name, scramble_type)
                if name in self.kept:
                    self._keep(data, scramble_type, *self.kept[name])
                else:
                    new.append(scramble_type)
            if new:
                self._write(data, new)
        return [self.summaries[config_name(data.info.name, t)] for t in type_names]

    def add_file(self, name: str, text: str) -> None:
        """Write a text file (the card, ``eval.yaml``) at the build's top and list it with its sha256."""
        (self.tmp / name).write_text(text, encoding="utf-8")
        self.outputs[name] = {"sha256": file_sha256(self.tmp / name)}

    def _keep(self, data: SourceData, scramble_type: str, relative: str, entry: Mapping[str, Any]) -> None:
        # a grown build keeps its files as they are (another pyarrow could write other bytes)
        (self.tmp / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(self.out / relative, self.tmp / relative)
        self._record(data, scramble_type, relative, entry)

    def _write(self, data: SourceData, group: Sequence[str]) -> None:
        """Write the configs of ``group`` (types of one family: one word plan per text serves them all)."""
        names = [config_name(data.info.name, scramble_type) for scramble_type in group]
        counts = write_configs([self.tmp / data_file(name) for name in names], data, group, seed=self.seed)
        for name, scramble_type, rows in zip(names, group, counts):
            relative = data_file(name)
            entry = {"config": name, "rows": rows, "sha256": file_sha256(self.tmp / relative)}
            self._record(data, scramble_type, relative, entry)

    def _record(self, data: SourceData, scramble_type: str, relative: str, entry: Mapping[str, Any]) -> None:
        name = config_name(data.info.name, scramble_type)
        self.summaries[name] = card.ConfigSummary(
            name, data.info.name, scramble_type, relative, entry["rows"], sha256=entry["sha256"]
        )
        self.outputs[relative] = dict(entry)
        if self.progress is not None:
            self.progress(name, entry["rows"])


def _write_card_and_manifest(
    written: BuildOutputs,
    loaded: Sequence[SourceData],
    reader: SourceReader,
    type_names: Sequence[str],
    configs: Sequence[card.ConfigSummary],
    benchmark: Callable[[list[str]], str | None] | None,
    *,
    seed: int,
    window: str | None,
) -> None:
    """Write the card, the Hub benchmark file (where ``benchmark`` gives one) and, last, the manifest, which
    lists the sha256 of every other file."""
    tag = build_tag(DATASET_VERSION, seed=seed, window=window)
    written.add_file(CARD_NAME, _card_text(loaded, type_names, configs, seed=seed, window=window, tag=tag))
    eval_yaml = benchmark(list(written.summaries)) if benchmark is not None else None
    if eval_yaml is not None:
        written.add_file(EVAL_YAML_NAME, eval_yaml)
    manifest = _manifest(loaded, reader, type_names, written.outputs, seed=seed, window=window, tag=tag)
    (written.tmp / MANIFEST_NAME).write_text(
        json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )


CARD_EXAMPLE = ("dream", "kfl")
"""The source and type of the card's example row where the build has them (a short dialogue under the
paper's headline type); otherwise the first source built and the last type."""


def _card_text(
    loaded: Sequence[SourceData],
    type_names: Sequence[str],
    configs: Sequence[card.ConfigSummary],
    *,
    seed: int,
    window: str | None,
    tag: str,
) -> str:
    """The build's dataset card, with one example row (:data:`CARD_EXAMPLE`)."""
    example_source, example_type = CARD_EXAMPLE
    example_data = next((data for data in loaded if data.info.name == example_source), loaded[0])
    if example_type not in type_names:
        example_type = type_names[-1]
    return card.render_card(
        version=DATASET_VERSION,
        tag=tag,
        seed=seed,
        window=None if window is None else realtimeqa.format_window(realtimeqa.parse_window(window)),
        configs=configs,
        infos=[data.info for data in loaded],
        types=type_names,
        example_config=config_name(example_data.info.name, example_type),
        example_row=next(iter(scramble_source(example_data, example_type, seed=seed))),
    )


def _manifest(
    loaded: Sequence[SourceData],
    reader: SourceReader,
    type_names: Sequence[str],
    outputs: Mapping[str, Any],
    *,
    seed: int,
    window: str | None,
    tag: str,
) -> dict[str, Any]:
    """``manifest.json``'s content: the build's settings, its sources and their files' hashes, the types,
    the versions that shape the bytes, and every output file's hash."""
    return {
        "name": "scrambled_bench",
        "version": DATASET_VERSION,
        "tag": tag,
        "seed": seed,
        "window": realtimeqa.format_window(realtimeqa.parse_window(window)),
        "sources": {
            data.info.name: {
                "upstream": f"{data.info.upstream.url}@{data.info.upstream.branch}",
                "notes": data.notes,
            }
            for data in loaded
        },
        "source_files": dict(sorted(reader.hashes.items())),
        "types": type_names,
        "stream_version": STREAM_VERSION,
        # parquet files record the writer's version, so byte identity holds for the same pyarrow
        "built_with": library_versions(),
        "outputs": dict(sorted(outputs.items())),
    }


def _kept_outputs(out: Path, previous: Manifest | None) -> dict[str, tuple[str, Mapping[str, Any]]]:
    """Config name -> (relative path, manifest entry) of each data file a grown build keeps as it is: those
    its manifest lists whose bytes still match their sha256 (a file changed since is written anew)."""
    if previous is None:
        return {}
    kept = {}
    for relative, entry in previous.outputs.items():
        if not isinstance(entry, Mapping) or "config" not in entry or "rows" not in entry:
            continue
        path = out / relative
        if path.is_file() and file_sha256(path) == entry.get("sha256"):
            kept[entry["config"]] = (relative, entry)
    return kept


def library_versions() -> dict[str, str]:
    """The versions that shape the output bytes: this package and the parquet writer.

    >>> sorted(library_versions())
    ['pyarrow', 'scrambled_bench']
    """
    import pyarrow  # deferred: heavy, and `scrambled-bench --help` imports this module

    return {"scrambled_bench": __version__, "pyarrow": pyarrow.__version__}
