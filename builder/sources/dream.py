"""DREAM (Sun et al., 2019): dialogue-based multiple-choice reading comprehension, ``nlpdata/dream``.

The paper's 1,025 ScrQA questions are the annotated ones: the 512 test questions of
``annotation/annotator1_test.txt`` and the 513 dev questions of ``annotation/annotator2_dev.txt`` that
annotator 1 annotated too (this leaves out dialogue ``4-14`` question 3), in the order of those files.

``categories`` are annotator 2's labels for every row, test rows (``annotator2_test.txt``) and dev rows
(``annotator2_dev.txt``) alike, because the paper's Tables 7 and 8 use them: only then do the category
sizes come out as the paper's (arithmetic 46, commonsense 358, logic 745, matching 108, summary 131) and
every cell of those tables is reproduced. Annotator 1's labels (``annotator1_{test,dev}.txt``; they differ
on 116 of the 512 test questions) are kept in ``categories_annotator1``.

The dialogue turns, joined by newlines, are what gets scrambled, independently for every question as in
the paper.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from scrambled_bench.builder.sources.common import (
    QA_COLUMNS,
    SourceData,
    SourceInfo,
    SourceRecord,
    line_error,
)
from scrambled_bench.builder.sources.fetch import SourceReader, Upstream
from scrambled_bench.choices import LETTERS
from scrambled_bench.errors import ScrambledBenchError

UPSTREAM = Upstream("nlpdata", "dream", "master")

CATEGORY_NAMES = {"a": "arithmetic", "c": "commonsense", "l": "logic", "m": "matching", "s": "summary"}
"""The annotation ``type`` letters; a question may carry several (``cl``)."""


INFO = SourceInfo(
    name="dream", pretty_name="DREAM", upstream=UPSTREAM, license="other",
    license_note="DREAM is intended for non-commercial research purposes only (upstream license.txt).",
    scrambled_field="the dialogue (turns joined by newlines)",
    columns=(
        *QA_COLUMNS, ("categories", "list<string>"), ("categories_annotator1", "list<string>"),
        ("dream_split", "string"),
    ),
    citation="""@article{sun2019dream,
  title={{DREAM}: A Challenge Dataset and Models for Dialogue-Based Reading Comprehension},
  author={Sun, Kai and Yu, Dian and Chen, Jianshu and Yu, Dong and Choi, Yejin and Cardie, Claire},
  journal={Transactions of the Association for Computational Linguistics},
  volume={7},
  pages={217--231},
  year={2019}
}""",
)  # fmt: skip


class AnnotatedSplit(NamedTuple):
    """Which annotated questions of one DREAM split are rows, and where their two sets of labels come from."""

    split: str
    annotator1: str
    annotator2: str
    order_from_annotator: int
    """The annotator whose file gives the rows and their order."""
    unlabelled_is_error: bool
    """A row the other annotator did not label: an error (True) or left out of the rows (False)."""


ANNOTATED_SPLITS = (
    AnnotatedSplit("test", "annotation/annotator1_test.txt", "annotation/annotator2_test.txt", 1, True),
    AnnotatedSplit("dev", "annotation/annotator1_dev.txt", "annotation/annotator2_dev.txt", 2, False),
)


def parse_categories(letters: str) -> list[str]:
    """Category names of an annotation ``type`` such as ``"cl"``, in a fixed order.

    >>> parse_categories("lc")
    ['commonsense', 'logic']
    """
    unknown = sorted(set(letters) - set(CATEGORY_NAMES))
    if unknown or not letters:
        raise ValueError(f"unknown category letter(s) {''.join(unknown) or letters!r}")
    return [name for letter, name in CATEGORY_NAMES.items() if letter in letters]


def read_annotation(reader: SourceReader, path: str) -> list[tuple[str, int, list[str], int]]:
    """Rows (dialogue id, 1-based question index, categories, line number) of one annotation file."""
    location = reader.origin(UPSTREAM, path)
    rows = []
    for line_number, line in enumerate(reader.read_text(UPSTREAM, path).splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.strip().split("\t")
        if line_number == 1 and fields[:2] == ["dialogueID", "questionIndex"]:
            continue
        if len(fields) != 3:
            raise ScrambledBenchError(
                line_error(
                    location,
                    line_number,
                    f"expected 3 tab-separated fields (dialogueID, questionIndex, type), got {len(fields)}",
                )
            )
        dialogue_id, index, letters = fields
        if not index.isdigit() or int(index) < 1:
            raise ScrambledBenchError(
                line_error(location, line_number, f"questionIndex {index!r} is not a positive integer")
            )
        try:
            categories = parse_categories(letters)
        except ValueError as exc:
            raise ScrambledBenchError(line_error(location, line_number, str(exc))) from None
        rows.append((dialogue_id, int(index), categories, line_number))
    return rows


def labels_by_question(
    rows: list[tuple[str, int, list[str], int]], location: str
) -> dict[tuple[str, int], list[str]]:
    """(dialogue id, question index) -> categories of one annotation file; a repeated question is an error.

    ``rows`` are :func:`read_annotation`'s; ``location`` names the file in the error.

    >>> labels_by_question([("4-199", 1, ["commonsense"], 2), ("5-806", 2, ["matching"], 3)], "a2.txt")
    {('4-199', 1): ['commonsense'], ('5-806', 2): ['matching']}
    >>> labels_by_question([("4-199", 1, ["commonsense"], 2), ("4-199", 1, ["logic"], 5)], "a2.txt")
    Traceback (most recent call last):
    scrambled_bench.errors.ScrambledBenchError: a2.txt:5: dialogue '4-199' question 1 is listed a second time
    """
    labels: dict[tuple[str, int], list[str]] = {}
    for dialogue_id, index, categories, line_number in rows:
        if (dialogue_id, index) in labels:
            raise ScrambledBenchError(
                line_error(
                    location,
                    line_number,
                    f"dialogue {dialogue_id!r} question {index} is listed a second time",
                )
            )
        labels[(dialogue_id, index)] = categories
    return labels


def read_dialogues(reader: SourceReader, path: str) -> dict[str, tuple[list[str], list[dict]]]:
    """``data/{split}.json``: dialogue id -> (turns, questions), validated."""
    location = reader.origin(UPSTREAM, path)
    document = reader.read_json(UPSTREAM, path)
    if not isinstance(document, list):
        raise ScrambledBenchError(f"{location}: expected a JSON list of [turns, questions, id] dialogues")
    dialogues = {}
    for position, item in enumerate(document):
        where = f"{location}: dialogue #{position}"
        if not (isinstance(item, list) and len(item) == 3 and isinstance(item[2], str)):
            raise ScrambledBenchError(f"{where}: expected [turns, questions, id]")
        turns, questions, dialogue_id = item
        if not isinstance(turns, list) or not all(isinstance(turn, str) for turn in turns):
            raise ScrambledBenchError(f"{where} ({dialogue_id}): turns are not a list of strings")
        if not isinstance(questions, list):
            raise ScrambledBenchError(f"{where} ({dialogue_id}): questions are not a list")
        for number, question in enumerate(questions, start=1):
            missing = [
                key
                for key in ("question", "choice", "answer")
                if not isinstance(question, dict) or key not in question
            ]
            if missing:
                raise ScrambledBenchError(
                    f"{where} ({dialogue_id}) question {number}: missing field(s) {', '.join(missing)}"
                )
        dialogues[dialogue_id] = (turns, questions)
    return dialogues


def load(reader: SourceReader, *, window: str | None = None) -> SourceData:
    """Read the paper's 1,025 annotated DREAM questions (``window`` does not apply to DREAM)."""
    records = []
    left_out = []
    for annotated in ANNOTATED_SPLITS:
        split = annotated.split
        data_path = f"data/{split}.json"
        dialogues = read_dialogues(reader, data_path)
        order_is_annotator1 = annotated.order_from_annotator == 1
        order_path, other_path = (
            (annotated.annotator1, annotated.annotator2)
            if order_is_annotator1
            else (annotated.annotator2, annotated.annotator1)
        )
        other_labels = labels_by_question(
            read_annotation(reader, other_path), reader.origin(UPSTREAM, other_path)
        )
        for dialogue_id, index, order_labels, line_number in read_annotation(reader, order_path):
            where = line_error(reader.origin(UPSTREAM, order_path), line_number, "")
            labelled_too = other_labels.get((dialogue_id, index))
            if labelled_too is None:
                if annotated.unlabelled_is_error:
                    raise ScrambledBenchError(
                        f"{reader.origin(UPSTREAM, other_path)}: no categories for dialogue {dialogue_id!r} "
                        f"question {index} (line {line_number} of {order_path})"
                    )
                left_out.append(f"{split}/{dialogue_id}/{index}")
                continue
            annotator1_labels, annotator2_labels = (
                (order_labels, labelled_too) if order_is_annotator1 else (labelled_too, order_labels)
            )
            if dialogue_id not in dialogues:
                raise ScrambledBenchError(f"{where}dialogue {dialogue_id!r} is not in {data_path}")
            turns, questions = dialogues[dialogue_id]
            if index > len(questions):
                raise ScrambledBenchError(
                    f"{where}dialogue {dialogue_id!r} has {len(questions)} question(s), not {index}"
                )
            record = _question_record(where, split, dialogue_id, index, turns, questions[index - 1])
            # annotator 2 for every row: the labels of the paper's Tables 7 and 8
            record.fields["categories"] = annotator2_labels
            record.fields["categories_annotator1"] = annotator1_labels
            records.append(record)
    notes = {"rows": len(records), "left_out_not_annotated_by_annotator1": left_out}
    return SourceData(info=INFO, records=records, notes=notes)


def load_questions(reader: SourceReader, split: str) -> list[SourceRecord]:
    """Every question of DREAM's ``data/{split}.json`` (``train``, ``dev`` or ``test``), in upstream order.

    Unlike :func:`load`, which keeps the paper's 1,025 annotated ScrQA questions, this is the whole split
    (train 6,116, dev 2,040, test 2,041 questions): the hidden-state probes of Appendix A.3 are trained on
    train and evaluated on dev + test. Fields as in :func:`load` without the categories; ``id`` is
    ``"{split}/{dialogue}/{index}"`` and ``scramble_key`` is ``"dream/" + id``, so a dev or test question
    is scrambled exactly as in the built ``dream_<type>`` configs with the same seed.

    >>> import pathlib, tempfile, json
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "nlpdata/dream/data").mkdir(parents=True)
    >>> question = {"question": "Who?", "choice": ["W", "M", "Nobody"], "answer": "M"}
    >>> dialogue = [["W: Hi.", "M: Hello."], [question], "1-1"]
    >>> _ = (root / "nlpdata/dream/data/train.json").write_text(json.dumps([dialogue]))
    >>> [(r.fields["id"], r.fields["answer"]) for r in load_questions(SourceReader(mirror=root), "train")]
    [('train/1-1/1', 'B')]
    """
    if split not in ("train", "dev", "test"):
        raise ScrambledBenchError(f"DREAM has the splits train, dev and test, not {split!r}")
    data_path = f"data/{split}.json"
    where = f"{reader.origin(UPSTREAM, data_path)}: "
    return [
        _question_record(where, split, dialogue_id, index, turns, question)
        for dialogue_id, (turns, questions) in read_dialogues(reader, data_path).items()
        for index, question in enumerate(questions, start=1)
    ]


def _question_record(
    where: str, split: str, dialogue_id: str, index: int, turns: list[str], question: dict[str, Any]
) -> SourceRecord:
    """One DREAM question (``index`` counts from 1 within its dialogue) as a row; ``where`` starts the error
    message of a question whose answer is not one of its choices."""
    choices = question["choice"]
    if (
        not isinstance(choices, list)
        or not all(isinstance(c, str) for c in choices)
        or question["answer"] not in choices
    ):
        raise ScrambledBenchError(
            f"{where}dialogue {dialogue_id!r} question {index}: the answer is not one of the choices"
        )
    question_id = f"{split}/{dialogue_id}/{index}"
    return SourceRecord(
        scramble_key=f"dream/{question_id}",
        fields={
            "id": question_id,
            "original": "\n".join(turns),
            "question": question["question"],
            "choices": list(choices),
            "answer": LETTERS[choices.index(question["answer"])],
            "dream_split": split,
        },
    )
