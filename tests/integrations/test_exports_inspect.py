"""The Inspect AI export without a server: the tasks Inspect finds through the package's entry point, their
samples equal to ``run``'s requests, the scorer, and ``inspect eval ... --model mockllm/model`` offline from
an empty folder (tiktoken's o200k_base from litellm's bundled copy)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scrambled_bench.evaluation.data import DataSource
from scrambled_bench.evaluation.tasks import TaskConfig, build_requests
from scrambled_bench.integrations.exported import ExportedTask, exported_tasks

if importlib.util.find_spec("inspect_ai") is None:
    pytest.skip("needs inspect_ai: pip install -e '.[harness]'", allow_module_level=True)

from inspect_ai.log import read_eval_log

from scrambled_bench.integrations.inspect import bench as inspect_tasks

TINY_BUILD = Path(__file__).parents[1] / "fixtures" / "tiny_build"
INSPECT = Path(sys.executable).parent / "inspect"
CONFIGS = [
    TaskConfig("scrqa", "dream", "kfl"),
    TaskConfig("scrrec-zero-shot", "realtimeqa", "rs50"),
    TaskConfig("scrrec-few-shot", "realtimeqa", "rs50"),
]


def _offline_env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != inspect_tasks.TIKTOKEN_CACHE_ENV}
    # COLUMNS: Inspect prints its errors with rich, which wraps them at the terminal's width
    return {**env, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "COLUMNS": "250", **extra}


def test_inspect_finds_every_paper_config_through_the_entry_point():
    from inspect_ai._util.registry import registry_lookup

    for exported in exported_tasks():
        found = registry_lookup("task", f"scrambled_bench/{exported.slug}")
        assert found is inspect_tasks.TASKS[exported.slug], exported.slug
    assert len(inspect_tasks.TASKS) == 40


@pytest.mark.parametrize("config", CONFIGS, ids=lambda config: config.name)
def test_samples_are_runs_requests_and_the_task_carries_stops_cap_and_anchors(config: TaskConfig):
    exported = ExportedTask(config)
    task = inspect_tasks.TASKS[exported.slug](data=str(TINY_BUILD))
    rows = DataSource(str(TINY_BUILD), TINY_BUILD.resolve()).rows(config.data_config)
    requests = build_requests(config, rows)
    samples = list(task.dataset)
    assert [sample.input for sample in samples] == [request.prompt for request in requests]
    assert [sample.metadata for sample in samples] == [request.meta for request in requests]
    assert task.config.stop_seqs == list(config.definition.stop)
    assert (task.config.max_tokens, task.config.temperature) == (256, 0.0)
    assert task.metadata["scrambled_bench_config"] == config.name
    assert task.metadata["data"]["location"] == str(TINY_BUILD)
    anchors = exported.anchors()
    assert ("canonical_task" in task.metadata) == ("original" in anchors)


def test_a_missing_data_folder_is_a_prerequisite_error_naming_it(tmp_path: Path):
    from inspect_ai._util.error import PrerequisiteError

    with pytest.raises(PrerequisiteError, match="no_such_build: no such folder"):
        inspect_tasks.TASKS["scrqa_dream_kfl"](data=str(tmp_path / "no_such_build"))


def test_tiktoken_points_at_litellms_copy_unless_the_user_set_a_cache():
    folder = inspect_tasks.bundled_tiktoken_cache()
    assert folder is not None and (folder / inspect_tasks.O200K_CACHE_FILE).stat().st_size > 1_000_000
    environ: dict[str, str] = {}
    assert inspect_tasks.use_bundled_tiktoken_cache(environ) == str(folder)
    assert environ == {inspect_tasks.TIKTOKEN_CACHE_ENV: str(folder)}
    mine = {inspect_tasks.TIKTOKEN_CACHE_ENV: "/my/cache"}
    assert (
        inspect_tasks.use_bundled_tiktoken_cache(mine) is None and mine["TIKTOKEN_CACHE_DIR"] == "/my/cache"
    )


@pytest.mark.slow
def test_inspect_eval_runs_offline_from_an_empty_folder(tmp_path: Path):
    """The issue's check: ``inspect eval scrambled_bench/scrqa_dream_kfl --model mockllm/model --limit 1`` in
    an empty folder, no network (the Hub offline, no tiktoken cache set), the build named by the environment."""
    folder = tmp_path / "empty"
    folder.mkdir()
    completed = subprocess.run(
        [str(INSPECT), "eval", "scrambled_bench/scrqa_dream_kfl", "--model", "mockllm/model", "--limit", "1",
         "--log-dir", "logs", "--display", "plain"],
        cwd=folder, env=_offline_env(SCRAMBLED_BENCH_DATA=str(TINY_BUILD.resolve())),
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    [log_file] = (folder / "logs").glob("*.eval")
    log = read_eval_log(str(log_file))
    assert log.status == "success", log.error
    assert log.eval.task == "scrambled_bench/scrqa_dream_kfl"
    [sample] = log.samples
    assert sample.metadata["config"] == "scrqa/dream/kfl"
    [scores] = log.results.scores
    assert set(scores.metrics) == {"accuracy"}


@pytest.mark.slow
def test_inspect_eval_on_data_that_cannot_be_read_is_one_line(tmp_path: Path):
    completed = subprocess.run(
        [str(INSPECT), "eval", "scrambled_bench/scrqa_dream_kfl", "--model", "mockllm/model", "-T", "data=./nope"],
        cwd=tmp_path, env=_offline_env(), capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert completed.returncode != 0
    lines = [line for line in (completed.stdout + completed.stderr).splitlines() if line.strip()]
    assert lines == [
        "error: scrambled_bench/scrqa_dream_kfl: data=./nope: no such folder (and not a Hub id owner/name); "
        + "build it with `scrambled-bench build --out ./nope`"
    ]


# ------------------------------------------------------------------------------- score --from inspect


def _scripted_model(answers: dict[str, str]):
    """mockllm answering each prompt from ``answers`` (prompt -> output)."""
    from inspect_ai.model import ModelOutput, get_model

    def answer(messages, tools, tool_choice, config):
        return ModelOutput.from_content(model="mockllm", content=answers[messages[-1].text])

    return get_model("mockllm/model", custom_outputs=answer)


def _run_dream(log_dir: Path, kfl_right: int = 2) -> dict[str, object]:
    """ScrQA on DREAM at original (every answer right), kfl (the first ``kfl_right`` right) and sub (none
    right): an RPG of kfl_right / n. Returns Inspect's own metrics per config. The eval creates the tasks (as
    ``inspect eval`` does), so each records the endpoint it runs against (none, for mockllm)."""
    from inspect_ai import eval as inspect_eval

    answers: dict[str, str] = {}
    tasks = []
    for scramble_type in ("original", "kfl", "sub"):
        task = inspect_tasks.TASKS[f"scrqa_dream_{scramble_type}"]
        for index, sample in enumerate(task(data=str(TINY_BUILD)).dataset):
            right = scramble_type == "original" or (scramble_type == "kfl" and index < kfl_right)
            wrong = "B" if sample.target[0] == "A" else "A"
            answers[sample.input] = f"{sample.target[0] if right else wrong}."
        tasks.append(task)
    logs = inspect_eval(
        tasks,
        task_args={"data": str(TINY_BUILD)},
        model=_scripted_model(answers),
        log_dir=str(log_dir),
        display="none",
    )
    return {log.eval.metadata["scrambled_bench_config"]: log.results.scores[0].metrics for log in logs}


@pytest.fixture(scope="module")
def dream_logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """One scripted Inspect run of ScrQA on DREAM (original, kfl with 2 right, sub) shared by the ``score``
    tests that read it: its log folder and Inspect's own metrics per config."""
    folder = tmp_path_factory.mktemp("dream") / "logs"
    return folder, _run_dream(folder, kfl_right=2)


@pytest.mark.slow  # runs Inspect
def test_score_from_inspect_gives_runs_scores_rpg_included_and_inspects_own_accuracy(dream_logs, capsys):
    import json

    from scrambled_bench.evaluate_cli.main import main

    logs, native = dream_logs
    capsys.readouterr()
    assert main(["score", "--from", "inspect", str(logs)]) == 0
    document = json.loads(capsys.readouterr().out)
    configs = document["configs"]
    assert document["source"] == "inspect" and list(configs) == list(native)
    n = configs["scrqa/dream/kfl"]["n_scored"]
    assert configs["scrqa/dream/original"]["accuracy"]["value"] == 1.0
    assert configs["scrqa/dream/sub"]["accuracy"]["value"] == 0.0
    assert configs["scrqa/dream/kfl"]["relative_performance_gain"]["value"] == pytest.approx(2 / n)
    for name, metrics in native.items():
        assert metrics["accuracy"].value == configs[name]["accuracy"]["value"], name


@pytest.mark.slow  # runs Inspect
def test_score_from_inspect_reads_the_newest_log_of_each_task(dream_logs, tmp_path: Path, capsys):
    import json
    import shutil

    from scrambled_bench.evaluate_cli.main import main

    shutil.copytree(dream_logs[0], tmp_path / "logs")  # the shared run (kfl_right=2), then a newer one
    _run_dream(tmp_path / "logs", kfl_right=1)
    capsys.readouterr()
    assert main(["score", "--from", "inspect", str(tmp_path / "logs")]) == 0
    configs = json.loads(capsys.readouterr().out)["configs"]
    assert configs["scrqa/dream/kfl"]["accuracy"]["value"] == pytest.approx(
        1 / configs["scrqa/dream/kfl"]["n_scored"]
    )


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda folder: None, "no such folder (give inspect eval's --log-dir)"),
        (
            lambda folder: folder.mkdir(),
            "no logs (.eval or .json) of Inspect AI; run inspect eval with --log-dir",
        ),
    ],
)
def test_score_from_inspect_without_logs_is_one_line(tmp_path: Path, capsys, make, message):
    from scrambled_bench.evaluate_cli.main import main

    make(tmp_path / "logs")
    assert main(["score", "--from", "inspect", str(tmp_path / "logs")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1, err


@pytest.mark.slow  # runs Inspect
def test_score_from_inspect_of_no_task_of_ours_is_one_line_naming_what_it_left_out(tmp_path: Path, capsys):
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match

    from scrambled_bench.evaluate_cli.main import main

    stranger = Task(dataset=[Sample(input="2+2?", target="4")], scorer=match(), name="arithmetic")
    inspect_eval(stranger, model="mockllm/model", log_dir=str(tmp_path / "logs"), display="none")
    capsys.readouterr()
    assert main(["score", "--from", "inspect", str(tmp_path / "logs")]) == 2
    err = capsys.readouterr().err
    assert "no scrambled_bench task and no scrambled variant" in err and "left out: arithmetic" in err
    assert err.count("\n") == 1, err
