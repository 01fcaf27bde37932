"""Scoring prediction files made by any tool (``scrambled-bench score``): JSON Lines rows in, a summary of
the paper's scores and one detail row per input row out.

Rows are read and checked here (one-line errors naming the file, line and field); letters and sentences are
read by an answer reader (:mod:`scrambled_bench.metrics.readers`: ``careful`` or ``paper``), per row's
dataset because the paper's rules differ per dataset; every number comes from the packaged metric modules,
the files a user's ``evaluate.load("metrics/<name>")`` runs, loaded once however many files are scored.
Scores are fractions here (the modules' unit); the CLI prints percent for people.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.metrics.chance import chance_level
from scrambled_bench.metrics.readers import DATASET_LETTERS, DEFAULT_READER, get_reader

TASKS = ("recovery", "qa")
ORIGINAL = "original"
SUBSTITUTED = ("substituted", "sub")
NO_CONDITION = "all"
SUFFIXES = (".jsonl", ".jsonl.gz")


def prediction_files(paths: Iterable[str | Path]) -> list[Path]:
    """The files to score: each file given, and every ``.jsonl``/``.jsonl.gz`` inside a folder given
    (sorted, not recursive). A path that does not exist, or a folder with no such file, is an error.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("b.jsonl", "a.jsonl.gz", "notes.txt"):
    ...     _ = (folder / name).write_text("")
    >>> [p.name for p in prediction_files([folder])]
    ['a.jsonl.gz', 'b.jsonl']
    """
    files: list[Path] = []
    for given in paths:
        path = Path(given)
        if not path.exists():
            raise ScrambledBenchError(f"{path}: no such file")
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(SUFFIXES))
            if not found:
                raise ScrambledBenchError(f"{path}: is a folder with no .jsonl or .jsonl.gz file to score")
            files.extend(found)
        else:
            files.append(path)
    if not files:
        raise ScrambledBenchError("no prediction files given")
    return files


def _metric(name: str) -> Any:
    from scrambled_bench.metrics import loaded

    return loaded(name)


def _bootstrap_kwargs(confidence_level: float | None, n_resamples: int, seed: int) -> dict[str, Any]:
    if confidence_level is None:
        return {}
    return {"confidence_level": confidence_level, "n_resamples": n_resamples, "seed": seed}


def _compute(metric: Any, where: str, **inputs: Any) -> dict[str, Any]:
    """``metric.compute`` with its one-line ``ValueError`` (bad value, nothing scrambled) turned into ours."""
    try:
        return metric.compute(**inputs)
    except ValueError as exc:
        raise ScrambledBenchError(f"{where}: {str(exc).splitlines()[0]}") from None


# ---------------------------------------------------------------- reading rows (pure checks on parsed JSON)


def _string_field(path: Path, line: int, row: Mapping[str, Any], field: str) -> str:
    value = row[field]
    if not isinstance(value, str):
        raise ScrambledBenchError(
            f"{path}:{line}: field {field!r} must be a string, got {json.dumps(value)[:60]}"
        )
    return value


def recovery_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a recovery predictions file, checked: ``prediction``, ``original``, ``scrambled`` strings."""
    from scrambled_bench.io import read_jsonl

    rows = []
    for line, row in read_jsonl(path, required=("prediction", "original", "scrambled")):
        checked = {
            field: _string_field(path, line, row, field) for field in ("prediction", "original", "scrambled")
        }
        rows.append({"line": line, "id": row.get("id"), **checked})
    if not rows:
        raise ScrambledBenchError(f"{path}: no rows to score")
    return rows


def _dataset_of(path: Path, line: int, row: Mapping[str, Any], dataset: str | None) -> str:
    """The row's dataset (its ``dataset`` field, else the one given for the whole file), checked."""
    value = row.get("dataset", dataset)
    if value is None:
        raise ScrambledBenchError(
            f"{path}:{line}: field 'dataset' is missing: the readers' rules differ per dataset; add it to the row "
            f"or pass --dataset {'|'.join(DATASET_LETTERS)}"
        )
    if value not in DATASET_LETTERS:
        raise ScrambledBenchError(
            f"{path}:{line}: field 'dataset' must be one of {', '.join(DATASET_LETTERS)}, got {json.dumps(value)[:60]}"
        )
    return value


def qa_rows(path: Path, *, dataset: str | None = None) -> list[dict[str, Any]]:
    """The rows of a QA predictions file, checked: raw ``prediction``, ``choices`` list, gold letter ``answer``,
    and the dataset (a ``dataset`` field, else ``dataset`` for the whole file).

    ``condition`` (default ``all``) must be a string; ``id`` is kept for pairing conditions.
    """
    from scrambled_bench.io import read_jsonl

    rows = []
    for line, row in read_jsonl(path, required=("prediction", "choices", "answer")):
        prediction = _string_field(path, line, row, "prediction")
        row_dataset = _dataset_of(path, line, row, dataset)
        letters = DATASET_LETTERS[row_dataset]
        choices = row["choices"]
        if (
            not isinstance(choices, list)
            or not 1 <= len(choices) <= len(letters)
            or not all(isinstance(choice, str) for choice in choices)
        ):
            raise ScrambledBenchError(
                f"{path}:{line}: field 'choices' must be a list of 1 to {len(letters)} strings for {row_dataset}, "
                f"got {json.dumps(choices)[:60]}"
            )
        answer = row["answer"]
        valid = letters[: len(choices)]
        # one letter: `in` on the letter string would also accept "" and "AB"
        if not isinstance(answer, str) or len(answer) != 1 or answer not in valid:
            raise ScrambledBenchError(
                f"{path}:{line}: field 'answer' must be one of the letters {', '.join(valid)} (one per choice),"
                f" got {json.dumps(answer)[:60]}"
            )
        condition = row.get("condition", NO_CONDITION)
        if not isinstance(condition, str) or not condition.strip():
            raise ScrambledBenchError(
                f"{path}:{line}: field 'condition' must be a non-empty string, got {json.dumps(condition)[:60]}"
            )
        identifier = row.get("id")
        if identifier is not None and not isinstance(identifier, (str, int)):
            raise ScrambledBenchError(
                f"{path}:{line}: field 'id' must be a string or an integer, got {json.dumps(identifier)[:60]}"
            )
        rows.append(
            {
                "line": line,
                "id": identifier,
                "condition": condition,
                "dataset": row_dataset,
                "prediction": prediction,
                "choices": choices,
                "answer": answer,
            }
        )
    if not rows:
        raise ScrambledBenchError(f"{path}: no rows to score")
    return rows


def write_details(path: Path | None, details: Sequence[Mapping[str, Any]]) -> None:
    """One JSON line per input row, written atomically (nothing half-written on failure)."""
    if path is None:
        return
    from scrambled_bench.io import atomic_write_text

    atomic_write_text(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in details))


# ---------------------------------------------------------------- scoring


def score_recovery(
    path: Path,
    *,
    reader: str = DEFAULT_READER,
    first_line: bool = False,
    confidence_level: float | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The recovery summary (RR, mean ED) of a predictions file, and one detail row per input row.

    ``first_line`` keeps only each prediction's first line (models not stopped at a newline); the reader
    then strips what is not the sentence (the paper's: a trailing "Scrambled sentence:"; careful: also
    preambles, quotes, code fences and notes). ``rules`` counts how many outputs each rule changed.
    """
    from rapidfuzz.distance import Levenshtein

    rows = recovery_rows(path)
    recovery = get_reader(reader)
    readings = []
    for row in rows:
        text = row["prediction"].strip().split("\n", 1)[0] if first_line else row["prediction"]
        readings.append(recovery.read_recovery(text))
    recovered = [(reading.value or "").strip() for reading in readings]
    result = _compute(
        _metric("recovery_rate"),
        str(path),
        predictions=recovered,
        references=[row["original"] for row in rows],
        scrambled=[row["scrambled"] for row in rows],
        **_bootstrap_kwargs(confidence_level, n_resamples, seed),
    )
    changed = Counter(
        reading.rule
        for reading, row, text in zip(readings, rows, recovered)
        if text != row["prediction"].strip()
    )
    details = [
        {
            "file": str(path),
            "line": row["line"],
            "id": row["id"],
            "recovered": sentence,
            "reader": reader,
            "rule": reading.rule,
            # the same distance the module sums: character Levenshtein on the whitespace-stripped strings
            "edit_distance": Levenshtein.distance(row["original"].strip(), sentence.strip()),
            "scrambled_edit_distance": Levenshtein.distance(
                row["original"].strip(), row["scrambled"].strip()
            ),
        }
        for row, sentence, reading in zip(rows, recovered, readings)
    ]
    summary = {
        "task": "recovery",
        "file": str(path),
        "reader": reader,
        **result,
        "changed_by_rule": dict(changed),
    }
    return summary, details


def _is_original(condition: str) -> bool:
    return condition.lower() == ORIGINAL


def _is_substituted(condition: str) -> bool:
    return condition.lower() in SUBSTITUTED


def _by_id(path: Path, rows: Sequence[Mapping[str, Any]], condition: str) -> dict[Any, Mapping[str, Any]]:
    keyed: dict[Any, Mapping[str, Any]] = {}
    for row in rows:
        if row["id"] is None:
            raise ScrambledBenchError(
                f"{path}:{row['line']}: field 'id' is missing; RPG pairs the same sample across conditions by id"
            )
        if row["id"] in keyed:
            raise ScrambledBenchError(
                f"{path}:{row['line']}: id {json.dumps(row['id'])} appears twice in condition {condition!r}"
                f" (first on line {keyed[row['id']]['line']})"
            )
        keyed[row["id"]] = row
    return keyed


def score_qa(
    path: Path,
    *,
    reader: str = DEFAULT_READER,
    dataset: str | None = None,
    confidence_level: float | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Accuracy per condition and RPG per scrambled condition of a QA predictions file, plus detail rows.

    Rows are grouped by ``condition``; when an ``original`` and a ``substituted`` (or ``sub``) condition are
    present, every other condition gets an RPG over the ids it shares with both (all of its ids must be
    in both, or the file is refused: a silently smaller sample would not be the paper's RPG). Where RPG is
    undefined the module says so (None, with the reason), as in a run's results.json.
    """
    rows = qa_rows(path, dataset=dataset)
    choice_reader = get_reader(reader)
    for row in rows:
        reading = choice_reader.read_choice(row["prediction"], row["choices"], dataset=row["dataset"])
        row["parsed"], row["rule"] = reading.value, reading.rule
    gain = _metric("relative_performance_gain")
    bootstrap = _bootstrap_kwargs(confidence_level, n_resamples, seed)

    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row["condition"], []).append(row)

    conditions = {}
    for condition, members in groups.items():
        # accuracy alone: the module without the RPG anchors (the package's one implementation of accuracy)
        result = _compute(
            gain,
            f"{path}: condition {condition!r}",
            predictions=[row["parsed"] or "" for row in members],
            references=[row["answer"] for row in members],
            **bootstrap,
        )
        conditions[condition] = {
            key: result[key]
            for key in ("accuracy", "accuracy_ci", "accuracy_ci_method", "num_samples")
            if key in result
        }
        # the module's "unanswered" is what run, report and every table call "unparsed"
        conditions[condition]["unparsed"] = result["unanswered"]

    originals = [condition for condition in groups if _is_original(condition)]
    substituted = [condition for condition in groups if _is_substituted(condition)]
    gains = {}
    if len(originals) > 1 or len(substituted) > 1:
        raise ScrambledBenchError(
            f"{path}: conditions {originals + substituted} name the same condition in two spellings"
        )
    if originals and substituted:
        original_rows = _by_id(path, groups[originals[0]], originals[0])
        substituted_rows = _by_id(path, groups[substituted[0]], substituted[0])
        for condition, members in groups.items():
            if condition in (originals[0], substituted[0]):
                continue
            scrambled_rows = _by_id(path, members, condition)
            for identifier, row in scrambled_rows.items():
                for anchor_name, anchor in (
                    (originals[0], original_rows),
                    (substituted[0], substituted_rows),
                ):
                    if identifier not in anchor:
                        raise ScrambledBenchError(
                            f"{path}:{row['line']}: id {json.dumps(identifier)} of condition {condition!r} has no row"
                            f" in condition {anchor_name!r}"
                        )
                    if anchor[identifier]["answer"] != row["answer"]:
                        raise ScrambledBenchError(
                            f"{path}:{row['line']}: id {json.dumps(identifier)} has answer {row['answer']!r} here but"
                            f" {anchor[identifier]['answer']!r} in condition {anchor_name!r} (line {anchor[identifier]['line']})"
                        )
            ids = list(scrambled_rows)
            gains[condition] = _compute(
                gain,
                f"{path}: condition {condition!r}",
                predictions=[scrambled_rows[i]["parsed"] or "" for i in ids],
                references=[scrambled_rows[i]["answer"] for i in ids],
                original_predictions=[original_rows[i]["parsed"] or "" for i in ids],
                substituted_predictions=[substituted_rows[i]["parsed"] or "" for i in ids],
                **bootstrap,
            )
            gains[condition].update(_chance(gain, path, [original_rows[i] for i in ids], confidence_level))
    details = [
        {
            "file": str(path),
            "line": row["line"],
            "id": row["id"],
            "condition": row["condition"],
            "dataset": row["dataset"],
            "parsed": row["parsed"],
            "reader": reader,
            "rule": row["rule"],
            "answer": row["answer"],
            "correct": row["parsed"] == row["answer"],
        }
        for row in rows
    ]
    summary: dict[str, Any] = {
        "task": "qa",
        "file": str(path),
        "reader": reader,
        "datasets": sorted({row["dataset"] for row in rows}),
        "conditions": conditions,
        "rules": dict(sorted(Counter(row["rule"] for row in rows).items())),
    }
    if gains:
        summary["relative_performance_gain"] = gains
    return summary, details


def _chance(
    gain: Any, path: Path, original_rows: Sequence[Mapping[str, Any]], confidence_level: float | None
) -> dict[str, Any]:
    """The chance level of the rows' choices and the original condition's accuracy interval over them (at
    ``confidence_level``, 0.95 when none was asked for): what ``metrics.chance.chance_note`` marks an RPG
    by."""
    chance = chance_level([len(row["choices"]) for row in original_rows])
    if chance is None:
        return {}
    anchor = _compute(
        gain,
        f"{path}: condition original",
        predictions=[row["parsed"] or "" for row in original_rows],
        references=[row["answer"] for row in original_rows],
        confidence_level=confidence_level or 0.95,
    )
    return {"chance": chance, "original_accuracy_ci": [float(bound) for bound in anchor["accuracy_ci"]]}


def score_files(
    paths: Iterable[str | Path],
    *,
    task: str,
    reader: str = DEFAULT_READER,
    dataset: str | None = None,
    first_line: bool = False,
    confidence_level: float | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every file's summary and all their detail rows; the metric modules are loaded once for all files.
    Any bad file stops everything with its one-line error (nothing is written by this function)."""
    if task not in TASKS:
        raise ScrambledBenchError(f"unknown task {task!r}; choose {' or '.join(TASKS)}")
    get_reader(reader)
    bootstrap = {"confidence_level": confidence_level, "n_resamples": n_resamples, "seed": seed}
    summaries, details = [], []
    for path in prediction_files(paths):
        if task == "recovery":
            summary, rows = score_recovery(path, reader=reader, first_line=first_line, **bootstrap)
        else:
            summary, rows = score_qa(path, reader=reader, dataset=dataset, **bootstrap)
        summaries.append(summary)
        details.extend(rows)
    return summaries, details
