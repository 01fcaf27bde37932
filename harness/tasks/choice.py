"""What the multiple-choice tasks (ScrQA, AQuA) share: the gold letter and choices in each request, the
letter read from the output, and accuracy over a config."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scrambled_bench.harness.tasks.base import Task, TaskConfig


class MultipleChoiceTask(Task):
    """A task whose rows have ``choices`` and a gold letter ``answer``."""

    chain_of_thought: bool = False
    """Whether the answer is stated at the end of a worked solution ("... the answer is (C).")."""

    def meta(self, config: TaskConfig, row: Mapping[str, Any]) -> dict[str, Any]:
        meta = {**super().meta(config, row), "choices": list(row["choices"]), "answer": row["answer"]}
        if "categories" in row:  # DREAM's question categories, for the per-category tables
            meta["categories"] = list(row.get("categories") or [])
        return meta

    def score(self, meta: Mapping[str, Any], output: str, *, chat: bool = True) -> dict[str, Any]:
        """``prediction`` is the letter read from ``output``, or None (``unparsed``; scored wrong).

        >>> from scrambled_bench.harness.tasks import TASKS
        >>> TASKS["scrqa"].score({"choices": ["Ann", "Bob", "Cy", "Di"], "answer": "B"}, " B.")
        {'prediction': 'B', 'correct': True, 'unparsed': False}
        """
        from scrambled_bench.metrics.answer_extraction import extract_choice

        output = output if isinstance(output, str) else ""
        letter = extract_choice(output, meta["choices"], chain_of_thought=self.chain_of_thought)
        return {
            "prediction": letter,
            "correct": letter is not None and letter == meta["answer"],
            "unparsed": letter is None,
        }
