"""Scrambled variants of any Inspect task, resolved by Inspect's own loader: ``scrambled_bench/scrambled``
and the task file ``scramble inspect:TASK`` writes.

Without a server: what a variant is (names, metadata, samples) and the bad-input errors. Against the real
llama.cpp server behind the recording proxy: a multiple-choice task the test defines (a local JSON Lines
dataset, Inspect's ``multiple_choice()`` solver and ``choice()`` scorer), ``scramble inspect:FILE@planets``,
the canonical task and its variants run by separate ``inspect eval`` invocations of the task file into one
log folder, checked on the wire, ``score --from inspect`` against Inspect's own accuracy with the paired
differences, and ``report --from inspect`` rendered in headless Chromium.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrambled_bench.builder.scrambler import TextPlace, scramble, scramble_items

if importlib.util.find_spec("inspect_ai") is None:
    pytest.skip("needs inspect_ai: pip install -e '.[harness]'", allow_module_level=True)

from inspect_ai._util.error import PrerequisiteError
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, ContentText

from scrambled_bench.integrations.inspect import bench as inspect_tasks  # registers scrambled_bench/*
from scrambled_bench.integrations.inspect.scrambled import scrambled, scrambled_sample

TINY_BUILD = Path(__file__).parents[1] / "fixtures" / "tiny_build"
INSPECT = Path(sys.executable).parent / "inspect"

#: the test's own multiple-choice task: a local dataset, multiple_choice() and choice()
MC_TASK = """
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
QUESTIONS = [
    ("q1", "Which planet is known as the red planet?", ["Venus", "Mars", "Jupiter", "Saturn"], "B"),
    ("q2", "What do bees produce from flower nectar?", ["Honey", "Silk", "Paper", "Cotton"], "A"),
    ("q3", "Which animal is the largest living mammal?", ["Elephant", "Giraffe", "Blue whale", "Hippo"], "C"),
    ("q4", "What is frozen water called?", ["Steam", "Sand", "Glass", "Ice"], "D"),
    ("q5", "Which season follows winter?", ["Autumn", "Spring", "Summer", "Monsoon"], "B"),
    ("q6", "How many legs does a spider have?", ["Eight", "Six", "Four", "Ten"], "A"),
    # the row: one stream per row made these four ['ma', 'ma', 'ma', 'ma'] under sub
    ("q7", "Which symbol is gold?", ["Au", "Ag", "Gd", "Go"], "A"),
]


def _write_task(folder: Path) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "planets.py").write_text(MC_TASK)
    rows = [{"id": i, "question": q, "choices": c, "answer": a} for i, q, c, a in QUESTIONS]
    (folder / "planets.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return f"{folder / 'planets.py'}@planets"


# ------------------------------------------------------------------------------------------- no server


def test_a_variant_is_the_canonical_task_renamed_with_its_samples_scrambled(tmp_path: Path):
    spec = _write_task(tmp_path)
    variant = scrambled(task=spec, type="kfl", fields="input,choices", seed=3)
    assert variant.name == "planets_kfl"
    assert variant.metadata == {
        "canonical_task": "planets", "scramble_type": "kfl", "seed": 3, "fields": ["input", "choices"],
        "scrambled_bench_version": variant.metadata["scrambled_bench_version"],
    }  # fmt: skip
    for sample, (identifier, question, choices, answer) in zip(variant.dataset, QUESTIONS, strict=True):
        assert sample.id == identifier and sample.target == answer
        # each field at its own place, the choices as one list (kept distinct), as `scramble` scrambles a row
        assert sample.input == scramble(question, "kfl", seed=3, sample_id=identifier, place="input")
        assert sample.choices == scramble_items(choices, "kfl", seed=3, sample_id=identifier, place="choices")
    # the canonical task's solver and scorer stay: Inspect's multiple_choice and choice
    from inspect_ai._util.registry import registry_info

    assert [registry_info(scorer).name for scorer in variant.scorer] == ["inspect_ai/choice"]


def test_a_bench_task_wraps_by_its_registry_name_and_a_variant_is_not_counted_as_the_bench():
    variant = scrambled(
        task="scrambled_bench/scrqa_dream_original", type="rs50", task_args={"data": str(TINY_BUILD)}
    )
    assert variant.name == "scrambled_bench/scrqa_dream_original_rs50"
    assert variant.metadata["canonical_task"] == "scrambled_bench/scrqa_dream_original"
    from scrambled_bench.integrations.inspect.logs import is_variant

    assert is_variant(variant.metadata)


message_text = st.text(alphabet="abcdefghij KLMNO.,", min_size=0, max_size=40)


@settings(max_examples=60, deadline=None)
@given(
    question=message_text,
    system=message_text,
    answer=message_text,
    choices=st.lists(message_text, min_size=1, max_size=4),
    fields=st.sampled_from([("input",), ("choices",), ("input", "choices")]),
    scramble_type=st.sampled_from(["kfl", "rs50", "sub", "adj30"]),
    chat=st.booleans(),
)
def test_only_the_chosen_fields_and_only_user_turns_change(
    question, system, answer, choices, fields, scramble_type, chat
):
    turns = [ChatMessageSystem(content=system), ChatMessageUser(content=[ContentText(text=question)]),
             ChatMessageAssistant(content=answer), ChatMessageUser(content=question)]  # fmt: skip
    sample = Sample(
        id=7, input=turns if chat else question, choices=choices, target=["A", "B"], metadata={"m": 1}
    )
    out = scrambled_sample(sample, "7", scramble_type, fields)
    again = scrambled_sample(sample, "7", scramble_type, fields)
    assert out == again  # deterministic
    assert (out.id, out.target, out.metadata) == (7, ["A", "B"], {"m": 1})

    def expected_question(place: TextPlace) -> str:
        return (
            scramble(question, scramble_type, seed=0, sample_id="7", place=place)
            if "input" in fields
            else question
        )

    if chat:  # each user turn (and each of its text parts) at its own place: message index, part index
        assert [message.role for message in out.input] == ["system", "user", "assistant", "user"]
        assert out.input[0].content == system and out.input[2].content == answer
        assert out.input[1].text == expected_question(TextPlace("input", (1, 0)))
        assert out.input[3].text == expected_question(TextPlace("input", (3,)))
    else:
        assert out.input == expected_question(TextPlace("input"))
    expected_choices = (
        scramble_items(choices, scramble_type, seed=0, sample_id="7", place="choices")
        if "choices" in fields
        else choices
    )
    assert out.choices == expected_choices
    assert sample.input == (turns if chat else question)  # the canonical sample is not changed


@pytest.mark.slow  # runs Inspect
def test_a_folder_with_the_bench_and_a_variant_of_a_bench_task_gives_both_sections(tmp_path: Path, capsys):
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, get_model

    from scrambled_bench.evaluate_cli.main import main

    canonical = inspect_tasks.TASKS["scrqa_dream_original"](data=str(TINY_BUILD))
    variant = scrambled(
        task="scrambled_bench/scrqa_dream_original", type="kfl", task_args={"data": str(TINY_BUILD)}
    )
    answers = {
        sample.input: f"{sample.target}." for sample in canonical.dataset
    }  # every canonical answer right
    for index, sample in enumerate(variant.dataset):  # only the first variant answer right
        answers[sample.input] = f"{sample.target if index == 0 else ('B' if sample.target == 'A' else 'A')}."

    def answer(messages, tools, tool_choice, config):
        return ModelOutput.from_content(model="mockllm", content=answers[messages[-1].text])

    model = get_model("mockllm/model", custom_outputs=answer)
    # the eval creates the tasks (as `inspect eval` does), so each records the endpoint it runs against
    inspect_eval(
        inspect_tasks.TASKS["scrqa_dream_original"], task_args={"data": str(TINY_BUILD)}, model=model,
        log_dir=str(tmp_path / "logs"), display="none",
    )  # fmt: skip
    inspect_eval(
        scrambled, task_args={"task": "scrambled_bench/scrqa_dream_original", "type": "kfl",
                              "task_args": {"data": str(TINY_BUILD)}},
        model=model, log_dir=str(tmp_path / "logs"), display="none",
    )  # fmt: skip
    capsys.readouterr()
    assert main(["score", "--from", "inspect", str(tmp_path / "logs")]) == 0
    document = json.loads(capsys.readouterr().out)
    assert list(document["configs"]) == ["scrqa/dream/original"]
    assert document["configs"]["scrqa/dream/original"]["accuracy"]["value"] == 1.0
    entry = document["scrambled_tasks"]["scrambled_bench/scrqa_dream_original"]
    summary = entry["types"]["kfl"]["metrics"]["bench_score"]
    n = len(list(variant.dataset))
    assert summary["value"] == pytest.approx(1 / n) == summary["variant"]
    assert summary["difference"] == pytest.approx(1 / n - 1.0) and summary["n_paired"] == n


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"task": "scrambled_bench/scrqa_dream_kfll", "type": "kfl"},
         "task=scrambled_bench/scrqa_dream_kfll: no such Inspect task (a registry name such as "
         + "inspect_evals/arc_easy, or file.py@task); closest: scrambled_bench/scrqa_dream_kfl"),
        ({"task": "scrambled_bench/scrqa_dream_kfl", "type": "kfx"}, "unknown scramble type 'kfx' (known: original"),
        ({"task": "scrambled_bench/scrqa_dream_kfl", "type": "kfl", "fields": "input,target"},
         "fields=input,target: the samples have no field 'target' to scramble; choose from input, choices"),
        ({"task": "scrambled_bench/scrqa_dream_kfl", "type": "kfl", "fields": "choices",
          "task_args": {"data": str(TINY_BUILD)}},
         "fields=choices: no sample has choices (a multiple-choice task's samples do)"),
    ],
)  # fmt: skip
def test_bad_input_is_a_one_line_prerequisite_error(arguments: dict[str, Any], message: str):
    with pytest.raises(PrerequisiteError) as raised:
        scrambled(**arguments)
    text = str(raised.value.message)
    assert text.startswith("error: scrambled_bench/scrambled: ") and message in text and "\n" not in text


@pytest.mark.slow
def test_inspect_eval_prints_the_one_line_error(tmp_path: Path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "250"}
    completed = subprocess.run(
        [str(INSPECT), "eval", "scrambled_bench/scrambled", "-T", "task=scrambled_bench/scrqa_dream_kfl",
         "-T", "type=kfx", "--model", "mockllm/model"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    lines = [line for line in (completed.stdout + completed.stderr).splitlines() if line.strip()]
    assert completed.returncode != 0 and len(lines) == 1, lines
    assert lines[0].startswith("error: scrambled_bench/scrambled: unknown scramble type 'kfx'")


# ------------------------------------------------------------------------- against the llama.cpp server

TYPES = ("rs50", "kfl", "sub")
FIELDS = "input,choices"


def _inspect_eval(arguments: list[str], *, cwd: Path, env: dict[str, str], log: Path) -> None:
    completed = subprocess.run(
        [str(INSPECT), "eval", *arguments],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    log.write_text(completed.stdout + "\n--- stderr ---\n" + completed.stderr)
    assert completed.returncode == 0, f"inspect eval failed; log in {log}:\n{completed.stderr[-3000:]}"


def _prompts(requests: list[dict[str, Any]]) -> list[str]:
    assert all(len(request["body"]["messages"]) == 1 for request in requests)
    return [request["body"]["messages"][0]["content"] for request in requests]


def _expected_prompt(
    canonical: str, identifier: str, question: str, choices: list[str], type_: str, fields: str
) -> str:
    """The canonical prompt with exactly the chosen fields' text scrambled (multiple_choice's template puts
    the question on its own line and each choice as 'X) text')."""
    prompt = canonical
    if "input" in fields:
        scrambled = scramble(question, type_, seed=0, sample_id=identifier, place="input")
        prompt = prompt.replace(f"\n{question}\n", f"\n{scrambled}\n")
    if "choices" in fields:
        scrambled_choices = scramble_items(choices, type_, seed=0, sample_id=identifier, place="choices")
        for letter, text, scrambled in zip("ABCD", choices, scrambled_choices, strict=True):
            prompt = prompt.replace(f"\n{letter}) {text}", f"\n{letter}) {scrambled}")
    return prompt


def _wire_choices(prompt: str) -> list[str]:
    """The choices as multiple_choice's template sent them: the lines 'X) text'."""
    return [line[3:] for line in prompt.splitlines() if re.match(r"^[A-D]\) ", line)]


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.timeout(1800)  # five `inspect eval` runs, each some minutes on 2 busy cores
def test_scrambled_variants_on_the_wire_in_the_logs_and_paired(
    recording_proxy, chromium_browser, tmp_path: Path, capsys
):
    from inspect_ai.log import list_eval_logs, read_eval_log
    from variants_page import check_variants_report

    from scrambled_bench.evaluate_cli.main import main
    from scrambled_bench.integrations import get_harness

    spec = _write_task(tmp_path / "task")
    out = tmp_path / "scrambled"
    assert (
        main(
            [
                "scramble",
                f"inspect:{spec}",
                "--columns",
                FIELDS,
                "--types",
                ",".join(TYPES),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    task_file = out / "inspect" / "scrambled_tasks.py"
    served = recording_proxy.get_json("/v1/models")["data"][0]["id"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LLAMA_BASE_URL": recording_proxy.base_url,
           "LLAMA_API_KEY": "sk-no-key-required"}  # fmt: skip
    common = ["--model", f"openai-api/llama/{served}", "--temperature", "0", "--max-tokens", "12",
              "--max-connections", "1", "--display", "plain"]  # fmt: skip
    logs = tmp_path / "logs"
    sent: dict[str, list[str]] = {}

    def run(name: str, arguments: list[str], log_dir: Path = logs) -> None:
        before = len(recording_proxy.get_json("/_requests"))
        _inspect_eval(
            [*arguments, *common, "--log-dir", str(log_dir)],
            cwd=tmp_path,
            env=env,
            log=tmp_path / f"{name}.log",
        )
        requests = recording_proxy.get_json("/_requests")[before:]
        sent[name] = _prompts(requests)

    # the canonical task, then each variant: separate invocations of the task file into one log folder
    run("canonical", [f"{task_file}@planets"])
    for type_ in TYPES:
        run(type_, [f"{task_file}@planets_{type_}"])
    run("kfl again", [f"{task_file}@planets_kfl"], tmp_path / "again")

    # --- on the wire: the canonical prompt with exactly the chosen fields scrambled; the same bytes twice ---
    assert len(sent["canonical"]) == len(QUESTIONS)
    canonical_by_question = {
        q: next(p for p in sent["canonical"] if f"\n{q}\n" in p) for _, q, _, _ in QUESTIONS
    }
    for type_ in TYPES:
        expected = [
            _expected_prompt(canonical_by_question[question], identifier, question, choices, type_, FIELDS)
            for identifier, question, choices, _ in QUESTIONS
        ]
        assert sorted(sent[type_]) == sorted(expected), type_
        assert not set(sent[type_]) & set(sent["canonical"]), f"{type_} sent an unscrambled prompt"
        if "choices" in FIELDS:  # on the wire too, choices that differ stay different
            for prompt in sent[type_]:
                wire = _wire_choices(prompt)
                assert len(wire) == 4 and len(set(wire)) == 4, (type_, wire)
    assert sent["kfl again"] == sent["kfl"]

    # --- in the logs: targets untouched, the variant's metadata --------------------------------------------
    by_task = {}
    for info in list_eval_logs(str(logs)):
        log = read_eval_log(info)
        by_task[log.eval.task] = log
    assert set(by_task) == {"planets", "planets_kfl", "planets_sub", "planets_rs50"}
    targets = {sample.id: sample.target for sample in by_task["planets"].samples}
    for type_ in TYPES:
        log = by_task[f"planets_{type_}"]
        assert {sample.id: sample.target for sample in log.samples} == targets
        assert log.eval.metadata["canonical_task"] == "planets"
        assert log.eval.metadata["fields"] == FIELDS.split(",")

    # --- score --from inspect: Inspect's own accuracy per variant, and the paired differences ---------------
    capsys.readouterr()
    assert main(["score", "--from", "inspect", str(logs), "--n-resamples", "200"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert "configs" not in document
    entry = document["scrambled_tasks"]["planets"]
    native_canonical = by_task["planets"].results.scores[0].metrics["accuracy"].value
    assert entry["metrics"]["choice"]["value"] == pytest.approx(native_canonical)
    assert list(entry["types"]) == ["rs50", "kfl", "sub"]
    for type_, variant in entry["types"].items():
        summary = variant["metrics"]["choice"]
        native = by_task[f"planets_{type_}"].results.scores[0].metrics["accuracy"].value
        assert summary["value"] == pytest.approx(native), type_
        assert summary["difference"] == pytest.approx(native - native_canonical)
        assert (summary["n_paired"], summary["n_unpaired"]) == (len(QUESTIONS), 0)
        assert (
            summary["mcnemar_p"] is not None and summary["ci"][0] <= summary["difference"] <= summary["ci"][1]
        )
        assert ("relative_performance_gain" in summary) == (type_ != "sub")

    # --- report --from inspect: the same numbers as tables; the page in Chromium ---------------------------
    harness = get_harness("inspect")
    check_variants_report(
        main, capsys, "inspect", logs, entry, tmp_path, model=f"openai-api/llama/{served}", title=harness.title,
        label=harness.metric_label,
        browser=chromium_browser,
    )  # fmt: skip
