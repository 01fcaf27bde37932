"""``scramble lm-eval:TASK`` without a model: resolving through lm-eval's registry, the output's layout,
``--demos``, and the bad inputs (one line, exit 2, nothing written)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from harness_support import one_error_line
from lm_eval_canonical import write_canonical_task

from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.integrations.lm_eval.tasks_source import resolve_lm_eval

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("lm_eval") is None, reason="needs lm_eval"),
    pytest.mark.usefixtures("harness_offline"),
]


def _scramble(include: Path, out: Path, *options: str, task: str = "planets") -> int:
    return main(["scramble", f"lm-eval:{task}", "--include-path", str(include), *options, "--out", str(out)])


@pytest.mark.parametrize(
    ("task", "dataset_path"), [("arc_easy", "allenai/ai2_arc"), ("gsm8k", "openai/gsm8k")]
)
def test_the_readme_s_built_in_tasks_resolve_through_lm_eval(task, dataset_path):
    [resolved] = resolve_lm_eval(task)
    assert resolved.dataset_path == dataset_path and resolved.yaml_path.is_file()
    assert resolved.eval_split in resolved.splits


def test_a_group_becomes_its_subtasks():
    names = [task.name for task in resolve_lm_eval("ai2_arc")]
    assert sorted(names) == ["arc_challenge", "arc_easy"]


def test_the_output_holds_the_data_the_task_files_and_a_manifest(tmp_path: Path):
    include = write_canonical_task(tmp_path)
    out = tmp_path / "out"
    assert _scramble(include, out, "--columns", "question,choices", "--types", "kfl,sub") == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert (
        manifest["kind"] == "scramble"
        and manifest["tasks"] == ["planets"]
        and manifest["demos"] == "original"
    )
    data = json.loads((out / "planets" / "manifest.json").read_text())
    assert data["harness"]["eval_split"] == "test" and data["kept_splits"] == ["train"]
    train = pd.read_parquet(out / "planets" / "data" / "kfl" / "train-00000-of-00001.parquet")
    assert not train["scrambled"].any() and (train["question"] == train["question_original"]).all()
    test = pd.read_parquet(out / "planets" / "data" / "kfl" / "test-00000-of-00001.parquet")
    assert test["scrambled"].all() and (test["question"] != test["question_original"]).all()
    import yaml

    variant = yaml.safe_load((out / "lm_eval" / "planets" / "planets_kfl.yaml").read_text())
    assert variant["include"] == str((include / "planets" / "planets.yaml").resolve())
    assert variant["metadata"]["version"] == 3.0 and variant["metadata"]["canonical_task"] == "planets"
    assert variant["dataset_path"] == str(out / "planets") and variant["dataset_name"] == "kfl"
    group = yaml.safe_load((out / "lm_eval" / "planets" / "planets_scrambled.yaml").read_text())
    assert group["task"] == ["planets", "planets_kfl", "planets_sub"]
    # a second run with other types grows the output, as `build` does; the task files name every type
    kfl_file = out / "planets" / "data" / "kfl" / "test-00000-of-00001.parquet"
    kfl_bytes = kfl_file.read_bytes()
    assert _scramble(include, out, "--columns", "question,choices", "--types", "rs50") == 0
    assert sorted(p.name for p in (out / "planets" / "data").iterdir()) == ["kfl", "rs50", "sub"]
    assert kfl_file.read_bytes() == kfl_bytes
    assert json.loads((out / "manifest.json").read_text())["types"] == ["kfl", "sub", "rs50"]
    group = yaml.safe_load((out / "lm_eval" / "planets" / "planets_scrambled.yaml").read_text())
    assert group["task"] == ["planets", "planets_kfl", "planets_sub", "planets_rs50"]
    # other settings are refused without --replace, and replace it with it
    options = ("--columns", "question", "--types", "rs50", "--demos", "scrambled")
    assert _scramble(include, out, *options) == 2
    assert _scramble(include, out, *options, "--replace") == 0
    train = pd.read_parquet(out / "planets" / "data" / "rs50" / "train-00000-of-00001.parquet")
    assert train["scrambled"].all()
    assert not (out / "planets" / "data" / "kfl").exists()


def test_a_template_that_reads_a_missing_column_is_one_line_and_writes_nothing(tmp_path, capsys):
    include = write_canonical_task(tmp_path)
    yaml_path = include / "planets" / "planets.yaml"
    yaml_path.write_text(yaml_path.read_text().replace("Question: {{question}}", "Question: {{qestion}}"))
    out = tmp_path / "out"
    assert _scramble(include, out, "--columns", "question", "--types", "kfl") == 2
    assert one_error_line(capsys) == (
        "error: task planets: doc_to_text reads column 'qestion', which its documents do not have "
        "(columns: answer, choices, options, question)"
    )
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


@pytest.mark.parametrize(
    ("task", "columns", "message"),
    [
        ("planet", "question", "lm-eval has no task or group 'planet' (closest: planets)"),
        ("planets", "questio", "has no column 'questio' (columns: question, choices, answer)"),
        ("planets", "question,answer", "column 'answer' holds the target of task planets"),
        ("planets", "choices.text", "split 'test' has no column 'choices.text' (text columns: question, choices, answer)"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, task, columns, message):
    include = write_canonical_task(tmp_path)
    out = tmp_path / "out"
    assert _scramble(include, out, "--columns", columns, "--types", "kfl", task=task) == 2
    assert message in one_error_line(capsys)
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


def test_a_function_target_that_reads_a_chosen_column_is_refused(tmp_path, capsys):
    include = write_canonical_task(tmp_path)
    yaml_path = include / "planets" / "planets.yaml"
    yaml_path.write_text(
        yaml_path.read_text().replace('doc_to_target: " {{answer}}"', "doc_to_target: !function utils.target")
    )
    (include / "planets" / "utils.py").write_text(
        (include / "planets" / "utils.py").read_text()
        + "\n\ndef target(doc):\n    return doc['question'].split()[0]\n"
    )
    assert _scramble(include, tmp_path / "out", "--columns", "question", "--types", "rs50") == 2
    assert re.search(r"task planets's target of document \d+ changes under rs50", one_error_line(capsys))


def test_a_dataset_that_cannot_be_loaded_offline(tmp_path, capsys, hub_offline):
    include = write_canonical_task(tmp_path)
    yaml_path = include / "planets" / "planets.yaml"
    yaml_path.write_text(
        yaml_path.read_text().replace("dataset_path: parquet", "dataset_path: nobody/no-such-dataset")
    )
    assert _scramble(include, tmp_path / "out", "--columns", "question", "--types", "kfl") == 2
    assert "task planets: cannot load dataset 'nobody/no-such-dataset'" in one_error_line(capsys)


def test_an_output_folder_that_is_not_a_scramble_output_is_refused(tmp_path, capsys):
    include = write_canonical_task(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert _scramble(include, out, "--columns", "question", "--types", "kfl") == 2
    assert "is not a previous `scramble` output" in one_error_line(capsys)
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_score_from_lm_eval_without_logged_samples(tmp_path, capsys):
    folder = tmp_path / "lm_out" / "model"
    folder.mkdir(parents=True)
    results = {
        "results": {},
        "configs": {"planets_kfl": {"metadata": {"canonical_task": "planets", "scramble_type": "kfl"}}},
    }
    (folder / "results_2026-01-01T00-00-00.1.json").write_text(json.dumps(results))
    assert main(["score", "--from", "lm-eval", str(tmp_path / "lm_out")]) == 2
    assert "no logged samples of lm-evaluation-harness; run lm_eval with --log_samples" in one_error_line(
        capsys
    )


def test_lm_evals_own_task_index_is_kept_in_the_cache_and_rebuilt_when_unreadable(tmp_path, monkeypatch):
    """The index of lm-eval's task folder is built once per lm-eval install and kept under the user's cache
    (a file named by lm-eval's version and its files' sizes and times); a damaged file is built again. The
    build is lm-eval's own, counted here, on a one-task folder; what it returns comes back equal."""
    from lm_eval.tasks._index import TaskIndex

    from scrambled_bench.integrations.lm_eval import tasks_source

    real_build, builds = TaskIndex.build, []
    # one YAML: lm-eval's build in milliseconds
    small = Path(__file__).parents[1] / "fixtures" / "letter_quiz"

    def counted_build(paths, **kwargs):
        builds.append(list(paths))
        return real_build([small], **kwargs)

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(TaskIndex, "build", staticmethod(counted_build))

    def fresh_index():
        tasks_source._builtin_task_index.cache_clear()  # a new process, as far as the index knows
        return dict(tasks_source._builtin_task_index())

    try:
        first = fresh_index()
        [stored] = (tmp_path / "cache" / "scrambled_bench" / "lm-eval-task-index").glob("lm_eval-*.pickle")
        assert first and len(builds) == 1
        assert fresh_index() == first and len(builds) == 1  # read back, not built again
        stored.write_bytes(b"not a pickle")
        assert fresh_index() == first and len(builds) == 2  # damaged: built again, and stored whole
        assert fresh_index() == first and len(builds) == 2
        # a damaged length field: pickle raises OverflowError, not UnpicklingError; built again all the same
        stored.write_bytes(b"\x80\x05N\x8e" + b"\xff" * 7 + b"\x7f.")
        assert fresh_index() == first and len(builds) == 3
        assert fresh_index() == first and len(builds) == 3
    finally:
        tasks_source._builtin_task_index.cache_clear()
