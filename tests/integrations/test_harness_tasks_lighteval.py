"""``scramble lighteval:SPEC`` without a model: resolving through lighteval's registry (a documented built-in and
the test's own custom task), the output's layout, the derived ``TASKS_TABLE``, and the bad inputs (one line,
exit 2, nothing written)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from harness_support import one_error_line
from lighteval_canonical import write_canonical_task

from scrambled_bench.evaluate_cli.main import main

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("lighteval") is None, reason="needs lighteval"),
    pytest.mark.usefixtures("harness_offline"),
]


def _scramble(custom: Path, out: Path, *options: str, spec: str = "custom|planets|2") -> int:
    return main(["scramble", f"lighteval:{spec}", "--custom-tasks", str(custom), *options, "--out", str(out)])


@pytest.mark.parametrize(
    ("spec", "name", "hf_repo", "hf_subset", "module"),
    [
        ("lighteval|gsm8k|0", "gsm8k", "openai/gsm8k", "main", "lighteval.tasks.tasks.gsm8k"),
        ("lighteval|arc:easy|0", "arc:easy", "allenai/ai2_arc", "ARC-Easy", "lighteval.tasks.tasks.arc"),
    ],
)
def test_the_readme_s_built_in_tasks_resolve_through_lighteval(spec, name, hf_repo, hf_subset, module):
    from scrambled_bench.integrations.lighteval.tasks_source import resolve_lighteval

    [task] = resolve_lighteval(spec)
    assert (task.name, task.dataset_path, task.dataset_name) == (name, hf_repo, hf_subset)
    assert task.builtin and task.module == module
    assert task.eval_splits == ["test"] and task.demo_split == "train"  # lighteval's own pick


def test_the_output_holds_the_data_the_custom_tasks_module_and_a_manifest(tmp_path: Path):
    from lighteval.tasks.registry import Registry

    from scrambled_bench.integrations.lighteval.variants import derived_tasks_table

    custom = write_canonical_task(tmp_path)
    out = tmp_path / "out"
    assert _scramble(custom, out, "--columns", "question,choices", "--types", "kfl,sub") == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["harness"] == "lighteval" and manifest["tasks"] == ["planets"]
    assert manifest["outputs"] == {"lighteval/scrambled_tasks.py": {}}
    data = json.loads((out / "planets" / "manifest.json").read_text())
    assert data["harness"]["eval_splits"] == ["test"] and data["kept_splits"] == ["train"]
    train = pd.read_parquet(out / "planets" / "data" / "kfl" / "train-00000-of-00001.parquet")
    assert not train["scrambled"].any() and (train["question"] == train["question_original"]).all()

    # the module lighteval takes as --custom-tasks: the canonical task (the user's own) and its variants
    module = Registry.create_custom_tasks_module(str(out / "lighteval" / "scrambled_tasks.py"))
    table = {config.name: config for config in module.TASKS_TABLE}
    assert list(table) == ["planets", "planets_kfl", "planets_sub"]
    # the same configs as the library builds (the user's module is loaded anew each time: compare the data)
    data = {c.name: (c.hf_repo, c.hf_subset, c.hf_revision) for c in derived_tasks_table(out)}
    assert data == {c.name: (c.hf_repo, c.hf_subset, c.hf_revision) for c in table.values()}
    canonical = table["planets"]
    for scramble_type in ("kfl", "sub"):
        variant = table[f"planets_{scramble_type}"]
        assert (variant.hf_repo, variant.hf_subset, variant.hf_revision) == (
            str(out / "planets"),
            scramble_type,
            None,
        )
        changed = {
            f.name
            for f in dataclasses.fields(variant)
            if getattr(variant, f.name) != getattr(canonical, f.name)
        }
        assert changed == {"name", "hf_repo", "hf_subset"}  # and nothing else (hf_revision: None in both)
        assert variant.prompt_function is canonical.prompt_function


def test_the_module_finds_its_folder_where_it_was_moved(tmp_path: Path):
    from lighteval.tasks.registry import Registry

    custom = write_canonical_task(tmp_path)
    options = ("--columns", "question", "--types", "rs50", "--demos", "scrambled")
    assert _scramble(custom, tmp_path / "out", *options) == 0
    train = pd.read_parquet(tmp_path / "out" / "planets" / "data" / "rs50" / "train-00000-of-00001.parquet")
    assert train["scrambled"].all()  # --demos scrambled: the demonstrations too
    (tmp_path / "out").rename(tmp_path / "moved")
    module = Registry.create_custom_tasks_module(str(tmp_path / "moved" / "lighteval" / "scrambled_tasks.py"))
    assert module.TASKS_TABLE[-1].hf_repo == str(tmp_path / "moved" / "planets")


@pytest.mark.parametrize(
    ("spec", "columns", "message"),
    [
        ("custom|planet|2", "question", re.escape("lighteval has no task 'planet' (closest: planets)")),
        (
            "custom|planets|2",
            "questio",
            re.escape("has no column 'questio' (columns: question, choices, answer)"),
        ),
        ("custom|planets|2", "question,answer", r"task planets's target of document \d+ changes under sub"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, spec, columns, message):
    custom = write_canonical_task(tmp_path)
    out = tmp_path / "out"
    assert _scramble(custom, out, "--columns", columns, "--types", "sub", spec=spec) == 2
    assert re.search(message, one_error_line(capsys))
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


def test_a_dataset_that_cannot_be_loaded_offline(tmp_path, capsys, hub_offline):
    custom = write_canonical_task(tmp_path)
    custom.write_text(re.sub(r"hf_repo=.*,", "hf_repo='nobody/no-such-dataset',", custom.read_text()))
    assert _scramble(custom, tmp_path / "out", "--columns", "question", "--types", "kfl") == 2
    assert "task planets: cannot load dataset 'nobody/no-such-dataset'" in one_error_line(capsys)
    assert not (tmp_path / "out").exists()


def test_lighteval_not_installed(tmp_path, capsys, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "lighteval" else real(name, *a)
    )
    assert _scramble(tmp_path / "tasks.py", tmp_path / "out", "--columns", "question", "--types", "kfl") == 2
    assert "lighteval is not installed: pip install 'scrambled-bench[harness]'" in one_error_line(capsys)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["--include-path", "."],
            "--include-path does not apply to lighteval tasks; it takes --custom-tasks",
        ),
        (["--split", "test"], "--split does not apply to a harness task"),
    ],
)
def test_options_of_the_other_harness_or_of_a_dataset_are_refused(tmp_path, capsys, options, message):
    custom = write_canonical_task(tmp_path)
    assert _scramble(custom, tmp_path / "out", "--columns", "question", "--types", "kfl", *options) == 2
    assert message in one_error_line(capsys)


def test_score_from_lighteval_without_details(tmp_path, capsys):
    folder = tmp_path / "light_out" / "results" / "openai" / "m"
    folder.mkdir(parents=True)
    config_tasks = {
        "planets|2": {"name": "planets", "hf_subset": "default"},
        "planets_kfl|2": {"name": "planets_kfl", "hf_subset": "kfl"},
    }
    results = {
        "results": {"planets|2": {"em": 0.5}, "planets_kfl|2": {"em": 0.25}},
        "config_tasks": config_tasks,
    }
    (folder / "results_2026-01-01T00-00-00.000001.json").write_text(json.dumps(results))
    assert main(["score", "--from", "lighteval", str(tmp_path / "light_out")]) == 2
    assert "no details of lighteval; run lighteval with --save-details" in one_error_line(capsys)


ARC_LIKE = """
from lighteval.metrics.metrics import Metrics
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc


def arc_prompt(line, task_name=None):  # lighteval's own ARC prompt
    return Doc(
        task_name=task_name,
        query=f"Question: {line['question']}\\nAnswer:",
        choices=[f" {c}" for c in line["choices"]["text"]],
        gold_index=line["choices"]["label"].index(line["answerKey"]),
    )


TASKS_TABLE = [LightevalTaskConfig(name="arcish", prompt_function=arc_prompt, hf_repo=%r, hf_subset="default",
    hf_avail_splits=["train", "test"], evaluation_splits=["test"], metrics=[Metrics.loglikelihood_acc])]
"""


def test_a_nested_column_holding_the_gold_choice_is_refused_and_the_question_is_not(tmp_path, capsys):
    """ARC's shape (``choices: {text, label}``, gold ``choices.text[label.index(answerKey)]``): scrambling
    ``choices.text`` changes the gold, ``question`` does not."""
    data = tmp_path / "data"
    data.mkdir()
    frame = pd.DataFrame(
        {
            "question": ["Which planet is closest to the sun?", "What do plants need most?"],
            "choices": [{"text": ["Mercury", "Neptune"], "label": ["A", "B"]},
                        {"text": ["Sand", "Water"], "label": ["A", "B"]}],
            "answerKey": ["A", "B"],
        }
    )  # fmt: skip
    frame.to_parquet(data / "test.parquet")
    frame.to_parquet(data / "train.parquet")
    custom = tmp_path / "arcish.py"
    custom.write_text(ARC_LIKE % str(data))
    options = ("--types", "sub")
    assert _scramble(custom, tmp_path / "bad", "--columns", "choices.text", *options, spec="arcish|0") == 2
    assert re.search(r"task arcish's target of document 0 changes under sub", one_error_line(capsys))
    assert not (tmp_path / "bad").exists()
    assert _scramble(custom, tmp_path / "out", "--columns", "question", *options, spec="arcish|0") == 0
    [task] = json.loads((tmp_path / "out" / "manifest.json").read_text())["lighteval"]
    assert task["folder"] == "arcish" and task["num_fewshots"] == 0
