"""The paper's nineteen models as reference rows and series: their numbers (``metrics/paper_tables.json``,
Tables 1 and 3-8), their sizes (``metrics/paper_models.json``), and what a reader needs to judge whether a
run's numbers are comparable with them (the paper's sample counts and answer reader).

A task's view names the paper's table it mirrors per dataset (``View.paper_tables``, ``CategoryView``);
this module reads a cell of such a table. It never fills a run's cell: a number either is the paper's,
shown as the paper's, or is absent.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrambled_bench import metrics
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.prompts import EXEMPLAR_RATES
from scrambled_bench.io import read_json

PAPER_CITATION = "Cao et al. (2023)"
ALL_MODELS = "all"
"""``--paper`` without a selection: every model of the paper."""

#: How many samples each of the paper's tables rests on (the developers' paper/README.md): ScrRec 408
#: RealtimeQA evidence texts, ScrQA 346 RealtimeQA questions and 1,025 DREAM questions, AQuA's 254.
PAPER_SAMPLES: dict[str, int] = {
    "table3_scrrec_realtimeqa_fewshot": 408,
    "table4_scrrec_realtimeqa_zeroshot": 408,
    "table5_scrqa_realtimeqa_zeroshot": 346,
    "table6_scrqa_dream_zeroshot": 1025,
    "table7_scrqa_dream_by_category_acc": 1025,
    "table8_scrqa_dream_by_category_rpg": 1025,
    "table1_aqua_fewshot_cot_acc": 254,
}
PAPER_READER = "paper"
"""The answer reader that reads outputs as the authors' code did (the ``parser`` setting's value)."""


def _metrics_file(name: str) -> Path:
    return Path(metrics.__file__).resolve().parent / name


@dataclass(frozen=True)
class PaperModel:
    """One of the paper's models.

    >>> PaperModel("GPT-4", "GPT", None).label
    'GPT-4 (paper)'
    """

    name: str
    family: str
    parameters: int | None

    @property
    def label(self) -> str:
        """How its rows and series are marked as the paper's."""
        return f"{self.name} (paper)"


@functools.cache
def paper_models() -> tuple[PaperModel, ...]:
    """The nineteen models, in the order of the paper's tables.

    >>> len(paper_models()), paper_models()[0].name
    (19, 'GPT-4')
    """
    document = read_json(_metrics_file("paper_models.json"))
    return tuple(PaperModel(m["name"], m["family"], m["parameters"]) for m in document["models"])


@functools.cache
def paper_tables() -> dict[str, Any]:
    """``metrics/paper_tables.json``: table key -> model -> ... -> value (None where the paper prints "< 0").

    >>> paper_tables()["table5_scrqa_realtimeqa_zeroshot"]["GPT-4"]["Acc"]["original"]
    97.69
    """
    return read_json(_metrics_file("paper_tables.json"))


def select_paper_models(selection: str | None) -> list[PaperModel]:
    """The paper's models a ``--paper`` value names: none for None, every one for ``all``, else the
    comma-separated names in any case; an unknown name is a one-line error naming it.

    >>> [m.name for m in select_paper_models("gpt-4, LLAMA-2-70B")]
    ['GPT-4', 'Llama-2-70b']
    >>> len(select_paper_models("all")), select_paper_models(None)
    (19, [])
    >>> select_paper_models("gpt-5")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --paper: unknown paper model 'gpt-5'; the paper's models: GPT-4, GPT-3.5-turbo, text-davinci-003, Falcon-180b, Falcon-180b-chat, Falcon-40b, Falcon-40b-instruct, Llama-2-70b, Llama-2-70b-chat, Llama-2-13b, Llama-2-13b-chat, Llama-2-7b, Llama-2-7b-chat, MPT-30b, MPT-30b-instruct, UL2, Flan-UL2, Flan-T5-xxl, ByT5-xxl
    """
    if selection is None:
        return []
    names = [name.strip() for name in selection.split(",") if name.strip()]
    if not names or [name.lower() for name in names] == [ALL_MODELS]:
        return list(paper_models())
    by_name = {model.name.lower(): model for model in paper_models()}
    chosen: list[PaperModel] = []
    for name in names:
        model = by_name.get(name.lower())
        if model is None:
            known = ", ".join(m.name for m in paper_models())
            raise ScrambledBenchError(f"--paper: unknown paper model {name!r}; the paper's models: {known}")
        if model not in chosen:
            chosen.append(model)
    return chosen


@dataclass(frozen=True)
class PaperCell:
    """One number as the paper prints it: a value, or "< 0" where it prints only that.

    >>> PaperCell(94.5).text, PaperCell(None).text
    ('94.50', '< 0')
    """

    value: float | None

    @property
    def below_zero(self) -> bool:
        return self.value is None

    @property
    def text(self) -> str:
        return "< 0" if self.value is None else f"{self.value:.2f}"


def paper_cell(table: str | None, model: PaperModel, *keys: str) -> PaperCell | None:
    """The paper's cell ``table[model][keys...]``, or None where the paper has no such cell.

    >>> gpt4 = select_paper_models("gpt-4")[0]
    >>> paper_cell("table5_scrqa_realtimeqa_zeroshot", gpt4, "Acc", "rs100")
    PaperCell(value=93.35)
    >>> paper_cell("table5_scrqa_realtimeqa_zeroshot", gpt4, "Acc", "kr2") is None
    True
    """
    if table is None:
        return None
    node: Any = paper_tables().get(table, {}).get(model.name)
    for key in keys:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    if node is not None and not isinstance(node, (int, float)):
        return None
    return PaperCell(None if node is None else float(node))


def paper_keys(table: str | None, model: PaperModel, *keys: str) -> list[str]:
    """The keys one level below ``table[model][keys...]`` (the paper's columns or categories there).

    >>> paper_keys("table7_scrqa_dream_by_category_acc", select_paper_models("gpt-4")[0])[:2]
    ['all', 'arithmetic']
    """
    if table is None:
        return []
    node: Any = paper_tables().get(table, {}).get(model.name)
    for key in keys:
        node = node.get(key) if isinstance(node, Mapping) else None
    return list(node) if isinstance(node, Mapping) else []


def models_in(table: str | None, models: Iterable[PaperModel]) -> list[PaperModel]:
    """Those of ``models`` that the paper's ``table`` holds (Table 1 has three, Tables 7-8 five).

    >>> [m.name for m in models_in("table1_aqua_fewshot_cot_acc", paper_models())]
    ['GPT-4', 'GPT-3.5-turbo', 'text-davinci-003']
    """
    held = paper_tables().get(table, {}) if table else {}
    return [model for model in models if isinstance(held.get(model.name), Mapping)]


# -- Table 1's keys: question scramble rate by exemplar scramble rate ------------------------------------


def exemplar_keys(scramble_type: str, exemplar_rate: int) -> tuple[str, str] | None:
    """Table 1's (row, column) keys for AQuA questions at ``scramble_type`` with exemplars at a rate; None
    for a question type the table does not have.

    >>> exemplar_keys("original", 20), exemplar_keys("rs100", 0), exemplar_keys("kfl", 0)
    (('question_rs0', 'exemplars_rs20'), ('question_rs100', 'exemplars_rs0'), None)
    """
    question_rate = {name: rate for rate, name in EXEMPLAR_RATES.items()}.get(scramble_type)
    if question_rate is None:
        return None
    return f"question_rs{question_rate}", f"exemplars_rs{exemplar_rate}"


def exemplar_cells(table: str | None, model: PaperModel) -> dict[tuple[str, int], PaperCell]:
    """Every cell of Table 1 for a model, keyed (question scramble type, exemplar rate).

    >>> cells = exemplar_cells("table1_aqua_fewshot_cot_acc", select_paper_models("gpt-4")[0])
    >>> cells[("original", 0)], len(cells)
    (PaperCell(value=66.93), 16)
    """
    cells = {}
    for scramble_type in EXEMPLAR_RATES.values():
        for rate in EXEMPLAR_RATES:
            keys = exemplar_keys(scramble_type, rate)
            cell = paper_cell(table, model, *keys) if keys else None
            if cell is not None:
                cells[(scramble_type, rate)] = cell
    return cells


# -- whether a run's numbers are comparable with the paper's ----------------------------------------------


def run_reader(run_config: Mapping[str, Any], results: Mapping[str, Any]) -> str | None:
    """The answer reader a run's results were computed with (``reader`` in results.json, which
    ``report --parser`` re-reads, else ``settings.parser`` in config.json); None where it recorded none
    (runs before the option existed read carefully).

    >>> run_reader({"settings": {"parser": "paper"}}, {}), run_reader({}, {"reader": "careful"}), run_reader({}, {})
    ('paper', 'careful', None)
    """
    settings = run_config.get("settings") or {}
    return results.get("reader") or settings.get("parser")


def comparability(
    *,
    prompt_mode: str | None,
    reader: str | None,
    samples: int | None,
    paper_samples: int | None,
) -> list[str]:
    """How a run's numbers in one table differ from the paper's setting: prompts, answer reader, sample
    set; empty where they do not.

    >>> comparability(prompt_mode="chat", reader="paper", samples=346, paper_samples=346)
    []
    >>> comparability(prompt_mode="chat", reader=None, samples=8, paper_samples=346)
    ["answer reader not recorded (careful/unknown), not the paper's", "samples: 8 per config, not the paper's 346"]
    """
    differences = []
    if prompt_mode not in (None, "chat", "completion"):
        differences.append(f"prompt mode {prompt_mode!r}")
    if reader is None:
        differences.append("answer reader not recorded (careful/unknown), not the paper's")
    elif reader != PAPER_READER:
        differences.append(f"answer reader {reader!r}, not the paper's ({PAPER_READER!r})")
    if paper_samples is not None and samples != paper_samples:
        differences.append(f"samples: {samples} per config, not the paper's {paper_samples}")
    return differences


def comparability_caption(entries: Sequence[tuple[str, list[str], str | None]], table: str | None) -> str:
    """The caption of a table with the paper's rows: per run, what differs from the paper's setting.

    ``entries`` are (run label, differences, prompt mode). Prompts are the package's copy of the paper's
    (Appendix C) in every run, so only their mode is stated.

    >>> comparability_caption([("m", [], "chat")], "table5_scrqa_realtimeqa_zeroshot")
    "Comparable with the paper's rows (Cao et al. (2023), Table 5): m: yes (the paper's prompts, chat; the paper's answer reader; the paper's 346 samples)."
    """
    where = table_name(table)
    verdicts: dict[str, list[str]] = {}
    for label, differences, mode in entries:
        if differences:
            verdict = f"no ({'; '.join(differences)})"
        else:
            samples = PAPER_SAMPLES.get(table or "")
            verdict = (
                f"yes (the paper's prompts, {mode or 'chat'}; the paper's answer reader; "
                f"the paper's {samples} samples)"
            )
        verdicts.setdefault(verdict, []).append(label)
    parts = [f"{', '.join(labels)}: {verdict}" for verdict, labels in verdicts.items()]
    return f"Comparable with the paper's rows ({PAPER_CITATION}, {where}): {'; '.join(parts)}."


def table_name(table: str | None) -> str:
    """How the paper names one of its tables.

    >>> table_name("table5_scrqa_realtimeqa_zeroshot")
    'Table 5'
    """
    if not table:
        return "no table"
    head = table.split("_", 1)[0]
    return f"Table {head.removeprefix('table')}" if head.startswith("table") else head
