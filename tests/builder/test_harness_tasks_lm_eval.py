"""``scramble lm-eval:TASK`` end to end: a canonical lm-eval task of the test's own (built-in tasks fetch
their data from the Hub), its kfl, rs50 and sub variants run by ``lm_eval --include_path`` against the real
llama.cpp server behind the recording proxy, then ``score --from-lm-eval``.

The task is a ``generate_until`` task over local parquet files, with a ``!function process_docs`` in a
``utils.py`` beside its YAML, a list-of-strings ``choices`` column and a few-shot split. Checked:

- the prompts on the wire are the ones lm-eval logged, and each variant's prompt is the canonical task's
  prompt with exactly the chosen columns' words scrambled, under the type's invariants;
- with ``--demos original`` the demonstrations are the canonical task's, unchanged;
- ``score --from-lm-eval`` gives lm-eval's own per-task metric for every variant and the paired
  differences over the same documents.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from derived_report import check_derived_report
from harness_support import check_variant_scores, check_words, offline_env, require
from lm_eval_canonical import write_canonical_task

from scrambled_bench.builder.scrambler import scramble, scramble_items
from scrambled_bench.evaluate_cli.main import main

TYPES = ("kfl", "rs50", "sub")


def _logged(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Task -> its logged samples (doc_id order)."""
    logged = {}
    for path in folder.rglob("samples_*.jsonl"):
        task = re.match(r"samples_(.+)_\d{4}-\d{2}-\d{2}T", path.name)[1]
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        logged[task] = sorted(rows, key=lambda row: row["doc_id"])
    return logged


def _prompt(row: dict[str, Any]) -> str:
    """The context lm-eval sent for a logged generate_until document."""
    [arguments] = row["arguments"].values()
    return arguments["arg_0"]


@pytest.mark.server
@pytest.mark.slow
def test_scrambled_variants_run_by_lm_eval_and_scored_in_pairs(
    recording_proxy, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require("lm_eval")
    env = offline_env(tmp_path)
    include = write_canonical_task(tmp_path)
    out = tmp_path / "scrambled"
    os.environ.update({key: env[key] for key in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")})
    code = main(
        ["scramble", "lm-eval:planets", "--include-path", str(include), "--columns", "question,choices",
         "--types", ",".join(TYPES), "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    assert sorted(p.name for p in (out / "lm_eval" / "planets").iterdir()) == sorted(
        ["planets.yaml", "planets_scrambled.yaml", *(f"planets_{t}.yaml" for t in TYPES)]
    )

    served = recording_proxy.get_json("/v1/models")["data"][0]["id"]
    before = len(recording_proxy.get_json("/_requests"))
    lm_out = tmp_path / "lm_eval_out"
    model_args = (
        f"model={served},base_url={recording_proxy.base_url}/completions,num_concurrent=1,max_retries=1,"
        "tokenized_requests=False,tokenizer_backend=None"
    )
    completed = subprocess.run(
        [sys.executable, "-m", "lm_eval", "run", "--model", "local-completions", "--model_args", model_args,
         "--tasks", "planets_scrambled", "--include_path", str(out / "lm_eval"), "--log_samples",
         "--output_path", str(lm_out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-3000:]
    sent = [r["body"]["prompt"] for r in recording_proxy.get_json("/_requests")[before:]]
    logged = _logged(lm_out)
    assert sorted(logged) == ["planets", *(f"planets_{t}" for t in TYPES)]

    # --- the wire: lm-eval's logged prompts, each variant's = the canonical's with the columns scrambled ---
    assert sorted(sent) == sorted(_prompt(row) for rows in logged.values() for row in rows)
    canonical = logged["planets"]
    for scramble_type in TYPES:
        rows = pd.read_parquet(out / "planets" / "data" / scramble_type / "test-00000-of-00001.parquet")
        variant = logged[f"planets_{scramble_type}"]
        assert [row["doc_id"] for row in variant] == [row["doc_id"] for row in canonical]
        for row, other, data in zip(canonical, variant, rows.to_dict("records")):
            demos, _, asked = _prompt(row).rpartition("Question: ")
            other_demos, _, other_asked = _prompt(other).rpartition("Question: ")
            assert other_demos == demos  # --demos original: the demonstrations are unchanged
            assert demos.count("Question: ") == 2
            expected = asked.replace(data["question_original"], data["question"], 1)
            for choice, scrambled in zip(data["choices_original"], data["choices"]):
                expected = expected.replace(f"- {choice}\n", f"- {scrambled}\n", 1)
                check_words(choice, scrambled, scramble_type)
            check_words(data["question_original"], data["question"], scramble_type)
            assert other_asked == expected
            assert other["target"] == row["target"]
            # each text at its own place: the question alone, the choices as one list that stays distinct
            key = str(other["doc_id"])
            wire = [line[2:] for line in other_asked.splitlines() if line.startswith("- ")]
            assert wire == scramble_items(
                list(data["choices_original"]), scramble_type, seed=0, sample_id=key, place="choices"
            )
            assert len(set(wire)) == len(set(data["choices_original"]))
            assert data["question"] == scramble(
                data["question_original"], scramble_type, seed=0, sample_id=key, place="question"
            )

    # --- score --from-lm-eval: lm-eval's own metric per variant, and the paired differences ------------
    capsys.readouterr()
    assert main(["score", "--from-lm-eval", str(lm_out), "--n-resamples", "200"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert "configs" not in document  # no task of the bench's own in this folder
    section = document["scrambled_tasks"]["planets"]
    [results_file] = lm_out.rglob("results_*.json")
    native = json.loads(results_file.read_text())["results"]
    key = "exact_match,strip"

    def per_doc(task: str) -> list[float]:
        return [row["exact_match"] for row in logged[task] if row["filter"] == "strip"]

    check_variant_scores(section, key, TYPES, native, per_doc)

    # --- report --from-lm-eval: the same numbers as tables, and the logged prompts side by side ----------
    check_derived_report(main, capsys, "--from-lm-eval", lm_out, section, tmp_path)
