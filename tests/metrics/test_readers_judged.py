"""The careful reader against blind judges, on rows where it disagrees with the paper's parse.

Each sample under ``fixtures/judged`` is three or four files: ``NAME.packet.jsonl``, all the judges saw (per
item the question, the lettered choices and the model's output, shuffled; no gold answer, no reader's name or
value or rules); ``NAME.verdicts.jsonl``, judge A's answer per item (the letter the output commits to, or
null, and a short reason); ``NAME.verdicts-b.jsonl`` where a second, independent blind judge (B) read the same
packet; and ``NAME.key.jsonl``, kept apart from the judges (where the item comes from, its dataset, the two
readers' values and the careful reader's rule when the sample was drawn, the gold letter).

- ``dev1``: 100 disagreements of the careful reader *before* issue 31 (50 from SmolLM2-135M-Instruct's
  outputs made with ``scrambled-bench run``, 50 from the authors' released outputs), drawn at random. The
  rules were studied and improved on it, so it measures nothing once they were.
- ``dev2``: 75 disagreements of an intermediate reader (50 from SmolLM2), none of dev1's, studied the same
  way.
- ``dev3``: 200 disagreements (125 SmolLM2, 75 released), none of dev1's or dev2's, first drawn as the final
  sample after the rules were frozen at commit 767b820 and judged by two judges (A, then B). The reader
  was right on 176 of them against judge A (88%), short of issue 31's 95%; the sample was then used to
  change how a letter given with another choice's text is read ("letter-text-conflict-resolved"), so it
  became a development sample. Its item ids still say "final-". Its key records what the careful reader of
  branch main (before issue 31) reads on each item (``careful_before``, ``rule_before``), so the tables
  before and after can be recomputed here without that old code.
- ``final``: 154 disagreements of the reader of commit a5c6498, drawn after its rules were frozen and judged
  by two independent blind judges (A: ``final.verdicts.jsonl``, B: ``final.verdicts-b.jsonl``): all 104
  fresh SmolLM2 disagreements of outputs generated for it (RealtimeQA under scramble types no earlier sample used:
  rs20, kr2, kfkr1, klkr1; and one DREAM original row), and all 50 released disagreements no earlier sample
  used (AQuA); 200 were asked for, these are all the fresh ones there were. The figures the issue asks for
  are taken on it. Its key records the careful reader of branch main before issue 31 as dev3's does.

The judges' rules, as they were given them: an output commits to a choice when it states that choice's
content, by letter, by the choice's text, or by a clear paraphrase or entity of it, and does not also commit
to another; a letter whose text names a different choice, or an output that cycles through several choices,
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
    """The items of one judged sample: packet, verdicts and key joined by id (``judged``: judge A's letter,
    ``judged_b``: judge B's where a second judge read the sample, else None)."""
    packet = {item["id"]: item for item in _lines(JUDGED / f"{name}.packet.jsonl")}
    verdicts = {item["id"]: item for item in _lines(JUDGED / f"{name}.verdicts.jsonl")}
    second = JUDGED / f"{name}.verdicts-b.jsonl"
    verdicts_b = {item["id"]: item for item in _lines(second)} if second.exists() else None
    keys = {item["id"]: item for item in _lines(JUDGED / f"{name}.key.jsonl")}
    assert set(packet) == set(verdicts) == set(keys), f"{name}: packet, verdicts and key list other items"
    assert verdicts_b is None or set(verdicts_b) == set(packet), f"{name}: judge B read other items"
    return [
        {
            **packet[i],
            **keys[i],
            "judged": verdicts[i]["letter"],
            "reason": verdicts[i]["reason"],
            "judged_b": verdicts_b[i]["letter"] if verdicts_b else None,
        }
        for i in packet
    ]


DEVELOPMENT = ("dev1", "dev2", "dev3")
SAMPLES = {name: load_sample(name) for name in (*DEVELOPMENT, "final")}


def _read(item: dict, reader) -> str | None:
    return reader.read_choice(item["output"], list(item["choices"].values()), dataset=item["dataset"]).value


@pytest.mark.parametrize("name", list(SAMPLES))
def test_the_packets_were_blind(name):
    """The judges saw the question, the choices and the output: nothing of the readers or the gold answer."""
    for line in _lines(JUDGED / f"{name}.packet.jsonl"):
        assert set(line) == {"id", "question", "choices", "output"}
        assert list(line["choices"]) == list("ABCDE"[: len(line["choices"])])
    for item in SAMPLES[name]:
        assert item["judged"] is None or item["judged"] in item["choices"]
        assert item["judged_b"] is None or item["judged_b"] in item["choices"]


@pytest.mark.parametrize("name", list(SAMPLES))
def test_every_item_was_a_disagreement_when_it_was_drawn(name):
    for item in SAMPLES[name]:
        assert item["careful"] != item["paper"], item["id"]
        assert _read(item, paper) == item["paper"], (
            f"{item['id']}: the paper reader is exact and never changes"
        )


def _who(item: dict, value: str | None, judged: str = "judged") -> str:
    """Whose reading the judge's letter (or its none) is: the careful reader's, the paper's, or neither."""
    return "careful" if item[judged] == value else "paper" if item[judged] == item["paper"] else "neither"


def _right(items: list[dict], value: str, judged: str = "judged") -> int:
    return sum(item[value] == item[judged] for item in items)


def _with_now(items: list[dict]) -> list[dict]:
    """The items with ``now``, what the careful reader in the code reads."""
    return [{**item, "now": _read(item, careful)} for item in items]


def _agreed(items: list[dict]) -> list[dict]:
    """The items on which both judges give the same letter (or both none)."""
    return [item for item in items if item["judged"] == item["judged_b"]]


FINAL_SIZE, FINAL_AGREED = 154, 152
FINAL_NOW = (144, 144, 143)  # right vs judge A, vs judge B, on the items both agree on
FINAL_BEFORE = (130, 132, 130)


def test_the_final_sample_is_fresh_and_at_least_half_smollm2():
    seen = {item["fingerprint"] for name in DEVELOPMENT for item in SAMPLES[name]}
    final = SAMPLES["final"]
    assert len(final) == FINAL_SIZE
    assert not seen & {item["fingerprint"] for item in final}, "the final sample reuses a development item"
    assert 2 * sum(item["source"].startswith("smollm2:") for item in final) >= len(final)


def test_the_final_sample_was_drawn_from_this_reader():
    """The final sample's key records the careful reader's value and rule when it was drawn (commit
    a5c6498); the reader in the code must still read the same, or the figures below are not its."""
    changed = []
    for item in SAMPLES["final"]:
        reading = careful.read_choice(item["output"], list(item["choices"].values()), dataset=item["dataset"])
        if (reading.value, reading.rule) != (item["careful"], item["rule"]):
            changed.append((item["id"], item["careful"], item["rule"], reading))
    assert changed == []


def test_the_careful_reader_on_the_final_sample():
    """The final figures, pinned (``careful`` is the reader in the code, which the test above holds to the
    key; ``careful_before`` the reader of branch main before issue 31)."""
    final = SAMPLES["final"]
    agreed = _agreed(final)
    assert len(agreed) == FINAL_AGREED
    now = (_right(final, "careful"), _right(final, "careful", "judged_b"), _right(agreed, "careful"))
    before = (
        _right(final, "careful_before"),
        _right(final, "careful_before", "judged_b"),
        _right(agreed, "careful_before"),
    )
    assert now == FINAL_NOW
    assert before == FINAL_BEFORE


def test_the_rulebook_gives_the_final_tables_before_and_after():
    """docs/readers_disagreements.md shows the final sample's tables by rule, against judge A, judge B and
    on the items both agree on, for the careful reader before issue 31 and the reader in the code."""
    final = SAMPLES["final"]
    rulebook = RULEBOOK.read_text(encoding="utf-8")
    for items, judged in ((final, "judged"), (final, "judged_b"), (_agreed(final), "judged")):
        assert table_by_rule(items, "careful_before", "rule_before", judged) in rulebook
        assert table_by_rule(items, "careful", "rule", judged) in rulebook


@pytest.mark.xfail(
    strict=True,
    reason="issue 31's target is not met on the final sample: right on 144 of 154 against judge A "
    "(93.5%), 144 against judge B, 143 of the 152 items both judges agree on "
    "(docs/readers_disagreements.md)",
)
def test_the_careful_reader_agrees_with_the_blind_judge_on_95_percent_of_the_final_sample():
    """Issue 31: right on at least 95% of a fresh judged sample of its disagreements with the paper (judge A)."""
    final = SAMPLES["final"]
    right = sum(_read(item, careful) == item["judged"] for item in final)
    assert right / len(final) >= 0.95, f"careful right on {right} of {len(final)}"


def test_dev3_as_it_was_judged_when_it_was_drawn_as_the_final_sample():
    """dev3's history: the reader of commit 767b820 (the key's ``careful``) was right on 176 of 200 against
    judge A, 185 against judge B, and on 176 of the 191 items where the two judges agree; before issue 31
    (``careful_before``), 154, 155 and 150."""
    dev3 = SAMPLES["dev3"]
    assert len(_agreed(dev3)) == 191
    assert (
        _right(dev3, "careful"),
        _right(dev3, "careful", "judged_b"),
        _right(_agreed(dev3), "careful"),
    ) == (
        176,
        185,
        176,
    )
    before = (
        _right(dev3, "careful_before"),
        _right(dev3, "careful_before", "judged_b"),
        _right(_agreed(dev3), "careful_before"),
    )
    assert before == (154, 155, 150)


def test_the_careful_reader_on_the_development_samples():
    """The reader in the code, pinned on every development sample: dev1 97 of 100, dev2 69 of 75 (its judge
    read a letter beside another choice's text as voiding the whole output, the judges of dev3 as voiding
    only itself), dev3 194 of 200 against judge A, 191 against judge B, 188 of the 191 items both agree on.
    On the three together, 360 of 375 against their first judge, where the reader of 767b820 was right on
    348 (98 + 74 + 176)."""
    now = {name: _with_now(SAMPLES[name]) for name in DEVELOPMENT}
    assert (_right(now["dev1"], "now"), _right(now["dev2"], "now")) == (97, 69)
    dev3 = now["dev3"]
    assert (_right(dev3, "now"), _right(dev3, "now", "judged_b"), _right(_agreed(dev3), "now")) == (
        194,
        191,
        188,
    )
    # the reader of 767b820 on dev1 and dev2 was pinned by this file's earlier version (98, 74); on dev3 its
    # readings are the key's
    assert (
        sum(_right(items, "now") for items in now.values())
        == 360
        > 98 + 74 + _right(SAMPLES["dev3"], "careful")
    )


RULEBOOK = Path(__file__).resolve().parents[2] / "docs" / "readers_disagreements.md"


def table_by_rule(items: list[dict], value: str, rule: str, judged: str = "judged") -> str:
    """The markdown table of a judged sample by the careful reader's rule: on how many items the judge's
    letter is the careful reader's, the paper reader's, or neither (rules by count, then name; totals last).
    """
    counts: dict[str, Counter] = {}
    for item in items:
        for row in (f"`{item[rule]}`", "**total**"):
            counts.setdefault(row, Counter())[_who(item, item[value], judged)] += 1
    rows = sorted(counts.items(), key=lambda kv: (kv[0] == "**total**", -kv[1].total(), kv[0]))
    lines = ["| careful's rule | careful right | paper right | neither |", "|---|---:|---:|---:|"]
    lines += [f"| {row} | {c['careful']} | {c['paper']} | {c['neither']} |" for row, c in rows]
    return "\n".join(lines)


def test_the_rulebook_gives_dev3s_tables_before_at_draw_and_now():
    """docs/readers_disagreements.md shows dev3's tables by rule against judge A: the careful reader of
    branch main (before issue 31), the reader when dev3 was drawn (767b820), and the reader in the code (by
    the rule it names now)."""
    dev3 = _with_now(SAMPLES["dev3"])
    for item in dev3:
        item["rule_now"] = careful.read_choice(
            item["output"], list(item["choices"].values()), dataset=item["dataset"]
        ).rule
    rulebook = RULEBOOK.read_text(encoding="utf-8")
    assert table_by_rule(dev3, "careful_before", "rule_before") in rulebook
    assert table_by_rule(dev3, "careful", "rule") in rulebook
    assert table_by_rule(dev3, "now", "rule_now") in rulebook


def test_the_careful_reader_is_right_more_often_than_before_on_the_first_development_sample():
    """dev1 was drawn from the reader before issue 31: its key holds that reader's values."""
    dev1 = SAMPLES["dev1"]
    before = sum(item["careful"] == item["judged"] for item in dev1)
    after = sum(_read(item, careful) == item["judged"] for item in dev1)
    assert (before, len(dev1)) == (86, 100)
    assert after > before
