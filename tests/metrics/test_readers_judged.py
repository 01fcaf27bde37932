"""The careful reader against a blind judge, on rows where it disagrees with the paper's parse.

Each sample under ``fixtures/judged`` is three files: ``NAME.packet.jsonl``, all the judge saw (per item the
question, the lettered choices and the model's output, shuffled; no gold answer, no reader's name or value
or rules); ``NAME.verdicts.jsonl``, the judge's answer per item (the letter the output commits to, or null,
and a short reason); and ``NAME.key.jsonl``, kept apart from the judge (where the item comes from, its
dataset, the two readers' values and the careful reader's rule when the sample was drawn, the gold letter).

- ``dev1``: 100 disagreements of the careful reader *before* issue 31 (50 from SmolLM2-135M-Instruct's
  outputs made with ``scrambled-bench run``, 50 from the authors' released outputs), drawn at random. The
  rules were studied and improved on it, so it measures nothing once they were.
- ``dev2``: 75 disagreements of an intermediate reader (50 from SmolLM2), none of dev1's, studied the same
  way.
- ``final``: 200 disagreements of the final reader, none of dev1's or dev2's, drawn and judged after the
  rules were frozen: every one of the 125 fresh SmolLM2 disagreements and 75 of the 125 fresh released
  ones, at random. The figure the issue asks for is taken on it. Its key also records what the careful
  reader of branch main (before issue 31) reads on each item (``careful_before``, ``rule_before``), so the
  table before and after can be recomputed here without that old code.

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


SAMPLES = {name: load_sample(name) for name in ("dev1", "dev2", "final")}


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


def test_the_final_sample_is_fresh_and_half_smollm2():
    seen = {item["fingerprint"] for name in ("dev1", "dev2") for item in SAMPLES[name]}
    final = SAMPLES["final"]
    assert len(final) == 200
    assert not seen & {item["fingerprint"] for item in final}, "the final sample reuses a development item"
    assert sum(item["source"].startswith("smollm2:") for item in final) >= 100


def test_the_final_sample_was_drawn_from_this_reader():
    """The final sample's key records the careful reader's value and rule when it was drawn; the reader in
    the code must still read the same, or the figure below is not the final reader's."""
    readings = {
        item["id"]: careful.read_choice(
            item["output"], list(item["choices"].values()), dataset=item["dataset"]
        )
        for item in SAMPLES["final"]
    }
    changed = [
        (item["id"], item["careful"], item["rule"], readings[item["id"]])
        for item in SAMPLES["final"]
        if (readings[item["id"]].value, readings[item["id"]].rule) != (item["careful"], item["rule"])
    ]
    assert changed == []


def test_the_careful_reader_on_the_final_sample():
    """What the careful reader scores on the final sample, pinned: right on 176 of 200 (88%), where the paper
    reader is right on 19 and neither on 5. Before issue 31 (the careful reader of branch main): 154, 9, 37."""
    final = SAMPLES["final"]
    now = Counter(_who(item, _read(item, careful)) for item in final)
    before = Counter(_who(item, item["careful_before"]) for item in final)
    assert (now["careful"], now["paper"], now["neither"]) == (176, 19, 5)
    assert (before["careful"], before["paper"], before["neither"]) == (154, 9, 37)


@pytest.mark.xfail(
    strict=True,
    reason="issue 31's target is not met: right on 176 of 200 (88%); 19 of the 24 misses are "
    "letter-text-conflict readings (docs/readers_disagreements.md)",
)
def test_the_careful_reader_agrees_with_the_blind_judge_on_95_percent_of_the_final_sample():
    """Issue 31: right on at least 95% of a fresh judged sample of its disagreements with the paper."""
    final = SAMPLES["final"]
    right = sum(_read(item, careful) == item["judged"] for item in final)
    assert right / len(final) >= 0.95, f"careful right on {right} of {len(final)}"


def _who(item: dict, value: str | None) -> str:
    """Whose reading the judge's letter (or its none) is: the careful reader's, the paper's, or neither."""
    return "careful" if item["judged"] == value else "paper" if item["judged"] == item["paper"] else "neither"


RULEBOOK = Path(__file__).resolve().parents[2] / "docs" / "readers_disagreements.md"


def table_by_rule(items: list[dict], value: str, rule: str) -> str:
    """The markdown table of a judged sample by the careful reader's rule: on how many items the judge's
    letter is the careful reader's, the paper reader's, or neither (rules by count, then name; totals last).
    """
    counts: dict[str, Counter] = {}
    for item in items:
        for row in (f"`{item[rule]}`", "**total**"):
            counts.setdefault(row, Counter())[_who(item, item[value])] += 1
    rows = sorted(counts.items(), key=lambda kv: (kv[0] == "**total**", -kv[1].total(), kv[0]))
    lines = ["| careful's rule | careful right | paper right | neither |", "|---|---:|---:|---:|"]
    lines += [f"| {row} | {c['careful']} | {c['paper']} | {c['neither']} |" for row, c in rows]
    return "\n".join(lines)


def test_the_rulebook_gives_the_final_table_before_and_after():
    """docs/readers_disagreements.md shows the final sample's table by rule for the careful reader of branch
    main (before issue 31, recorded in the key) and for the careful reader in the code; both are recomputed
    here from the judge's verdicts."""
    final = [{**item, "now": _read(item, careful)} for item in SAMPLES["final"]]
    rulebook = RULEBOOK.read_text(encoding="utf-8")
    assert table_by_rule(final, "careful_before", "rule_before") in rulebook
    assert table_by_rule(final, "now", "rule") in rulebook


def test_the_careful_reader_is_right_more_often_than_before_on_the_first_development_sample():
    """dev1 was drawn from the reader before issue 31: its key holds that reader's values."""
    dev1 = SAMPLES["dev1"]
    before = sum(item["careful"] == item["judged"] for item in dev1)
    after = sum(_read(item, careful) == item["judged"] for item in dev1)
    assert (before, len(dev1)) == (86, 100)
    assert after > before
