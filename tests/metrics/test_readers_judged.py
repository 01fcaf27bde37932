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
- ``dev4``: 154 disagreements of the reader of commit a5c6498, drawn after its rules were frozen as the final
  sample of round 2 and judged by two independent blind judges (A: ``dev4.verdicts.jsonl``, B:
  ``dev4.verdicts-b.jsonl``): all 104 fresh SmolLM2 disagreements of outputs generated for it (RealtimeQA
  under rs20, kr2, kfkr1, klkr1 of build 1.0.0; one DREAM original row) and all 50 released disagreements no
  earlier sample used (AQuA). The reader was right on 144 against either judge (93.5%), short of 95%; three
  patterns it missed were then changed (commit 1beb1fb), so it became a development sample. Its item ids
  read "final2-", and its key records the careful reader before issue 31 as dev3's does.
- ``dev5``: 200 disagreements of the reader of commit 1beb1fb, drawn after its rules were frozen as the final
  sample of round 3 and judged by two independent blind judges, all SmolLM2: outputs generated for it on
  build 1.1.0 (new scrambles, so no earlier sample could hold them). The reader was right on 182 against
  judge A (91%), short of 95%; four patterns it missed were then changed (commit caf95b5) and the scrambled
  echo was added, so it became a development sample. Its item ids read "final3-", and its key records the
  careful reader before issue 31 as dev3's does.
- ``dev6``: 200 disagreements of the reader of commit 05164a4, drawn after its rules were frozen as the final
  sample of round 4 and judged by two independent blind judges (who agree on every item), all SmolLM2:
  outputs generated for it on questions no earlier run had answered in that config (RealtimeQA original and
  sub, DREAM original and sub). The reader was right on 172 (86%); its misses were then studied and rules
  changed (commit 5900c42), so it became a development sample. Its item ids read "final4-", and its key
  records the careful reader before issue 31 as dev3's does.
- ``dev7``: 200 disagreements of the reader of commit 5900c42, drawn after its rules were frozen as the final
  sample of round 5 and judged by two independent blind judges (who agree on 196), all SmolLM2: outputs
  generated for it on questions no earlier run had answered in that config (RealtimeQA kfl and kf, DREAM kfl
  and sub). The reader was right on 180 against judge A (90%); its misses were then studied and rules changed
  (commit 547c092), so it became a development sample. Its item ids read "final5-", and its key records the
  careful reader before issue 31 as dev3's does.
- ``dev8``: 200 disagreements of the reader of commit 547c092, drawn after its rules were frozen as the final
  sample of round 6 and judged by two independent blind judges (who agree on 189), all SmolLM2: outputs
  generated for it on questions no earlier run had answered in that config (RealtimeQA rs50 and kr2, DREAM
  kf, rs20 and original). Judge B's first reading, set aside because its verdicts for 17 items sat one line
  early, is kept as ``dev8.verdicts-b-set-aside.jsonl``; ``dev8.verdicts-b.jsonl`` is a fresh judge B's.
  The reader was right on 177 against judge A (88.5%); its misses were then studied and rules changed
  (commit 0b0fba5), so it became a development sample. Its item ids read "final6-".
- ``dev9``: 200 disagreements of the reader of commit 0b0fba5, drawn after its rules were frozen as the final
  sample of round 7 and judged by two independent blind judges (who agree on 199), all SmolLM2: outputs
  generated for it on questions no earlier run had answered in that config (DREAM original past its first
  400 questions and kf past 400, RealtimeQA klkr1, kr2 and kfkr1). The reader was right on 180 against judge
  A (90%); its misses were then studied and rules changed (commit 72ec112), so it became a development
  sample. Its item ids read "final7-".
- ``dev10``: 200 disagreements of the reader of commit 3fc9cfc (the rules of 72ec112), drawn after its rules
  were frozen as the final sample of round 8 and judged by two independent blind judges (who agree on 199),
  all SmolLM2: outputs no run had produced before round 8 began (DREAM kf past its first 191 questions and
  rs50, RealtimeQA kfkr1 past its first 81). The reader was right on 176 against judge A (88%); its misses
  were then studied and one rule changed (commit 00d27a1), so it became a development sample. Its item ids
  read "final8-".
- ``dev11``: 200 disagreements of the reader of commit f6c2f69 (the rules of 00d27a1), drawn after its rules
  were frozen as the final sample of round 9 and judged by two independent blind judges (who agree on 195),
  all SmolLM2: outputs no run had produced before round 9 began (DREAM kf past its first 527 questions,
  klkr1, and rs50 past its first 105). The reader was right on 187 against judge A (93.5%); its misses were
  studied, and the two changes tried were left out, so the reader reads it as at the draw. Its item ids read
  "final9-".
- ``dev12``: 200 disagreements of the reader of commit 4c52139 (the same rules as f6c2f69: round 9's study
  changed none), drawn after its rules were frozen as the final sample of round 10 and judged by two
  independent blind judges (who agree on 199), all SmolLM2: outputs no run had produced before round 10 began
  (DREAM klkr1 past its first 176 questions, rs50 past its first 523, and sub past its first 168). The reader
  was right on 167 against judge A (83.5%); issue 45's ruling on "A:", written after it, moves its readings
  (188 in the code), so it became a development sample. Its item ids read "final10-", and its key records the
  careful reader of branch main before issue 31 as dev3's does.
- ``final``: 200 disagreements of the reader frozen at commit 9cb8275 (issue 45's rules), drawn as the final
  sample of round 11 by ``draw_round11.py`` (which wrote it as ``round11.*``) and judged by two independent
  blind judges (A: ``final.verdicts.jsonl``, B: ``final.verdicts-b.jsonl``; they agree on 196), all SmolLM2:
  outputs of DREAM kr2 and kfkr1, which no earlier round ran. The figures issue 45 asks for are taken on it.
  Its item ids read "final11-"; its key records, instead of the reader before issue 31, the careful reader
  before issue 45 (3082d0f, ``careful_before_45`` and ``rule_before_45``) and the item's config.

The judges' rules, as they were given them: an output commits to a choice when it states that choice's
content, by letter, by the choice's text, or by a clear paraphrase or entity of it, and does not also commit
to another; a letter whose text names a different choice, or an output that cycles through several choices,
commits to none; a mechanical recital of the options commits to nothing; a scrambled echo of the evidence is
not an answer.

Every sample above but the final one (and the packets of ``fixtures/judge_order``) was judged before issue 45's
ruling, that "A:" at the start of an output, followed by text, is an answer label, which the judges' rules did
not say; the final sample's judges had it as a fifth rule (``fixtures/judged/PROMPT.txt``). Each keeps its
figures at its draw (``AT_THE_DRAW``) and after issue 31 (``AFTER_ISSUE_31``, the reader of 3082d0f, whose
readings ``fixtures/readings_before_45`` keeps, and the final sample's key); the reader in the code, which
follows the ruling, is pinned apart (``IN_THE_CODE``).
"""

from __future__ import annotations

import gzip
import hashlib
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


DEVELOPMENT = (
    "dev1",
    "dev2",
    "dev3",
    "dev4",
    "dev5",
    "dev6",
    "dev7",
    "dev8",
    "dev9",
    "dev10",
    "dev11",
    "dev12",
)
SAMPLES = {name: load_sample(name) for name in (*DEVELOPMENT, "final")}


def _reading(item: dict, reader):
    """What ``reader`` reads in the item's output: its ``value`` (a letter or None) and the ``rule``."""
    return reader.read_choice(item["output"], list(item["choices"].values()), dataset=item["dataset"])


def _read(item: dict, reader) -> str | None:
    return _reading(item, reader).value


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


def _snapshot() -> dict[tuple[str, str], list]:
    with gzip.open(
        Path(__file__).parent / "fixtures" / "readings_before_45" / "judged.jsonl.gz", "rt"
    ) as handle:
        return {(line["sample"], line["id"]): line["reading"] for line in map(json.loads, handle)}


def _after_31_readings() -> dict[tuple[str, str], list]:
    """The snapshot's readings of the samples judged before issue 45, and the final sample's key's
    ``careful_before_45`` and ``rule_before_45``: the same reader, run at the draw (``draw_round11.py``)."""
    readings = _snapshot()
    for item in SAMPLES["final"]:
        assert ("final", item["id"]) not in readings
        readings[("final", item["id"])] = [item["careful_before_45"], item["rule_before_45"]]
    return readings


#: (sample, id) -> [value, rule]: what the careful reader after issue 31 (3082d0f) read on each judged item
AFTER_31_READINGS = _after_31_readings()


def _with_after_31(name: str) -> list[dict]:
    """The sample's items with ``after31`` and ``rule_after31``, the careful reader's reading after issue 31."""
    return [
        {
            **item,
            "after31": AFTER_31_READINGS[(name, item["id"])][0],
            "rule_after31": AFTER_31_READINGS[(name, item["id"])][1],
        }
        for item in SAMPLES[name]
    ]


def _agreed(items: list[dict]) -> list[dict]:
    """The items on which both judges give the same letter (or both none)."""
    return [item for item in items if item["judged"] == item["judged_b"]]


FINAL_SIZE = 200
# the reader in the code on the final sample (round 11): right vs judge A, vs judge B, on the items both agree
# on; no rule has changed since the draw (9cb8275), so these are its figures at the draw
FINAL_NOW = (186, 188, 185)


def test_the_final_sample_is_fresh_and_at_least_half_smollm2():
    seen = {item["fingerprint"] for name in DEVELOPMENT for item in SAMPLES[name]}
    final = SAMPLES["final"]
    assert len(final) == FINAL_SIZE
    assert not seen & {item["fingerprint"] for item in final}, "the final sample reuses a development item"
    assert 2 * sum(item["source"].startswith("smollm2:") for item in final) >= len(final)


def test_the_careful_reader_in_the_code_on_the_final_sample():
    """The reader in the code on the final sample. Until its misses are studied this is its figure at the
    draw; once a rule changes for them, it is the figure of a studied sample, not a fresh one."""
    final = _with_now(SAMPLES["final"])
    now = (_right(final, "now"), _right(final, "now", "judged_b"), _right(_agreed(final), "now"))
    assert now == FINAL_NOW


# What each sample first drawn as the final one gave when it was drawn (the key's ``careful``, the reader of
# the commit it was drawn from) and before issue 31 (``careful_before``; for round 11, before issue 45,
# ``careful_before_45``): right vs judge A, vs judge B, on the items both judges agree on; and how many items
# that is.
AT_THE_DRAW = {
    "dev3": {"commit": "767b820", "agreed": 191, "at_draw": (176, 185, 176), "before": (154, 155, 150)},
    "dev4": {"commit": "a5c6498", "agreed": 152, "at_draw": (144, 144, 143), "before": (130, 132, 130)},
    "dev5": {"commit": "1beb1fb", "agreed": 196, "at_draw": (182, 179, 179), "before": (161, 159, 159)},
    "dev6": {"commit": "05164a4", "agreed": 200, "at_draw": (172, 172, 172), "before": (118, 118, 118)},
    "dev7": {"commit": "5900c42", "agreed": 196, "at_draw": (180, 182, 179), "before": (139, 143, 139)},
    "dev8": {"commit": "547c092", "agreed": 189, "at_draw": (177, 178, 172), "before": (122, 124, 121)},
    "dev9": {"commit": "0b0fba5", "agreed": 199, "at_draw": (180, 181, 180), "before": (124, 125, 124)},
    "dev10": {"commit": "3fc9cfc", "agreed": 199, "at_draw": (176, 175, 175), "before": (115, 114, 114)},
    "dev11": {"commit": "f6c2f69", "agreed": 195, "at_draw": (187, 182, 182), "before": (106, 107, 104)},
    "dev12": {"commit": "4c52139", "agreed": 199, "at_draw": (167, 166, 166), "before": (96, 96, 96)},
    # round 11's key records the careful reader before issue 45 (3082d0f), not the one before issue 31
    "final": {"commit": "9cb8275", "agreed": 196, "at_draw": (186, 188, 185), "before_45": (174, 176, 173)},
}
# the key's field of each earlier reader AT_THE_DRAW pins
EARLIER = {"before": "careful_before", "before_45": "careful_before_45"}


# dev3 and dev4 had one judge's tables in the rulebook (checked below); every later final sample has both
JUDGE_A_TABLES_ONLY = ("dev3", "dev4")


@pytest.mark.parametrize("name", [name for name in AT_THE_DRAW if name not in JUDGE_A_TABLES_ONLY])
def test_the_rulebook_gives_the_final_tables_before_at_draw_and_after_issue_31_against_both_judges(name):
    """docs/readers/history.md shows the tables by rule of every sample drawn as the final one from dev5
    on, against judge A, judge B and on the items both agree on: before issue 31 (where the key has it), at
    the draw and after issue 31 (the reader of 3082d0f, which for round 11 is the reader before issue 45).
    (dev3's and dev4's, against judge A only, are checked below.)"""
    final = _with_after_31(name)
    rulebook = RULEBOOK.read_text(encoding="utf-8")
    for items, judged in ((final, "judged"), (final, "judged_b"), (_agreed(final), "judged")):
        if "careful_before" in final[0]:
            assert table_by_rule(items, "careful_before", "rule_before", judged) in rulebook
        assert table_by_rule(items, "careful", "rule", judged) in rulebook
        assert table_by_rule(items, "after31", "rule_after31", judged) in rulebook


@pytest.mark.xfail(
    strict=True,
    reason="issues 31 and 45's target is not met on the fresh final sample (round 11): the reader of 9cb8275, "
    "frozen before the draw, is right on 186 of 200 against judge A (93.0%), 188 against judge B (94.0%), 185 "
    "of the 196 items both judges agree on (94.4%); before issue 45 (3082d0f) it was right on 174 against "
    'judge A, 176 against judge B, 173 of the 196 (docs/readers/history.md, "The final sample")',
)
def test_the_careful_reader_agrees_with_the_blind_judge_on_95_percent_of_the_final_sample():
    """Issues 31 and 45: right on at least 95% of a fresh judged sample of its disagreements with the paper
    (judge A), by the reader frozen before the sample was drawn (the key's ``careful``)."""
    final = SAMPLES["final"]
    right = _right(final, "careful")
    assert right / len(final) >= 0.95, f"careful right on {right} of {len(final)}"


@pytest.mark.parametrize("name", list(AT_THE_DRAW))
def test_earlier_final_samples_as_they_were_judged_when_they_were_drawn(name):
    """dev3 to dev12 and the final sample were each drawn as the final sample; their figures at the draw, and
    those of the earlier reader their key records, stay."""
    items, pinned = SAMPLES[name], AT_THE_DRAW[name]
    agreed = _agreed(items)
    assert len(agreed) == pinned["agreed"]
    earlier = [(EARLIER[field], pinned[field]) for field in EARLIER if field in pinned]
    assert len(earlier) == 1, name
    for value, figures in (("careful", pinned["at_draw"]), *earlier):
        assert (_right(items, value), _right(items, value, "judged_b"), _right(agreed, value)) == figures


# Every judged sample after issue 31 (the reader of 3082d0f) and in the code: right vs judge A, vs judge B, on
# the items both judges agree on (dev1 and dev2 had one judge, so the three are one). Those after issue 31 stay
# (the final sample's are the figures before issue 45 of its key); those in the code move with the reader, and
# docs/readers/history.md gives them ("Issue 45").
AFTER_ISSUE_31 = {
    "dev1": (98, 98, 98),
    "dev2": (72, 72, 72),
    "dev3": (187, 196, 187),
    "dev4": (148, 150, 148),
    "dev5": (195, 193, 192),
    "dev6": (187, 187, 187),
    "dev7": (182, 184, 181),
    "dev8": (182, 183, 177),
    "dev9": (185, 186, 185),
    "dev10": (177, 176, 176),
    "dev11": (187, 182, 182),
    "dev12": (167, 166, 166),
    "final": (174, 176, 173),
}
IN_THE_CODE = {
    "dev1": (98, 98, 98),
    "dev2": (70, 70, 70),
    "dev3": (184, 193, 184),
    "dev4": (149, 149, 148),
    "dev5": (195, 193, 192),
    "dev6": (178, 178, 178),
    "dev7": (191, 193, 190),
    "dev8": (168, 173, 165),
    "dev9": (168, 169, 168),
    "dev10": (186, 185, 185),
    "dev11": (159, 156, 155),
    "dev12": (188, 187, 187),
    "final": FINAL_NOW,
}


def _figures(name: str, items: list[dict], value: str) -> tuple[int, int, int]:
    """Right vs judge A, vs judge B (judge A again where a sample had one judge), on the items both agree on."""
    if not (JUDGED / f"{name}.verdicts-b.jsonl").exists():
        items = [{**item, "judged_b": item["judged"]} for item in items]
    return _right(items, value), _right(items, value, "judged_b"), _right(_agreed(items), value)


def test_the_careful_reader_on_the_judged_samples_after_issue_31_and_in_the_code():
    """The reader after issue 31 and the reader in the code, pinned on every judged sample, and on the twelve
    development samples together against their first judge (1,967 of 2,129 after issue 31, 1,934 in the code).

    Where a sample's two judges split on a shape, the reader follows the reading later judges gave it: dev4's
    on "A) 12%\n\nThe answer is A." with 12% B (judge A read A, judge B none; both judges of round 5 read A,
    as the reader does since that study); dev3's on an opening answer followed by a second one given with a
    third choice's words, "A) next to picnic table\n\nThe answer is (B) under the picnic table." (judge A read
    A, judge B none; a later final sample's judges read that shape as none, as the reader does since round 4's
    study). Issue 45's ruling ("A:" then text is an answer label) moves the samples whose judges read that
    shape as the letter (rounds 1, 4, 6, 7, 9) down, and those that read it as a label (5, 8, 10) up; round 11's
    judges had the ruling."""
    for name in SAMPLES:
        items = _with_now(_with_after_31(name))
        assert _figures(name, items, "after31") == AFTER_ISSUE_31[name], name
        assert _figures(name, items, "now") == IN_THE_CODE[name], name
    assert sum(AFTER_ISSUE_31[name][0] for name in DEVELOPMENT) == 1967
    assert sum(len(SAMPLES[name]) for name in DEVELOPMENT) == 2129
    assert sum(IN_THE_CODE[name][0] for name in DEVELOPMENT) == 1934


RULEBOOK = Path(__file__).resolve().parents[2] / "docs" / "readers" / "history.md"


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


# the tables of every later final sample, against both judges, are checked above
@pytest.mark.parametrize("name", JUDGE_A_TABLES_ONLY)
def test_the_rulebook_gives_earlier_final_samples_tables_before_at_draw_and_after_issue_31(name):
    """docs/readers/history.md shows dev3's and dev4's tables by rule against judge A: the careful
    reader of branch main (before issue 31), the reader when the sample was drawn, and the reader after
    issue 31 (3082d0f, by the rule it named then)."""
    items = _with_after_31(name)
    rulebook = RULEBOOK.read_text(encoding="utf-8")
    assert table_by_rule(items, "careful_before", "rule_before") in rulebook
    assert table_by_rule(items, "careful", "rule") in rulebook
    assert table_by_rule(items, "after31", "rule_after31") in rulebook


def test_the_careful_reader_is_right_more_often_than_before_on_the_first_development_sample():
    """dev1 was drawn from the reader before issue 31: its key holds that reader's values."""
    dev1 = SAMPLES["dev1"]
    before = sum(item["careful"] == item["judged"] for item in dev1)
    after = sum(_read(item, careful) == item["judged"] for item in dev1)
    assert (before, len(dev1)) == (86, 100)
    assert after > before


# the round each sample was drawn in as the final one: AT_THE_DRAW lists them in order, from round 1
ROUND_OF = {name: round_number for round_number, name in enumerate(AT_THE_DRAW, start=1)}


def _is_one_line_letter_against_content(item: dict) -> bool:
    """One line, "A:" first, and read by the careful reader after issue 31 (3082d0f, which took the "A" for the
    letter) as that letter against another choice's words."""
    output = item["output"].strip()
    if not output.startswith("A:") or "\n" in output:
        return False
    readings = [reading for (_, item_id), reading in AFTER_31_READINGS.items() if item_id == item["id"]]
    return readings[0][1] == "letter-text-conflict"


def _reading_of_the_shape(letter: str | None) -> str:
    return "letter" if letter is None else "A" if letter == "A" else "label"


def test_the_rulebook_counts_how_each_round_read_a_one_line_a_colon_before_another_choice():
    """docs/readers/history.md's table of how judge A read the contested one-line "A: <content>" shape,
    sample by sample, on the samples judged before issue 45's ruling, its note on judge B (the same but on
    dev8), and the totals dev12's misses quote (dev1 and dev2 had one judge: they count as read alike by both);
    then how the final sample's judges (round 11), who had the ruling, read the shape."""
    rulebook = RULEBOOK.read_text(encoding="utf-8")
    total: Counter = Counter()
    total_b: Counter = Counter()
    for name, items in SAMPLES.items():
        if name == "final":
            continue
        shape = [item for item in items if _is_one_line_letter_against_content(item)]
        if not shape:
            continue
        judge_a = Counter(_reading_of_the_shape(item["judged"]) for item in shape)
        total += judge_a
        label = f"{name} (round {ROUND_OF[name]})" if name in ROUND_OF else name
        row = f"| {label} | {len(shape)} | {judge_a['letter']} | {judge_a['label']} | {judge_a['A']} |"
        assert row in rulebook, row
        judge_b = judge_a
        if (JUDGED / f"{name}.verdicts-b.jsonl").exists():
            judge_b = Counter(_reading_of_the_shape(item["judged_b"]) for item in shape)
            assert judge_b == (Counter(letter=9, label=2, A=1) if name == "dev8" else judge_a), name
        total_b += judge_b
    total_row = f"| **all** | {total.total()} | {total['letter']} | {total['label']} | {total['A']} |"
    assert total_row in rulebook
    in_prose = (
        f"read as the letter {total['letter']} times by judge A and as a label {total['label']} "
        f"(judge B: {total_b['letter']} and {total_b['label']})"
    )
    assert in_prose in " ".join(rulebook.split()), in_prose
    ruled = [item for item in SAMPLES["final"] if _is_one_line_letter_against_content(item)]
    for judged in ("judged", "judged_b"):
        assert Counter(_reading_of_the_shape(item[judged]) for item in ruled) == Counter(label=len(ruled))
    in_prose = f"read all {len(ruled)} of its items of the shape as a label"
    assert in_prose in " ".join(rulebook.split()), in_prose


JUDGE_ORDER = Path(__file__).parent / "fixtures" / "judge_order"
ORDER_PACKETS = ("tagfirst-1", "tagfirst-2", "conflictfirst-1", "conflictfirst-2")
# the packets' items come from the two samples drawn last before the check (rounds 9 and 10)
ORDER_CHECK_ITEMS = {item["id"]: item for sample in ("dev11", "dev12") for item in SAMPLES[sample]}


def _order_packet(name: str) -> list[dict]:
    """One packet of the packet-order check, in its order: what the judge saw, with its verdict and the judged
    sample's item (``item``) each line stands for."""
    packet = _lines(JUDGE_ORDER / f"{name}.packet.jsonl")
    verdicts = _lines(JUDGE_ORDER / f"{name}.verdicts.jsonl")
    keys = _lines(JUDGE_ORDER / f"{name}.key.jsonl")
    assert (
        [line["id"] for line in packet] == [line["id"] for line in verdicts] == [line["id"] for line in keys]
    )
    rows = []
    for seen, verdict, key in zip(packet, verdicts, keys):
        item = ORDER_CHECK_ITEMS[key["item"]]
        assert (seen["question"], seen["choices"], seen["output"]) == (
            item["question"],
            item["choices"],
            item["output"],
        )
        rows.append({"item": item, "letter": verdict["letter"]})
    return rows


def test_the_rulebook_gives_the_packet_order_check():
    """The same 60 items of dev11 and dev12 (rounds 9 and 10; 45 of the contested one-line "A:" shape), judged
    blind in four packets: two opening with "A: The answer is (B).", two opening with the shape itself and
    ending with that answer tag. docs/readers/history.md gives how each packet's judge read the shape."""
    rulebook = RULEBOOK.read_text(encoding="utf-8")
    packets = {name: _order_packet(name) for name in ORDER_PACKETS}
    others = [
        row["letter"] == row["item"]["judged"]
        for rows in packets.values()
        for row in rows
        if not row["item"]["output"].strip().startswith("A")
    ]
    assert f"read them, {sum(others)} times of {len(others)}." in " ".join(rulebook.split())
    item_sets = {name: sorted(row["item"]["id"] for row in rows) for name, rows in packets.items()}
    assert len({tuple(ids) for ids in item_sets.values()}) == 1, "the four packets hold other items"
    for name, rows in packets.items():
        tag = [row for row in rows if row["item"]["output"].strip() == "A: The answer is (B)."]
        assert len(tag) == 1
        shape = [row for row in rows if _is_one_line_letter_against_content(row["item"])]
        assert len(rows) == 60 and len(shape) == 45
        if name.startswith("tagfirst"):
            assert rows[0] is tag[0]
        else:
            assert _is_one_line_letter_against_content(rows[0]["item"]) and rows[-1] is tag[0]
        readings = Counter(_reading_of_the_shape(row["letter"]) for row in shape)
        tag_reading = tag[0]["letter"] or "none"
        row = f"| `{name}` | {len(shape)} | {readings['letter']} | {readings['label']} | {tag_reading} |"
        assert row in rulebook, row


def _cell(figures: tuple[int, int, int] | None) -> str:
    return "–" if figures is None else " / ".join(map(str, figures))


def judged_samples_table() -> str:
    """The markdown table of every judged sample (right vs judge A / vs judge B / on the items both agree on):
    at the draw, after issue 31 (3082d0f) and the reader in the code."""
    lines = [
        "| sample | items (both judges agree) | at the draw | after issue 31 (3082d0f) | in the code |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, items in SAMPLES.items():
        agreed = len(_agreed(items)) if (JUDGED / f"{name}.verdicts-b.jsonl").exists() else len(items)
        draw = AT_THE_DRAW[name]["at_draw"] if name in AT_THE_DRAW else None
        lines.append(
            f"| {name} | {len(items)} ({agreed}) | {_cell(draw)} | {_cell(AFTER_ISSUE_31[name])} "
            f"| {_cell(IN_THE_CODE[name])} |"
        )
    return "\n".join(lines)


def test_the_history_gives_every_judged_sample_at_the_draw_after_issue_31_and_in_the_code():
    """docs/readers/history.md ("Issue 45") gives every judged sample's figures at the draw, after issue 31 and
    in the code, and dev12's (round 10, the sample the ruling moves most) tables by rule of the reader in the
    code against both judges. (The final sample's, round 11, are its tables at the draw: no rule changed.)"""
    history = RULEBOOK.read_text(encoding="utf-8")
    assert judged_samples_table() in history
    dev12 = _with_now(SAMPLES["dev12"])
    for item in dev12:
        item["rule_now"] = _reading(item, careful).rule
    for items, judged in ((dev12, "judged"), (dev12, "judged_b"), (_agreed(dev12), "judged")):
        assert table_by_rule(items, "now", "rule_now", judged) in history


ROUND_11 = ("final.packet.jsonl", "final.key.jsonl")


def test_round_11_the_final_sample_is_blind_fresh_and_drawn_from_the_frozen_readers_disagreements():
    """Round 11 (issue 45's fresh round, the final sample, drawn by ``draw_round11.py`` as ``round11.*``):
    200 SmolLM2 disagreements under DREAM kr2 and kfkr1, none held by an earlier judged sample, its packet
    blind; the key's values are the readers' at the draw, which the reader in the code still gives (no rule
    has changed since the draw)."""
    packet, key = (_lines(JUDGED / name) for name in ROUND_11)
    assert (
        [line["id"] for line in packet]
        == [line["id"] for line in key]
        == [f"final11-{n:03d}" for n in range(1, 201)]
    )
    held = {
        item["fingerprint"]
        for name, items in SAMPLES.items()
        if name != "final"
        for item in items
        if "fingerprint" in item
    }
    for seen, item in zip(packet, key, strict=True):
        assert set(seen) == {"id", "question", "choices", "output"}
        assert list(seen["choices"]) == list("ABC")
        assert item["source"].startswith("smollm2:") and item["config"] in (
            "scrqa/dream/kr2",
            "scrqa/dream/kfkr1",
        )
        choices = list(seen["choices"].values())
        assert item["fingerprint"] == hashlib.sha1(json.dumps([seen["output"], choices]).encode()).hexdigest()
        assert item["fingerprint"] not in held, item["id"]
        assert item["careful"] != item["paper"], item["id"]
        read = {"output": seen["output"], "choices": seen["choices"], "dataset": item["dataset"]}
        assert _read(read, paper) == item["paper"]
        assert (_reading(read, careful).value, _reading(read, careful).rule) == (
            item["careful"],
            item["rule"],
        )
    assert len({item["fingerprint"] for item in key}) == len(key)
