"""``scramble lighteval:SPEC`` end to end: a canonical lighteval custom task of the test's own (built-in tasks
fetch their data from the Hub), its kfl, rs50 and sub variants run by lighteval (its litellm endpoint path,
through ``lighteval_cli``) against the real llama.cpp server behind the recording proxy, then
``score --from lighteval``.

The task is a generative task over a local parquet dataset with a list-of-strings ``choices`` column and a
few-shot split (two demonstrations per prompt). Checked:

- the prompts on the wire are the ones lighteval logged, and each variant's prompt is the canonical task's
  with exactly the chosen columns' words scrambled, under the type's invariants;
- with ``--demos original`` the demonstrations (the messages before the last) are the canonical task's;
- ``score --from lighteval`` gives lighteval's own per-task metric for every variant and the paired
  differences over the same documents.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from harness_support import check_variant_scores, check_words, offline_env, require
from lighteval_canonical import write_canonical_task
from variants_page import check_variants_report

from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.integrations import get_harness

TYPES = ("kfl", "rs50", "sub")
SHOTS = 2


def _details(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Task (``name|shots``) -> its detail rows, in document order."""
    import pyarrow.parquet as pq

    found = {}
    for path in folder.rglob("details_*.parquet"):
        task = path.name[len("details_") :].rsplit("_", 1)[0]
        rows = pq.read_table(path).to_pylist()
        found[task] = sorted(rows, key=lambda row: int(row["doc"]["id"]))
    return found


@pytest.mark.server
@pytest.mark.slow
def test_scrambled_variants_run_by_lighteval_and_scored_in_pairs(
    recording_proxy, chromium_browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require("lighteval")
    require("litellm")
    env = offline_env(tmp_path)
    custom = write_canonical_task(tmp_path)
    out = tmp_path / "scrambled"
    os.environ.update({key: env[key] for key in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")})
    code = main(
        ["scramble", f"lighteval:custom|planets|{SHOTS}", "--custom-tasks", str(custom), "--columns",
         "question,choices", "--types", ",".join(TYPES), "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    assert [p.name for p in (out / "lighteval").iterdir()] == ["scrambled_tasks.py"]

    served = recording_proxy.get_json("/v1/models")["data"][0]["id"]
    before = len(recording_proxy.get_json("/_requests"))
    light_out = tmp_path / "lighteval_out"
    model_args = (
        f"model_name=openai/{served},base_url={recording_proxy.base_url},api_key=sk-no-key-required,"
        # one request at a time: lighteval's litellm path races on litellm's lazy imports above that
        f"max_model_length=2048,concurrent_requests=1,cache_dir={tmp_path / 'lighteval_cache'},"
        "generation_parameters={temperature:0.0}"
    )
    names = ["planets", *(f"planets_{t}" for t in TYPES)]
    # the canonical task, then its variants: two lighteval commands into one --output-dir
    for run in (names[:1], names[1:]):
        completed = subprocess.run(
            [sys.executable, "-m", "scrambled_bench.integrations.lighteval.cli", "endpoint", "litellm",
             model_args, ",".join(f"{name}|{SHOTS}" for name in run), "--custom-tasks",
             str(out / "lighteval" / "scrambled_tasks.py"), "--save-details", "--output-dir", str(light_out)],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert completed.returncode == 0, completed.stderr[-3000:]
    sent = [r["body"]["messages"] for r in recording_proxy.get_json("/_requests")[before:]]
    details = _details(light_out)
    assert sorted(details) == sorted(f"{name}|{SHOTS}" for name in names)

    # --- the wire: lighteval's logged queries, each variant's = the canonical's with the columns scrambled ---
    assert {messages[-1]["content"] for messages in sent} == {
        row["doc"]["query"] for rows in details.values() for row in rows
    }
    demos_of = {messages[-1]["content"]: messages[:-1] for messages in sent}
    canonical = details[f"planets|{SHOTS}"]
    for scramble_type in TYPES:
        rows = pd.read_parquet(out / "planets" / "data" / scramble_type / "test-00000-of-00001.parquet")
        variant = details[f"planets_{scramble_type}|{SHOTS}"]
        assert [row["doc"]["id"] for row in variant] == [row["doc"]["id"] for row in canonical]
        for row, other in zip(canonical, variant):
            data = rows.iloc[int(row["doc"]["id"])]
            query, other_query = row["doc"]["query"], other["doc"]["query"]
            demos = demos_of[query]
            assert demos_of[other_query] == demos  # --demos original: the demonstrations are unchanged
            assert len(demos) == 2 * SHOTS and demos[0]["content"].startswith("Question: ")
            expected = query.replace(data["question_original"], data["question"], 1)
            for choice, scrambled in zip(data["choices_original"], data["choices"]):
                expected = expected.replace(f"- {choice}\n", f"- {scrambled}\n", 1)
                check_words(choice, scrambled, scramble_type)
            check_words(data["question_original"], data["question"], scramble_type)
            assert other_query == expected
            gold = row["doc"]["choices"][row["doc"]["gold_index"]]
            assert other["doc"]["choices"][other["doc"]["gold_index"]] == gold

    # --- score --from lighteval: lighteval's own metric per variant, and the paired differences ----------
    capsys.readouterr()
    assert main(["score", "--from", "lighteval", str(light_out), "--n-resamples", "200"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert "configs" not in document  # no task of the bench's own in this folder
    section = document["scrambled_tasks"][f"planets|{SHOTS}"]
    native = {}
    for results_file in light_out.rglob("results_*.json"):  # two commands, paired across them
        native.update(json.loads(results_file.read_text())["results"])
    assert served in section["run"]["model"]

    def per_doc(task: str) -> list[float]:
        return [row["metric"]["em"] for row in details[f"{task}|{SHOTS}"]]

    assert len(per_doc("planets")) == 4
    assert [section["types"][t]["task"] for t in TYPES] == [f"planets_{t}|{SHOTS}" for t in TYPES]
    check_variant_scores(section, "em", TYPES, native, per_doc, name=lambda task: f"{task}|{SHOTS}")

    # --- report --from lighteval: the same numbers as tables; the page in Chromium ------------------------
    harness = get_harness("lighteval")
    check_variants_report(
        main, capsys, "lighteval", light_out, section, tmp_path, model=section["run"]["model"], title=harness.title,
        label=harness.metric_label,
        browser=chromium_browser,
    )  # fmt: skip
