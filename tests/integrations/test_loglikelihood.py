"""The log-likelihood guard (integrations/loglikelihood.py): ``score --from`` and ``report --from`` any harness
refuse, in one line naming the cause and ``check-endpoint``, logs whose choices were given log-likelihood
exactly 0.0 (what an endpoint that echoes the prompt without the generated token gives every single-token
choice), and pass a healthy run.

- invariants over the logged records (hypothesis): a run without a 0.0 passes, one 0.0 anywhere refuses;
- the readers: lm-eval's ``resps`` of a log-likelihood task, never a generation's answers (a numeric answer
  is no log-likelihood); lighteval's details' choice log-probabilities; the guard refuses both harnesses'
  logs through the same shared layer (``--allow-zero-loglikelihood`` accepts them, recorded);
- for real: a letter-choice task run by ``lm_eval --model local-completions`` against llama-cpp-python's
  server (the session's ``llama_server``) is refused by ``score --from lm-eval`` and ``report --from lm-eval``.
  The healthy run (lm-eval's ``hf`` model) passes: test_local_multiple_choice.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from harness_support import one_error_line
from hypothesis import given
from hypothesis import strategies as st
from letter_quiz import TASK, logged, requests_of

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.integrations.base import LoggedDocument, LoggedTask, RunIdentity
from scrambled_bench.integrations.loglikelihood import check_log_likelihoods
from scrambled_bench.integrations.pairing import compare_logged
from scrambled_bench.metrics.statistics import CompareSettings

RUN = RunIdentity(
    "smollm2", "http://127.0.0.1:8080/v1/completions", {"model_class": "local-completions"}, "r.json"
)
CHECK = "scrambled-bench check-endpoint --base-url http://127.0.0.1:8080/v1/completions --model smollm2"
DATE = "2026-11-23T13-22-33.501500"

log_likelihood = st.floats(max_value=-1e-9, min_value=-1e4, allow_nan=False)
documents = st.lists(st.lists(log_likelihood, min_size=1, max_size=5), min_size=1, max_size=8)


def _task(name: str, values: list[list[float]], **marks: object) -> LoggedTask:
    docs = {
        i: LoggedDocument(i, {"acc": float(i % 2)}, target=i % 3, log_likelihoods=tuple(choices))
        for i, choices in enumerate(values)
    }
    return LoggedTask(name, RUN, "2026", docs, **marks)  # type: ignore[arg-type]


@given(documents)
def test_a_run_without_a_zero_log_likelihood_passes(values: list[list[float]]) -> None:
    assert check_log_likelihoods("out", [_task("quiz", values)]) == []


@given(documents, st.data())
def test_one_zero_log_likelihood_anywhere_is_refused_in_one_line_naming_the_check(
    values: list[list[float]], data: st.DataObject
) -> None:
    document = data.draw(st.integers(0, len(values) - 1))
    choice = data.draw(st.integers(0, len(values[document]) - 1))
    values[document][choice] = 0.0
    with pytest.raises(ScrambledBenchError) as refused:
        check_log_likelihoods("out", [_task("quiz", values)])
    message = str(refused.value)
    assert "\n" not in message and message.startswith("out: quiz logged a log-likelihood of exactly 0.0")
    assert f"for 1 of its {sum(map(len, values))} choices, in 1 of {len(values)} documents" in message
    assert f"(first: document {document})" in message and f"`{CHECK}`" in message
    assert "--allow-zero-loglikelihood" in message
    [found] = check_log_likelihoods("out", [_task("quiz", values)], allow=True)
    assert (found.task, found.zeros, found.first_document) == ("quiz", 1, document)


def test_pairing_refuses_a_variant_or_canonical_task_with_zero_log_likelihoods_unless_accepted() -> None:
    canonical = _task("quiz", [[-0.5, -2.0], [-1.0, -0.1]])
    variant = _task("quiz_kfl", [[0.0, 0.0], [0.0, 0.0]], canonical="quiz", scramble_type="kfl")
    settings = CompareSettings(n_resamples=50)
    with pytest.raises(ScrambledBenchError, match=r"^out: quiz_kfl logged a log-likelihood of exactly 0\.0"):
        compare_logged("out", [canonical, variant], settings)
    paired = compare_logged("out", [canonical, variant], settings, allow_zero_loglikelihood=True)
    assert [found.task for found in paired.zero_log_likelihoods] == ["quiz_kfl"]
    assert paired.section["quiz"]["types"]["kfl"]["metrics"]["acc"]["n_paired"] == 2
    # a task left out of the comparison is not checked: it is not reported either
    other = _task("unrelated", [[0.0]])
    assert compare_logged("out", [canonical, _task("quiz_kfl", [[-1.0], [-2.0]], canonical="quiz",
                                                   scramble_type="kfl"), other], settings).left_out == ["unrelated"]  # fmt: skip


# --- the readers: lm-eval and lighteval logs, refused through the one shared layer --------------------------


def _lm_eval_folder(folder: Path, output_type: str, responses: list[list[str]]) -> Path:
    """An lm-eval --output_path of one invocation: ``quiz`` and its kfl variant, each document's requests
    answered ``responses`` (per request, as lm-eval 0.4.13 logs them: strings)."""
    out = folder / "lm_out" / "smollm2"
    out.mkdir(parents=True)
    config = {"output_type": output_type, "metric_list": [{"metric": "acc", "aggregation": "mean"}]}
    results = {
        "config": {"model": "local-completions", "model_args": "model=smollm2,base_url=http://127.0.0.1:8080/v1/completions"},
        "configs": {"quiz": {**config, "metadata": {"version": 1}},
                    "quiz_kfl": {**config, "metadata": {"version": 1, "canonical_task": "quiz", "scramble_type": "kfl"}}},
        "results": {"quiz": {"acc,none": 0.5}, "quiz_kfl": {"acc,none": 0.5}},
    }  # fmt: skip
    (out / f"results_{DATE}.json").write_text(json.dumps(results))
    for task in ("quiz", "quiz_kfl"):
        rows = [
            {"doc_id": doc_id, "doc": {"question": "Q?"}, "target": 0,
             "arguments": {f"gen_args_{i}": {"arg_0": "Question: Q?\nAnswer:", "arg_1": f" {'AB'[i]}"}
                           for i in range(len(answers))},
             "resps": [[[answer, "True"]] if output_type != "generate_until" else [answer] for answer in answers],
             "filter": "none", "metrics": ["acc"], "acc": float(doc_id % 2)}
            for doc_id, answers in enumerate(responses)
        ]  # fmt: skip
        (out / f"samples_{task}_{DATE}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return out.parent


def test_lm_eval_logs_of_a_truncating_endpoint_are_refused_by_score_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _lm_eval_folder(tmp_path, "multiple_choice", [["0", "0"], ["-1.5", "0"]])
    for command in ("score", "report"):
        assert main([command, "--from", "lm-eval", str(folder)]) == 2
        line = one_error_line(capsys)
        assert line.startswith(
            f"error: {folder}: quiz logged a log-likelihood of exactly 0.0 (probability 1)"
        )
        assert "for 3 of its 4 choices, in 2 of 2 documents" in line and "1 other task likewise" in line
        assert f"`{CHECK}`" in line
    assert main(["score", "--from", "lm-eval", str(folder), "--allow-zero-loglikelihood"]) == 0
    captured = capsys.readouterr()
    accepted = json.loads(captured.out)["zero_log_likelihoods_accepted"]
    assert [(a["task"], a["zero_log_likelihoods"], a["log_likelihoods"]) for a in accepted] == [
        ("quiz", 3, 4), ("quiz_kfl", 3, 4),
    ]  # fmt: skip
    assert (
        captured.err.count("warning: quiz: ") == 1
        and "accepted by --allow-zero-loglikelihood" in captured.err
    )
    assert main(["report", "--from", "lm-eval", str(folder), "--allow-zero-loglikelihood"]) == 0
    assert "warning: quiz_kfl: 3 of 4 log-likelihoods exactly 0.0" in capsys.readouterr().err


def test_a_generation_tasks_numeric_answers_are_no_log_likelihoods(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """gsm8k-like answers "0" or "3" are text, not log-likelihoods: lm-eval's output type says which."""
    folder = _lm_eval_folder(tmp_path, "generate_until", [["0"], ["3"]])
    assert main(["score", "--from", "lm-eval", str(folder), "--n-resamples", "50"]) == 0
    assert "zero_log_likelihoods_accepted" not in json.loads(capsys.readouterr().out)


def _lighteval_folder(folder: Path, logprobs: list[list[float]]) -> Path:
    """A lighteval --output-dir of one invocation: ``quiz|0`` and its kfl variant, each document's choices
    scored by log-likelihood (``logprobs``, no text), as lighteval 0.13 writes its details."""
    model = "openai/smollm2"
    results = folder / "results" / model
    results.mkdir(parents=True)
    tasks = {"quiz|0": {"name": "quiz", "hf_subset": "default", "metrics": []},
             "quiz_kfl|0": {"name": "quiz_kfl", "hf_subset": "kfl", "metrics": []}}  # fmt: skip
    (results / f"results_{DATE}.json").write_text(
        json.dumps({"config_general": {"model_config": {"model_name": model, "base_url": "http://127.0.0.1:8080/v1"}},
                    "config_tasks": tasks, "results": {task: {"acc": 0.5} for task in tasks}})
    )  # fmt: skip
    details = folder / "details" / model / DATE
    details.mkdir(parents=True)
    for task in tasks:
        rows = [
            {"doc": {"id": str(i), "query": "Q?", "choices": [" A", " B"], "gold_index": 0},
             "model_response": {"text": [], "logprobs": values}, "metric": {"acc": float(i % 2)}}
            for i, values in enumerate(logprobs)
        ]  # fmt: skip
        pd.DataFrame(rows).to_parquet(details / f"details_{task}_{DATE}.parquet")
    return folder


def test_lighteval_logs_are_refused_by_the_same_guard_and_a_healthy_run_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = _lighteval_folder(tmp_path / "broken", [[0.0, 0.0], [0.0, 0.0]])
    assert main(["score", "--from", "lighteval", str(broken)]) == 2
    line = one_error_line(capsys)
    assert (
        "quiz_kfl|0 logged a log-likelihood of exactly 0.0 (probability 1) for 4 of its 4 choices" in line
        or ("quiz|0 logged a log-likelihood of exactly 0.0 (probability 1) for 4 of its 4 choices" in line)
    )
    assert "scrambled-bench check-endpoint --base-url http://127.0.0.1:8080/v1 --model openai/smollm2" in line
    healthy = _lighteval_folder(tmp_path / "healthy", [[-0.4, -1.2], [-2.5, -0.3]])
    assert main(["score", "--from", "lighteval", str(healthy), "--n-resamples", "50"]) == 0
    assert "zero_log_likelihoods_accepted" not in json.loads(capsys.readouterr().out)


def test_the_option_applies_to_a_harness_folder_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"prediction": "a", "original": "a", "scrambled": "b"}\n')
    assert main(["score", str(predictions), "--task", "recovery", "--allow-zero-loglikelihood"]) == 2
    assert one_error_line(capsys) == (
        "error: --allow-zero-loglikelihood applies to --from HARNESS DIR, not to prediction FILES"
    )
    assert main(["report", str(tmp_path), "--allow-zero-loglikelihood"]) == 2
    assert one_error_line(capsys) == (
        "error: --allow-zero-loglikelihood applies to --from HARNESS DIR, not to run folders"
    )


# --- for real: llama-cpp-python's server behind lm-eval's local-completions --------------------------------


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.timeout(
    2400
)  # scramble, de-quantise (the tokenizer), lm_eval's start, 16 requests on 2 busy cores
def test_a_letter_choice_task_through_llama_cpp_servers_completions_is_refused(
    letter_quiz_llama_logs: Path, llama_server, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = logged(letter_quiz_llama_logs)
    assert sorted(rows) == [TASK, f"{TASK}_kfl"]
    # the evidence: every single-token choice scored log-likelihood 0 (no generated token in the echo)
    assert {
        value for task_rows in rows.values() for row in task_rows for _, _, value in requests_of(row)
    } == {0.0}
    check = f"scrambled-bench check-endpoint --base-url {llama_server.base_url}/completions --model smollm2"
    for command in ("score", "report"):
        capsys.readouterr()
        assert main([command, "--from", "lm-eval", str(letter_quiz_llama_logs)]) == 2
        line = one_error_line(capsys)
        assert line.startswith(
            f"error: {letter_quiz_llama_logs}: {TASK} logged a log-likelihood of exactly 0.0"
        )
        assert "for 8 of its 8 choices, in 2 of 2 documents" in line and f"`{check}`" in line
