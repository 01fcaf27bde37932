"""The build on the hand-made fixtures: layout, load_dataset, manifest, byte-identical rebuilds, atomicity, CLI."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scrambled_bench.builder import build as build_module
from scrambled_bench.builder.build import DEFAULT_TYPES, build_dataset, data_file
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.main import main

FIXTURES = Path(__file__).parent / "fixtures" / "sources"
SMALL_TYPES = ["original", "rs50", "kfl", "sub"]


def file_hashes(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="module")
def small_build(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("build") / "scrambled_bench"
    return build_dataset(out, types=SMALL_TYPES, seed=0, source_dir=FIXTURES)


def test_layout_card_and_manifest(small_build: Path):
    configs = [f"{source}_{t}" for source in ("realtimeqa", "dream", "aqua") for t in SMALL_TYPES]
    assert sorted(p.name for p in (small_build / "data").iterdir()) == sorted(configs)
    card = (small_build / "README.md").read_text()
    header = card.split("---\n")[1]
    for config in configs:
        assert (
            f"- config_name: {config}\n  data_files:\n  - split: test\n    path: {data_file(config)}\n"
            in header
        )
    assert "non-commercial research" in card and "Apache-2.0" in card
    assert "@inproceedings{cao2023unnatural" in card and "sun2019dream" in card and "ling2017program" in card
    assert "| `dream_kfl` | dream | `kfl` | 4 |" in card
    assert "| `categories_annotator1` | DREAM |" in card
    assert "`categories` follow annotator 2, as in the paper's Tables 7 and 8" in card
    assert "## Version history" in card and "| 1.1.0 |" in card and "| 1.0.0 |" in card
    assert "This is version **1.1.0** (tag `v1.1.0`)" in card and "the text's column `original`" in card
    manifest = json.loads((small_build / "manifest.json").read_text())
    assert (manifest["version"], manifest["tag"], manifest["seed"], manifest["window"]) == (
        "1.1.0",
        "v1.1.0",
        0,
        "2023-03-17:2023-08-04",
    )
    hashes = file_hashes(small_build)
    for relative, entry in manifest["outputs"].items():
        assert hashes[relative] == entry["sha256"]
    assert manifest["outputs"][data_file("aqua_kfl")]["rows"] == 3
    sources = {k: hashlib.sha256((FIXTURES / k).read_bytes()).hexdigest() for k in manifest["source_files"]}
    assert manifest["source_files"] == sources
    assert (
        "google-deepmind/AQuA/test.json" in sources
        and "nlpdata/dream/annotation/annotator1_dev.txt" in sources
        and "nlpdata/dream/annotation/annotator2_test.txt" in sources
    )


def test_a_build_records_its_seed_derivation_and_its_version_is_documented(small_build: Path):
    """Issue 28's derivation (every text its own stream: the place joins the hash) changed every scrambled
    text of the paper's configs, so the dataset's minor version was bumped: the manifest, the card, push's tag
    and the changelog name it, and the scramble of a build's row is the one at the column ``original``."""
    import pyarrow.parquet as pq

    from scrambled_bench.builder.build import DATASET_VERSION, TEXT_PLACE, build_tag
    from scrambled_bench.builder.scrambler import STREAM_VERSION, scramble
    from scrambled_bench.builder.sources import dream
    from scrambled_bench.builder.sources.fetch import SourceReader

    assert (DATASET_VERSION, STREAM_VERSION) == ("1.1.0", 2)
    manifest = json.loads((small_build / "manifest.json").read_text())
    assert manifest["stream_version"] == STREAM_VERSION and manifest["tag"] == build_tag(
        "1.1.0", seed=0, window=None
    )
    changelog = (Path(build_module.__file__).parents[1] / "dataset_cards" / "CHANGELOG.md").read_text()
    [entry] = [line for line in changelog.splitlines() if line.startswith(f"| {DATASET_VERSION} |")]
    assert "stream version 2" in entry
    rows = pq.read_table(small_build / data_file("dream_kfl")).to_pylist()
    record = dream.load(SourceReader(mirror=FIXTURES)).records[0]
    assert rows[0]["scrambled"] == scramble(
        record.fields["original"], "kfl", seed=0, sample_id=record.scramble_key, place=TEXT_PLACE
    )


def test_load_dataset_reads_every_config_with_the_issue_schema(small_build: Path, tmp_path: Path):
    from datasets import load_dataset

    cache = str(tmp_path / "hf-cache")
    rtqa = load_dataset(str(small_build), "realtimeqa_rs50", split="test", cache_dir=cache)
    assert rtqa.column_names == [
        "id",
        "original",
        "scrambled",
        "question",
        "choices",
        "answer",
        "used_for_qa",
        "date",
    ]
    assert rtqa["used_for_qa"] == [True, True, False, True]
    dream_kfl = load_dataset(str(small_build), "dream_kfl", split="test", cache_dir=cache)
    assert dream_kfl.column_names == [
        "id",
        "original",
        "scrambled",
        "question",
        "choices",
        "answer",
        "categories",
        "categories_annotator1",
        "dream_split",
    ]
    row = dream_kfl[0]
    assert row["id"] == "test/4-199/1" and row["answer"] == "C" and row["categories"] == ["commonsense"]
    assert dream_kfl["categories"][1] == ["logic"]
    assert dream_kfl["categories_annotator1"][1] == ["arithmetic", "logic"]
    assert row["scrambled"] != row["original"] and row["scrambled"].count("\n") == 2
    aqua = load_dataset(str(small_build), "aqua_original", split="test", cache_dir=cache)
    assert aqua["scrambled"] == aqua["original"] == aqua["question"]
    assert aqua[0]["choices"] == ["59", "69", "79", "89", "99"] and aqua[0]["rationale"].startswith(
        "Half of 2"
    )


def test_load_dataset_by_folder_name_from_where_the_build_ran(small_build: Path, tmp_path: Path, monkeypatch):
    from datasets import load_dataset

    monkeypatch.chdir(small_build.parent)
    ds = load_dataset("scrambled_bench", "dream_kfl", split="test", cache_dir=str(tmp_path / "cache"))
    assert len(ds) == 4


def test_load_dataset_after_a_rebuild_with_another_seed_reads_the_new_rows(tmp_path: Path, monkeypatch):
    """`datasets` caches a local folder under a key made from its YAML configs, not the files: the card must
    change with the data, or the second load (same folder name, same cache) returns the first build's rows."""
    import pyarrow.parquet as pq
    from datasets import load_dataset

    cache = str(tmp_path / "hf-cache")
    loaded = []
    for seed, folder in ((1, "first"), (2, "second")):
        build = build_dataset(
            tmp_path / folder / "scrambled_bench",
            sources=["aqua"],
            types=["rs100"],
            seed=seed,
            source_dir=FIXTURES,
        )
        monkeypatch.chdir(build.parent)
        rows = list(load_dataset("scrambled_bench", "aqua_rs100", split="test", cache_dir=cache)["scrambled"])
        on_disk = pq.read_table(build / data_file("aqua_rs100")).column("scrambled").to_pylist()
        assert rows == on_disk
        loaded.append(rows)
    assert loaded[0] != loaded[1]


def test_rebuild_is_byte_identical_also_in_another_process(small_build: Path, tmp_path: Path):
    again = build_dataset(tmp_path / "again", types=SMALL_TYPES, seed=0, source_dir=FIXTURES)
    assert file_hashes(again) == file_hashes(small_build)
    code = (
        "import sys; from pathlib import Path; from scrambled_bench.builder.build import build_dataset; "
        f"build_dataset(Path(sys.argv[1]), types={SMALL_TYPES!r}, seed=0, source_dir=Path(sys.argv[2]))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "99"}
    subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "proc"), str(FIXTURES)], check=True, env=env, timeout=300
    )
    assert file_hashes(tmp_path / "proc") == file_hashes(small_build)


def test_another_seed_changes_scrambles_and_tag(tmp_path: Path):
    out = build_dataset(tmp_path / "seeded", sources=["aqua"], types=["rs100"], seed=7, source_dir=FIXTURES)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["tag"] == "v1.1.0-seed7"


def test_window_build_is_tagged_and_recorded(tmp_path: Path):
    out = build_dataset(
        tmp_path / "fresh",
        sources=["realtimeqa"],
        types=["kfl"],
        window="2026-01-01:2026-07-17",
        source_dir=FIXTURES,
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["window"] == "2026-01-01:2026-07-17"
    assert manifest["tag"] == "v1.1.0-rtqa2026-01-01_2026-07-17"
    assert manifest["outputs"][data_file("realtimeqa_kfl")]["rows"] == 1


def test_failed_build_leaves_previous_build_intact_and_no_temporary_folder(tmp_path: Path, monkeypatch):
    out = build_dataset(tmp_path / "sb", sources=["aqua"], types=["kf"], source_dir=FIXTURES)
    before = file_hashes(out)
    calls = {"n": 0}
    real_write = build_module.write_configs

    def failing_write(paths, data, types, *, seed):
        calls["n"] += 1
        if calls["n"] == 2:  # the second new family: kfl is written, sub fails
            raise OSError(28, "No space left on device")
        return real_write(paths, data, types, seed=seed)

    monkeypatch.setattr(build_module, "write_configs", failing_write)
    with pytest.raises(OSError):
        build_dataset(out, sources=["aqua"], types=["kfl", "sub"], source_dir=FIXTURES)
    assert file_hashes(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sb"]


def test_bad_source_file_leaves_nothing_behind(tmp_path: Path):
    mirror = tmp_path / "mirror"
    shutil.copytree(FIXTURES, mirror)
    (mirror / "google-deepmind/AQuA/test.json").write_text('{"question": "x"\n')
    with pytest.raises(ScrambledBenchError, match=r"AQuA/test\.json:1: not valid JSON"):
        build_dataset(tmp_path / "sb", source_dir=mirror)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mirror"]


def test_refuses_to_replace_a_folder_that_is_not_a_build(tmp_path: Path):
    precious = tmp_path / "notes"
    precious.mkdir()
    (precious / "thesis.txt").write_text("do not delete")
    with pytest.raises(ScrambledBenchError, match="not empty and holds no manifest.json"):
        build_dataset(precious, sources=["aqua"], source_dir=FIXTURES)
    assert (precious / "thesis.txt").read_text() == "do not delete"


def test_default_types_are_the_papers_plus_appendix():
    assert DEFAULT_TYPES == ("original", "rs20", "rs50", "rs100", "kf", "kfl", "sub", "kr2", "klkr1", "kfkr1")


# ------------------------------------------------------------------ through the CLI


def test_a_build_grows_and_no_file_it_held_changes(tmp_path: Path):
    """Asking an existing build for more adds it; the configs it held keep their bytes, and every config is
    the same as in a build made at once (a config depends only on the version, the seed and the window)."""
    out = build_dataset(tmp_path / "sb", sources=["aqua"], types=["original", "kfl"], source_dir=FIXTURES)
    before = {name: digest for name, digest in file_hashes(out).items() if name.startswith("data/")}
    build_dataset(out, sources=["dream"], types=["rs50"], source_dir=FIXTURES)
    after = file_hashes(out)
    assert {name: after[name] for name in before} == before
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["types"] == ["original", "kfl", "rs50"] and list(manifest["sources"]) == ["dream", "aqua"]
    at_once = build_dataset(
        tmp_path / "at_once",
        sources=["dream", "aqua"],
        types=["original", "kfl", "rs50"],
        source_dir=FIXTURES,
    )
    assert file_hashes(at_once) == after  # card and manifest included


def test_replace_builds_exactly_what_is_asked(tmp_path: Path):
    out = build_dataset(tmp_path / "sb", sources=["aqua"], types=["original", "kfl"], source_dir=FIXTURES)
    build_dataset(out, sources=["aqua"], types=["sub"], source_dir=FIXTURES, replace=True)
    assert sorted(p.name for p in (out / "data").iterdir()) == ["aqua_sub"]


def test_a_build_of_another_seed_is_not_grown_and_the_named_fix_works(tmp_path: Path, capsys):
    out = build_dataset(tmp_path / "sb", sources=["aqua"], types=["kf"], source_dir=FIXTURES)
    before = file_hashes(out)
    code, _, err = run_cli(
        [
            "build",
            "--out",
            str(out),
            "--sources",
            "aqua",
            "--types",
            "kfl",
            "--seed",
            "3",
            "--source-dir",
            str(FIXTURES),
        ],
        capsys,
    )
    assert code != 0 and err.count("\n") == 1 and "seed 0 (asked: 3)" in err and "--replace" in err, err
    assert file_hashes(out) == before
    code, _, err = run_cli(
        ["build", "--out", str(out), "--sources", "aqua", "--types", "kfl", "--seed", "3", "--replace"]
        + ["--source-dir", str(FIXTURES)],
        capsys,
    )
    assert code == 0, err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["seed"] == 3 and manifest["types"] == ["kfl"]


def test_cli_build_into_a_build_says_what_it_added(tmp_path: Path, capsys):
    out = build_dataset(tmp_path / "sb", sources=["aqua", "dream"], types=["original"], source_dir=FIXTURES)
    code, _, err = run_cli(
        [
            "build",
            "--out",
            str(out),
            "--sources",
            "aqua,dream",
            "--types",
            "rs10",
            "--source-dir",
            str(FIXTURES),
        ],
        capsys,
    )
    assert code == 0, err
    assert "adding to the 2 it holds" in err and "added 2 config(s): aqua_rs10, dream_rs10" in err, err
    assert sorted(p.name for p in (out / "data").iterdir()) == [
        "aqua_original",
        "aqua_rs10",
        "dream_original",
        "dream_rs10",
    ]


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_build_then_load(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(
        [
            "build",
            "--sources",
            "dream,aqua",
            "--types",
            "kfl",
            "--types",
            "rs20",
            "--source-dir",
            str(FIXTURES),
        ],
        capsys,
    )
    assert code == 0, err
    assert out.strip() == "scrambled_bench"
    assert "4 configs, 14 rows" in err
    assert sorted(p.name for p in (tmp_path / "scrambled_bench" / "data").iterdir()) == [
        "aqua_kfl",
        "aqua_rs20",
        "dream_kfl",
        "dream_rs20",
    ]


def test_cli_reads_the_mirror_from_the_environment(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("SCRAMBLED_BENCH_SOURCE_DIR", str(FIXTURES))
    code, _, err = run_cli(
        ["build", "--out", str(tmp_path / "sb"), "--sources", "aqua", "--types", "sub"], capsys
    )
    assert code == 0, err
    assert (tmp_path / "sb" / data_file("aqua_sub")).is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--types", "kfx"], "error: unknown scramble type 'kfx'"),
        (["--types", "rs0"], "error: scramble type 'rs0': rate 0 is outside (0, 100]"),
        (["--types", "rs120"], "error: scramble type 'rs120': rate 120 is outside (0, 100]"),
        (["--sources", "squad"], "error: unknown source 'squad' (known: realtimeqa, dream, aqua)"),
        (
            ["--window", "2023-01-01:2023-01-07"],
            "error: the RealtimeQA window 2023-01-01:2023-01-07 is empty",
        ),
        (
            ["--window", "17/03/2023:2023-08-04"],
            "error: window '17/03/2023:2023-08-04': unknown date format '17/03/2023'",
        ),
        (["--seed", "-1"], "error: Invalid value for '--seed': Input should be greater than or equal to 0"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2_and_writes_nothing(args, message, tmp_path: Path, capsys):
    out = tmp_path / "sb"
    code, _, err = run_cli(["build", "--out", str(out), "--source-dir", str(FIXTURES), *args], capsys)
    assert code == 2
    error_lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(error_lines) == 1 and error_lines[0].startswith(message)
    assert "Traceback" not in err
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_cli_unwritable_output_and_missing_mirror(tmp_path: Path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    code, _, err = run_cli(["build", "--out", str(blocker / "sb"), "--source-dir", str(FIXTURES)], capsys)
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and errors == [
        f"error: cannot create the output folder {blocker}: part of that path is a file, not a folder"
    ]
    code, _, err = run_cli(
        ["build", "--out", str(tmp_path / "sb"), "--source-dir", str(tmp_path / "nowhere")], capsys
    )
    assert code == 2 and "error: source mirror" in err and "is not a folder" in err


def test_cli_dream_test_question_without_annotator2_label(tmp_path: Path, capsys):
    mirror = tmp_path / "sources"
    shutil.copytree(FIXTURES, mirror)
    labels = mirror / "nlpdata/dream/annotation/annotator2_test.txt"
    kept = [line for line in labels.read_text().splitlines(True) if not line.startswith("5-806\t1\t")]
    labels.write_text("".join(kept))
    out = tmp_path / "sb"
    code, _, err = run_cli(
        ["build", "--out", str(out), "--sources", "dream", "--source-dir", str(mirror)], capsys
    )
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and errors == [
        f"error: {labels}: no categories for dialogue '5-806' question 1 "
        "(line 3 of annotation/annotator1_test.txt)"
    ]
    assert "Traceback" not in err and not out.exists()


def test_console_script_reports_errors_without_traceback(tmp_path: Path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "scrambled_bench.evaluate_cli.main",
            "build",
            "--out",
            str(tmp_path / "sb"),
            "--types",
            "kfx",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].startswith("error: unknown scramble type 'kfx'")
    assert "Traceback" not in result.stderr
