"""The same numbers from four harnesses: ``scrambled-bench run``, lm-evaluation-harness on the exported YAML
tasks, lighteval on the exported custom tasks and Inspect AI on the exported ``@task``s, all against the
real llama.cpp server (SmolLM2-135M), greedy, on the same configs of the tiny build and the same rows (every
row: lighteval's ``--max-samples`` takes a seeded random subset, not the first rows).

A recording proxy in front of the server keeps what each harness really sent, so the test checks, on the
wire, that every harness sent the paper's prompts exactly as ``run`` does and the same decoding where it
matters (greedy, the task's stop sequences, the token cap), and it records the parameters that differ. Then:

1. the raw outputs are the same, sample by sample;
2. each harness's logged outputs, fed to ``scrambled-bench score --from lm-eval`` / ``--from lighteval`` /
   ``--from inspect``, give every score of ``run``'s results.json (ED, RR, Acc, RPG, intervals, unparsed
   counts, reader rules);
3. each harness's own reported aggregates (its results file, Inspect's log metrics) equal ``run``'s (RPG
   spans three configs, so no harness reports it itself: it is checked through 2).

The parameters that differ are written to ``decoding_differences.json`` in the test's folder and printed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from lm_eval_command import LM_EVAL

from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.evaluation.tasks import TaskConfig
from scrambled_bench.integrations import get_harness
from scrambled_bench.integrations.exported import ExportedTask
from scrambled_bench.integrations.lighteval import task_name as lighteval_name
from scrambled_bench.integrations.lm_eval.bench import DataLocation, task_name, write_tasks
from scrambled_bench.integrations.pairing import newest_per_task
from scrambled_bench.integrations.scoring import LoggedSample, bench_samples

# four harnesses one after another on 2 busy cores take longer than the suite's 900 s default
pytestmark = [pytest.mark.server, pytest.mark.slow, pytest.mark.timeout(2400)]

TINY_BUILD = Path(__file__).parents[1] / "fixtures" / "tiny_build"
CONFIGS = [
    TaskConfig("scrqa", "dream", "original"),
    TaskConfig("scrqa", "dream", "kfl"),
    TaskConfig("scrqa", "dream", "sub"),
    TaskConfig("scrrec-zero-shot", "realtimeqa", "rs50"),
]
MAX_NEW_TOKENS = 48
#: what a config's scores are, in results.json and in `score --from ...` alike
SCORE_KEYS = (
    "n_scored",
    "unparsed",
    "rules",
    "accuracy",
    "relative_performance_gain",
    "edit_distance",
    "scrambled_edit_distance",
    "recovery_rate",
    "categories",
)
#: the request fields every harness must send alike; the others are reported when they differ
ESSENTIAL = ("temperature", "stop", "max_tokens")


def _require(module: str) -> None:
    # find_spec, not an import: litellm fetches a price list from the network when imported
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"needs {module}: pip install -e '.[harness]'")


def _harness_env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_DATASETS_CACHE": str(tmp_path / "datasets_cache"),
        # litellm fetches a price list from GitHub at import unless told to use its bundled copy
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "TRANSFORMERS_VERBOSITY": "error",
    }


def _run(command: list[str], *, cwd: Path, env: dict[str, str], log: Path) -> None:
    completed = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    log.write_text(completed.stdout + "\n--- stderr ---\n" + completed.stderr)
    assert completed.returncode == 0, f"{command[:4]} failed; log in {log}:\n{completed.stderr[-3000:]}"


def _recorded(proxy) -> list[dict[str, Any]]:
    return proxy.get_json("/_requests")


def _scores(configs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: {key: entry[key] for key in SCORE_KEYS if key in entry} for name, entry in configs.items()}


def _logged(harness: str, folder: Path) -> list[LoggedSample]:
    """The bench's logged outputs in a harness's folder, read through the harness's registered reader."""
    return bench_samples(
        [task for task in newest_per_task(get_harness(harness).read_logs(folder)) if task.bench]
    )


def _parameters(body: dict[str, Any]) -> dict[str, Any]:
    """A request body's decoding parameters (all but the prompt and the model name)."""
    return {key: value for key, value in body.items() if key not in ("messages", "model")}


def test_run_lm_eval_lighteval_and_inspect_give_the_same_numbers(
    recording_proxy, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _require("lm_eval")
    _require("lighteval")
    _require("litellm")
    _require("inspect_ai")
    env = _harness_env(tmp_path)
    served = recording_proxy.get_json("/v1/models")["data"][0]["id"]
    exported = [ExportedTask(config) for config in CONFIGS]
    sent: dict[str, list[dict[str, Any]]] = {}

    # --- ours: `scrambled-bench run --backend openai`, ScrQA on DREAM (kfl and its anchors) and ScrRec ----
    before = len(_recorded(recording_proxy))
    ours: dict[str, dict[str, Any]] = {}
    our_outputs: dict[tuple[str, str], str] = {}
    for selection in (["--tasks", "scrqa", "--datasets", "dream", "--types", "kfl"],
                      ["--tasks", "scrrec-zero-shot", "--types", "rs50"]):  # fmt: skip
        run_dir = tmp_path / f"run_{selection[1]}"
        code = main(
            ["run", "--backend", "openai", "--base-url", recording_proxy.base_url, "--model", served,
             "--data", str(TINY_BUILD), *selection, "--max-new-tokens", str(MAX_NEW_TOKENS), "--concurrency", "1",
             "--no-progress", "--run-dir", str(run_dir)]
        )  # fmt: skip
        assert code == 0
        ours.update(_scores(json.loads((run_dir / "results.json").read_text())["configs"]))
        for record in map(json.loads, (run_dir / "samples.jsonl").read_text().splitlines()):
            our_outputs[(record["config"], record["id"])] = record["output"]
    assert list(ours) == [config.name for config in CONFIGS]
    sent["run"] = _recorded(recording_proxy)[before:]

    # --- lm-evaluation-harness: local-chat-completions on the exported YAML -------------------------------
    before = len(_recorded(recording_proxy))
    include = write_tasks(tmp_path / "lm_eval_tasks", DataLocation(str(TINY_BUILD.resolve())))
    lm_eval_out = tmp_path / "lm_eval_out"
    model_args = (
        f"model={served},base_url={recording_proxy.base_url}/chat/completions,num_concurrent=1,max_retries=1,"
        "tokenized_requests=False"
    )
    _run(
        [*LM_EVAL, "run", "--model", "local-chat-completions", "--model_args", model_args,
         "--tasks", ",".join(task_name(task) for task in exported), "--include_path", str(include),
         "--apply_chat_template", "--gen_kwargs", f"max_gen_toks={MAX_NEW_TOKENS}",
         "--log_samples", "--output_path", str(lm_eval_out)],
        cwd=tmp_path, env=env, log=tmp_path / "lm_eval.log",
    )  # fmt: skip
    sent["lm-eval"] = _recorded(recording_proxy)[before:]

    # --- lighteval: its OpenAI-compatible endpoint path (litellm) on the exported custom tasks -------------
    # One command per stop-sequence family: lighteval 0.13's litellm client sends every document of a run
    # with each family's stop sequences in turn and keeps the first answers (huggingface/lighteval#1177).
    before = len(_recorded(recording_proxy))
    lighteval_out = tmp_path / "lighteval_out"
    model_args = (
        f"model_name=openai/{served},base_url={recording_proxy.base_url},api_key=sk-no-key-required,"
        # one request at a time: with more, litellm 1.103 sometimes races on its lazy imports (ImportError in
        # the calls), and lighteval counts the failed requests as empty answers
        f"max_model_length=2048,concurrent_requests=1,cache_dir={tmp_path / 'lighteval_cache'},"
        "generation_parameters={temperature:0.0}"
    )
    families: dict[tuple[str, ...], list[str]] = {}
    for task in exported:
        families.setdefault(task.task.stop, []).append(lighteval_name(task))
    for index, names in enumerate(families.values()):
        _run(
            [sys.executable, "-m", "scrambled_bench.integrations.lighteval.cli", "endpoint", "litellm",
             model_args, ",".join(names), "--custom-tasks", "scrambled_bench.integrations.lighteval.bench",
             "--save-details", "--output-dir", str(lighteval_out)],
            cwd=tmp_path,
            env={**env, "SCRAMBLED_BENCH_DATA": str(TINY_BUILD.resolve()),
                 "SCRAMBLED_BENCH_MAX_NEW_TOKENS": str(MAX_NEW_TOKENS)},
            log=tmp_path / f"lighteval_{index}.log",
        )  # fmt: skip
    sent["lighteval"] = _recorded(recording_proxy)[before:]

    # --- Inspect AI: its OpenAI-compatible provider (openai-api/<service>/<model>) on the exported @tasks -----
    before = len(_recorded(recording_proxy))
    inspect_logs = tmp_path / "inspect_logs"
    _run(
        [str(Path(sys.executable).parent / "inspect"), "eval",
         *(f"scrambled_bench/{task.slug}" for task in exported), "--model", f"openai-api/llama/{served}",
         "-T", f"data={TINY_BUILD.resolve()}", "--max-tokens", str(MAX_NEW_TOKENS), "--max-connections", "1",
         "--log-dir", str(inspect_logs), "--display", "plain"],
        cwd=tmp_path,
        env={**env, "LLAMA_BASE_URL": recording_proxy.base_url, "LLAMA_API_KEY": "sk-no-key-required"},
        log=tmp_path / "inspect.log",
    )  # fmt: skip
    sent["inspect"] = _recorded(recording_proxy)[before:]

    # --- what went over the wire: the same prompts, greedy, the same stops and cap ------------------------
    def prompts(requests: list[dict[str, Any]]) -> Counter[str]:
        assert all(len(request["body"]["messages"]) == 1 for request in requests)
        return Counter(request["body"]["messages"][0]["content"] for request in requests)

    assert sum(prompts(sent["run"]).values()) == len(our_outputs) == 13
    differences: dict[str, dict[str, Any]] = {}
    ours_sent = {json.dumps(_parameters(r["body"]), sort_keys=True) for r in sent["run"]}
    for harness in ("lm-eval", "lighteval", "inspect"):
        assert all(request["path"] == "/v1/chat/completions" for request in sent[harness])
        assert set(prompts(sent[harness])) == set(prompts(sent["run"])), (
            f"{harness} sent other prompts than run"
        )
        resent = sum(prompts(sent[harness]).values()) - len(our_outputs)
        if resent:  # lighteval asks again, without its cache, when an answer is empty
            differences.setdefault(harness, {})["requests sent twice"] = resent
        for ours_request in sent["run"]:
            prompt = ours_request["body"]["messages"][0]["content"]
            [theirs] = [r for r in sent[harness] if r["body"]["messages"][0]["content"] == prompt][:1]
            mine, other = _parameters(ours_request["body"]), _parameters(theirs["body"])
            for key in ESSENTIAL:
                assert other.get(key) == mine.get(key), (
                    f"{harness} sent {key}={other.get(key)!r}, run {mine.get(key)!r}"
                )
            for key in sorted(set(mine) | set(other)):
                if mine.get(key) != other.get(key):
                    differences.setdefault(harness, {})[key] = {"run": mine.get(key), harness: other.get(key)}
    assert len(ours_sent) == 2  # one parameter set per task (QA stops, ScrRec stops)
    (tmp_path / "decoding_differences.json").write_text(json.dumps(differences, indent=2))
    with capsys.disabled():
        print(f"\nrequest parameters that differ from run's: {json.dumps(differences)}")

    # --- 1. the same raw outputs --------------------------------------------------------------------------
    logged = {
        "lm-eval": _logged("lm-eval", lm_eval_out),
        "lighteval": _logged("lighteval", lighteval_out),
        "inspect": _logged("inspect", inspect_logs),
    }
    for harness, samples in logged.items():
        outputs = {(sample.config.name, sample.meta["id"]): sample.output for sample in samples}
        assert outputs == our_outputs, f"{harness}'s outputs differ from run's"

    # --- 2. their logs through `score --from ...` give run's results ---------------------------------------
    for harness, folder in (
        ("lm-eval", lm_eval_out),
        ("lighteval", lighteval_out),
        ("inspect", inspect_logs),
    ):
        capsys.readouterr()
        assert main(["score", "--from", harness, str(folder)]) == 0
        document = json.loads(capsys.readouterr().out)
        assert _scores(document["configs"]) == ours, harness

    # --- 3. their own aggregates are run's (fractions in both) --------------------------------------------
    from inspect_ai.log import list_eval_logs, read_eval_log

    inspect_results = {}
    for info in list_eval_logs(str(inspect_logs)):
        log = read_eval_log(info, header_only=True)
        [scores] = log.results.scores
        inspect_results[log.eval.metadata["scrambled_bench_config"]] = scores.metrics
    [lm_eval_file] = lm_eval_out.rglob("results_*.json")
    lm_eval_results = json.loads(lm_eval_file.read_text())["results"]
    lighteval_results: dict[str, Any] = {}
    for path in lighteval_out.rglob("results_*.json"):  # one per command
        lighteval_results.update(json.loads(path.read_text())["results"])
    native = {
        "lm-eval": {
            task.config.name: {m.key: lm_eval_results[task_name(task)][f"{m.key},none"] for m in task.metrics}
            for task in exported
        },
        "lighteval": {
            task.config.name: {
                m.key: lighteval_results[f"{lighteval_name(task)}|0"][m.key] for m in task.metrics
            }
            for task in exported
        },
        "inspect": {
            task.config.name: {m.key: inspect_results[task.config.name][m.key].value for m in task.metrics}
            for task in exported
        },
    }
    for harness, configs in native.items():
        for name, metrics in configs.items():
            for key, value in metrics.items():
                expected = ours[name][key]["value"]
                assert value == pytest.approx(expected, abs=1e-12), f"{harness} {name} {key}"
