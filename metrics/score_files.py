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
from scrambled_bench.io import atomic_write_text, read_jsonl
from scrambled_bench.metrics import loaded
from scrambled_bench.metrics.chance import chance_level
from scrambled_bench.metrics.readers import DATASET_LETTERS, DEFAULT_READER, Reading, get_reader
from scrambled_bench.metrics.shared import edit_distances

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
    rows = recovery_rows(path)
    readings = _read_recoveries(rows, reader, first_line)
    recovered = [(reading.value or "").strip() for reading in readings]
    result = _compute(
        loaded("recovery_rate"),
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
    summary = {
        "task": "recovery",
        "file": str(path),
        "reader": reader,
        **result,
        "changed_by_rule": dict(changed),
    }
    return summary, _recovery_details(path, rows, recovered, readings, reader)


def _read_recoveries(rows: Sequence[Mapping[str, Any]], reader: str, first_line: bool) -> list[Reading]:
    """Each row's prediction read as a sentence by the answer ``reader`` (its first line only, with
    ``first_line``)."""
    recovery = get_reader(reader)
    return [
        recovery.read_recovery(
            row["prediction"].strip().split("\n", 1)[0] if first_line else row["prediction"]
        )
        for row in rows
    ]


def _recovery_details(
    path: Path,
    rows: Sequence[Mapping[str, Any]],
    recovered: Sequence[str],
    readings: Sequence[Reading],
    reader: str,
) -> list[dict[str, Any]]:
    """One detail row per input row: the sentence read, the rule that decided, and both edit distances, the
    ones the module sums (:func:`scrambled_bench.metrics.shared.edit_distances`)."""
    originals = [row["original"] for row in rows]
    distances = edit_distances(originals, recovered)
    scrambled_distances = edit_distances(originals, [row["scrambled"] for row in rows])
    return [
        {
            "file": str(path),
            "line": row["line"],
            "id": row["id"],
            "recovered": sentence,
            "reader": reader,
            "rule": reading.rule,
            "edit_distance": distance,
            "scrambled_edit_distance": scrambled_distance,
        }
        for row, sentence, reading, distance, scrambled_distance in zip(
            rows, recovered, readings, distances, scrambled_distances
        )
    ]


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
    _read_choices(rows, reader)
    gain = loaded("relative_performance_gain")
    bootstrap = _bootstrap_kwargs(confidence_level, n_resamples, seed)
    groups = _by_condition(rows)
    summary: dict[str, Any] = {
        "task": "qa",
        "file": str(path),
        "reader": reader,
        "datasets": sorted({row["dataset"] for row in rows}),
        "conditions": {
            condition: _condition_accuracy(gain, path, condition, members, bootstrap)
            for condition, members in groups.items()
        },
        "rules": dict(sorted(Counter(row["rule"] for row in rows).items())),
    }
    gains = _condition_gains(gain, path, groups, bootstrap, confidence_level)
    if gains:
        summary["relative_performance_gain"] = gains
    return summary, _qa_details(path, rows, reader)


def _read_choices(rows: Sequence[dict[str, Any]], reader: str) -> None:
    """Set on each row the letter the answer ``reader`` reads in its prediction (``parsed``, None when none)
    and the rule that decided (``rule``)."""
    choice_reader = get_reader(reader)
    for row in rows:
        reading = choice_reader.read_choice(row["prediction"], row["choices"], dataset=row["dataset"])
        row["parsed"], row["rule"] = reading.value, reading.rule


def _by_condition(rows: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The rows grouped by their ``condition``, in order of first appearance."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row["condition"], []).append(row)
    return groups


def _condition_accuracy(
    gain: Any, path: Path, condition: str, members: Sequence[Mapping[str, Any]], bootstrap: dict[str, Any]
) -> dict[str, Any]:
    """One condition's accuracy with its interval, sample count and unparsed answers: the RPG module without
    the two anchors (the package's one implementation of accuracy)."""
    result = _compute(
        gain,
        f"{path}: condition {condition!r}",
        predictions=[row["parsed"] or "" for row in members],
        references=[row["answer"] for row in members],
        **bootstrap,
    )
    accuracy = {
        key: result[key]
        for key in ("accuracy", "accuracy_ci", "accuracy_ci_method", "num_samples")
        if key in result
    }
    # the module's "unanswered" is what run, report and every table call "unparsed"
    accuracy["unparsed"] = result["unanswered"]
    return accuracy


def _anchor_conditions(path: Path, groups: Mapping[str, Any]) -> tuple[str, str] | None:
    """The original and the substituted condition, RPG's two anchors, as the file spells them; None unless
    both are there. Two spellings of one anchor (``sub`` and ``substituted``) are refused."""
    originals = [condition for condition in groups if _is_original(condition)]
    substituted = [condition for condition in groups if _is_substituted(condition)]
    if len(originals) > 1 or len(substituted) > 1:
        raise ScrambledBenchError(
            f"{path}: conditions {originals + substituted} name the same condition in two spellings"
        )
    return (originals[0], substituted[0]) if originals and substituted else None


def _check_anchored(
    path: Path,
    condition: str,
    scrambled_rows: Mapping[Any, Mapping[str, Any]],
    anchors: Mapping[str, Mapping[Any, Mapping[str, Any]]],
) -> None:
    """Refuse a row of ``condition`` whose id has no row in an anchor condition, or another answer there:
    RPG pairs the same samples across the three conditions."""
    for identifier, row in scrambled_rows.items():
        for anchor_name, anchor in anchors.items():
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


def _condition_gains(
    gain: Any,
    path: Path,
    groups: Mapping[str, Sequence[Mapping[str, Any]]],
    bootstrap: dict[str, Any],
    confidence_level: float | None,
) -> dict[str, dict[str, Any]]:
    """RPG of every condition besides the two anchors, over its ids, with the chance level beside it
    (:func:`_chance`); none without both anchors."""
    anchors = _anchor_conditions(path, groups)
    if anchors is None:
        return {}
    original, substituted = anchors
    original_rows = _by_id(path, groups[original], original)
    substituted_rows = _by_id(path, groups[substituted], substituted)
    gains = {}
    for condition, members in groups.items():
        if condition in anchors:
            continue
        scrambled_rows = _by_id(path, members, condition)
        _check_anchored(
            path, condition, scrambled_rows, {original: original_rows, substituted: substituted_rows}
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
    return gains


def _qa_details(path: Path, rows: Sequence[Mapping[str, Any]], reader: str) -> list[dict[str, Any]]:
    """One detail row per input row: the letter read, the rule that decided, and whether it is right."""
    return [
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
