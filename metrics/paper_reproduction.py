"""The paper's Tables 1 and 3-8 recomputed from the authors' released outputs, cell by cell.

The authors publish their outputs as ``output/<task>/<dataset>/<setting>/<condition>/<model>.jsonl`` (here
gzipped): ScrRec rows carry ``original``, ``scrambled``, ``output`` and ``recovered``; ScrQA rows carry
``input`` (the prompt), ``output``, ``pred`` (their parsed letter, "" when none) and ``GT``; AQuA rows
``pred_strict`` / ``pred_loose`` instead of ``pred``. Every number here goes through the packaged metric
modules (``recovery_rate``, ``relative_performance_gain``), the same scripts a user's ``evaluate.load`` runs.

Two facts about the tables (see the developers' ``paper/README.md``), both encoded below:

- Table 6 (DREAM) is over the test and dev files together; its Acc is correct/1024 because line 192 of the
  test file, wrong for every model in every setting, is not counted. RPG is over all 1,025 rows.
- Table 1 (AQuA, chain of thought) scores the authors' ``pred_strict``.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.io import read_json, read_jsonl
from scrambled_bench.metrics import loaded, readers

#: Condition folder of the released outputs -> column key of tables.json.
CONDITION_COLUMNS = {
    "random_20%": "rs20",
    "random_50%": "rs50",
    "random_100%": "rs100",
    "keepfirst": "kf",
    "keepfirstlast": "kfl",
    "substituted": "sub",
    "original": "original",
}
SCRAMBLED_COLUMNS = ("rs20", "rs50", "rs100", "kf", "kfl")
QA_COLUMNS = ("original", *SCRAMBLED_COLUMNS, "sub")
AQUA_PERCENTS = ("0", "20", "50", "100")

#: 1-based line of the DREAM test outputs that Table 6's accuracies leave out (wrong for every model).
DREAM_TEST_LINE_NOT_COUNTED = 192

#: DREAM question categories (Sun et al., 2019) as coded in the ``type`` column of its annotation files;
#: a question can carry several ("cl": commonsense and logic).
DREAM_CATEGORIES = {"a": "arithmetic", "c": "commonsense", "l": "logic", "m": "matching", "s": "summary"}
#: The one DREAM dev question (dialogue, question number) that the ScrQA outputs do not hold.
DREAM_DEV_QUESTION_LEFT_OUT = ("4-14", "3")
#: The keys of Tables 7 (Acc) and 8 (RPG), DREAM by question category, in tables.json.
DREAM_ACC_TABLE, DREAM_RPG_TABLE = "table7_scrqa_dream_by_category_acc", "table8_scrqa_dream_by_category_rpg"

PACKAGED_TABLES = Path(__file__).resolve().parent / "paper_tables.json"

# How a model's file name reads as the paper's model name: a date suffix ("-0314") and a "-hf" suffix are
# dropped and case is ignored ("gpt-4-0314" -> "GPT-4", "Llama-2-70b-hf" -> "Llama-2-70b").
_MODEL_SUFFIXES = re.compile(r"(?:-hf|-\d{4})+$", re.IGNORECASE)


@dataclass(frozen=True)
class Cell:
    """One reproduced number beside the paper's; values in percent (ED in characters)."""

    table: str
    model: str
    metric: str
    column: str
    reproduced: float
    paper: float | None  # None: not in the paper, or printed as "< 0"
    paper_printed: str  # what the paper shows: "94.51", "< 0", or "" when the paper has no such cell
    samples: int

    @property
    def difference(self) -> float | None:
        """Reproduced minus paper, or None where the paper has no number."""
        return None if self.paper is None else self.reproduced - self.paper

    @property
    def matches(self) -> bool | None:
        """Whether the reproduced value prints as the paper's (two decimals; "< 0" as any negative value)."""
        if self.paper_printed == "< 0":
            return self.reproduced < 0
        if self.paper is None:
            return None
        return abs(self.reproduced - self.paper) <= 0.005 + 1e-9

    def as_dict(self) -> dict[str, Any]:
        """The cell as plain JSON-ready values."""
        return {**asdict(self), "difference": self.difference, "matches": self.matches}


def table_model_name(file_stem: str, known_names: Iterable[str]) -> str:
    """The paper's name of the model whose outputs are in ``<file_stem>.jsonl[.gz]``; the stem if unknown.

    >>> table_model_name("gpt-4-0314", ["GPT-4", "Llama-2-70b"])
    'GPT-4'
    >>> table_model_name("Llama-2-70b-chat-hf", ["Llama-2-70b", "Llama-2-70b-chat"])
    'Llama-2-70b-chat'
    >>> table_model_name("my-model", ["GPT-4"])
    'my-model'
    """
    wanted = _MODEL_SUFFIXES.sub("", file_stem).lower()
    for name in known_names:
        if name.lower() == wanted:
            return name
    return file_stem


def known_models(tables: dict) -> list[str]:
    """Every model name in any of the paper's tables, in order of first appearance."""
    names: dict[str, None] = {}
    for table in tables.values():
        if isinstance(table, dict):
            names.update((name, None) for name, value in table.items() if isinstance(value, dict))
    return list(names)


def output_stem(path: Path) -> str:
    """``gpt-4-0314`` for ``.../gpt-4-0314.jsonl.gz`` or ``.../gpt-4-0314.jsonl``."""
    name = path.name
    for suffix in (".jsonl.gz", ".jsonl"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _model_files(folder: Path) -> dict[str, Path]:
    if not folder.is_dir():
        return {}
    files = {}
    for path in sorted(folder.iterdir()):
        if path.name.endswith((".jsonl", ".jsonl.gz")):
            files[output_stem(path)] = path
    return files


def _percent(fraction: float) -> float:
    return 100.0 * fraction


def _cell(
    tables: dict,
    table: str,
    model: str,
    metric: str,
    column: str,
    value: float,
    samples: int,
    keys: Sequence[str] | None = None,
) -> Cell:
    """The reproduced ``value`` beside the paper's number at ``tables[table][model][*keys]`` (``keys``: the
    metric and the column by default)."""
    paper, printed = _paper_value(tables, table, model, *(keys or (metric, column)))
    return Cell(table, model, metric, column, value, paper, printed, samples)


def _paper_value(tables: dict, table: str, model: str, *keys: str) -> tuple[float | None, str]:
    node: Any = tables.get(table, {}).get(model)
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return None, ""
        node = node[key]
    if node is None:
        return None, "< 0"
    return float(node), f"{float(node):.2f}"


# ---------------------------------------------------------------- reading the released files (I/O edge)


def read_recovery_rows(path: Path) -> list[dict[str, str]]:
    """The ScrRec rows of one output file (``original``, ``scrambled``, ``output``; ``recovered`` if there)."""
    return [row for _, row in read_jsonl(path, required=("original", "scrambled", "output"))]


def read_qa_rows(path: Path) -> list[dict[str, Any]]:
    """The ScrQA rows of one output file (``input``, ``output``, ``GT`` and the authors' ``pred``)."""
    return [row for _, row in read_jsonl(path, required=("input", "output", "GT"))]


# ---------------------------------------------------------------- answers, read from the raw outputs

AnswerReader = Callable[[Sequence[dict[str, Any]], str], list[str]]
"""``read_answers(rows, dataset)``: the letter of each row's raw ``output`` ("" when none)."""


def answer_reader(name: str) -> AnswerReader:
    """Read the released rows' raw ``output`` with the answer reader ``name`` (``paper`` gives the authors'
    ``pred``/``pred_strict`` on every row); the choices come from each row's prompt.

    >>> rows = [{"input": "Question: Who?" + chr(10) + "Choices: (A)Ann (B)Bob (C)Cy", "output": " (B)"}]
    >>> answer_reader("paper")(rows, "dream")
    ['B']
    """
    reader = readers.get_reader(name)

    def read_answers(rows: Sequence[dict[str, Any]], dataset: str) -> list[str]:
        letters = readers.DATASET_LETTERS[dataset]
        return [
            reader.read_choice(
                row["output"], readers.parse_choices(row["input"]) or list(letters), dataset=dataset
            ).value
            or ""
            for row in rows
        ]

    return read_answers


def formula_gain(result: Mapping[str, Any]) -> float | None:
    """The RPG the paper's formula gives, also where the module calls RPG undefined (the paper printed the
    ratio, as "< 0" when negative); None where the formula divides by zero.

    >>> formula_gain({"relative_performance_gain": None, "relative_performance_gain_formula": -0.5})
    -0.5
    """
    value = result.get("relative_performance_gain")
    return value if value is not None else result.get("relative_performance_gain_formula")


# ---------------------------------------------------------------- the tables


def reproduce_recovery_table(
    outputs: Path, setting: str, table: str, tables: dict, metric_loader, reader: str = "paper"
) -> list[Cell]:
    """ED and RR of Table 3 (``few-shot``) or 4 (``zero-shot``) for every model in the outputs folder.

    RR comes from the raw ``output`` read by the answer ``reader``; the ``paper`` reader makes exactly the
    authors' ``recovered`` field, so the table is reproduced from what the model wrote.
    """
    recover = readers.get_reader(reader).read_recovery
    base = outputs / "scrambled_rec" / "scrambled_realtimeQA" / setting
    recovery = metric_loader("recovery_rate")
    known = known_models(tables)
    cells = []
    for folder, column in CONDITION_COLUMNS.items():
        if column not in SCRAMBLED_COLUMNS:
            continue
        for stem, path in _model_files(base / folder).items():
            model = table_model_name(stem, known)
            rows = read_recovery_rows(path)
            result = recovery.compute(
                predictions=[recover(row["output"]).value or "" for row in rows],
                references=[row["original"] for row in rows],
                scrambled=[row["scrambled"] for row in rows],
            )
            for metric, value in (("ED", result["edit_distance"]), ("RR", _percent(result["recovery_rate"]))):
                cells.append(_cell(tables, table, model, metric, column, value, len(rows)))
    return cells


def _qa_condition_answers(
    condition_dirs: Sequence[Path],
    read_answers: AnswerReader,
    dataset: str,
    lines_not_counted: dict[int, set[int]],
) -> dict[str, dict[str, tuple[list[str], list[str], list[bool]]]]:
    """model stem -> column -> (answers, gold letters, counted in Acc), several folders of one dataset
    concatenated.

    ``lines_not_counted`` maps a position in ``condition_dirs`` to 1-based file lines that Acc leaves out.
    """
    found: dict[str, dict[str, tuple[list[str], list[str], list[bool]]]] = {}
    for folder, column in CONDITION_COLUMNS.items():
        per_model: dict[str, tuple[list[str], list[str], list[bool]]] = {}
        for position, base in enumerate(condition_dirs):
            for stem, path in _model_files(base / folder).items():
                numbered = list(read_jsonl(path, required=("input", "output", "GT")))
                answers, gold, counted = per_model.setdefault(stem, ([], [], []))
                answers.extend(read_answers([row for _, row in numbered], dataset))
                gold.extend(row["GT"] for _, row in numbered)
                counted.extend(line not in lines_not_counted.get(position, set()) for line, _ in numbered)
        for stem, columns in per_model.items():
            found.setdefault(stem, {})[column] = columns
    return found


def _anchored_models(
    found: dict[str, dict[str, tuple[list[str], list[str], list[bool]]]], tables: dict
) -> Iterator[tuple[str, str, dict[str, tuple[list[str], list[str], list[bool]]]]]:
    """(file stem, the tables' model name, columns) of every model in ``found`` (see
    :func:`_qa_condition_answers`) with answers on the original and on the substituted contexts, the two
    anchors of RPG, in stem order."""
    known = known_models(tables)
    for stem, columns in sorted(found.items()):
        if "original" in columns and "sub" in columns:
            yield stem, table_model_name(stem, known), columns


def reproduce_qa_table(
    condition_dirs: Sequence[Path],
    table: str,
    tables: dict,
    metric_loader,
    read_answers: AnswerReader,
    *,
    dataset: str,
    lines_not_counted: dict[int, set[int]] | None = None,
) -> list[Cell]:
    """Acc and RPG of Table 5 (RealtimeQA) or 6 (DREAM) for every model with original and substituted files.

    Both come from the ``relative_performance_gain`` module: RPG over all rows, Acc over the rows that
    ``lines_not_counted`` (position in ``condition_dirs`` -> 1-based lines) does not leave out.
    """
    gain = metric_loader("relative_performance_gain")
    cells = []
    found = _qa_condition_answers(condition_dirs, read_answers, dataset, lines_not_counted or {})
    for stem, model, columns in _anchored_models(found, tables):
        original, gold, counted = columns["original"]
        substituted = columns["sub"][0]
        kept = [i for i, keep in enumerate(counted) if keep]
        for column in QA_COLUMNS:
            if column not in columns:
                continue
            answers, column_gold, _ = columns[column]
            if len(answers) != len(original) or len(substituted) != len(original) or column_gold != gold:
                raise ScrambledBenchError(
                    f"{table}: {stem} {column}: the condition files do not hold the same samples as 'original'"
                    f" ({len(answers)} vs {len(original)} rows, or different gold letters)"
                )
            over_all = gain.compute(
                predictions=answers,
                references=gold,
                original_predictions=original,
                substituted_predictions=substituted,
            )
            counted_only = over_all
            if len(kept) != len(answers):
                counted_only = _gain_over(
                    gain, rows=kept, answers=answers, gold=gold, original=original, substituted=substituted
                )
            for metric, value, samples in (
                ("Acc", counted_only["accuracy"], len(kept)),
                ("RPG", formula_gain(over_all), len(answers)),
            ):
                if value is None:
                    continue  # the formula divides by zero: no number to set beside the paper's
                cells.append(_cell(tables, table, model, metric, column, _percent(value), samples))
    return cells


def reproduce_aqua_table(
    outputs: Path, tables: dict, metric_loader, read_answers: AnswerReader
) -> list[Cell]:
    """Table 1: AQuA accuracy, chain-of-thought exemplars scrambled (``demo_random_X%``) and questions scrambled."""
    base = outputs / "scrambled_qa" / "scrambled_AQuA" / "few-shot-cot"
    table = "table1_aqua_fewshot_cot_acc"
    known = known_models(tables)
    cells = []
    for exemplars in AQUA_PERCENTS:
        for question in AQUA_PERCENTS:
            folder = (
                base
                / f"demo_random_{exemplars}%"
                / ("original" if question == "0" else f"random_{question}%")
            )
            for stem, path in _model_files(folder).items():
                rows = read_qa_rows(path)
                scores = metric_loader("relative_performance_gain").compute(
                    predictions=read_answers(rows, "aqua"), references=[row["GT"] for row in rows]
                )
                cells.append(
                    _cell(
                        tables,
                        table,
                        table_model_name(stem, known),
                        f"Acc question rs{question}",
                        f"exemplars rs{exemplars}",
                        _percent(scores["accuracy"]),
                        len(rows),
                        keys=(f"question_rs{question}", f"exemplars_rs{exemplars}"),
                    )
                )
    return cells


def _read_annotation(path: Path) -> list[tuple[tuple[str, str], str]]:
    """``((dialogue id, question number), type codes)`` per line of a DREAM annotation file, in file order."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ScrambledBenchError(f"cannot read {path}: {exc.strerror or exc}") from None
    entries = []
    for number, line in enumerate(lines[1:], start=2):  # line 1 is the header
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 3 or not fields[2] or set(fields[2]) - set(DREAM_CATEGORIES):
            raise ScrambledBenchError(
                f"{path}:{number}: expected 'dialogueID<TAB>questionIndex<TAB>type codes', got {line!r:.80}"
            )
        entries.append(((fields[0], fields[1]), fields[2]))
    return entries


def dream_row_categories(annotation_dir: str | os.PathLike[str]) -> list[str]:
    """The category codes of each ScrQA DREAM row, test rows then dev rows, as the paper's Tables 7 and 8 use them.

    Row order: the questions of ``annotator1_test.txt``, then those of ``annotator2_dev.txt`` without
    dialogue 4-14 question 3 (the released outputs hold exactly these, in this order). Labels: annotator 2's
    for every row, test and dev alike; with them the category sizes come out as the paper's (arithmetic 46,
    commonsense 358, logic 745, matching 108, summary 131) and every cell of Tables 7 and 8 is reproduced,
    where annotator 1's test labels give 48, 395, 758, 110 and 118.
    """
    folder = Path(annotation_dir)
    test_order = _read_annotation(folder / "annotator1_test.txt")
    test_labels = dict(_read_annotation(folder / "annotator2_test.txt"))
    dev = [
        (key, codes)
        for key, codes in _read_annotation(folder / "annotator2_dev.txt")
        if key != DREAM_DEV_QUESTION_LEFT_OUT
    ]
    missing = [key for key, _ in test_order if key not in test_labels]
    if missing:
        raise ScrambledBenchError(
            f"{folder / 'annotator2_test.txt'}: no label for dialogue {missing[0][0]} question {missing[0][1]}"
        )
    return [test_labels[key] for key, _ in test_order] + [codes for _, codes in dev]


def _gain_over(gain, *, rows: Sequence[int], answers, gold, original, substituted) -> dict[str, Any]:
    """The ``relative_performance_gain`` module on a subset of rows of the three conditions."""
    return gain.compute(
        predictions=[answers[i] for i in rows],
        references=[gold[i] for i in rows],
        original_predictions=[original[i] for i in rows],
        substituted_predictions=[substituted[i] for i in rows],
    )


def reproduce_dream_category_tables(
    outputs: Path,
    annotation_dir: str | os.PathLike[str],
    tables: dict,
    metric_loader,
    read_answers: AnswerReader,
) -> list[Cell]:
    """Tables 7 (Acc) and 8 (RPG) of DREAM by question category, through the ``relative_performance_gain`` module.

    Per category both are over all of its rows; the "all" row is Table 6 again (Acc without test line 192).
    """
    qa = outputs / "scrambled_qa"
    found = _qa_condition_answers(
        [qa / "scrambled_DREAM_test" / "zero-shot", qa / "scrambled_DREAM_dev" / "zero-shot"],
        read_answers,
        "dream",
        {0: {DREAM_TEST_LINE_NOT_COUNTED}},
    )
    if not found:
        return []
    categories = dream_row_categories(annotation_dir)
    gain = metric_loader("relative_performance_gain")
    cells = []
    for stem, model, columns in _anchored_models(found, tables):
        groups = _dream_category_rows(stem, columns["original"], categories)
        cells += _dream_category_cells(gain, tables, model, columns, groups)
    return cells


def _dream_category_rows(
    stem: str, original: tuple[list[str], list[str], list[bool]], categories: Sequence[str]
) -> dict[str, tuple[list[int], list[int]]]:
    """Per row of Tables 7 and 8 ("all", then each category): the rows its RPG is over and the rows its Acc
    is over. A category's are its rows for both; "all" is Table 6: every row for RPG, the counted ones
    (without test line 192) for Acc. ``original`` is the model's original condition (answers, gold,
    counted)."""
    _, gold, counted = original
    if len(gold) != len(categories):
        raise ScrambledBenchError(
            f"DREAM outputs of {stem}: {len(gold)} rows, but the annotation files describe {len(categories)}"
        )
    groups = {"all": (list(range(len(gold))), [i for i, keep in enumerate(counted) if keep])}
    for code, name in DREAM_CATEGORIES.items():
        members = [i for i, codes in enumerate(categories) if code in codes]
        groups[name] = (members, members)
    return groups


def _dream_category_cells(
    gain,
    tables: dict,
    model: str,
    columns: dict[str, tuple[list[str], list[str], list[bool]]],
    groups: dict[str, tuple[list[int], list[int]]],
) -> list[Cell]:
    """One model's cells of Tables 7 (Acc) and 8 (RPG): every condition column by every row of ``groups``
    (:func:`_dream_category_rows`)."""
    original, gold, _ = columns["original"]
    substituted = columns["sub"][0]
    cells = []
    for column in QA_COLUMNS:
        if column not in columns:
            continue
        answers = columns[column][0]
        # the module on a subset of this column's rows (RPG's anchors subset alike)
        over = functools.partial(
            _gain_over, gain, answers=answers, gold=gold, original=original, substituted=substituted
        )
        for name, (rpg_rows, acc_rows) in groups.items():
            acc_result = over(rows=acc_rows)
            rpg_result = acc_result if rpg_rows is acc_rows else over(rows=rpg_rows)
            for table, value, samples in (
                (DREAM_ACC_TABLE, acc_result["accuracy"], len(acc_rows)),
                (DREAM_RPG_TABLE, formula_gain(rpg_result), len(rpg_rows)),
            ):
                if value is None:
                    continue  # the formula divides by zero: no number to set beside the paper's
                cells.append(_cell(tables, table, model, name, column, _percent(value), samples))
    return cells


def load_tables(path: str | os.PathLike[str] | None = None) -> dict:
    """The paper's tables: ``path`` if given, else the copy of ``tables.json`` shipped in the package."""
    tables = read_json(path or PACKAGED_TABLES)
    if not isinstance(tables, dict):
        raise ScrambledBenchError(f"{path or PACKAGED_TABLES}: expected a JSON object of tables")
    return tables


_packaged_metric = loaded
"""The default ``metric_loader``: the packaged metric modules, each loaded once per process."""


def reproduce(
    outputs: str | os.PathLike[str],
    tables: dict,
    *,
    reader: str = readers.DEFAULT_READER,
    dream_annotations: str | os.PathLike[str] | None = None,
    metric_loader=_packaged_metric,
) -> list[Cell]:
    """Every cell of Tables 1 and 3-6 that the outputs folder holds models for; 7 and 8 with ``dream_annotations``.

    Every answer is read from the raw ``output`` by the answer ``reader``: ``"paper"`` applies the authors'
    own rules and gives their tables; ``"careful"`` reads as :class:`readers.CarefulReader` does.
    ``dream_annotations`` is DREAM's ``annotation/`` folder (github.com/nlpdata/dream), which holds the
    question categories.
    """
    outputs = Path(outputs)
    if not outputs.is_dir():
        raise ScrambledBenchError(f"--outputs {outputs}: not a folder")
    read_answers = answer_reader(reader)
    qa = outputs / "scrambled_qa"
    cells = [
        *reproduce_aqua_table(outputs, tables, metric_loader, read_answers),
        *reproduce_recovery_table(
            outputs, "few-shot", "table3_scrrec_realtimeqa_fewshot", tables, metric_loader, reader
        ),
        *reproduce_recovery_table(
            outputs, "zero-shot", "table4_scrrec_realtimeqa_zeroshot", tables, metric_loader, reader
        ),
        *reproduce_qa_table(
            [qa / "scrambled_realtimeQA" / "zero-shot"],
            "table5_scrqa_realtimeqa_zeroshot",
            tables,
            metric_loader,
            read_answers,
            dataset="realtimeqa",
        ),
        *reproduce_qa_table(
            [qa / "scrambled_DREAM_test" / "zero-shot", qa / "scrambled_DREAM_dev" / "zero-shot"],
            "table6_scrqa_dream_zeroshot",
            tables,
            metric_loader,
            read_answers,
            dataset="dream",
            lines_not_counted={0: {DREAM_TEST_LINE_NOT_COUNTED}},
        ),
    ]
    if dream_annotations is not None:
        cells += reproduce_dream_category_tables(
            outputs, dream_annotations, tables, metric_loader, read_answers
        )
    if not cells:
        raise ScrambledBenchError(
            f"--outputs {outputs}: no released outputs found (expected scrambled_rec/ or scrambled_qa/ laid out as"
            " the authors' output/ folder)"
        )
    return cells
