"""What the multiple-choice tasks (ScrQA, AQuA) share: the gold letter and choices in each request, the
letter read from the output by an answer reader, and accuracy over a config."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scrambled_bench.evaluation.tasks.base import Task, TaskConfig
from scrambled_bench.metrics.readers import DEFAULT_READER, get_reader


class MultipleChoiceTask(Task):
    """A task whose rows have ``choices`` and a gold letter ``answer``; the reader reads per dataset (the
    paper's rules differ between RealtimeQA, DREAM and AQuA's chain of thought)."""

    def meta(self, config: TaskConfig, row: Mapping[str, Any]) -> dict[str, Any]:
        meta = {**super().meta(config, row), "choices": list(row["choices"]), "answer": row["answer"]}
        if "categories" in row:  # DREAM's question categories, for the per-category tables
            meta["categories"] = list(row.get("categories") or [])
        return meta

    def score(
        self, meta: Mapping[str, Any], output: str, *, chat: bool = True, reader: str = DEFAULT_READER
    ) -> dict[str, Any]:
        """``prediction`` is the letter the ``reader`` reads from ``output``, or None (``unparsed``; scored
        wrong); ``rule`` names the reader's rule that decided.

        >>> from scrambled_bench.evaluation.tasks import TASKS
        >>> meta = {"dataset": "realtimeqa", "choices": ["Ann", "Bob", "Cy", "Di"], "answer": "B"}
        >>> TASKS["scrqa"].score(meta, " B.")
        {'prediction': 'B', 'correct': True, 'unparsed': False, 'rule': 'leading-letter'}
        """
        reading = get_reader(reader).read_choice(
            output if isinstance(output, str) else "", meta["choices"], dataset=meta["dataset"]
        )
        letter = reading.value
        return {
            "prediction": letter,
            "correct": letter is not None and letter == meta["answer"],
            "unparsed": letter is None,
            "rule": reading.rule,
        }
