"""AQuA-RAT with few-shot chain of thought (the paper's Table 1): solve an algebra word problem whose
question, and whose four worked exemplars' questions, are scrambled at separate rates.

Scored by accuracy, reading the letter stated after the last "answer is" (the authors' ``pred_strict``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scrambled_bench.evaluation import aggregate, prompts
from scrambled_bench.evaluation.tasks.base import ACCURACY, TaskConfig, View, register
from scrambled_bench.evaluation.tasks.choice import MultipleChoiceTask


class AquaChainOfThought(MultipleChoiceTask):
    name = "aqua-cot"
    rank = 4
    description = "AQuA-RAT few-shot chain of thought, question and exemplars scrambled (Table 1)"
    datasets = ("aqua",)
    # AQuA's questions are never letter-substituted in the paper
    excluded_types = frozenset({"sub"})
    stop = prompts.AQUA_STOP
    metrics = (ACCURACY,)
    exemplar_rates = tuple(prompts.EXEMPLAR_RATES)
    view = View(
        titles={
            "aqua": "AQuA-RAT few-shot CoT (cf. Table 1): Acc % by question scramble type (rows) and "
            "exemplar-question scramble rate (columns)"
        },
        panel_titles={"aqua": "AQuA few-shot CoT"},
        figure="aqua",
        layout="exemplars",
        paper_tables={"aqua": "table1_aqua_fewshot_cot_acc"},
        headline=ACCURACY,
    )

    def export_slug(self, config: TaskConfig) -> str:
        """The task already names its one dataset.

        >>> [AQUA_COT.export_slug(TaskConfig("aqua-cot", "aqua", "rs100", rate)) for rate in (0, 50)]
        ['aqua_cot_rs100', 'aqua_cot_rs100_exemplars50']
        """
        exemplars = (
            "" if config.exemplar_rate == self.exemplar_rates[0] else f"_exemplars{config.exemplar_rate}"
        )
        return f"aqua_cot_{config.scramble_type}{exemplars}"

    def demonstration(self, config: TaskConfig, seed: int) -> str:
        return prompts.aqua_demonstration(
            prompts.scrambled_aqua_exemplar_questions(config.exemplar_rate, seed)
        )

    def prompt(self, config: TaskConfig, row: Mapping[str, Any], demonstration: str) -> str:
        return prompts.aqua_prompt(row["scrambled"].strip(), list(row["choices"]), demonstration)

    def baseline(self, config: TaskConfig) -> TaskConfig:
        return self.anchor(config, "original")

    def aggregate(self, config, samples, scored, boot) -> dict[str, Any]:
        return {"accuracy": aggregate.accuracy_score(samples, boot)}


AQUA_COT = register(AquaChainOfThought())
