"""The careful reader against a blind judge, on rows where it disagrees with the paper's parse.

Each sample under ``fixtures/judged`` is three files: ``NAME.packet.jsonl``, all the judge saw (per item the
question, the lettered choices and the model's output, shuffled; no gold answer, no reader's name or value
or rules); ``NAME.verdicts.jsonl``, the judge's answer per item (the letter the output commits to, or null,
and a short reason); and ``NAME.key.jsonl``, kept apart from the judge (where the item comes from, its
dataset, the two readers' values and the careful reader's rule when the sample was drawn, the gold letter).

- ``dev1``: 100 disagreements of the careful reader *before* issue 31 (50 from SmolLM2-135M-Instruct's
  outputs made with ``scrambled-bench run``, 50 from the authors' released outputs), drawn at random. The
  rules were studied and improved on it, so it measures nothing once they were.
- ``dev2``: 100 disagreements of an intermediate reader, none of dev1's, studied the same way.
- ``final``: 200 disagreements of the final reader (at least half from SmolLM2), none of dev1's or dev2's,
  drawn and judged after the rules were fixed. The figure the issue asks for is taken on it.

The judge's rules, as it was given them: an output commits to a choice when it states that choice's content,
by letter, by the choice's text, or by a clear paraphrase or entity of it, and does not also commit to
another; a letter whose text names a different choice, or an output that cycles through several choices,
commits to none; a mechanical recital of the options commits to nothing; a scrambled echo of the evidence is
not an answer.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from scrambled_bench.metrics.readers import CarefulReader, PaperReader

JUDGED = Path(__file__).parent / "fixtures" / "judged"
careful, paper = CarefulReader(), PaperReader()


def _lines(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def load_sample(name: str) -> list[dict]:
    """The items of one judged sample: packet, verdict and key joined by id."""
    packet = {item["id"]: item for item in _lines(JUDGED / f"{name}.packet.jsonl")}
    verdicts = {item["id"]: item for item in _lines(JUDGED / f"{name}.verdicts.jsonl")}
    keys = {item["id"]: item for item in _lines(JUDGED / f"{name}.key.jsonl")}
    assert set(packet) == set(verdicts) == set(keys), f"{name}: packet, verdicts and key list other items"
    return [
        {**packet[i], **keys[i], "judged": verdicts[i]["letter"], "reason": verdicts[i]["reason"]}
        for i in packet
    ]


SAMPLES = {name: load_sample(name) for name in ("dev1", "dev2")}


def _read(item: dict, reader) -> str | None:
    return reader.read_choice(item["output"], list(item["choices"].values()), dataset=item["dataset"]).value


@pytest.mark.parametrize("name", list(SAMPLES))
def test_the_packets_were_blind(name):
    """The judge saw the question, the choices and the output: nothing of the readers or the gold answer."""
    for line in _lines(JUDGED / f"{name}.packet.jsonl"):
        assert set(line) == {"id", "question", "choices", "output"}
        assert list(line["choices"]) == list("ABCDE"[: len(line["choices"])])
    verdicts = _lines(JUDGED / f"{name}.verdicts.jsonl")
    assert all(v["letter"] is None or v["letter"] in "ABCDE" for v in verdicts)


@pytest.mark.parametrize("name", list(SAMPLES))
def test_every_item_was_a_disagreement_when_it_was_drawn(name):
    for item in SAMPLES[name]:
        assert item["careful"] != item["paper"], item["id"]
        assert _read(item, paper) == item["paper"], (
            f"{item['id']}: the paper reader is exact and never changes"
        )


def test_the_careful_reader_is_right_more_often_than_before_on_the_first_development_sample():
    """dev1 was drawn from the reader before issue 31: its key holds that reader's values."""
    dev1 = SAMPLES["dev1"]
    before = sum(item["careful"] == item["judged"] for item in dev1)
    after = sum(_read(item, careful) == item["judged"] for item in dev1)
    assert (before, len(dev1)) == (86, 100)
    assert after > before
