"""A ``scramble HARNESS:SPEC`` output grows as ``scramble`` of a dataset does (``integrations/outputs.py``),
for a harness whose variants write no data too: Inspect's task file then defines every type, and an output
of other settings is refused in one line unless ``--replace``. (lm-eval's growth is checked in
test_harness_tasks.py.)"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from scrambled_bench.evaluate_cli.main import main

if importlib.util.find_spec("inspect_ai") is None:
    pytest.skip("needs inspect_ai: pip install -e '.[harness]'", allow_module_level=True)

TASK = """
from pathlib import Path
from inspect_ai import Task, task
from inspect_ai.dataset import FieldSpec, json_dataset
from inspect_ai.scorer import choice
from inspect_ai.solver import multiple_choice

@task
def planets():
    return Task(
        dataset=json_dataset(str(Path(__file__).parent / "planets.jsonl"),
                             FieldSpec(input="question", choices="choices", target="answer", id="id")),
        solver=multiple_choice(),
        scorer=choice(),
    )
"""


def _scramble(spec: str, out: Path, columns: str, types: str, *extra: str) -> int:
    return main(
        ["scramble", f"inspect:{spec}", "--columns", columns, "--types", types, "--out", str(out), *extra]
    )


def test_an_inspect_output_grows_by_the_types_asked_and_refuses_other_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "planets.py").write_text(TASK)
    row = {"id": 1, "question": "Which planet is red?", "choices": ["Venus", "Mars"], "answer": "B"}
    (tmp_path / "planets.jsonl").write_text(json.dumps(row) + "\n")
    spec, out = f"{tmp_path / 'planets.py'}@planets", tmp_path / "out"
    task_file = out / "inspect" / "scrambled_tasks.py"

    assert _scramble(spec, out, "input", "kfl") == 0
    assert "kept" not in capsys.readouterr().out
    assert _scramble(spec, out, "input", "sub,kfl") == 0  # grows: sub added; kfl asked again, not kept
    assert "kept" not in capsys.readouterr().out
    assert _scramble(spec, out, "input", "sub") == 0  # grows: kfl kept, and the command says so
    assert f"into {out}; kept kfl from the previous output; run: inspect eval " in capsys.readouterr().out
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["types"] == ["kfl", "sub"] and manifest["stream_version"] >= 1
    text = task_file.read_text()
    assert "def planets_kfl() -> Task:" in text and "def planets_sub() -> Task:" in text

    capsys.readouterr()
    assert _scramble(spec, out, "input,choices", "rs50") == 2  # other columns: two scrambles would mix
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "columns ['input']" in err and "--replace" in err, err
    assert json.loads((out / "manifest.json").read_text())["types"] == ["kfl", "sub"]  # untouched

    assert _scramble(spec, out, "input,choices", "rs50", "--replace") == 0  # exactly what is asked
    assert json.loads((out / "manifest.json").read_text())["types"] == ["rs50"]
    assert "def planets_kfl() -> Task:" not in task_file.read_text()


def test_list_variants_names_the_tasks_the_inspect_task_file_defines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``scrambled-bench list variants DIR``: the names Inspect registers the variants under, as the task file
    ``scramble inspect:`` wrote defines them."""
    import re

    (tmp_path / "planets.py").write_text(TASK)
    row = {"id": 1, "question": "Which planet is red?", "choices": ["Venus", "Mars"], "answer": "B"}
    (tmp_path / "planets.jsonl").write_text(json.dumps(row) + "\n")
    out = tmp_path / "out"
    assert _scramble(f"{tmp_path / 'planets.py'}@planets", out, "input", "kfl,sub") == 0
    capsys.readouterr()
    assert main(["list", "variants", str(out)]) == 0
    listed = capsys.readouterr().out.split()
    defined = re.findall(
        r"^def (\w+)\(\) -> Task:", (out / "inspect" / "scrambled_tasks.py").read_text(), re.MULTILINE
    )
    assert listed == ["planets_kfl", "planets_sub"] and set(listed) < set(defined)


@pytest.mark.skipif(importlib.util.find_spec("lm_eval") is None, reason="needs lm_eval")
def test_list_variants_names_the_tasks_of_the_lm_eval_group(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], harness_offline: None
) -> None:
    """For lm-eval, the variants ``list variants`` names are the group's tasks after the canonical one."""
    import yaml
    from lm_eval_canonical import write_canonical_task

    include, out = write_canonical_task(tmp_path), tmp_path / "out"
    argv = ["scramble", "lm-eval:planets", "--include-path", str(include), "--columns", "question"]
    assert main([*argv, "--types", "kfl,sub", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["list", "variants", str(out)]) == 0
    group = yaml.safe_load((out / "lm_eval" / "planets" / "planets_scrambled.yaml").read_text())
    assert capsys.readouterr().out.split() == group["task"][1:] == ["planets_kfl", "planets_sub"]
