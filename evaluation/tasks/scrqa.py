"""ScrQA, the Scrambled Question Answering task (the paper's Tables 5-8, Figures 4-6): answer a
multiple-choice question from a scrambled context (RealtimeQA evidence, DREAM dialogue), zero-shot.

Scored by accuracy and the relative performance gain (RPG), which places a scrambled type's accuracy
between those of the same samples with the ``original`` context and with every letter substituted
(``sub``); DREAM adds both per question category.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scrambled_bench.evaluation import aggregate, prompts
from scrambled_bench.evaluation.tasks.base import ACCURACY, RPG, CategoryView, TaskConfig, View, register
from scrambled_bench.evaluation.tasks.choice import MultipleChoiceTask

#: the paper's prompt per dataset (Appendix C.3 and C.4)
PROMPTS = {
    "realtimeqa": lambda row: prompts.realtimeqa_prompt(
        row["question"].strip(), list(row["choices"]), row["scrambled"].strip()
    ),
    "dream": lambda row: prompts.dream_prompt(
        row["scrambled"].strip(), row["question"].strip(), list(row["choices"])
    ),
}


class ScrambledQuestionAnswering(MultipleChoiceTask):
    name = "scrqa"
    rank = 3
    description = "ScrQA: answer from a scrambled context, RealtimeQA and DREAM (Tables 5-8)"
    datasets = tuple(PROMPTS)
    stop = prompts.QA_STOP
    metrics = (ACCURACY, RPG)
    #: RPG = (Acc_type - Acc_sub) / (Acc_original - Acc_sub): the configs a run needs beside any scrambled one
    anchors = ("original", "sub")
    view = View(
        titles={
            "realtimeqa": "ScrQA zero-shot on RealtimeQA (cf. Table 5): Acc % and RPG %, a row of each",
            "dream": "ScrQA zero-shot on DREAM (cf. Table 6): Acc % and RPG %, a row of each",
        },
        panel_titles={"realtimeqa": "ScrQA, RealtimeQA", "dream": "ScrQA, DREAM"},
        figure="scrqa",
        paper_tables={
            "realtimeqa": "table5_scrqa_realtimeqa_zeroshot",
            "dream": "table6_scrqa_dream_zeroshot",
        },
        prompt_tokens_table=True,
        headline=RPG,
        categories={
            "dream": CategoryView(
                accuracy_title="DREAM by question category (cf. Table 7): Acc %",
                gain_title="DREAM by question category (cf. Table 8 and Figure 4): RPG %",
                accuracy_paper_table="table7_scrqa_dream_by_category_acc",
                gain_paper_table="table8_scrqa_dream_by_category_rpg",
            )
        },
    )

    def keeps(self, row: Mapping[str, Any], selected: Sequence[Mapping[str, Any]]) -> bool:
        # RealtimeQA: only the questions the paper used (the evidence answers them); other datasets have all
        return bool(row.get("used_for_qa", True))

    def prompt(self, config: TaskConfig, row: Mapping[str, Any], demonstration: str) -> str:
        return PROMPTS[config.dataset](row)

    def baseline(self, config: TaskConfig) -> TaskConfig:
        return self.anchor(config, "original")

    def aggregate(self, config, samples, scored, boot) -> dict[str, Any]:
        by_id = {
            name: {s["id"]: s for s in scored[self.anchor(config, name)]}
            for name in self.anchors
            if self.anchor(config, name) in scored
        }
        original, substituted = by_id.get("original"), by_id.get("sub")
        entry: dict[str, Any] = {"accuracy": aggregate.accuracy_score(samples, boot)}
        if original is not None and substituted is not None:
            entry["relative_performance_gain"] = aggregate.gain_score(samples, original, substituted, boot)
        if any("categories" in s for s in samples):
            entry["categories"] = aggregate.category_scores(samples, original, substituted, boot)
        return entry


SCRQA = register(ScrambledQuestionAnswering())
