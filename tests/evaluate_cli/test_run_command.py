"""The ``run`` command end to end with the real embedded model (SmolLM2-135M through llama.cpp) on a tiny
local build, and its bad-input paths through the CLI."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.evaluation.settings import model_slug

TINY_BUILD = Path(__file__).resolve().parents[1] / "fixtures" / "tiny_build"


def _cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def _run_args(run_dir: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--data",
        str(TINY_BUILD),
        "--run-dir",
        str(run_dir),
        "--no-progress",
        "--max-new-tokens",
        "12",
        "--n-resamples",
        "100",
        *extra,
    ]


@pytest.fixture(scope="module")
def embedded_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real run of the quick suite on the tiny build (3 RealtimeQA questions used for QA, 4 evidence texts)."""
    run_dir = tmp_path_factory.mktemp("run") / "embedded"
    code, out, err = _cli(_run_args(run_dir, "--limit", "3"))
    assert code == 0, err
    return run_dir


def test_run_writes_samples_results_and_config(embedded_run: Path) -> None:
    results = json.loads((embedded_run / "results.json").read_text())
    assert results["backend"] == "llama-cpp" and results["model"].lower().endswith(".gguf")
    configs = results["configs"]
    assert list(configs) == [
        "scrrec-zero-shot/realtimeqa/rs50",
        "scrqa/realtimeqa/original",
        "scrqa/realtimeqa/rs50",
        "scrqa/realtimeqa/sub",
    ]
    for name, entry in configs.items():
        assert entry["n_scored"] == 3 and entry["n_errors"] == 0 and entry["error_rate"] == 0.0
        assert entry["prompt_tokens"]["reported"] == 3 and entry["prompt_tokens"]["mean"] > 20
    scrrec = configs["scrrec-zero-shot/realtimeqa/rs50"]
    assert scrrec["edit_distance"]["value"] >= 0 and scrrec["recovery_rate"]["value"] is not None
    assert 0 <= configs["scrqa/realtimeqa/rs50"]["accuracy"]["value"] <= 100
    assert results["totals"]["n_scored"] == 12
    # which answer reader scored it, in results.json and in the settings
    assert results["reader"] == "careful"
    assert json.loads((embedded_run / "config.json").read_text())["settings"]["parser"] == "careful"
    scores = [json.loads(line) for line in (embedded_run / "scores.jsonl").read_text().splitlines()]
    assert len(scores) == 12 and {s["config"] for s in scores} == set(configs)

    samples = [json.loads(line) for line in (embedded_run / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == 12 and len({s["key"] for s in samples}) == 12
    qa = next(s for s in samples if s["config"] == "scrqa/realtimeqa/rs50")
    assert qa["prompt"].startswith("Question: ") and qa["prompt"].endswith("among A through D, the answer is")
    assert {"output", "prediction", "correct", "unparsed", "answer", "id"} <= set(qa)
    rec = next(s for s in samples if s["task"] == "scrrec-zero-shot")
    assert rec["prompt"].startswith("The following sentence contains words with scrambled letters.")
    assert isinstance(rec["edit_distance"], int)

    config = json.loads((embedded_run / "config.json").read_text())
    assert config["fingerprint"]["model_sha256"] and len(config["fingerprint"]["model_sha256"]) == 64
    assert config["dataset"]["manifest_sha256"] and config["dataset"]["version"] == "tiny-1"
    assert config["settings"]["seed"] == 0 and config["settings"]["max_new_tokens"] == 12
    assert config["settings"]["api_key_given"] is False and "api_key" not in config["settings"]
    assert config["package_version"]


def test_rerun_resumes_and_sends_nothing(embedded_run: Path) -> None:
    before = (embedded_run / "samples.jsonl").read_bytes()
    code, out, err = _cli(_run_args(embedded_run, "--limit", "3"))
    assert code == 0, err
    results = json.loads((embedded_run / "results.json").read_text())
    assert results["engine"]["sent"] == 0 and results["engine"]["reused"] == 12
    assert (embedded_run / "samples.jsonl").read_bytes() == before


def test_a_run_folder_written_before_answers_named_their_endpoint_resumes(
    embedded_run: Path, tmp_path: Path
) -> None:
    """Records without an endpoint, and a config.json with only the health check: the answers are taken as the
    endpoint that config.json named (the same GGUF file by name and sha256), so nothing is sent again; a
    config.json naming another model file gives them to nobody without --replicas."""
    old = tmp_path / "old"
    old.mkdir()
    records = [json.loads(line) for line in (embedded_run / "samples.jsonl").read_text().splitlines()]
    assert all(record["endpoint"]["backend"] == "llama-cpp" for record in records)
    (old / "samples.jsonl").write_text(
        "".join(json.dumps({k: v for k, v in r.items() if k != "endpoint"}) + "\n" for r in records)
    )
    config = json.loads((embedded_run / "config.json").read_text())
    old_config = {k: v for k, v in config.items() if k not in ("endpoint", "legacy_endpoint", "replicas")}
    (old / "config.json").write_text(json.dumps(old_config))
    code, _, err = _cli(_run_args(old, "--limit", "3"))
    assert code == 0, err
    results = json.loads((old / "results.json").read_text())
    assert results["engine"]["sent"] == 0 and results["engine"]["reused"] == 12
    assert [entry["answers"] for entry in results["engine"]["endpoints"]] == [12]
    # carried on: config.json now says whose the old records are
    assert json.loads((old / "config.json").read_text())["legacy_endpoint"] == config["endpoint"]

    other = tmp_path / "other"
    other.mkdir()
    (other / "samples.jsonl").write_text((old / "samples.jsonl").read_text())
    other_config = {**old_config, "fingerprint": {**old_config["fingerprint"], "model_sha256": "0" * 64}}
    (other / "config.json").write_text(json.dumps(other_config))
    code, _, err = _cli(_run_args(other, "--limit", "3"))
    assert code == 2 and "holds answers of another endpoint (12 from llama-cpp model " in err, err


def test_corrupt_line_in_run_folder_is_reported_and_the_rest_kept(embedded_run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    lines = (embedded_run / "samples.jsonl").read_text().splitlines()
    (copy / "samples.jsonl").write_text("\n".join([lines[0], "{broken json", *lines[1:]]) + "\n")
    code, out, err = _cli(_run_args(copy, "--limit", "3"))
    assert code == 0, err
    assert "samples.jsonl:2: not valid JSON" in out
    results = json.loads((copy / "results.json").read_text())
    assert results["engine"]["sent"] == 0 and results["totals"]["n_scored"] == 12
    assert (copy / "samples.jsonl.corrupt").read_text() == "{broken json\n"


@pytest.mark.slow
def test_dry_run_counts_requests_and_tokens_and_sends_nothing(tmp_path: Path) -> None:
    run_dir = tmp_path / "dry"
    code, out, err = _cli(
        _run_args(run_dir, "--dry-run", "--suite", "paper", "--datasets", "dream", "--limit", "2")
    )
    assert code == 0, err
    assert "nothing sent" in out and "scrqa/dream/kfl" in out
    assert "14 request(s)" in " ".join(out.split())
    assert "counted by the llama-cpp backend's own tokenizer" in " ".join(out.split())
    assert "prompt tokens per scramble type" in out
    assert not (run_dir / "samples.jsonl").exists()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["chat", "completion"])
def test_dry_run_prompt_tokens_equal_what_the_run_then_reports(tmp_path: Path, mode: str) -> None:
    """The dry run counted the bare prompt text while chat requests carry the chat template too: the quick
    suite's 3,937 counted tokens were 4,897 sent. It now counts each request as the backend sends it."""
    run_dir = tmp_path / mode
    args = _run_args(run_dir, "--limit", "2", "--prompt-mode", mode, "--max-new-tokens", "2")
    code, out, err = _cli([*args, "--dry-run"])
    assert code == 0, err
    counted = int(
        re.search(r"([\d,]+) prompt tokens \(counted", " ".join(out.split())).group(1).replace(",", "")
    )
    code, out, err = _cli(args)
    assert code == 0, err
    totals = json.loads((run_dir / "results.json").read_text())["totals"]
    assert totals["n_scored"] == 8
    assert counted == totals["prompt_tokens"]


@pytest.mark.slow
def test_context_too_long_is_a_counted_skip(tmp_path: Path) -> None:
    run_dir = tmp_path / "short"
    # the four AQuA chain-of-thought exemplars alone are ~500 tokens: they cannot fit a 256-token window
    code, out, err = _cli(
        _run_args(
            run_dir,
            "--n-ctx",
            "256",
            "--limit",
            "2",
            "--tasks",
            "aqua-cot",
            "--types",
            "rs50",
            "--exemplar-rate",
            "0",
        )
    )
    assert code == 0, err
    results = json.loads((run_dir / "results.json").read_text())
    entry = results["configs"]["aqua-cot/aqua/rs50/exemplars-0"]
    assert entry["n_context_too_long"] == 2 and entry["n_scored"] == 0 and entry["error_rate"] == 1.0
    assert entry["accuracy"]["value"] is None
    # a skip is no failure: a rerun would skip it again, so the run is complete and exits 0
    assert entry["complete"] and entry["n_failed"] == 0 and results["totals"]["complete"]
    assert "2 prompt(s) longer than the context window, counted as skips" in " ".join(out.split())
    assert "failed after their retries" not in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--backend", "vllm"],
            "Invalid value for '--backend' / '-b': 'vllm' is not one of 'llama-cpp', 'openai'",
        ),
        (["--datasets", "squad"], "unknown dataset 'squad'"),
        (["--types", "kfx"], "unknown scramble type 'kfx'"),
        (["--tasks", "summarise"], "unknown task 'summarise'"),
        (["--backend", "openai", "--base-url", "ftp://example.org"], "--base-url must be an http(s) URL"),
        (["--suite", "everything"], "Invalid value for '--suite' / '-s': 'everything' is not one of 'quick'"),
        (
            ["--prompt-mode", "both"],
            "Invalid value for '--prompt-mode': 'both' is not one of 'chat', 'completion'",
        ),
        (["--exemplar-rate", "30", "--tasks", "aqua-cot", "--types", "original"], "unknown exemplar rate 30"),
        (["--base-url", "http://127.0.0.1:8000/v1"], "--base-url does not apply to the llama-cpp backend"),
        (
            ["--exemplar-rate", "20"],
            "--exemplar-rate applies to the aqua-cot task, which this selection leaves out",
        ),
        (["--revision", "v1"], "--revision applies to a Hub dataset id"),
        (["--limit", "0"], "Invalid value for '--limit' / '-n': Input should be greater than or equal to 1"),
        (
            ["--concurrency", "0"],
            "Invalid value for '--concurrency': Input should be greater than or equal to 1",
        ),
        (["--retries", "-1"], "Invalid value for '--retries': Input should be greater than or equal to 0"),
        # the help says (0, 1): a 100% interval is no interval
        (["--confidence-level", "1.0"], "Invalid value for '--confidence-level': must be between 0 and 1"),
        (["--confidence-level", "0"], "Invalid value for '--confidence-level': must be between 0 and 1"),
    ],
)
def test_bad_input_is_one_line_with_non_zero_exit(tmp_path: Path, extra: list[str], message: str) -> None:
    code, out, err = _cli(_run_args(tmp_path / "bad", *extra))
    assert code != 0
    assert err.startswith(f"error: {message}") and err.count("\n") == 1, err
    assert "Traceback" not in err


@pytest.mark.slow
def test_a_run_adds_the_configs_the_build_lacks(tmp_path: Path, source_mirror: Path) -> None:
    """`run --types kr2` on a build without kr2 builds it into that build, says so, and changes no file there."""
    import hashlib

    from scrambled_bench.builder.build import build_dataset

    build = build_dataset(
        tmp_path / "sb", sources=["dream"], types=["original", "sub"], source_dir=source_mirror
    )
    before = {p.name: hashlib.sha256(p.read_bytes()).digest() for p in build.glob("data/*/*.parquet")}
    args = ["run", "--data", str(build), "--run-dir", str(tmp_path / "run"), "--no-progress", "--dry-run"]
    code, out, err = _cli(
        [*args, "--tasks", "scrqa", "--datasets", "dream", "--types", "kr2", "--limit", "2"]
    )
    assert code == 0, err
    assert "added 1 config(s) to" in err and "dream_kr2" in err, err
    assert "scrqa/dream/kr2" in out
    assert (build / "data" / "dream_kr2").is_dir()
    kept = {p.name: hashlib.sha256(p.read_bytes()).digest() for p in build.glob("data/*/*.parquet")}
    assert all(kept[name] == digest for name, digest in before.items())


@pytest.mark.slow
def test_a_build_that_cannot_grow_names_the_command_that_fixes_it(
    tmp_path: Path, source_mirror: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tiny fixture is a build of another version: the run cannot add to it, says which command rebuilds
    it, and after running exactly that command the same run works."""
    import shlex
    import shutil

    monkeypatch.setenv("SCRAMBLED_BENCH_SOURCE_DIR", str(source_mirror))
    build = tmp_path / "tiny"
    shutil.copytree(TINY_BUILD, build)
    args = ["run", "--data", str(build), "--run-dir", str(tmp_path / "x"), "--no-progress", "--dry-run"]
    args += ["--tasks", "scrqa", "--types", "kr2", "--datasets", "dream", "--limit", "1"]
    code, _, err = _cli(args)
    assert code != 0
    assert (
        err.startswith("error: the build ") and "lacks config(s) dream_kr2" in err and err.count("\n") == 1
    ), err
    fix = shlex.split(re.search(r"`([^`]+)`", err).group(1))
    assert fix[:2] == ["scrambled-bench", "build"]
    code, _, build_err = _cli(fix[1:])
    assert code == 0, build_err
    code, out, err = _cli(args)
    assert code == 0, err
    assert "scrqa/dream/kr2" in out


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.parametrize("backend", ["openai", "tgi"])
def test_real_evaluation_through_the_chat_endpoints(llama_server, tmp_path: Path, backend: str) -> None:
    """The same small evaluation through llama.cpp's server: OpenAI chat completions and TGI's Messages API."""
    served_model = llama_server.get_json("/v1/models")["data"][0]["id"]
    run_dir = tmp_path / backend
    base_url = llama_server.base_url if backend == "openai" else llama_server.root_url
    args = _run_args(
        run_dir,
        "--backend",
        backend,
        "--base-url",
        base_url,
        "--model",
        served_model,
        "--api-key",
        "sk-test-secret-value",
        "--limit",
        "2",
        "--concurrency",
        "2",
    )
    code, out, err = _cli(args)
    assert code == 0, err
    results = json.loads((run_dir / "results.json").read_text())
    assert (
        results["backend"] == backend
        and results["totals"]["n_scored"] == 8
        and results["totals"]["n_errors"] == 0
    )
    for entry in results["configs"].values():
        assert entry["prompt_tokens"]["reported"] == 2  # usage reported by the server
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert all(s["chat"] is True and isinstance(s["output"], str) for s in samples)
    for name in ("results.json", "config.json", "samples.jsonl"):
        assert "sk-test-secret-value" not in (run_dir / name).read_text()
    assert "sk-test-secret-value" not in out + err


@pytest.mark.server
@pytest.mark.slow
def test_raw_completions_through_tgi_generate(tgi_schema_server, tmp_path: Path) -> None:
    """--prompt-mode completion sends the raw prompt to TGI's native /generate."""
    run_dir = tmp_path / "tgi-raw"
    args = _run_args(
        run_dir,
        "--backend",
        "tgi",
        "--base-url",
        tgi_schema_server.root_url,
        "--prompt-mode",
        "completion",
        "--limit",
        "2",
        "--tasks",
        "scrqa",
    )
    code, out, err = _cli(args)
    assert code == 0, err
    results = json.loads((run_dir / "results.json").read_text())
    assert results["totals"]["n_scored"] == 6 and results["totals"]["n_errors"] == 0
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert all(s["chat"] is False for s in samples)


def test_tgi_run_without_model_lands_in_the_served_models_folder(
    tgi_schema_server, tmp_path: Path, monkeypatch
) -> None:
    """Without --model the tgi backend learns the model from /info; the default run folder names that model
    (it used to be runs/model-<hash> for whatever the URL served, so two models shared one folder)."""
    monkeypatch.chdir(tmp_path)
    args = [
        "run",
        "--data",
        str(TINY_BUILD),
        "--no-progress",
        "--max-new-tokens",
        "4",
        "--n-resamples",
        "10",
        "--backend",
        "tgi",
        "--base-url",
        tgi_schema_server.root_url,
        "--limit",
        "1",
        "--tasks",
        "scrqa",
    ]
    code, out, err = _cli(args)
    assert code == 0, err
    [folder] = list((tmp_path / "runs").iterdir())
    served = json.loads((folder / "config.json").read_text())["fingerprint"]["model_id"]
    assert folder.name.startswith(model_slug(served) + "-"), (folder.name, served)
    samples = [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines()]
    assert {s["model"] for s in samples} == {served}
    # the same command again finds the same folder and sends nothing
    code, out, err = _cli(args)
    assert code == 0, err
    assert json.loads((folder / "results.json").read_text())["engine"]["sent"] == 0


def test_unreachable_endpoint_fails_fast_with_one_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # free now, and nothing listens on it
    url = f"http://127.0.0.1:{port}/v1"
    code, out, err = _cli(
        _run_args(
            tmp_path / "down",
            "--backend",
            "openai",
            "--base-url",
            url,
            "--model",
            "m",
            "--api-key",
            "sk-unreachable-secret",
        )
    )
    assert code != 0
    assert err.startswith("error: ") and err.count("\n") == 1 and "127.0.0.1" in err, err
    assert "sk-unreachable-secret" not in err


@pytest.mark.parametrize("backend", ["openai", "tgi"])
def test_credentials_in_the_url_stay_out_of_the_error_line(tmp_path: Path, backend: str) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://me:url-secret-1@127.0.0.1:{port}/v1?api-key=url-secret-2"
    code, out, err = _cli(
        _run_args(tmp_path / "down", "--backend", backend, "--base-url", url, "--model", "m")
    )
    assert code != 0 and err.startswith("error: ") and err.count("\n") == 1, err
    assert "url-secret" not in err and "127.0.0.1" in err, err


def test_report_on_a_real_run_folder(embedded_run: Path, tmp_path: Path) -> None:
    code, out, err = _cli(["report", str(embedded_run), "--plot", str(tmp_path / "figures")])
    assert code == 0, err
    results = json.loads((embedded_run / "results.json").read_text())
    accuracy = results["configs"]["scrqa/realtimeqa/rs50"]["accuracy"]["value"]
    assert "ScrQA zero-shot on RealtimeQA (cf. Table 5)" in out
    assert f"| {results['model']} | Acc | " in out and f"{accuracy:.2f}" in out
    assert (tmp_path / "figures" / "scrqa.svg").is_file() and (tmp_path / "figures" / "scrrec.png").is_file()


def test_hub_dataset_offline_is_a_one_line_error(tmp_path: Path, hub_offline: None) -> None:
    code, out, err = _cli(
        [
            "run",
            "--data",
            "some-org/scrambled-bench",
            "--revision",
            "v1.0.0",
            "--run-dir",
            str(tmp_path / "hub"),
            "--no-progress",
            "--limit",
            "1",
        ]
    )
    assert code != 0
    assert err.startswith("error: cannot read dataset some-org/scrambled-bench") and err.count("\n") == 1, err


@pytest.mark.server
def test_dry_run_counts_with_the_servers_tokenize_endpoint(llama_server, tmp_path: Path) -> None:
    """llama-cpp-python's server tokenizes raw text (/extras/tokenize) and keeps its chat template to itself:
    a chat dry run says its count is a lower bound and how to count the template."""
    served_model = llama_server.get_json("/v1/models")["data"][0]["id"]
    code, out, err = _cli(
        _run_args(
            tmp_path / "dry-openai",
            "--backend",
            "openai",
            "--base-url",
            llama_server.base_url,
            "--model",
            served_model,
            "--dry-run",
            "--limit",
            "2",
        )
    )
    assert code == 0, err
    text = " ".join(out.split())
    assert "8 request(s)" in text and "counted by llama-cpp-python's /extras/tokenize" in text
    assert "lower bound" in text and "--tokenizer" in text
    assert not (tmp_path / "dry-openai" / "samples.jsonl").exists()


def test_tokenizer_without_dry_run_is_refused(tmp_path: Path) -> None:
    code, out, err = _cli(_run_args(tmp_path / "x", "--tokenizer", "some/tokenizer"))
    assert code == 2
    assert (
        err == "error: --tokenizer applies to --dry-run only (a run counts the tokens the server reports)\n"
    )


@pytest.mark.server
@pytest.mark.slow
def test_run_through_a_faulty_proxy_scores_like_a_clean_run(
    llama_server, fault_proxy, tmp_path: Path
) -> None:
    """500/503/429/stalls/drops/malformed JSON in front of the real server: the CLI's results.json equals a clean run's."""
    served_model = llama_server.get_json("/v1/models")["data"][0]["id"]
    common = [
        "--backend",
        "openai",
        "--model",
        served_model,
        "--limit",
        "2",
        "--concurrency",
        "2",
        "--retries",
        "8",
    ]
    code, _, err = _cli(_run_args(tmp_path / "clean", *common, "--base-url", llama_server.base_url))
    assert code == 0, err
    proxy = fault_proxy(llama_server.root_url, seed=5, fault_rate=0.5, stall_seconds=12.0)
    code, _, err = _cli(
        _run_args(
            tmp_path / "faulty", *common, "--base-url", proxy.root_url + "/v1", "--request-timeout", "6"
        )
    )
    assert code == 0, err
    clean = json.loads((tmp_path / "clean" / "results.json").read_text())
    faulty = json.loads((tmp_path / "faulty" / "results.json").read_text())
    assert faulty["engine"]["retries"] > 0 and faulty["totals"]["n_errors"] == 0
    assert faulty["configs"] == clean["configs"]
    keys = [
        json.loads(line)["key"] for line in (tmp_path / "faulty" / "samples.jsonl").read_text().splitlines()
    ]
    assert len(keys) == len(set(keys)) == 8


def test_run_folder_depends_on_what_is_sent_and_how_it_is_scored() -> None:
    """The folder is the hash of the run's identity: the configs (whatever spelling selected them), the limit,
    the reader, the seed, the hashes of the data files it reads; never a key, a bootstrap setting or the data's path."""
    from dataclasses import replace

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from scrambled_bench.evaluation.settings import RunSettings, run_dir_for

    base = RunSettings(
        backend="openai", model="org/Model-7B", backend_options={"base_url": "http://h/v1"}, suite="paper"
    )

    def folder(run: RunSettings, *, limit=None, data="manifest:abc", configs=("scrqa/dream/kf",)) -> Path:
        return run_dir_for(run.identity("org/Model-7B", configs=list(configs), limit=limit, data=data))

    @settings(max_examples=50, deadline=None)
    @given(key=st.text(max_size=20), resamples=st.integers(1, 5000), seed=st.integers(1, 100))
    def check(key, resamples, seed) -> None:
        same = folder(base)
        assert same == folder(
            replace(
                base,
                backend_options={**base.backend_options, "api_key": key},
                n_resamples=resamples,
                data="elsewhere",
                types=["kf"],
            )
        )
        assert re.fullmatch(r"Model-7B-[0-9a-f]{10}", same.name)  # a slug and a hash: nothing else leaks in
        assert same != folder(replace(base, seed=base.seed + seed))
        assert same != folder(base, limit=seed)  # --limit 30 never writes into the --limit 8 folder
        assert same != folder(replace(base, parser="paper"))
        assert same != folder(base, data="manifest:other")
        assert same != folder(base, configs=("scrqa/dream/kf", "scrqa/dream/kfl"))

    check()


@pytest.mark.slow
def test_runs_that_send_the_same_requests_share_their_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the default run folders, a run with a larger limit or another reader sends only what no run sent yet."""
    monkeypatch.chdir(tmp_path)
    common = [
        "run",
        "--data",
        str(TINY_BUILD),
        "--no-progress",
        "--max-new-tokens",
        "12",
        "--n-resamples",
        "50",
    ]
    code, _, err = _cli([*common, "--limit", "2"])
    assert code == 0, err
    # the dry run counts as not to send what the run will take from the folder beside it (it counted all 12)
    code, out, err = _cli([*common, "--limit", "3", "--parser", "paper", "--dry-run"])
    assert code == 0, err
    assert re.search(r"│ total +│ +12 │ +4 │", out), out
    assert "not sent: 8 request(s) answered in the run folders beside it, which the run takes" in out
    code, _, err = _cli([*common, "--limit", "3", "--parser", "paper"])
    assert code == 0, err
    folders = sorted(p for p in (tmp_path / "runs").iterdir())
    assert len(folders) == 2  # two identities, two folders
    second = max(folders, key=lambda p: json.loads((p / "results.json").read_text())["limit"] or 0)
    results = json.loads((second / "results.json").read_text())
    assert results["limit"] == 3 and results["reader"] == "paper"
    assert results["engine"]["adopted"] == 8 and results["engine"]["sent"] == 4  # 4 configs x (3 - 2) new
    config = json.loads((second / "config.json").read_text())
    assert config["run_id"] == results["run_id"] and config["identity"]["limit"] == 3
    assert not (second / ".lock").exists()  # a clean exit leaves no lock behind


def test_a_dry_run_that_cannot_ask_the_endpoint_counts_no_answer_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, closed_port_url: str
) -> None:
    """Answers in a folder beside are taken only where this endpoint gave them; a dry run whose endpoint does
    not answer cannot tell, so it counts them as to send and says so in one line."""
    from scrambled_bench.evaluation.evaluate import plan_run
    from scrambled_bench.evaluation.settings import RunSettings

    monkeypatch.chdir(tmp_path)
    args = ["run", "--backend", "openai", "--base-url", closed_port_url, "--model", "m", "--data", str(TINY_BUILD),
            "--limit", "1", "--no-progress", "--dry-run"]  # fmt: skip
    plan = plan_run(
        RunSettings(backend="openai", model="m", backend_options={"base_url": closed_port_url}, data=str(TINY_BUILD),
                    limit=1)
    )  # fmt: skip
    beside = tmp_path / "runs" / "another-run"
    beside.mkdir(parents=True)
    endpoint = {"backend": "openai", "base_url": closed_port_url + "/v1", "model": "m"}
    keys = sorted({request.key("m") for request in plan.all_requests})
    (beside / "samples.jsonl").write_text(
        "".join(json.dumps({"key": key, "output": "A", "endpoint": endpoint}) + "\n" for key in keys)
    )
    code, out, err = _cli(args)
    assert code == 0, err
    assert f"{len(keys)} answer(s) in the folders beside runs/m-" in err
    assert (
        "are not counted: a run takes those this endpoint gave, and it did not say who it is (cannot reach"
        in err
    )
    assert re.search(rf"│ total +│ +{len(keys)} │ +{len(keys)} │", out), out
    assert "not sent:" not in out


def test_a_mistyped_data_path_is_an_error_not_a_new_build(tmp_path: Path) -> None:
    code, _, err = _cli(["run", "--data", str(tmp_path / "scrambld_bench"), "--no-progress", "--limit", "1"])
    assert code == 2 and err.count("\n") == 1, err
    assert "no such folder" in err and "--build-missing" in err
    assert not (tmp_path / "scrambld_bench").exists()


def test_folders_and_files_get_the_users_umask(tmp_path: Path, source_mirror: Path) -> None:
    """A build folder (made by mkdtemp, then renamed) and a run folder are readable by colleagues under 022."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        from scrambled_bench.builder.build import build_dataset

        build = build_dataset(tmp_path / "sb", sources=["aqua"], types=["original"], source_dir=source_mirror)
    finally:
        os.umask(old)
    mode = stat.S_IMODE(build.stat().st_mode)
    assert mode & 0o055 == 0o055, oct(mode)  # group and others may read and enter


def _as_from_a_shell() -> None:
    """In the child, before exec: SIGINT delivered and handled as in a process an interactive shell starts.
    A child inherits its parent's ignored handlers and blocked signals, and pytest may itself have started
    with SIGINT ignored: a shell without job control starts a background command (``.ci/run &``) with SIGINT
    and SIGQUIT ignored (POSIX), and a Python started so keeps SIGINT ignored, so the run would never see
    the Ctrl-C and would finish with exit 0 (what CI once showed)."""
    import signal

    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_ctrl_c_says_what_is_saved_and_how_to_resume(tmp_path: Path) -> None:
    """SIGINT in the middle of a real run of the embedded backend: it stops within seconds (the generation
    under way is stopped between tokens; it once took about a minute), writes results.json from every
    answer received, marked incomplete, says so in one line with the exact command, exits 130 and leaves no
    lock; `report runs/*` reports it, marked; the same command then finishes the run."""
    import signal
    import subprocess
    import sys
    import time

    executable = Path(sys.executable).with_name("scrambled-bench")

    def interrupt(run_dir: Path) -> tuple[subprocess.Popen[str], str, list[str], float, float]:
        args = ["run", "--data", str(TINY_BUILD), "--run-dir", str(run_dir), "--no-progress", "--limit", "3",
                "--max-new-tokens", "256", "--concurrency", "1"]  # fmt: skip
        process = subprocess.Popen(
            [str(executable), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=_as_from_a_shell,
        )  # fmt: skip
        samples = run_dir / "samples.jsonl"
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not (
            samples.is_file() and samples.read_text().count("\n") >= 1
        ):
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        sent_at, sent_wall = time.monotonic(), time.time()
        _, err = process.communicate(timeout=240)
        return process, err, args, time.monotonic() - sent_at, sent_wall

    run_dir = tmp_path / "runs" / "interrupted"
    inherited = (
        signal.getsignal(signal.SIGINT),
        signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []),
    )
    process, err, args, exited_after, sent_wall = interrupt(run_dir)
    if process.returncode == 0:
        # seen once in CI, never in 20 tries here: the run finished as if the SIGINT sent right after the
        # first answer never came. One more try in a fresh folder; a second miss fails the test.
        run_dir = tmp_path / "runs" / "interrupted-again"
        process, err, args, exited_after, sent_wall = interrupt(run_dir)
    samples = run_dir / "samples.jsonl"
    assert process.returncode == 130, f"{err}\n(this process's SIGINT handler and blocked: {inherited})"
    [line] = [line for line in err.splitlines() if line.startswith("error:")]
    saved = samples.read_text().count("\n")
    results = json.loads((run_dir / "results.json").read_text())
    total = results["totals"]["n_requests"]
    assert (
        f"interrupted: {saved} answer(s) saved in {run_dir} (results.json: {saved} of {total} requests "
        in line
    )
    assert line.endswith("resume with: scrambled-bench " + " ".join(args))
    assert not (run_dir / ".lock").exists()
    # every answer received is in the results, which say the run is incomplete
    assert results["engine"]["interrupted"] is True and results["totals"]["complete"] is False
    assert results["totals"]["n_scored"] == saved and results["totals"]["n_missing"] == total - saved
    scored_keys = {json.loads(row)["key"] for row in (run_dir / "scores.jsonl").read_text().splitlines()}
    assert scored_keys == {json.loads(record)["key"] for record in samples.read_text().splitlines()}
    # the backend stopped and the results were written within seconds of the SIGINT (a generous bound for a
    # loaded machine); the process's own exit then unloads torch and the rest, which is slower there
    assert (run_dir / "results.json").stat().st_mtime - sent_wall < 20, exited_after
    assert exited_after < 120

    # report runs/*: the interrupted run beside a folder of a run that wrote no results yet
    (tmp_path / "runs" / "killed").mkdir()
    folders = sorted(str(path) for path in (tmp_path / "runs").iterdir())
    code, out, err = _cli(["report", *folders])
    assert code == 0, err
    assert "Incomplete: " in out and "incomplete: " in out
    assert (
        err.startswith(f"left out {tmp_path / 'runs' / 'killed'}: no results.json") and err.count("\n") == 1
    )

    code, _, err = _cli(args)
    assert code == 0, err
    results = json.loads((run_dir / "results.json").read_text())
    assert results["totals"]["n_scored"] == 12 and results["totals"]["complete"] is True
    assert results["engine"]["interrupted"] is False and results["engine"]["reused"] == saved


def test_report_refuses_results_computed_with_other_settings(tmp_path: Path, embedded_run: Path) -> None:
    """A run stopped before it finished has its new config.json beside the results of the run before: the
    report says so instead of showing them as this run's."""
    import shutil

    folder = tmp_path / "stale"
    shutil.copytree(embedded_run, folder)
    config = json.loads((folder / "config.json").read_text())
    config["run_id"] = "0123456789"
    (folder / "config.json").write_text(json.dumps(config))
    code, _, err = _cli(["report", str(folder)])
    assert code == 2 and err.count("\n") == 1, err
    assert "computed with other settings than config.json" in err and "rerun the same `run` command" in err
