"""``scramble``: any dataset's text columns, with the build's scrambler; determinism, layout, card, bad input."""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrambled_bench.builder.recipes import row_selected
from scrambled_bench.builder.scramble import scramble_dataset
from scrambled_bench.builder.scrambler import letter_positions, parse_type, scramble, words_at_rate
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.main import main

WORD = re.compile(r"\w+")
SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Scrambled words remain surprisingly readable for large language models!",
    "It's 2023: naïve cafés re-open, don't they?",
    "W: Are you coming tonight?\nM: Only if the rain stops.",
]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def sample_rows(count: int) -> list[dict]:
    return [
        {
            "id": f"doc-{index}",
            "text": SENTENCES[index % 4] + f" Row {index}.",
            "question": "Why?",
            "n": index,
        }
        for index in range(count)
    ]


def read_config(out: Path, config: str, split: str = "train") -> list[dict]:
    files = sorted((out / "data" / config).glob(f"{split}-*.parquet"))
    return [row for file in files for row in pq.read_table(file).to_pylist()]


def parquet_hashes(out: Path) -> dict[str, str]:
    return {
        str(path.relative_to(out)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(out.rglob("*.parquet"))
    }


def leftovers(parent: Path) -> list[str]:
    return sorted(path.name for path in parent.iterdir() if ".tmp-" in path.name or ".cache-" in path.name)


@pytest.fixture
def cache(tmp_path: Path) -> str:
    return str(tmp_path / "hf-cache")


@pytest.fixture(autouse=True)
def datasets_cache_in_tmp(tmp_path_factory, monkeypatch):
    """The command line uses datasets' default cache: keep what the tests load out of the user's."""
    import datasets.config

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path_factory.mktemp("hf-datasets-cache"))


# --------------------------------------------------------------------------------------------------
# Property tests on arbitrary datasets
# --------------------------------------------------------------------------------------------------

texts = st.one_of(
    st.none(),
    st.text(
        alphabet=st.one_of(
            st.characters(categories=("Lu", "Ll", "Lo", "Mn", "Nd")),
            st.sampled_from(list("aeio _'-\n.,!? 20")),
        ),
        max_size=60,
    ),
)
TYPES = ["original", "rs50", "rs100", "kfl", "sub", "adj30", "ftrs30", "ins50"]


@st.composite
def datasets_(draw):
    """A small table: 1-3 text columns (nulls included), an int column and a list column; chosen columns."""
    rows = draw(st.integers(min_value=1, max_value=25))  # datasets refuses a split without rows
    text_columns = draw(
        st.lists(st.sampled_from(["text", "title", "body"]), min_size=1, max_size=3, unique=True)
    )
    table = {name: draw(st.lists(texts, min_size=rows, max_size=rows)) for name in text_columns}
    table["n"] = list(range(rows))
    table["tags"] = [["a", "b"][: index % 3] for index in range(rows)]
    chosen = draw(
        st.lists(st.sampled_from(text_columns), min_size=1, max_size=len(text_columns), unique=True)
    )
    return table, chosen


def write_parquet(folder: Path, table: dict) -> Path:
    schema = pa.schema(
        [pa.field(name, pa.string()) for name in table if name not in ("n", "tags")]
        + [pa.field("n", pa.int64()), pa.field("tags", pa.list_(pa.string()))]
    )
    path = folder / "source.parquet"
    pq.write_table(pa.Table.from_pydict(table, schema=schema), path)
    return path


property_settings = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@property_settings
@given(data=datasets_(), scramble_type=st.sampled_from(TYPES), seed=st.integers(min_value=0, max_value=2**20))
def test_chosen_columns_are_the_scramblers_output_and_everything_else_is_unchanged(data, scramble_type, seed):
    table, chosen = data
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        source = write_parquet(folder, table)
        scramble_dataset(
            str(source),
            columns=chosen,
            types=[scramble_type],
            out=folder / "out",
            seed=seed,
            cache_dir=str(folder / "cache"),
        )
        rows = read_config(folder / "out", scramble_type)
    assert len(rows) == len(table["n"])
    for index, row in enumerate(rows):
        for name, values in table.items():
            if name in chosen:
                original = values[index]
                assert row[name + "_original"] == original
                expected = (
                    None
                    if original is None
                    else scramble(original, scramble_type, seed=seed, sample_id=str(index), place=name)
                )
                assert row[name] == expected
                if original is not None and parse_type(scramble_type).family not in ("ins", "del"):
                    # the build's per-word invariants: non-word characters, word spans and non-letters stay
                    assert WORD.sub("\x00", row[name]) == WORD.sub("\x00", original)
                    for match in WORD.finditer(original):
                        before, after = match.group(), row[name][match.start() : match.end()]
                        assert letter_positions(after) == letter_positions(before)
            else:
                assert row[name] == values[index]
        assert (row["scramble_type"], row["scrambled"]) == (scramble_type, True)


@pytest.mark.slow
@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(
    data=datasets_(),
    types=st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True),
    seed=st.integers(min_value=0, max_value=2**20),
    batch_size=st.integers(min_value=1, max_value=40),
    sample_rate=st.sampled_from([None, 40.0]),
)
def test_the_output_bytes_do_not_depend_on_num_proc_streaming_or_batch_size(
    data, types, seed, batch_size, sample_rate
):
    table, chosen = data
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        source = write_parquet(folder, table)
        hashes = []
        for name, options in (
            ("plain", {}),
            ("procs", {"num_proc": 2, "batch_size": batch_size}),
            ("stream", {"streaming": True, "batch_size": batch_size}),
            ("stream-procs", {"streaming": True, "num_proc": 2, "batch_size": 7}),
        ):
            scramble_dataset(
                str(source),
                columns=chosen,
                types=types,
                out=folder / name,
                seed=seed,
                sample_rate=sample_rate,
                cache_dir=str(folder / "cache"),
                rows_per_shard=10,
                **options,
            )
            hashes.append(parquet_hashes(folder / name))
    assert hashes[0] and all(other == hashes[0] for other in hashes[1:])


# --------------------------------------------------------------------------------------------------
# Recipes end to end
# --------------------------------------------------------------------------------------------------


def test_recipes_scramble_their_share_of_rows_and_words(tmp_path: Path, cache: str):
    """FT-RS and FT-KF&Adj: 60 % of the rows (within 4 standard deviations: ±4.4 % of 2,000), and in a
    chosen row exactly 30 % of the words with more than two letters; FT-Ori changes nothing."""
    words_ = [
        "scramble",
        "letters",
        "reading",
        "models",
        "brown",
        "quick",
        "jumps",
        "lazy",
        "dogs",
        "of",
        "to",
        "an",
    ]
    rows = [
        {"id": index, "text": " ".join(words_[index % 7 :] + words_[: index % 7])} for index in range(2000)
    ]
    source = write_jsonl(tmp_path / "corpus.jsonl", rows)
    for recipe in ("ft-rs", "ft-kf-adj", "ft-ori"):
        scramble_dataset(str(source), columns=["text"], recipe=recipe, out=tmp_path / recipe, cache_dir=cache)
        out = read_config(tmp_path / recipe, recipe)
        assert {(row["recipe"], row["scramble_type"]) for row in out} == {
            (recipe, {"ft-rs": "ftrs30", "ft-kf-adj": "adj30", "ft-ori": "original"}[recipe])
        }
        share = sum(row["scrambled"] for row in out) / len(out)
        if recipe == "ft-ori":
            assert share == 0 and all(row["text"] == row["text_original"] for row in out)
            continue
        assert abs(share - 0.6) <= 4 * (0.24 / len(out)) ** 0.5
        for index, row in enumerate(out):
            assert row["scrambled"] == row_selected(str(index), seed=0, sample_rate=60)
            pairs = list(zip(row["text_original"].split(), row["text"].split()))
            changed = [(a, b) for a, b in pairs if a != b]
            if not row["scrambled"]:
                assert not changed
                continue
            assert len(changed) == words_at_rate(sum(len(a) > 2 for a, _ in pairs), 30)
            assert all(len(a) > 2 and sorted(a) == sorted(b) for a, b in changed)
            if recipe == "ft-kf-adj":
                assert all(a[0] == b[0] and sum(x != y for x, y in zip(a, b)) == 2 for a, b in changed)


# --------------------------------------------------------------------------------------------------
# Layout, card, manifest, keys
# --------------------------------------------------------------------------------------------------


def test_layout_card_manifest_and_load_dataset(tmp_path: Path, cache: str):
    from datasets import load_dataset

    folder = tmp_path / "source"
    folder.mkdir()
    write_jsonl(folder / "train.jsonl", sample_rows(30))
    write_jsonl(folder / "test.jsonl", sample_rows(5))
    (folder / "README.md").write_text("---\nlicense: cc-by-sa-4.0\n---\n# A corpus\n", encoding="utf-8")
    out = tmp_path / "out"
    scramble_dataset(str(folder), columns=["text"], types=["kfl", "rs50"], out=out, seed=3, cache_dir=cache)

    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == [
        "README.md",
        "data/kfl/test-00000-of-00001.parquet",
        "data/kfl/train-00000-of-00001.parquet",
        "data/rs50/test-00000-of-00001.parquet",
        "data/rs50/train-00000-of-00001.parquet",
        "manifest.json",
    ]
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["kind"], manifest["types"], manifest["seed"], manifest["row_key"]) == (
        "scramble",
        ["kfl", "rs50"],
        3,
        "index",
    )
    assert manifest["source_license"] == "cc-by-sa-4.0"
    assert set(manifest["source_files"]) == {"README.md", "test.jsonl", "train.jsonl"}
    for relative, entry in manifest["outputs"].items():
        assert hashlib.sha256((out / relative).read_bytes()).hexdigest() == entry["sha256"]
    assert manifest["outputs"]["data/kfl/train-00000-of-00001.parquet"]["rows"] == 30

    card = (out / "README.md").read_text()
    assert (
        "license: cc-by-sa-4.0" in card
        and "Carried over from the source's dataset card: `cc-by-sa-4.0`" in card
    )
    assert "- config_name: kfl" in card and "path: data/kfl/train-*.parquet" in card
    assert "`text_original`" in card and "seed `3`" in card and "scrambled-bench scramble" in card

    ds = load_dataset(str(out), "kfl", split="train", cache_dir=cache)
    assert ds.column_names == ["id", "text", "text_original", "question", "n", "scramble_type", "scrambled"]
    assert ds[4]["text"] == scramble(ds[4]["text_original"], "kfl", seed=3, sample_id="4", place="text")


def test_id_column_keys_follow_the_row_not_its_position(tmp_path: Path, cache: str):
    rows = sample_rows(12)
    forward = write_jsonl(tmp_path / "forward.jsonl", rows)
    backward = write_jsonl(tmp_path / "backward.jsonl", rows[::-1])
    for name, source in (("f", forward), ("b", backward)):
        scramble_dataset(
            str(source),
            columns=["text"],
            types=["rs100"],
            id_column="id",
            out=tmp_path / name,
            cache_dir=cache,
        )
    by_id = [{row["id"]: row["text"] for row in read_config(tmp_path / name, "rs100")} for name in ("f", "b")]
    assert by_id[0] == by_id[1]
    assert by_id[0]["doc-3"] == scramble(rows[3]["text"], "rs100", seed=0, sample_id="doc-3", place="text")


def test_scrambling_again_with_other_types_grows_the_output_as_build_does(tmp_path: Path, cache: str):
    source = write_jsonl(tmp_path / "rows.jsonl", sample_rows(4))
    out, once = tmp_path / "out", tmp_path / "once"
    first = scramble_dataset(str(source), columns=["text"], types=["kf"], out=out, cache_dir=cache)
    kf_files = parquet_hashes(out)
    grown = scramble_dataset(str(source), columns=["text"], types=["kfl", "kf"], out=out, cache_dir=cache)
    assert sorted(p.name for p in (out / "data").iterdir()) == ["kf", "kfl"]
    assert grown.kept == () and first.kept == ()  # kf was asked again: written anew, the same bytes
    assert {name: digest for name, digest in parquet_hashes(out).items() if "/kf/" in name} == kf_files
    added = scramble_dataset(str(source), columns=["text"], types=["sub"], out=out, cache_dir=cache)
    assert added.kept == ("kf", "kfl") and list(added.rows) == ["kf", "kfl", "sub"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["types"] == manifest["configs"] == ["kf", "kfl", "sub"]
    assert set(manifest["unchanged"]) == {"kf", "kfl", "sub"}
    assert "| `kfl` | `kfl` | 100 % | 4 |" in (out / "README.md").read_text()
    # the grown output is the one made at once, byte for byte
    scramble_dataset(str(source), columns=["text"], types=["kf", "kfl", "sub"], out=once, cache_dir=cache)
    assert parquet_hashes(out) == parquet_hashes(once)
    # --replace writes exactly what is asked for
    scramble_dataset(str(source), columns=["text"], types=["kfl"], out=out, cache_dir=cache, replace=True)
    assert sorted(p.name for p in (out / "data").iterdir()) == ["kfl"]
    assert leftovers(tmp_path) == []


def test_an_output_of_other_settings_is_refused_and_a_failure_keeps_it(tmp_path: Path, cache: str, capsys):
    source = write_jsonl(tmp_path / "rows.jsonl", sample_rows(4))
    out = tmp_path / "out"
    scramble_dataset(str(source), columns=["text"], types=["kf"], out=out, cache_dir=cache)
    before = parquet_hashes(out)
    code, last = run_cli(
        capsys, str(source), "--columns", "text", "--types", "kfl", "--seed", "3", "--out", str(out)
    )
    assert code == 2 and last == (
        f"error: output {out} holds a scramble of seed 0 (asked: 3): adding kfl to it would mix two scrambles; "
        "pass --replace to replace it, or --out another folder"
    )
    code, last = run_cli(capsys, str(source), "--columns", "question", "--types", "kfl", "--out", str(out))
    assert code == 2 and "columns text (asked: question)" in last
    with pytest.raises(ScrambledBenchError):
        scramble_dataset(str(source), columns=["nope"], types=["kf"], out=out, cache_dir=cache)
    assert parquet_hashes(out) == before and leftovers(tmp_path) == []
    assert main(["scramble", str(source), "--columns", "text", "--types", "kfl", "--seed", "3", "--out", str(out),
                 "--replace"]) == 0  # fmt: skip
    assert sorted(p.name for p in (out / "data").iterdir()) == ["kfl"]


def test_list_columns_stay_distinct_and_the_card_counts_what_stayed(tmp_path: Path, cache: str, capsys):
    """The issue's rows: every choice its own; the summary and the card count the texts left unchanged."""
    rows = [
        {"question": "Which symbol is gold?", "choices": ["Au", "Ag", "Gd", "Go"]},
        {"question": "Which body orbits the Earth?", "choices": ["Mars", "Moon", "Sun", "Vega"]},
        {"question": "Which is a noble gas?", "choices": ["Neon", "Iron", "Tin", "Zinc"]},
    ]
    source = write_jsonl(tmp_path / "d.jsonl", rows)
    out = tmp_path / "out"
    assert (
        main(
            [
                "scramble",
                str(source),
                "--columns",
                "question,choices",
                "--types",
                "sub,kfl",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out.strip()
    # kfl leaves every word of under four letters, so Au..Go, Sun, Tin and the question's short words
    for config in ("sub", "kfl"):
        for row in read_config(out, config):
            assert len(set(row["choices"])) == 4, (config, row["choices"])
    kfl = read_config(out, "kfl")
    unchanged = sum(a == b for row in kfl for a, b in zip(row["choices"], row["choices_original"]))
    unchanged += sum(row["question"] == row["question_original"] for row in kfl)
    assert printed.endswith(f"texts left unchanged: sub 0 of 15, kfl {unchanged} of 15)")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["unchanged"] == {
        "sub": {"texts": 15, "unchanged": 0},
        "kfl": {"texts": 15, "unchanged": unchanged},
    }
    card = (out / "README.md").read_text()
    assert "texts left unchanged" in card and f"| {unchanged} of 15 |" in card


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"text": "caf\xe9 au lait"}\n', "not UTF-8 (byte 0xe9 at offset 13); save it as UTF-8"),
        (b"", "empty (no rows to scramble)"),
        (b"\n\n", "empty (no rows to scramble)"),
    ],
)
def test_a_file_that_is_not_utf8_or_is_empty_is_one_line(tmp_path: Path, capsys, content, message):
    source = tmp_path / "d.jsonl"
    source.write_bytes(content)
    out = tmp_path / "out"
    code = main(["scramble", str(source), "--columns", "text", "--types", "kfl", "--out", str(out)])
    captured = capsys.readouterr()
    [line] = captured.err.strip().splitlines()  # one line: no traceback, no chatter before it
    assert code == 2 and line == f"error: cannot load dataset {str(source)!r}: {source}: {message}", line
    assert captured.out == "" and not out.exists() and leftovers(tmp_path) == []


def test_push_uploads_the_output_and_push_alone_leaves_nothing_behind(tmp_path: Path, cache: str):
    calls = []
    api = SimpleNamespace(
        create_repo=lambda repo_id, **kwargs: calls.append(("create_repo", repo_id, kwargs)),
        upload_folder=lambda **kwargs: calls.append(
            (
                "upload_folder",
                sorted(
                    str(p.relative_to(kwargs["folder_path"]))
                    for p in Path(kwargs["folder_path"]).rglob("*")
                    if p.is_file()
                ),
                kwargs["allow_patterns"],
            )
        ),
    )
    source = write_jsonl(tmp_path / "rows.jsonl", sample_rows(3))
    before = set(Path(tempfile.gettempdir()).iterdir())
    result = scramble_dataset(
        str(source), columns=["text"], types=["sub"], push="org/scrambled", api=api, cache_dir=cache
    )
    assert result.url == "https://huggingface.co/datasets/org/scrambled" and result.out is None
    assert calls[0][:2] == ("create_repo", "org/scrambled") and calls[0][2]["repo_type"] == "dataset"
    assert calls[1][1] == ["README.md", "data/sub/train-00000-of-00001.parquet", "manifest.json"]
    assert {p for p in set(Path(tempfile.gettempdir()).iterdir()) - before if "scrambled" in p.name} == set()


# --------------------------------------------------------------------------------------------------
# Bad input: one line, non-zero exit, no partial output
# --------------------------------------------------------------------------------------------------


def run_cli(capsys, *args: str) -> tuple[int, str]:
    code = main(["scramble", *args])
    err = capsys.readouterr().err.strip().splitlines()
    return code, err[-1] if err else ""


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["--columns", "txt", "--types", "kfl"],
            "error: split 'train' has no column 'txt' (columns: id, text, question, n)",
        ),
        (
            ["--columns", "n", "--types", "kfl"],
            "error: column 'n' of split 'train' is not text (int64); text columns: id, text, question",
        ),
        (["--columns", "text", "--types", "kfx"], "error: unknown scramble type 'kfx'"),
        (["--columns", "text", "--recipe", "ft-xx"], "error: Invalid value for '--recipe'"),
        (
            ["--columns", "text", "--types", "kfl", "--recipe", "ft-rs"],
            "error: give --types or --recipe, not both",
        ),
        (
            ["--columns", "text", "--types", "kfl", "--sample-rate", "0"],
            "error: Invalid value for '--sample-rate': must be in (0, 100] (percent of the rows), got 0",
        ),
        (
            ["--columns", "text", "--types", "kfl", "--sample-rate", "100.5"],
            "error: Invalid value for '--sample-rate'",
        ),
        (
            ["--columns", "text", "--types", "kfl", "--sample-rate", "-3"],
            "error: Invalid value for '--sample-rate'",
        ),
        (
            ["--columns", "text", "--recipe", "ft-rs", "--sample-rate", "50"],
            "error: --sample-rate is set by the recipe",
        ),
        (["--columns", "text", "--types", "kfl", "--split", "dev"], "error: cannot load dataset"),
        (
            ["--columns", "text", "--types", "kfl", "--id-column", "key"],
            "error: --id-column: split 'train' has no column 'key'",
        ),
        (
            ["--columns", "text", "--types", "kfl", "--push", "not-a-repo"],
            "error: --push: expected a Hub repository id ORG/NAME",
        ),
    ],
)
def test_bad_options_fail_in_one_line_and_write_nothing(tmp_path: Path, capsys, options, message):
    source = write_jsonl(tmp_path / "rows.jsonl", sample_rows(3))
    out = tmp_path / "out"
    code, last = run_cli(capsys, str(source), "--out", str(out), *options)
    assert code == 2
    assert last.startswith(message), last
    assert not out.exists() and leftovers(tmp_path) == []


def test_a_dataset_that_cannot_be_loaded_is_one_line(tmp_path: Path, capsys, hub_offline):
    out = tmp_path / "out"
    for source, message in (
        (str(tmp_path / "missing.jsonl*"), "no file matches"),
        (str(write_jsonl(tmp_path / "rows.xyz", sample_rows(2))), "expected files of one kind"),
        ("some-org/no-such-dataset", "cannot load dataset 'some-org/no-such-dataset': "),
    ):
        code, last = run_cli(capsys, source, "--columns", "text", "--types", "kfl", "--out", str(out))
        assert code == 2 and last.startswith("error: cannot load dataset") and message in last, last
        assert not out.exists() and leftovers(tmp_path) == []


def test_an_output_folder_that_is_not_a_previous_scramble_output_is_refused(tmp_path: Path, capsys):
    source = write_jsonl(tmp_path / "rows.jsonl", sample_rows(3))
    for name, content in (
        ("notes", {"notes.txt": "mine"}),
        ("build", {"manifest.json": '{"version": "1.0.0", "outputs": {}}'}),
    ):
        out = tmp_path / name
        out.mkdir()
        for file, text in content.items():
            (out / file).write_text(text)
        code, last = run_cli(capsys, str(source), "--columns", "text", "--types", "kfl", "--out", str(out))
        assert code == 2
        assert (
            last
            == f"error: output folder {out} exists and is not a previous `scramble` output; refusing to replace it"
        )
        assert sorted(p.name for p in out.iterdir()) == sorted(content)
    assert leftovers(tmp_path) == []


def test_the_command_prints_where_it_wrote(tmp_path: Path, capsys):
    source = write_jsonl(tmp_path / "rows.jsonl", sample_rows(3))
    code = main(
        [
            "scramble",
            str(source),
            "-c",
            "text,question",
            "-t",
            "kfl",
            "-t",
            "rs50",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out.strip()
    assert printed.startswith(
        f"scrambled {source} into {tmp_path / 'o'} (rows per config and split: kfl: train 3; rs50: train 3; "
        "texts left unchanged: kfl "
    )
    row = read_config(tmp_path / "o", "rs50")[0]
    assert row["question_original"] == "Why?" and row["text_original"] == sample_rows(1)[0]["text"]


def test_num_proc_leaves_os_environ_the_same_object_with_the_same_contents(tmp_path: Path, cache: str):
    """datasets.map(num_proc > 1) rebinds os.environ to a copy; the command binds the original back."""
    import os

    environ, before = os.environ, dict(os.environ)
    source = write_jsonl(tmp_path / "rows.jsonl", sample_rows(8))
    scramble_dataset(
        str(source), columns=["text"], types=["kf"], out=tmp_path / "o", num_proc=2, cache_dir=cache
    )
    assert os.environ is environ and dict(os.environ) == before
