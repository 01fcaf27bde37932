"""The lm-eval and lighteval exports without a model: generated YAML, names, documents equal to run's
requests, lm-eval and lighteval loading the tasks, scoring logged samples, and the bad-input errors."""

from __future__ import annotations

import importlib
import importlib.util
import json
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.evaluation.data import DataSource
from scrambled_bench.evaluation.suites import get_suite
from scrambled_bench.evaluation.tasks import TaskConfig, build_requests
from scrambled_bench.integrations import get_harness
from scrambled_bench.integrations.exported import ExportedTask, document_meta, exported_tasks
from scrambled_bench.integrations.lighteval import task_name as lighteval_name
from scrambled_bench.integrations.lm_eval import bench as lm_eval
from scrambled_bench.integrations.lm_eval.hooks import process_docs_for, process_results
from scrambled_bench.integrations.scoring import LoggedSample, score_logged

TINY_BUILD = Path(__file__).parents[1] / "fixtures" / "tiny_build"
REPO = Path(__file__).parents[2]


def _needs(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"needs {module}: pip install -e '.[harness]'")


def _tiny_rows(config: TaskConfig) -> list[dict]:
    return DataSource(str(TINY_BUILD), TINY_BUILD.resolve()).rows(config.data_config)


# ------------------------------------------------------------------------------------------------ names


def test_one_exported_task_per_paper_config_with_the_issue_names():
    tasks = exported_tasks()
    assert [task.config for task in tasks] == list(get_suite("paper").configs)
    names = {lm_eval.task_name(task) for task in tasks}
    assert len(names) == len(tasks) == 40
    for name in (
        "scrambled_bench_scrqa_dream_kfl",
        "scrambled_bench_scrrec_realtimeqa_rs50_fewshot",
        "scrambled_bench_aqua_cot_rs100",
        "scrambled_bench_aqua_cot_rs100_exemplars50",
        "scrambled_bench_scrrec_realtimeqa_kf",
    ):
        assert name in names
    assert {lighteval_name(task) for task in tasks} == {
        name.replace("scrambled_bench_", "scrambled_bench:", 1) for name in names
    }


def test_the_packaged_yaml_is_the_generators_output():
    packaged = {path.name: path.read_text(encoding="utf-8") for path in lm_eval.PACKAGED_TASKS.glob("*.yaml")}
    assert packaged == lm_eval.task_files(), (
        "integrations/lm_eval/tasks/ is stale: run "
        "`python -m scrambled_bench.integrations.lm_eval.bench integrations/lm_eval/tasks` from the repository"
    )
    # it ships where lm-eval-path says, in the source tree of a checkout
    assert (REPO / "integrations" / "lm_eval" / "tasks" / "_scrambled_bench.yaml").is_file()


def test_yaml_shape_stops_metrics_and_pairing_metadata():
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: ("function", loader.construct_scalar(node)))

    def load(name: str) -> dict:
        return yaml.load(lm_eval.task_files()[f"{name}.yaml"], Loader=Loader)

    kfl = load("scrambled_bench_scrqa_dream_kfl")
    assert kfl["output_type"] == "generate_until" and kfl["num_fewshot"] == 0
    assert kfl["generation_kwargs"] == {
        "until": ["\nQuestion:", "\nDialogue:", "\nChoices:"],
        "max_gen_toks": 256,
        "do_sample": False,
        "temperature": 0.0,
    }
    assert kfl["metadata"]["canonical_task"] == "scrambled_bench_scrqa_dream_original"
    assert kfl["metadata"]["substituted_task"] == "scrambled_bench_scrqa_dream_sub"
    assert kfl["tag"] == ["scrambled_bench_scrqa", "scrambled_bench_scrqa_dream"]
    assert kfl["process_docs"] == (
        "function",
        "scrambled_bench.integrations.lm_eval.hooks.process_docs_scrqa_dream_kfl",
    )
    # every metric is named with its process_results and an aggregation: lm-eval never looks it up elsewhere
    for entry in kfl["metric_list"]:
        assert entry["aggregation"][0] == "function" and "higher_is_better" in entry
    rec = load("scrambled_bench_scrrec_realtimeqa_rs50_fewshot")
    assert [m["metric"] for m in rec["metric_list"]] == ["edit_distance", "recovery_rate"]
    assert rec["metric_list"][0]["higher_is_better"] is False
    assert "canonical_task" not in rec["metadata"]  # ScrRec has no unscrambled config
    assert rec["generation_kwargs"]["until"] == ["\nScrambled sentence:", "\nScrambled Sentence:"]
    aqua = load("scrambled_bench_aqua_cot_rs100_exemplars50")
    assert aqua["metadata"]["canonical_task"] == "scrambled_bench_aqua_cot_original_exemplars50"
    group = load("_scrambled_bench")
    assert group["group"] == "scrambled_bench" and len(group["task"]) == 40


def test_data_location_goes_into_dataset_path_and_revision(tmp_path: Path):
    folder = lm_eval.write_tasks(tmp_path / "tasks", lm_eval.DataLocation("org/scrambled_bench", "v1.0.0"))
    text = (folder / "scrambled_bench_scrqa_dream_kfl.yaml").read_text()
    assert "dataset_path: org/scrambled_bench\n" in text and "dataset_kwargs:\n  revision: v1.0.0\n" in text
    (folder / "scrambled_bench_old_task.yaml").write_text("task: old\n")
    (folder / "notes.yaml").write_text("mine: true\n")
    lm_eval.write_tasks(folder, lm_eval.DataLocation())
    assert not (folder / "scrambled_bench_old_task.yaml").exists() and (folder / "notes.yaml").exists()
    assert "dataset_path: scrambled_bench\n" in (folder / "scrambled_bench_scrqa_dream_kfl.yaml").read_text()


# ------------------------------------------------------------------------------------- documents and scores


@pytest.mark.parametrize(
    "config",
    [
        TaskConfig("scrqa", "realtimeqa", "rs50"),
        TaskConfig("scrqa", "dream", "kfl"),
        TaskConfig("scrrec-zero-shot", "realtimeqa", "rs50"),
        TaskConfig("scrrec-few-shot", "realtimeqa", "kf"),
        TaskConfig("aqua-cot", "aqua", "rs50", 50),
    ],
    ids=lambda config: config.name,
)
def test_documents_are_runs_requests(config: TaskConfig):
    """The same rows, in the same order, with the same prompts and the same scoring metadata as `run`."""
    rows = _tiny_rows(config)
    documents = ExportedTask(config).documents(rows)
    requests = build_requests(config, rows)
    assert [doc["prompt"] for doc in documents] == [request.prompt for request in requests]
    assert [document_meta(doc) for doc in documents] == [request.meta for request in requests]
    # and through lm-eval's process_docs, as a datasets.Dataset
    import datasets

    processed = process_docs_for(ExportedTask(config).slug)(datasets.Dataset.from_list(rows))
    assert processed["prompt"] == [request.prompt for request in requests]


def test_process_results_scores_as_the_task_does():
    config = TaskConfig("scrrec-zero-shot", "realtimeqa", "rs50")
    [doc, *_] = ExportedTask(config).documents(_tiny_rows(config))
    meta = document_meta(doc)
    items = process_results(doc, [f'Recovered sentence: "{meta["original"]}"'])
    assert items["recovery_rate"]["prediction"] == meta["original"]
    assert set(items) == {"edit_distance", "recovery_rate"}


def test_score_logged_pairs_rpg_and_refuses_a_sample_logged_twice():
    def logged(scramble_type: str, identifier: str, answer: str, output: str) -> LoggedSample:
        row = {
            "id": identifier,
            "scrambled": "W: Hi.",
            "question": "Who?",
            "choices": ["W", "M", "N"],
            "answer": answer,
        }
        [doc] = ExportedTask(TaskConfig("scrqa", "dream", scramble_type)).documents([row])
        return LoggedSample(document_meta(doc), output, f"{scramble_type}:{identifier}")

    samples = [
        logged("original", "a", "A", "A"),
        logged("original", "b", "B", "B"),
        logged("kfl", "a", "A", "A"),
        logged("kfl", "b", "B", "C"),
        logged("sub", "a", "A", "C"),
        logged("sub", "b", "B", "C"),
    ]
    configs = score_logged(samples)
    assert list(configs) == ["scrqa/dream/original", "scrqa/dream/kfl", "scrqa/dream/sub"]
    assert configs["scrqa/dream/kfl"]["accuracy"]["value"] == 0.5
    assert configs["scrqa/dream/kfl"]["relative_performance_gain"]["value"] == 0.5
    with pytest.raises(ScrambledBenchError, match="sample 'a' of scrqa/dream/kfl is logged twice"):
        score_logged([*samples, logged("kfl", "a", "A", "B")])


# ------------------------------------------------------------------------------------ harness output folders


def _lm_eval_log(
    folder: Path, model: str, task: ExportedTask, outputs: dict[str, str], date: str, *, chat: bool = True
) -> None:
    """An lm-eval invocation's files: the samples of one task and the results file beside them."""
    rows = _tiny_rows(task.config)
    lines = []
    for index, doc in enumerate(task.documents(rows)):
        if doc["id"] in outputs:
            lines.append(
                json.dumps(
                    {
                        "doc_id": index,
                        "doc": doc,
                        "target": doc["target"],
                        "arguments": {"gen_args_0": {"arg_0": doc["prompt"], "arg_1": {}}},
                        "resps": [[outputs[doc["id"]]]],
                        "filtered_resps": [outputs[doc["id"]]],
                        "filter": "none",
                        "metrics": ["accuracy"],
                    }
                )
            )
    name = lm_eval.task_name(task)
    path = folder / model / f"samples_{name}_{date}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    kind = "local-chat-completions" if chat else "local-completions"
    results = {
        "config": {"model": kind, "model_args": f"model={model},base_url=http://127.0.0.1:8080/v1"},
        "configs": {name: lm_eval.task_document(task)},
        "results": {name: {}},
    }
    (folder / model / f"results_{date}.json").write_text(json.dumps(results, default=str))


def test_score_from_lm_eval_reads_the_newest_log_of_each_task(tmp_path: Path, capsys):
    task = ExportedTask(TaskConfig("scrqa", "dream", "kfl"))
    _lm_eval_log(tmp_path, "smollm2", task, {"dream-1": "B", "dream-2": "B"}, "2026-01-01T10-00-00.1")
    _lm_eval_log(tmp_path, "smollm2", task, {"dream-1": "A", "dream-2": "B"}, "2026-01-02T10-00-00.1")
    assert main(["score", "--from", "lm-eval", str(tmp_path)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (
        document["source"] == "lm-eval" and document["configs"]["scrqa/dream/kfl"]["accuracy"]["value"] == 0.5
    )
    assert main(["score", "--from-lm-eval", str(tmp_path)]) == 2  # the spelling deprecated in 1.1.0 is gone
    assert "error: No such option: --from-lm-eval (Possible options: --from)" in capsys.readouterr().err


def test_an_lm_eval_folder_without_logged_samples_is_one_line_naming_log_samples(tmp_path: Path, capsys):
    (tmp_path / "smollm2").mkdir()
    (tmp_path / "smollm2" / "results_2026-01-01T10-00-00.1.json").write_text("{}")
    assert main(["score", "--from", "lm-eval", str(tmp_path)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and error.startswith("error: ") and "--log_samples" in error


def test_configs_logged_by_runs_of_other_settings_are_not_pooled(tmp_path: Path, capsys):
    """RPG pairs three configs: a chat run's original config beside a completions run's kfl is refused."""
    _lm_eval_log(
        tmp_path,
        "m",
        ExportedTask(TaskConfig("scrqa", "dream", "original")),
        {"dream-1": "A"},
        "2026-01-01T10-00-00.1",
    )
    _lm_eval_log(
        tmp_path, "m", ExportedTask(TaskConfig("scrqa", "dream", "kfl")), {"dream-1": "A"}, "2026-01-02T10-00-00.1",
        chat=False,
    )  # fmt: skip
    assert main(["score", "--from", "lm-eval", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert (
        error.count("\n") == 1
        and "differ in model_class local-completions vs local-chat-completions" in error
    ), error


def test_a_lighteval_folder_without_details_is_one_line_naming_save_details(tmp_path: Path):
    with pytest.raises(ScrambledBenchError, match="--save-details"):
        get_harness("lighteval").read_logs(tmp_path)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["score"], "give prediction FILES (with --task), or --from HARNESS DIR"),
        (["score", "x.jsonl"], "--task recovery|qa is needed"),
        (["score", "--from", "lm-eval", ".", "--task", "qa"], "--task applies to prediction FILES"),
        (["score", "--from-inspect", "."], "No such option: --from-inspect"),
        (["score", "--from", "lm_eval", "."], "no harness called 'lm_eval' (closest: lm-eval)"),
    ],
)
def test_score_option_combinations_are_one_line_errors(arguments, message, capsys):
    assert main(arguments) == 2
    assert message in capsys.readouterr().err


# --------------------------------------------------------------------------------------------- lm-eval-path


def test_lm_eval_path_prints_the_packaged_folder_or_writes_one_for_the_data(tmp_path: Path, capsys):
    assert main(["lm-eval-path"]) == 0
    assert capsys.readouterr().out.strip() == str(lm_eval.PACKAGED_TASKS)
    assert main(["lm-eval-path", "--data", str(TINY_BUILD), "--out", str(tmp_path / "tasks")]) == 0
    printed = Path(capsys.readouterr().out.strip())
    assert printed == (tmp_path / "tasks").resolve()
    assert (
        f"dataset_path: {TINY_BUILD.resolve()}\n"
        in (printed / "scrambled_bench_scrqa_dream_kfl.yaml").read_text()
    )
    assert main(["lm-eval-path", "--revision", "v1"]) == 2
    assert main(["lm-eval-path", "--data", str(TINY_BUILD), "--revision", "v1"]) == 2


def test_lm_eval_loads_an_exported_task_and_its_documents(tmp_path: Path):
    """lm-eval's own loader reads the generated YAML, resolves the !function hooks and the local build."""
    _needs("lm_eval")
    from lm_eval.tasks import TaskManager

    folder = lm_eval.write_tasks(tmp_path / "tasks", lm_eval.DataLocation(str(TINY_BUILD.resolve())))
    manager = TaskManager(include_path=str(folder), include_defaults=False)
    assert "scrambled_bench" in manager.all_groups and "scrambled_bench_scrqa_dream" in manager.all_tags
    task = manager.load(["scrambled_bench_scrqa_dream_kfl"])["tasks"]["scrambled_bench_scrqa_dream_kfl"]
    config = TaskConfig("scrqa", "dream", "kfl")
    docs = list(task.test_docs())
    assert [task.doc_to_text(doc) for doc in docs] == [
        r.prompt for r in build_requests(config, _tiny_rows(config))
    ]
    assert task.config.metadata["canonical_task"] == "scrambled_bench_scrqa_dream_original"
    assert task.process_results(docs[0], ["(A)"]) == {
        "accuracy": {"prediction": "A", "answer": docs[0]["target"]}
    }
    assert (
        task.aggregation()["accuracy"](
            [{"prediction": "A", "answer": "A"}, {"prediction": None, "answer": "B"}]
        )
        == 0.5
    )


# ---------------------------------------------------------------------------------------------- lighteval


def test_lighteval_table_names_rows_and_prompts(monkeypatch: pytest.MonkeyPatch):
    _needs("lighteval")
    from scrambled_bench.integrations.lighteval import bench as lighteval_tasks

    table = {config.name: config for config in lighteval_tasks.TASKS_TABLE}
    assert len(table) == 40 and all(name.startswith("scrambled_bench:") for name in table)
    config = table["scrambled_bench:scrrec_realtimeqa_rs50"]
    assert config.hf_subset == "realtimeqa_rs50" and config.evaluation_splits == ("test",)
    assert tuple(config.stop_sequence) == ("\nScrambled sentence:", "\nScrambled Sentence:")
    # the rows run evaluates: each evidence text once (lighteval formats them in order, __index from 0)
    task = TaskConfig("scrrec-zero-shot", "realtimeqa", "rs50")
    rows = _tiny_rows(task) * 2  # every text twice
    docs = [config.prompt_function({**row, "__index": index}, config.name) for index, row in enumerate(rows)]
    kept = [doc for doc in docs if doc is not None]
    assert [doc.query for doc in kept] == [request.prompt for request in build_requests(task, rows)]
    assert kept[0].specific["task"] == "scrrec-zero-shot" and kept[0].choices == [
        kept[0].specific["original"]
    ]
    # a second pass over the split starts afresh
    again = [config.prompt_function({**row, "__index": index}, config.name) for index, row in enumerate(rows)]
    assert [doc.query for doc in again if doc is not None] == [doc.query for doc in kept]
    metric = config.metrics[0]
    scored = metric.compute_sample(
        doc=kept[0], model_response=SimpleNamespace(text=[kept[0].specific["original"]])
    )
    assert metric.get_corpus_aggregations()["recovery_rate"]([scored["recovery_rate"]]) == 1.0


def test_lighteval_refuses_a_name_a_builtin_has_at_import(monkeypatch: pytest.MonkeyPatch):
    _needs("lighteval")
    from scrambled_bench.integrations.lighteval import bench as lighteval_tasks
    from scrambled_bench.integrations.lighteval import cli as lighteval_cli

    clashing = ModuleType("fake_builtin")
    clashing.TASKS_TABLE = [SimpleNamespace(name="scrambled_bench:scrqa_dream_kfl")]
    real = lighteval_cli.import_builtin_tasks
    try:
        monkeypatch.setattr(lighteval_cli, "import_builtin_tasks", lambda: ([clashing], {}))
        with pytest.raises(
            ScrambledBenchError, match="built-in task.s. named scrambled_bench:scrqa_dream_kfl"
        ):
            importlib.reload(lighteval_tasks)
    finally:
        monkeypatch.setattr(lighteval_cli, "import_builtin_tasks", real)
        importlib.reload(lighteval_tasks)


def test_lighteval_task_lists_split_by_stop_sequences():
    _needs("lighteval")
    from scrambled_bench.integrations.lighteval.bench import task_lists

    lists = task_lists(exported_tasks())
    assert len(lists) == 3 and sum(len(names.split(",")) for names in lists) == 40
