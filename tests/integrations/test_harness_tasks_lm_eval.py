"""``scramble lm-eval:TASK`` end to end: a canonical lm-eval task of the test's own (built-in tasks fetch
their data from the Hub), its kfl, rs50 and sub variants run by ``lm_eval --include_path`` against the real
llama.cpp server behind the recording proxy, as docs/harnesses/lm-eval.md recommends (``local-chat-completions`` with
``--apply_chat_template``), the canonical task and the variants by two separate invocations into one
folder; then ``score --from lm-eval`` and ``report --from lm-eval`` (rendered in headless Chromium).

The task is a ``generate_until`` task over local parquet files, with a ``!function process_docs`` in a
``utils.py`` beside its YAML, a list-of-strings ``choices`` column and a few-shot split. Checked:

- the prompts on the wire are the ones lm-eval logged, and each variant's prompt is the canonical task's
  prompt with exactly the chosen columns' words scrambled, under the type's invariants;
- with ``--demos original`` the demonstrations are the canonical task's, unchanged;
- ``score --from lm-eval`` gives lm-eval's own per-task metric for every variant and the paired
  differences over the same documents, though two invocations logged them;
- a folder where the canonical task was last run as completions and its variants as chat is refused in
  one line naming both runs and what differs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from harness_support import check_variant_scores, check_words, offline_env, require
from lm_eval_canonical import write_canonical_task
from lm_eval_command import LM_EVAL
from variants_page import check_variants_report

from scrambled_bench.builder.scrambler import scramble, scramble_items
from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.integrations import get_harness

TYPES = ("kfl", "rs50", "sub")


def _logged(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Task -> its logged samples (doc_id order)."""
    logged = {}
    for path in folder.rglob("samples_*.jsonl"):
        task = re.match(r"samples_(.+)_\d{4}-\d{2}-\d{2}T", path.name)[1]
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        logged[task] = sorted(rows, key=lambda row: row["doc_id"])
    return logged


def _messages(row: dict[str, Any]) -> list[dict[str, str]]:
    """The messages lm-eval sent for a logged generate_until document of a chat run: lm-eval 0.4.13 logs
    them as a JSON string inside a one-element list (the demonstrations as turns before the question's)."""
    [arguments] = row["arguments"].values()
    [messages] = arguments["arg_0"]
    return json.loads(messages)


def _prompt(row: dict[str, Any]) -> str:
    """The question's user turn, the last message."""
    return _messages(row)[-1]["content"]


def _lm_eval(
    kind: str, served: str, base_url: str, tasks: str, include: Path, out: Path, env: dict, *extra: str
) -> None:
    """One ``lm_eval run`` of ``tasks`` with the model class ``kind`` (``local-chat-completions``...)."""
    model_args = f"model={served},base_url={base_url},num_concurrent=1,max_retries=1,tokenized_requests=False"
    if kind == "local-completions":
        model_args += ",tokenizer_backend=None"
    completed = subprocess.run(
        [*LM_EVAL, "run", "--model", kind, "--model_args", model_args, "--tasks", tasks,
         "--include_path", str(include), "--log_samples", "--output_path", str(out), *extra],
        cwd=out.parent, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-3000:]


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.timeout(1800)  # three lm_eval invocations (each indexes lm-eval's task files) on 2 busy cores
def test_scrambled_variants_run_by_lm_eval_and_scored_in_pairs(
    recording_proxy, chromium_browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]
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
    # the canonical task, then its variants: two invocations into one --output_path
    for tasks in ("planets", ",".join(f"planets_{t}" for t in TYPES)):
        _lm_eval(
            "local-chat-completions", served, f"{recording_proxy.base_url}/chat/completions", tasks,
            out / "lm_eval", lm_out, env, "--apply_chat_template",
        )  # fmt: skip
    sent = [r["body"]["messages"][-1]["content"] for r in recording_proxy.get_json("/_requests")[before:]]
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
            demos, asked = _messages(row)[:-1], _prompt(row)
            other_demos, other_asked = _messages(other)[:-1], _prompt(other)
            assert other_demos == demos  # --demos original: the demonstrations are unchanged
            assert [message["role"] for message in demos] == ["user", "assistant"] * 2
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

    # --- score --from lm-eval: lm-eval's own metric per variant, and the paired differences ------------
    capsys.readouterr()
    assert main(["score", "--from", "lm-eval", str(lm_out), "--n-resamples", "200"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert "configs" not in document  # no task of the bench's own in this folder
    section = document["scrambled_tasks"]["planets"]
    assert len(list(lm_out.rglob("results_*.json"))) == 2  # two invocations, paired across them
    native = {}
    for results_file in lm_out.rglob("results_*.json"):
        native.update(json.loads(results_file.read_text())["results"])
    assert section["run"]["model"] == served and section["run"]["settings"]["apply_chat_template"] is True
    key = "exact_match,strip"

    def per_doc(task: str) -> list[float]:
        return [row["exact_match"] for row in logged[task] if row["filter"] == "strip"]

    check_variant_scores(section, key, TYPES, native, per_doc)

    # --- report --from lm-eval: the same numbers as tables; the page in Chromium ------------------------
    harness = get_harness("lm-eval")
    check_variants_report(
        main,
        capsys,
        "lm-eval",
        lm_out,
        section,
        tmp_path,
        model=served,
        title=harness.title,
        label=harness.metric_label,
        browser=chromium_browser,
    )

    # --- the canonical task run again as completions: the folder mixes two runs' settings ---------------
    mixed = tmp_path / "mixed"
    shutil.copytree(lm_out, mixed)
    _lm_eval(
        "local-completions", served, f"{recording_proxy.base_url}/completions", "planets", out / "lm_eval", mixed,
        env, "--limit", "1",
    )  # fmt: skip
    capsys.readouterr()
    assert main(["score", "--from", "lm-eval", str(mixed)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    assert (
        "planets (run " in err
        and "planets_kfl (run " in err
        and "model_class local-completions vs local-chat-completions" in err
    )
