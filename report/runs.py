"""Run folders as the report reads them: :class:`Run` (results.json and config.json of one folder) and its
loaders, the re-reading of its answers with another reader, the check that runs read one build, a run's
fingerprint and details, and the labels that tell runs apart."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.results import (
    CONFIG_FILE,
    PERCENT,
    RESULTS_FILE,
    RESULTS_SCHEMA,
    SCORES_FILE,
    rescore,
    scores_in,
)
from scrambled_bench.evaluation.store import SAMPLES_FILE, endpoint_text, parse_lines
from scrambled_bench.io import read_json, read_jsonl
from scrambled_bench.metrics.readers import get_reader
from scrambled_bench.report.marks import stored_intervals
from scrambled_bench.report.paper import run_reader


@dataclass
class Run:
    """One run folder's results.json and config.json.

    ``results`` is results.json with its "%" scores in percent, as every table and figure shows them
    (:func:`load_run` converts; the file holds fractions)."""

    path: Path
    results: dict[str, Any]
    config: dict[str, Any]
    label: str = ""

    def entries(self, task: str, dataset: str | None = None) -> dict[str, dict[str, Any]]:
        """Config name -> results entry, for one task (and dataset) of the run."""
        return {
            name: entry
            for name, entry in self.results["configs"].items()
            if entry["task"] == task and (dataset is None or entry["dataset"] == dataset)
        }

    def by_type(self, task: str, dataset: str) -> dict[str, dict[str, Any]]:
        """Scramble type -> results entry, for a task without exemplar rates."""
        return {entry["scramble_type"]: entry for entry in self.entries(task, dataset).values()}

    @property
    def settings(self) -> dict[str, Any]:
        """The settings config.json recorded (empty where there is no config.json)."""
        return dict(self.config.get("settings") or {})

    @property
    def build(self) -> dict[str, Any]:
        """What the run recorded about the dataset build it read (version, seed, manifest hash, location)."""
        return dict(self.config.get("dataset") or self.results.get("dataset") or {})

    @property
    def reader(self) -> str | None:
        """The answer reader it recorded; None where none was (careful, or unknown)."""
        return run_reader(self.config, self.results)


def load_run(path: Path) -> Run:
    """Read a run folder (or its results.json) with one-line errors for what is missing or corrupt."""
    path = Path(path)
    folder = path.parent if path.name == RESULTS_FILE else path
    results_path = folder / RESULTS_FILE
    if not folder.is_dir():
        raise ScrambledBenchError(f"run folder not found: {folder}")
    if not results_path.is_file():
        raise ScrambledBenchError(
            f"{folder}: no results.json (a run still going, or stopped before it wrote any: killed, or "
            "interrupted before it sent a request); rerun the same `run` command"
        )
    results = read_json(results_path)
    if not isinstance(results, dict) or not isinstance(results.get("configs"), dict):
        raise ScrambledBenchError(f"{results_path}: not a scrambled-bench results file (no 'configs' object)")
    schema = results.get("schema", RESULTS_SCHEMA)
    if not isinstance(schema, int) or schema > RESULTS_SCHEMA:
        raise ScrambledBenchError(
            f"{results_path}: results format {schema!r} is newer than this scrambled-bench reads "
            f"({RESULTS_SCHEMA}); upgrade scrambled-bench to report it"
        )
    config_path = folder / CONFIG_FILE
    config = read_json(config_path) if config_path.is_file() else {}
    config = config if isinstance(config, dict) else {}
    if config.get("run_id") and results.get("run_id") and config["run_id"] != results["run_id"]:
        # config.json is written when a run starts; a run stopped before it finished leaves the results of
        # the run before it, computed with other settings: never show those as this run's
        raise ScrambledBenchError(
            f"{results_path}: computed with other settings than {CONFIG_FILE} (run {results['run_id']}, settings "
            f"{config['run_id']}); rerun the same `run` command to finish it and rewrite the results"
        )
    # results.json holds fractions (schema 2); everything a report shows is percent, as in the paper
    return Run(folder, scores_in(results, PERCENT), config)


def load_runs(paths: Sequence[Path]) -> tuple[list[Run], list[str]]:
    """The run folders that can be reported (:func:`load_run`), and one line for each folder left out
    because it cannot be (no results.json yet, results of other settings, a corrupt file): one run that
    cannot be reported never stops the report of the others (``report runs/*`` while a run is going). A
    path that does not exist is a mistake, not a run to leave out: a one-line error, as is a request
    where no run is left.

    >>> import tempfile
    >>> empty = Path(tempfile.mkdtemp())
    >>> load_runs([empty])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: ... no results.json (a run still going, or stopped before it wrote any: killed, or interrupted before it sent a request); rerun the same `run` command
    """
    runs: list[Run] = []
    left_out: list[str] = []
    for path in paths:
        if not Path(path).exists():
            raise ScrambledBenchError(f"run folder not found: {path}")
        try:
            runs.append(load_run(path))
        except ScrambledBenchError as exc:
            left_out.append(str(exc))
    if not runs and left_out:
        if len(left_out) == 1:
            raise ScrambledBenchError(left_out[0])
        raise ScrambledBenchError(
            f"none of the {len(left_out)} run folders can be reported: {left_out[0]}; and "
            f"{len(left_out) - 1} more like it"
        )
    return runs, left_out


def reread(run: Run, reader: str | None = None, *, intervals: Mapping[str, Any] | None = None) -> Run:
    """The run as the answer ``reader`` reads its stored outputs (None: the reader it was scored with), with
    its intervals at ``intervals`` (``confidence_level``, ``n_resamples``, ``seed``; a None or missing one:
    as stored); the run itself where neither changes anything.

    Needs the run folder's samples.jsonl and scores.jsonl; a one-line error names what is missing."""
    current = run.results.get("reader", "careful")
    reader = reader or current
    get_reader(reader)
    stored = stored_intervals(run.results, run.settings)
    wanted = {**stored, **{k: v for k, v in (intervals or {}).items() if v is not None}}
    if reader == current and wanted == stored:
        return run
    for name in (SAMPLES_FILE, SCORES_FILE):
        if not (run.path / name).is_file():
            why = (
                f"re-read with --parser {reader}"
                if reader != current
                else f"given other intervals ({_settings_text(wanted)}; it stored {_settings_text(stored)})"
            )
            raise ScrambledBenchError(
                f"{run.path}: no {name}, so its outputs cannot be {why} "
                "(rerun the same `run` command with this version to write it)"
            )
    records, _ = parse_lines((run.path / SAMPLES_FILE).read_bytes())
    scores = [row for _, row in read_jsonl(run.path / SCORES_FILE)]
    results = rescore(
        run.results, scores, {record["key"]: record for record in records}, reader=reader, **wanted
    )
    return Run(run.path, scores_in(results, PERCENT), run.config, run.label)


def _settings_text(intervals: Mapping[str, Any]) -> str:
    return ", ".join(f"--{key.replace('_', '-')} {value}" for key, value in intervals.items())


def check_same_build(runs: Sequence[Run]) -> None:
    """A one-line error when the runs read different versions of the dataset build: their samples differ,
    so their rows do not compare. A run that recorded no version is not held against the others.

    >>> a = Run(Path("runs/a"), {"configs": {}}, {"dataset": {"version": "1.0.0"}})
    >>> check_same_build([a, Run(Path("runs/b"), {"configs": {}}, {})])
    >>> check_same_build([a, Run(Path("runs/b"), {"configs": {}}, {"dataset": {"version": "1.1.0"}})])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: runs of different build versions: runs/a (1.0.0), runs/b (1.1.0); report runs of one build together (rerun one on the other's build)
    """
    versions = {run.path: run.build.get("version") for run in runs}
    if len({version for version in versions.values() if version is not None}) > 1:
        listing = ", ".join(
            f"{path} ({version})" for path, version in versions.items() if version is not None
        )
        raise ScrambledBenchError(
            f"runs of different build versions: {listing}; report runs of one build together "
            "(rerun one on the other's build)"
        )


def run_fingerprint(run: Run) -> str:
    """A short hash of what a run measured and how: its scores per config, its settings, the backend's
    fingerprint and the build it read; not when its files were written (a resumed run that sent nothing
    keeps its fingerprint), nor the server fingerprints of individual replies.

    >>> a = Run(Path("runs/a"), {"configs": {"c": {"accuracy": {"value": 50.0}}}, "created": "x"}, {})
    >>> b = Run(Path("elsewhere"), {"configs": {"c": {"accuracy": {"value": 50.0}}}, "created": "y"}, {})
    >>> run_fingerprint(a) == run_fingerprint(b), len(run_fingerprint(a))
    (True, 16)
    """
    fingerprint = {
        k: v for k, v in (run.config.get("fingerprint") or {}).items() if k != "reply_fingerprints"
    }
    payload = {
        "model": run.results.get("model"),
        "backend": run.results.get("backend"),
        "configs": run.results["configs"],
        "settings": run.settings,
        "fingerprint": fingerprint,
        "build": run.build,
    }
    text = json.dumps(payload, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def run_details(run: Run) -> list[tuple[str, str]]:
    """What the report shows about a run: where it is, what it ran, its settings and fingerprints.

    >>> details = dict(run_details(Run(Path("runs/a"), {"configs": {}, "model": "m"}, {"settings": {"seed": 0}})))
    >>> details["model"], details["settings.seed"]
    ('m', '0')
    """

    def text(value: Any) -> str:
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)

    build = run.build
    details = [
        ("folder", str(run.path)),
        ("model", text(run.results.get("model"))),
        ("backend", text(run.results.get("backend"))),
        ("created", text(run.results.get("created"))),
        ("package version", text(run.results.get("package_version") or run.config.get("package_version"))),
        ("results format", text(run.results.get("schema"))),
        ("answer reader", run.reader or "not recorded (careful/unknown)"),
        ("build", f"version {build.get('version')}, seed {build.get('seed')}, at {build.get('location')}"),
        ("build manifest sha256", text(build.get("manifest_sha256"))),
        ("run fingerprint", run_fingerprint(run)),
    ]
    details += [(f"settings.{key}", value) for key, value in sorted(settings_in_force(run).items())]
    engine = run.results.get("engine") or {}
    if engine.get("interrupted"):
        details.append(
            ("interrupted", "Ctrl-C stopped the run; the requests it had not answered are missing")
        )
    if engine.get("stopped"):
        details.append(("stopped early", f"the endpoint is unreachable: {engine['stopped']}"))
    details += [
        ("answered by", f"{endpoint_text(entry.get('endpoint') or {})}: {entry.get('answers')} answers")
        for entry in engine.get("endpoints") or []
    ]
    fingerprint = run.config.get("fingerprint") or {}
    details += [(f"backend fingerprint.{key}", text(value)) for key, value in sorted(fingerprint.items())]
    return details


def settings_in_force(run: Run) -> dict[str, str]:
    """Each setting config.json recorded, as the run ran it: one not given shows what was in force (the
    configs and sample limit the suite selected, the model the backend resolved, a backend option's
    default) and says so; a setting with nothing in force is "not given", never ``null``.

    >>> run = Run(Path("runs/a"), {"configs": {}, "model": "m.gguf"}, {"settings": {"limit": None, "model": None,
    ...     "seed": 0, "revision": None}, "selection": {"suite": "quick", "limit": 8}, "backend_options": {}})
    >>> settings_in_force(run)
    {'limit': "8 (the quick suite's default)", 'model': 'm.gguf (the default)', 'seed': '0', 'revision': 'not given'}
    """

    def text(value: Any) -> str:
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)

    selection = run.config.get("selection") or {}
    options = run.config.get("backend_options") or {}
    suite = selection.get("suite")
    shown = {}
    for key, value in run.settings.items():
        if value is not None:
            shown[key] = text(value)
        elif selection.get(key) not in (None, []):
            source = f"the {suite} suite's default" if suite else "what the other options selected"
            shown[key] = f"{text(selection[key])} ({source})"
        elif key == "model" and run.results.get("model"):
            shown[key] = f"{text(run.results['model'])} (the default)"
        elif options.get(key) is not None:
            shown[key] = f"{text(options[key])} (the default)"
        else:
            shown[key] = "not given"
    return shown


def setting_in_force(run: Run, key: str) -> Any:
    """A setting as the run ran it: as given, else what was in force (the sample limit or the selection
    the suite chose, which config.json's ``selection`` records, or results.json's ``limit``); None where
    nothing was.

    >>> run = Run(Path("runs/a"), {"configs": {}, "limit": 8}, {"settings": {"limit": None, "seed": 0}})
    >>> setting_in_force(run, "limit"), setting_in_force(run, "seed"), setting_in_force(run, "revision")
    (8, 0, None)
    """
    value = run.settings.get(key)
    if value is None:
        value = (run.config.get("selection") or {}).get(key)
    if value is None and key == "limit":
        value = run.results.get("limit")
    return value


def label_runs(runs: Sequence[Run]) -> list[Run]:
    """Row labels: the model name, with what tells runs of one model apart added only where needed: the
    backend, then the settings in which they differ (as in force: the quick suite's limit is 8, not
    "None"), then the folder.

    >>> runs = [Run(Path(f"runs/{mode}"), {"model": "m", "configs": {}}, {"settings": {"prompt_mode": mode}})
    ...         for mode in ("chat", "completion")]
    >>> [run.label for run in label_runs(runs + [Run(Path("runs/x"), {"model": "other", "configs": {}}, {})])]
    ['m (prompt_mode=chat)', 'm (prompt_mode=completion)', 'other']
    >>> quick = [Run(Path(f"runs/{n}"), {"model": "m", "configs": {}, "limit": n or 8}, {"settings": {"limit": n}})
    ...          for n in (None, 30)]
    >>> [run.label for run in label_runs(quick)]
    ['m (limit=8)', 'm (limit=30)']
    >>> suites = [Run(Path(f"runs/{suite}"), {"model": "m", "configs": {}}, {"settings": {"suite": suite, "types": None},
    ...     "selection": {"types": types}}) for suite, types in (("quick", ["rs50"]), ("paper", ["rs50", "kf"]))]
    >>> [run.label for run in label_runs(suites)]
    ['m (suite=quick)', 'm (suite=paper)']
    """
    models = [str(run.results.get("model") or run.path.name) for run in runs]
    for run, model in zip(runs, models):
        run.label = model
        backends = {str(other.results.get("backend")) for other, name in zip(runs, models) if name == model}
        if models.count(model) > 1 and len(backends) > 1:
            run.label = f"{model} ({run.results.get('backend') or '?'})"
    for label in {run.label for run in runs}:
        same = [run for run in runs if run.label == label]
        if len(same) < 2:
            continue
        keys = sorted({key for run in same for key in run.settings})
        # which settings tell them apart: as given (two suites differ in their suite, not in every list it
        # selects); each shown as in force (the quick suite's default limit is 8, not None)
        differing = [key for key in keys if len({repr(run.settings.get(key)) for run in same}) > 1][:3]
        for run in same:
            if differing:
                named = ", ".join(f"{key}={setting_in_force(run, key)}" for key in differing)
                run.label += f" ({named})"
    labels = [run.label for run in runs]
    for run in runs:
        if labels.count(run.label) > 1:
            run.label = f"{run.label} [{run.path.name}]"
    return list(runs)
