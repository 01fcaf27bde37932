"""RunStore: durable appends, resume by key, corrupt and cut-off lines reported and the rest kept."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.store import RunStore, encode_record, parse_lines


def test_append_and_reload_keeps_every_record_once(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        assert store.append({"key": "a", "output": "one"})
        assert store.append({"key": "b", "output": "two"})
        assert not store.append({"key": "a", "output": "other"})
    lines = (tmp_path / "samples.jsonl").read_text().splitlines()
    assert [json.loads(line)["output"] for line in lines] == ["one", "two"]
    with RunStore(tmp_path) as store:
        assert {key: r["output"] for key, r in store.completed().items()} == {"a": "one", "b": "two"}
        assert store.warnings == []


def test_truncated_last_line_is_reported_quarantined_and_the_rest_kept(tmp_path: Path) -> None:
    samples = tmp_path / "samples.jsonl"
    whole = encode_record({"key": "a", "output": "kept"})
    cut = encode_record({"key": "b", "output": "lost in a crash"})[:17]
    samples.write_bytes(whole + cut)
    with RunStore(tmp_path) as store:
        assert list(store.completed()) == ["a"]
        assert len(store.warnings) == 1
        assert "samples.jsonl:2: truncated" in store.warnings[0]
        assert "samples.jsonl.corrupt" in store.warnings[0]
        # the next append starts on its own line
        store.append({"key": "b", "output": "resent"})
    assert (tmp_path / "samples.jsonl.corrupt").read_bytes() == cut + b"\n"
    with RunStore(tmp_path) as store:
        assert {key: r["output"] for key, r in store.completed().items()} == {"a": "kept", "b": "resent"}
        assert store.warnings == []


def test_corrupt_middle_line_and_duplicate_key_are_reported(tmp_path: Path) -> None:
    samples = tmp_path / "samples.jsonl"
    samples.write_bytes(
        encode_record({"key": "a", "output": "first"})
        + b"{not json at all\n"
        + b'["a list", "no key"]\n'
        + encode_record({"key": "a", "output": "duplicate"})
        + encode_record({"key": "c", "output": "third"})
    )
    with RunStore(tmp_path) as store:
        assert {key: r["output"] for key, r in store.completed().items()} == {"a": "first", "c": "third"}
        joined = "\n".join(store.warnings)
        assert "samples.jsonl:2: not valid JSON" in joined
        assert 'samples.jsonl:3: not a JSON object with a "key"' in joined
        assert "key a appears more than once" in joined


def test_errors_are_unresolved_until_a_sample_arrives(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        store.record_error("k", error_type="retries_exhausted", message="HTTP 503: busy", attempts=6)
        store.record_error("k", error_type="retries_exhausted", message="HTTP 500: boom", attempts=6)
        store.record_error("z", error_type="context_too_long", message="prompt of 9000 tokens", attempts=1)
        assert store.errors()["k"]["message"] == "HTTP 500: boom"
    with RunStore(tmp_path) as store:
        assert sorted(store.errors()) == ["k", "z"]
        store.append({"key": "k", "output": "finally"})
        assert sorted(store.errors()) == ["z"]


def test_a_second_process_on_the_same_folder_is_refused(tmp_path: Path) -> None:
    with RunStore(tmp_path):
        with pytest.raises(
            ScrambledBenchError, match=r"is in use by another scrambled-bench process \(pid \d+\)"
        ):
            RunStore(tmp_path)
    RunStore(tmp_path).close()  # released on close


def test_unwritable_folder_is_one_line_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ScrambledBenchError, match="cannot create run folder"):
        RunStore(blocker / "run")


records = st.lists(
    st.fixed_dictionaries({"key": st.text(min_size=1, max_size=8), "output": st.text(max_size=30)}),
    max_size=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=records, cut=st.integers(min_value=0, max_value=2000))
def test_any_crash_point_keeps_all_whole_lines_and_no_duplicates(
    tmp_path: Path, records: list[dict], cut: int
) -> None:
    """Cut the file at any byte (a crash mid-write): every record fully written before the cut survives,
    each key once, and nothing after the cut is invented."""
    run_dir = tmp_path / f"run-{os.urandom(4).hex()}"
    with RunStore(run_dir) as store:
        written = [record for record in records if store.append(record)]
    samples = run_dir / "samples.jsonl"
    data = samples.read_bytes()
    cut = min(cut, len(data))
    samples.write_bytes(data[:cut])
    survivors = [
        r for r in written if len(b"".join(encode_record(x) for x in written[: written.index(r) + 1])) <= cut
    ]
    with RunStore(run_dir) as store:
        completed = store.completed()
    assert list(completed) == [r["key"] for r in survivors]
    assert all(completed[r["key"]] == r for r in survivors)
    good, bad = parse_lines(samples.read_bytes())
    assert bad == [] and len(good) == len(survivors)


def test_append_many_commits_once_and_skips_known_or_repeated_keys(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        store.append({"key": "a", "output": "old"})
        written = store.append_many(
            [
                {"key": "a", "output": "again"},
                {"key": "b", "output": "new"},
                {"key": "b", "output": "twice"},
                {"key": "c", "output": "third"},
            ]
        )
        assert written == [False, True, False, True]
    lines = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert [(r["key"], r["output"]) for r in lines] == [("a", "old"), ("b", "new"), ("c", "third")]
