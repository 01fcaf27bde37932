"""Nested ``--columns`` (builder/nested_columns.py through scramble_batch and scramble_dataset): only the
named strings change, the other fields keep their values, the original goes beside the top-level column,
and the output's bytes do not depend on ``--num-proc``."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from scrambled_bench.builder.scramble import Variant, scramble_batch, scramble_dataset

words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=9)
texts = st.lists(words, min_size=1, max_size=6).map(" ".join)


@st.composite
def rows(draw):
    n = draw(st.integers(1, 4))
    k = draw(st.integers(1, 4))
    return {
        "question": [draw(texts) for _ in range(n)],
        "tags": [draw(st.lists(texts, max_size=3)) for _ in range(n)],
        "choices": [
            {"text": draw(st.lists(texts, min_size=k, max_size=k)), "label": [chr(65 + i) for i in range(k)]}
            for _ in range(n)
        ],
        "turns": [
            [{"text": draw(texts), "speaker": draw(words)} for _ in range(draw(st.integers(0, 3)))]
            for _ in range(n)
        ],
    }


PATHS = ["question", "tags", "choices.text", "choices.label", "turns.text", "turns.speaker"]


def _strings(value, field):
    """The strings a path names in one row's value of its top-level column."""
    if field is None:
        return value if isinstance(value, list) else [value]
    if isinstance(value, dict):
        return value[field]
    return [record[field] for record in value]


@settings(max_examples=60, deadline=None)
@given(
    rows(),
    st.lists(st.sampled_from(PATHS), min_size=1, max_size=3, unique=True),
    st.sampled_from(["rs50", "kfl"]),
)
def test_only_the_named_strings_change(batch, chosen, scramble_type):
    keys = [str(i) for i in range(len(batch["question"]))]
    out = scramble_batch(batch, keys, columns=chosen, variant=Variant(scramble_type, scramble_type), seed=0)
    roots = {path.split(".")[0] for path in chosen}
    for root in batch:
        if root not in roots:
            assert out[root] == batch[root] and root + "_original" not in out
            continue
        assert out[root + "_original"] == batch[root]  # the whole original column beside it
        for path in PATHS:
            if path.split(".")[0] != root:
                continue
            field = path.split(".")[1] if "." in path else None
            for before, after in zip(batch[root], out[root]):
                old, new = _strings(before, field), _strings(after, field)
                assert len(old) == len(new)
                for text, other in zip(old, new):
                    if path in chosen:  # the scrambled string keeps every word's letters
                        assert [sorted(w) for w in text.split()] == [sorted(w) for w in other.split()]
                    else:
                        assert text == other
            for before, after in zip(batch[root], out[root]):  # the shape is kept: same keys, same lengths
                if isinstance(before, dict):
                    assert before.keys() == after.keys()
                elif isinstance(before, list):
                    assert len(before) == len(after)


def _digests(folder: Path) -> dict[str, str]:
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted((folder / "data").rglob("*.parquet"))
    }


def test_nested_columns_give_the_same_bytes_across_num_proc(tmp_path: Path):
    frame = pd.DataFrame(
        {
            "question": [f"question number {i} about the weather today" for i in range(40)],
            "choices": [
                {"text": [f"sunny day {i}", "heavy rain", "light snow"], "label": ["A", "B", "C"]}
                for i in range(40)
            ],
            "tags": [["outdoor weather", f"tag {i}"] for i in range(40)],
        }
    )
    source = tmp_path / "rows.parquet"
    frame.to_parquet(source)
    outputs = {}
    for num_proc in (1, 2):
        out = tmp_path / f"out{num_proc}"
        scramble_dataset(
            str(source),
            columns=["question", "choices.text", "tags"],
            types=["rs50"],
            out=out,
            num_proc=num_proc,
            batch_size=7,
        )
        outputs[num_proc] = _digests(out)
    assert outputs[1] == outputs[2] and outputs[1]
    scrambled = pd.read_parquet(tmp_path / "out1" / "data" / "rs50" / "train-00000-of-00001.parquet")
    assert [list(c["label"]) for c in scrambled["choices"]] == [["A", "B", "C"]] * 40
    assert [list(c["text"]) for c in scrambled["choices_original"]] == [
        list(c["text"]) for c in frame["choices"]
    ]


def test_a_column_that_is_not_text_lists_every_column_that_can_be_scrambled(tmp_path: Path, capsys):
    """The error names every name ``--columns`` takes, the list and nested ones too (it listed only the
    plain text columns, so a user never learnt that ``choices.text`` would do)."""
    from scrambled_bench.evaluate_cli.main import main

    frame = pd.DataFrame(
        {
            "id": [1, 2],
            "question": ["what is the weather", "where is the station"],
            "choices": [
                {"text": ["sunny", "rain"], "label": [0, 1]},
                {"text": ["left", "right"], "label": [0, 1]},
            ],
            "tags": [["outdoor"], ["travel"]],
        }
    )
    source = tmp_path / "rows.parquet"
    frame.to_parquet(source)
    code = main(
        ["scramble", str(source), "--columns", "id", "--types", "rs50", "--out", str(tmp_path / "out")]
    )
    last = capsys.readouterr().err.strip().splitlines()[-1]  # after the datasets' loading bar
    assert code == 2
    assert (
        last
        == "error: column 'id' of split 'train' is not text (int64); text columns: question, choices.text, tags"
    )
    assert not (tmp_path / "out").exists()
