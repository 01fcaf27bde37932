"""Every careful reading before issue 45, kept: a change to the reader moves none but the ones listed here.

Issue 45 rewrote the careful reader as named rule units and added the rules of its ruling and of the misses
seen on other models. Before any of that, the readings of the reader of branch main (3082d0f) were stored in
``fixtures/readings_before_45/``:

- ``judged.jsonl.gz``: every item of every sample judged before issue 45 (``fixtures/judged``, ``dev1`` to
  ``dev12``), its value and rule. Round 10's sample, the final one when the snapshot was taken, was stored as
  ``final``; it is ``dev12`` since round 11 became the final sample, and only that label was changed;
- ``released.jsonl.gz``: every row of the authors' released outputs in the shared mirror, one line per file
  (ScrQA: value and rule; ScrRec: a hash of the recovered sentence, and the rule). That part needs the
  mirror, and skips with a reason without it.

The tests below read everything again and compare. Only the changes of issue 45 may differ, and each is
listed in ``CHANGED_JUDGED`` / ``CHANGED_RELEASED`` with the reading it has now. To rewrite the snapshot
(only ever from a reader whose readings are to be kept):
``SCRAMBLED_BENCH_SHARED=../shared python tests/metrics/test_readers_snapshot.py --write``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

from scrambled_bench.metrics.readers import CarefulReader, checks, content, parse_choices, rules
from scrambled_bench.metrics.readers import careful as careful_module
from scrambled_bench.metrics.readers.careful import RULES

FIXTURES = Path(__file__).parent / "fixtures"
SNAPSHOT = FIXTURES / "readings_before_45"
JUDGED = FIXTURES / "judged"
careful = CarefulReader()

# The released ScrQA files: the dataset each top folder is read as.
DATASETS = {
    "scrambled_realtimeQA": "realtimeqa",
    "scrambled_DREAM_test": "dream",
    "scrambled_DREAM_dev": "dream",
    "scrambled_AQuA": "aqua",
}


def _lines(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _gz_lines(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def judged_samples() -> list[str]:
    """The judged samples, by the name of their key file (``dev1`` ... ``dev12``, ``final``)."""
    return sorted(path.name.removesuffix(".key.jsonl") for path in JUDGED.glob("*.key.jsonl"))


def judged_readings(samples: list[str]) -> dict[tuple[str, str], list]:
    """(sample, id) -> [value, rule] of the careful reader in the code, on every item of ``samples``."""
    readings = {}
    for name in samples:
        keys = {key["id"]: key for key in _lines(JUDGED / f"{name}.key.jsonl")}
        for item in _lines(JUDGED / f"{name}.packet.jsonl"):
            dataset = keys[item["id"]]["dataset"]
            reading = careful.read_choice(item["output"], list(item["choices"].values()), dataset=dataset)
            readings[(name, item["id"])] = [reading.value, reading.rule]
    return readings


def _recovered(value: str | None) -> str | None:
    """A recovered sentence kept short in the snapshot: the first 16 hex digits of its SHA-1."""
    return None if value is None else hashlib.sha1(value.encode("utf-8")).hexdigest()[:16]


def released_readings(outputs: Path) -> dict[str, list[list]]:
    """Per released file (its path under ``paper_outputs``), the careful reader's [value, rule] of each row."""
    readings = {}
    for path in sorted(outputs.rglob("*.jsonl.gz")):
        relative = path.relative_to(outputs)
        rows = _gz_lines(path)
        if relative.parts[0] == "scrambled_qa":
            dataset = DATASETS[relative.parts[1]]
            read = [
                careful.read_choice(row["output"], parse_choices(row["input"]), dataset=dataset)
                for row in rows
            ]
            readings[str(relative)] = [[reading.value, reading.rule] for reading in read]
        else:
            read = [careful.read_recovery(row["output"]) for row in rows]
            readings[str(relative)] = [[_recovered(reading.value), reading.rule] for reading in read]
    return readings


def write_snapshot(outputs: Path) -> None:
    SNAPSHOT.mkdir(exist_ok=True)
    judged = judged_readings(judged_samples())
    # mtime=0: the same readings make the same bytes
    with gzip.GzipFile(SNAPSHOT / "judged.jsonl.gz", "wb", mtime=0) as handle:
        for (name, item), reading in judged.items():
            handle.write((json.dumps({"sample": name, "id": item, "reading": reading}) + "\n").encode())
    with gzip.GzipFile(SNAPSHOT / "released.jsonl.gz", "wb", mtime=0) as handle:
        for file, rows in released_readings(outputs).items():
            handle.write((json.dumps({"file": file, "readings": rows}) + "\n").encode())


# ------------------------------------------------------------------ the changes issue 45 means to make

# One line per reading issue 45 changed on purpose: where (``sample`` and ``id``, or a released ``file`` and
# its 1-based ``line``), the reading ``before`` and ``now``, and ``by``, the rules of the issue that changed it
# (found by turning each off in turn; none listed where only the rules together change it).
CHANGES = _lines(SNAPSHOT / "changes.jsonl")
#: (sample, id) -> [value, rule] now, for every judged item whose reading issue 45 changed on purpose.
CHANGED_JUDGED: dict[tuple[str, str], list] = {
    (change["sample"], change["id"]): change["now"] for change in CHANGES if "sample" in change
}
#: (file, 1-based line) -> [value, rule] now, for every released row whose reading issue 45 changed.
CHANGED_RELEASED: dict[tuple[str, int], list] = {
    (change["file"], change["line"]): change["now"] for change in CHANGES if "file" in change
}


def test_the_listed_changes_are_well_formed():
    """Each change says where, what it was (as the snapshot has it), what it is, and which rules made it."""
    for change in CHANGES:
        assert set(change) in (
            {"sample", "id", "before", "now", "by"},
            {"file", "line", "before", "now", "by"},
        )
        assert change["before"] != change["now"], change
        assert set(change["by"]) <= set(RULES), change


#: The judged samples the snapshot holds: those judged before issue 45, dev1 to dev12 (round 11's, the final
#: sample, drawn from the reader after issue 45's rules, is not in it).
SNAPSHOT_SAMPLES = sorted({line["sample"] for line in _gz_lines(SNAPSHOT / "judged.jsonl.gz")})


def test_every_judged_item_reads_as_before_issue_45_but_the_listed_changes():
    before = {
        (line["sample"], line["id"]): line["reading"] for line in _gz_lines(SNAPSHOT / "judged.jsonl.gz")
    }
    now = judged_readings(SNAPSHOT_SAMPLES)
    assert set(now) == set(before), "the judged samples of the snapshot are not those in the fixtures"
    changed = {item: reading for item, reading in now.items() if reading != before[item]}
    assert changed == CHANGED_JUDGED
    listed = {(change["sample"], change["id"]): change["before"] for change in CHANGES if "sample" in change}
    assert listed == {item: before[item] for item in listed}, "a change lists another reading before"


def test_every_released_row_reads_as_before_issue_45_but_the_listed_changes(shared_data):
    before = {line["file"]: line["readings"] for line in _gz_lines(SNAPSHOT / "released.jsonl.gz")}
    now = released_readings(shared_data / "paper_outputs")
    assert set(now) == set(before)
    assert sum(map(len, before.values())) == 32855 + 12240
    changed = {
        (file, line): reading
        for file, rows in now.items()
        for line, reading in enumerate(rows, start=1)
        if reading != before[file][line - 1]
    }
    assert changed == CHANGED_RELEASED
    listed = {(change["file"], change["line"]): change["before"] for change in CHANGES if "file" in change}
    assert listed == {(file, line): before[file][line - 1] for file, line in listed}


if __name__ == "__main__":
    from scrambled_bench.io import shared_data_dir

    if sys.argv[1:] != ["--write"] or shared_data_dir() is None:
        sys.exit(
            "usage: SCRAMBLED_BENCH_SHARED=../shared python tests/metrics/test_readers_snapshot.py --write"
        )
    write_snapshot(shared_data_dir() / "paper_outputs")


# ------------------------------------------------------------------ how often issue 45's rules fire

# A line that opens with "M:" or "W:", the echo of a dialogue before issue 45 (its rule is issue 45's beyond it).
SPEAKER_LINE = re.compile(r"(?:^|(?<=\n))[MW]:[ \t]")


def _firing(monkeypatch) -> Counter:
    """Counts, per output read, which of issue 45's rules fired: set aside a rejected choice, set aside a letter
    given again, started a dialogue's echo where a line's "M:" or "W:" did not, or took an answer back for the
    echo's. The counter's ``row`` set is cleared by :func:`_read_counting` before each output."""
    fired: Counter = Counter()
    row: set[str] = set()
    fired.row = row  # type: ignore[attr-defined]

    def wrap(owner, name, fires):
        original = getattr(owner, name)

        def wrapped(*args, **kwargs):
            out = original(*args, **kwargs)
            if fires(args, kwargs, out):
                row.add(rule_of[name])
            return out

        monkeypatch.setattr(owner, name, wrapped)

    rule_of = {
        "without_rejected": "rejected-choice",
        "rejects": "rejected-choice",
        "apart": "letter-given-again",
        "start": "dialogue-echo",
        "check": "echo-answer-conflict",
    }
    wrap(content.ChoiceContent, "without_rejected", lambda args, kwargs, out: out != args[1])
    wrap(content.RejectedChoice, "rejects", lambda args, kwargs, out: out)
    wrap(checks.LetterGivenAgain, "apart", lambda args, kwargs, out: out != args[1])
    wrap(
        rules.DialogueEcho,
        "start",
        lambda args, kwargs, out: (
            out is not None and out != (match.start() if (match := SPEAKER_LINE.search(args[1])) else None)
        ),
    )
    wrap(careful_module.EchoAnswerConflict, "check", lambda args, kwargs, out: out is not None)
    return fired


def _read_counting(fired: Counter, output: str, choices: list[str], dataset: str) -> None:
    fired.row.clear()
    careful.read_choice(output, choices, dataset=dataset)
    fired.update(fired.row)


def test_issue_45s_rules_fire_on_few_judged_items(monkeypatch):
    """How often each rule of issue 45 (beyond its ruling) fires on the judged items: docs/readers/history.md
    gives these counts; none of them changes a reading (the snapshot test above)."""
    fired = _firing(monkeypatch)
    for name in SNAPSHOT_SAMPLES:
        keys = {key["id"]: key for key in _lines(JUDGED / f"{name}.key.jsonl")}
        for item in _lines(JUDGED / f"{name}.packet.jsonl"):
            _read_counting(fired, item["output"], list(item["choices"].values()), keys[item["id"]]["dataset"])
    assert dict(fired) == {"rejected-choice": 3, "dialogue-echo": 2}


def test_issue_45s_rules_fire_on_few_items_of_the_final_sample(monkeypatch):
    """The same count on round 11's final sample, drawn after the rules were frozen: docs/readers/history.md
    gives it. Each item a rule fires on reads as the reader before issue 45 (3082d0f, the key's
    ``careful_before_45`` and ``rule_before_45``) read it."""
    fired = _firing(monkeypatch)
    keys = {key["id"]: key for key in _lines(JUDGED / "final.key.jsonl")}
    for item in _lines(JUDGED / "final.packet.jsonl"):
        key = keys[item["id"]]
        _read_counting(fired, item["output"], list(item["choices"].values()), key["dataset"])
        if fired.row:
            before_45 = [key["careful_before_45"], key["rule_before_45"]]
            assert [key["careful"], key["rule"]] == before_45, item["id"]
    assert dict(fired) == {"dialogue-echo": 1}


def test_issue_45s_rules_fire_on_no_released_row(shared_data, monkeypatch):
    """None of issue 45's rules fires on a released ScrQA row: they do not over-fire on the shapes the three
    released models write."""
    fired = _firing(monkeypatch)
    outputs = shared_data / "paper_outputs" / "scrambled_qa"
    for path in sorted(outputs.rglob("*.jsonl.gz")):
        dataset = DATASETS[path.relative_to(outputs).parts[0]]
        for row in _gz_lines(path):
            _read_counting(fired, row["output"], parse_choices(row["input"]), dataset)
    assert dict(fired) == {}
