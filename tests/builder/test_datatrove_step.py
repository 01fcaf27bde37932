"""The datatrove step on datatrove's LocalPipelineExecutor (several tasks and workers) equals the ``scramble``
command, document for document. Skips where datatrove is missing (``pip install 'scrambled-bench[datatrove]'``)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from scrambled_bench.builder.scramble import scramble_dataset

pytest.importorskip(
    "datatrove", reason="the datatrove step needs datatrove (pip install 'scrambled-bench[datatrove]')"
)

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Scrambled words remain surprisingly readable for large language models!",
    "It's 2023: naïve cafés re-open, don't they?",
    "W: Are you coming tonight?\nM: Only if the rain stops.",
]


def write_corpus(folder: Path, files: int = 6, rows_per_file: int = 40) -> Path:
    folder.mkdir(parents=True)
    for file in range(files):
        lines = []
        for row in range(rows_per_file):
            key = f"doc-{file}-{row}"
            lines.append(
                json.dumps({"id": key, "text": f"{SENTENCES[row % 4]} ({key})", "source": f"file{file}"})
            )
        (folder / f"part-{file:02d}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def run_datatrove(corpus: Path, out: Path, logs: Path, **step_options) -> dict[str, dict]:
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    from scrambled_bench.builder.datatrove_step import ScrambleStep

    executor = LocalPipelineExecutor(
        [JsonlReader(str(corpus), id_key="id"), ScrambleStep(**step_options), JsonlWriter(str(out))],
        tasks=4,
        workers=2,
        logging_dir=str(logs),
    )
    executor.run()
    documents = {}
    for path in sorted(out.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                document = json.loads(line)
                documents[document["id"]] = document
    return documents


@pytest.mark.slow
@pytest.mark.parametrize(
    ("step_options", "command_options", "config"),
    [
        ({"scramble_type": "kfl"}, {"types": ["kfl"]}, "kfl"),
        ({"recipe": "ft-rs", "seed": 5}, {"recipe": "ft-rs", "seed": 5}, "ft-rs"),
        ({"scramble_type": "adj50", "sample_rate": 30}, {"types": ["adj50"], "sample_rate": 30}, "adj50"),
    ],
)
def test_local_executor_output_equals_the_scramble_command(
    tmp_path: Path, step_options, command_options, config
):
    corpus = write_corpus(tmp_path / "corpus")
    documents = run_datatrove(corpus, tmp_path / "datatrove", tmp_path / "logs", **step_options)

    scramble_dataset(
        str(corpus / "*.jsonl"),
        columns=["text"],
        id_column="id",
        out=tmp_path / "command",
        cache_dir=str(tmp_path / "cache"),
        **command_options,
    )
    rows = [
        row
        for path in sorted((tmp_path / "command" / "data" / config).glob("*.parquet"))
        for row in pq.read_table(path).to_pylist()
    ]
    assert len(documents) == len(rows) == 240
    for row in rows:
        document = documents[row["id"]]
        metadata = document["metadata"]
        assert document["text"] == row["text"]
        assert metadata["text_original"] == row["text_original"]
        assert (metadata["scramble_type"], metadata["scrambled"]) == (row["scramble_type"], row["scrambled"])
        assert metadata.get("recipe") == row.get("recipe")
        assert metadata["source"] == row["source"]
    assert 0 < sum(row["scrambled"] for row in rows) and any(
        row["text"] != row["text_original"] for row in rows
    )


def test_the_step_scrambles_a_metadata_field_and_leaves_the_text(tmp_path: Path):
    from datatrove.data import Document

    from scrambled_bench.builder.datatrove_step import ScrambleStep

    step = ScrambleStep("rs100", field="title")
    documents = [Document(text="body stays", id="a", metadata={"title": "Scrambled headline words"})]
    (out,) = list(step.run(iter(documents)))
    assert out.text == "body stays"
    assert out.metadata["title_original"] == "Scrambled headline words"
    assert out.metadata["title"] != "Scrambled headline words"
    assert sorted(out.metadata["title"]) == sorted("Scrambled headline words")
