"""ScrRec, the Scrambled Sentence Recovery task (the paper's Tables 3-4, Figures 2-3): recover a
RealtimeQA evidence text from its scrambled form, zero-shot or with three scrambled wikiQA exemplars.

Scored by the character edit distance (ED) of the recovered sentence to the original and the recovery
rate (RR) over a config, through the ``recovery_rate`` metric module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scrambled_bench.evaluation import aggregate, prompts
from scrambled_bench.evaluation.tasks.base import ED, RR, Task, TaskConfig, View, register
from scrambled_bench.metrics.readers import DEFAULT_READER, get_reader

VIEW = View(
    titles={
        "realtimeqa": "ScrRec {shots} on RealtimeQA (cf. Table {table}): ED (lower is better) and RR %, a row of each"
    },
    panel_titles={"realtimeqa": "ScrRec {shots}, RealtimeQA"},
    figure="scrrec",
)


class ScrambledSentenceRecovery(Task):
    """Recover the scrambled evidence; one request per distinct evidence text."""

    datasets = ("realtimeqa",)
    # recovering an unscrambled or a letter-substituted text measures nothing
    excluded_types = frozenset({"original", "sub"})
    stop = prompts.SCRREC_STOP
    metrics = (ED, RR)

    def __init__(self, *, few_shot: bool, paper_table: int) -> None:
        shots = "few-shot" if few_shot else "zero-shot"
        self.few_shot = few_shot
        self.rank = 2 if few_shot else 1
        self.name = f"scrrec-{shots}"
        self.description = f"ScrRec {shots}: recover the scrambled RealtimeQA evidence (Table {paper_table})"
        self.view = View(
            titles={d: t.format(shots=shots, table=paper_table) for d, t in VIEW.titles.items()},
            panel_titles={d: t.format(shots=shots) for d, t in VIEW.panel_titles.items()},
            figure=VIEW.figure,
            paper_tables={"realtimeqa": f"table{paper_table}_scrrec_realtimeqa_{shots.replace('-', '')}"},
            headline=RR,
        )

    def export_slug(self, config: TaskConfig) -> str:
        """Zero-shot is the plain name, few-shot says so after the type.

        >>> config = TaskConfig("scrrec-few-shot", "realtimeqa", "rs50")
        >>> config.definition.export_slug(config)
        'scrrec_realtimeqa_rs50_fewshot'
        """
        slug = f"scrrec_{config.dataset}_{config.scramble_type}"
        return f"{slug}_fewshot" if self.few_shot else slug

    def keeps(self, row: Mapping[str, Any], selected: Sequence[Mapping[str, Any]]) -> bool:
        # several weekly questions can share one evidence text: recover each text once
        return all(row["original"] != other["original"] for other in selected)

    def demonstration(self, config: TaskConfig, seed: int) -> str:
        if not self.few_shot:
            return ""
        return prompts.scrrec_demonstration(prompts.scrambled_scrrec_exemplars(seed))

    def prompt(self, config: TaskConfig, row: Mapping[str, Any], demonstration: str) -> str:
        if self.few_shot:
            return prompts.scrrec_few_shot_prompt(row["scrambled"], demonstration)
        return prompts.scrrec_zero_shot_prompt(row["scrambled"])

    def meta(self, config: TaskConfig, row: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().meta(config, row), "original": row["original"], "scrambled": row["scrambled"]}

    def score(
        self, meta: Mapping[str, Any], output: str, *, chat: bool = True, reader: str = DEFAULT_READER
    ) -> dict[str, Any]:
        """``prediction`` is the sentence the ``reader`` recovers from ``output`` and ``edit_distance`` its
        character Levenshtein distance to the original; an empty recovery is ``unparsed`` and scored by that
        distance too (the whole sentence); ``rule`` names what the reader took away. Raw completions
        (``chat=False``) keep the first line only, as the paper's open models stopped at the first newline.

        >>> task = ScrambledSentenceRecovery(few_shot=False, paper_table=4)
        >>> scored = task.score({"original": "The cat.", "scrambled": "Teh cat."}, 'Recovered sentence: "The cat."')
        >>> scored["prediction"], scored["edit_distance"], scored["scrambled_edit_distance"], scored["rule"]
        ('The cat.', 0, 2, 'preamble')
        """
        from rapidfuzz.distance import Levenshtein

        text = output if isinstance(output, str) else ""
        if not chat:
            text = text.strip().split("\n", 1)[0]
        reading = get_reader(reader).read_recovery(text)
        recovered = (reading.value or "").strip()
        original = meta["original"].strip()
        return {
            "prediction": recovered,
            "edit_distance": Levenshtein.distance(recovered, original),
            "scrambled_edit_distance": Levenshtein.distance(meta["scrambled"].strip(), original),
            "unparsed": recovered == "",
            "rule": reading.rule,
        }

    def aggregate(self, config, samples, scored, boot) -> dict[str, Any]:
        return aggregate.recovery_scores(samples, boot)


SCRREC_ZERO_SHOT = register(ScrambledSentenceRecovery(few_shot=False, paper_table=4))
SCRREC_FEW_SHOT = register(ScrambledSentenceRecovery(few_shot=True, paper_table=3))
