"""Scoring prediction files made by any tool (``scrambled-bench score``): JSON Lines rows in, a summary of
the paper's scores and one detail row per input row out.

Rows are read and checked here (one-line errors naming the file, line and field); the letters and
sentences are read by ``answer_extraction`` and every number comes from the packaged metric modules, the
files a user's ``evaluate.load("metrics/<name>")`` runs, so ``score``, ``run`` and a user's own scoring
cannot disagree.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError

TASKS = ("recovery", "qa")
ORIGINAL = "original"
SUBSTITUTED = ("substituted", "sub")
NO_CONDITION = "all"


def _bootstrap_kwargs(confidence_level: float | None, n_resamples: int, seed: int) -> dict[str, Any]:
    if confidence_level is None:
        return {}
    return {"confidence_level": confidence_level, "n_resamples": n_resamples, "seed": seed}


def _compute(metric: Any, where: str, **inputs: Any) -> dict[str, Any]:
    """``metric.compute`` with its one-line ``ValueError`` (undefined score, bad value) turned into ours."""
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


def qa_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a QA predictions file, checked: raw ``prediction``, ``choices`` list, gold letter ``answer``.

    ``condition`` (default ``all``) must be a string; ``id`` is kept for pairing conditions.
    """
    from scrambled_bench.metrics.answer_extraction import LETTERS

    from scrambled_bench.io import read_jsonl

    rows = []
    for line, row in read_jsonl(path, required=("prediction", "choices", "answer")):
        prediction = _string_field(path, line, row, "prediction")
        choices = row["choices"]
        if (
            not isinstance(choices, list)
            or not 1 <= len(choices) <= len(LETTERS)
            or not all(isinstance(choice, str) for choice in choices)
        ):
            raise ScrambledBenchError(
                f"{path}:{line}: field 'choices' must be a list of 1 to {len(LETTERS)} strings, got {json.dumps(choices)[:60]}"
            )
        answer = row["answer"]
        valid = LETTERS[: len(choices)]
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
    path: Path, *, first_line: bool, confidence_level: float | None, n_resamples: int, seed: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The recovery summary (RR, mean ED) of a predictions file, and one detail row per input row."""
    from rapidfuzz.distance import Levenshtein
    from scrambled_bench.metrics import load
    from scrambled_bench.metrics.answer_extraction import clean_recovered_sentence

    rows = recovery_rows(path)
    recovered = [clean_recovered_sentence(row["prediction"], first_line=first_line) for row in rows]
    result = _compute(
        load("recovery_rate"),
        str(path),
        predictions=recovered,
        references=[row["original"] for row in rows],
        scrambled=[row["scrambled"] for row in rows],
        **_bootstrap_kwargs(confidence_level, n_resamples, seed),
    )
    details = [
        {
            "line": row["line"],
            "id": row["id"],
            "recovered": sentence,
            # the same distance the module sums: character Levenshtein on the whitespace-stripped strings
            "edit_distance": Levenshtein.distance(row["original"].strip(), sentence.strip()),
            "scrambled_edit_distance": Levenshtein.distance(
                row["original"].strip(), row["scrambled"].strip()
            ),
        }
        for row, sentence in zip(rows, recovered)
    ]
    return {"task": "recovery", "file": str(path), **result}, details


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
    path: Path, *, chain_of_thought: bool, confidence_level: float | None, n_resamples: int, seed: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Accuracy per condition and RPG per scrambled condition of a QA predictions file, plus detail rows.

    Rows are grouped by ``condition``; when an ``original`` and a ``substituted`` (or ``sub``) condition are
    present, every other condition gets an RPG over the ids it shares with both (all of its ids must be
    in both, or the file is refused: a silently smaller sample would not be the paper's RPG).
    """
    from scrambled_bench.metrics import load
    from scrambled_bench.metrics.answer_extraction import extract_choice

    rows = qa_rows(path)
    for row in rows:
        row["parsed"] = extract_choice(row["prediction"], row["choices"], chain_of_thought=chain_of_thought)
    gain = load("relative_performance_gain")
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
        summary = {
            "accuracy": result["accuracy"],
            "num_samples": result["num_samples"],
            "unanswered": result["unanswered"],
        }
        if "accuracy_ci" in result:
            summary["accuracy_ci"] = result["accuracy_ci"]
        conditions[condition] = summary

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
    details = [
        {
            "line": row["line"],
            "id": row["id"],
            "condition": row["condition"],
            "parsed": row["parsed"],
            "answer": row["answer"],
            "correct": row["parsed"] == row["answer"],
        }
        for row in rows
    ]
    summary: dict[str, Any] = {
        "task": "qa",
        "file": str(path),
        "chain_of_thought": chain_of_thought,
        "conditions": conditions,
    }
    if gains:
        summary["relative_performance_gain"] = gains
    return summary, details
