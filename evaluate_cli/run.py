"""The ``run`` command: evaluate one model on a suite of Scrambled Bench tasks, resumably.

The pieces, each testable alone: :func:`resolve_data` (a local build, built when missing, or a Hub id),
:func:`plan_requests` (task configs + dataset rows -> requests per config), :func:`default_run_dir` (a folder determined by the settings, so rerunning the
same command resumes), :func:`execute_run` (backend + engine + results files), and the Typer command
that parses options into them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.backends.base import GenerationRequest
from scrambled_bench.evaluate_cli.tasks import TaskConfig

DEFAULT_DATA = "./scrambled_bench"
DEFAULT_RUNS = Path("runs")
BACKENDS = ("llama-cpp", "openai", "tgi", "hf", "transformers")
PROMPT_MODES = ("chat", "completion")
# a Hub dataset id: "owner/name", no leading "." or "/" (those are local paths)
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
#: the estimate --dry-run states when the backend cannot count tokens itself
CHARS_PER_TOKEN_ESTIMATE = 4.0


# -- data ------------------------------------------------------------------------------------------------


@dataclass
class DataSource:
    """Where the dataset configs come from: a local build folder or a Hub dataset at a revision."""

    location: str
    local_dir: Path | None
    revision: str | None = None
    built_now: bool = False
    _cache: dict[str, list[dict]] = field(default_factory=dict, repr=False)

    @property
    def is_local(self) -> bool:
        return self.local_dir is not None

    def describe(self) -> dict[str, Any]:
        from scrambled_bench.evaluate_cli.results import manifest_info

        info: dict[str, Any] = {"location": self.location, "revision": self.revision, "built_now": self.built_now}
        if self.local_dir is not None:
            info.update(manifest_info(self.local_dir))
        else:
            info.update(_hub_manifest_info(self.location, self.revision))
        return info

    def available_configs(self) -> set[str] | None:
        """The configs a local build's manifest lists; ``None`` where that is unknown (Hub, no manifest)."""
        from scrambled_bench.builder.manifest import Manifest

        if self.local_dir is None or not Manifest.exists(self.local_dir):
            return None
        return Manifest.read(self.local_dir).configs

    def check_configs(self, needed: Sequence[str]) -> None:
        """Fail before any request is sent when the build lacks a config the run needs."""
        available = self.available_configs()
        if available is None:
            return
        missing = sorted(set(needed) - available)
        if missing:
            raise ScrambledBenchError(
                f"the build {self.location} lacks config(s) {', '.join(missing)}; rebuild it with every source "
                f"and type the run needs (`scrambled-bench build`), or point --data at another build"
            )

    def rows(self, data_config: str) -> list[dict]:
        """The ``test`` split of one dataset config, as plain dicts (cached: configs share data)."""
        if data_config not in self._cache:
            self._cache[data_config] = _load_split(self, data_config)
        return self._cache[data_config]


def _hub_manifest_info(repo_id: str, revision: str | None) -> dict[str, Any]:
    """The manifest of a Hub build at ``revision`` (hash, version, seed), and the commit it resolved to."""
    from huggingface_hub import HfApi, hf_hub_download

    from scrambled_bench.evaluate_cli.results import manifest_info

    try:
        path = hf_hub_download(repo_id, "manifest.json", repo_type="dataset", revision=revision)
        info = manifest_info(Path(path).parent)
        info["commit"] = HfApi().dataset_info(repo_id, revision=revision).sha
        return info
    except Exception as exc:  # noqa: BLE001 - provenance is best effort; the rows themselves already loaded
        return {"manifest_error": f"{exc.__class__.__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}


def _load_split(source: DataSource, data_config: str) -> list[dict]:
    import datasets

    datasets.disable_progress_bars()
    try:
        if source.is_local:
            dataset = datasets.load_dataset(str(source.local_dir), data_config, split="test")
        else:
            dataset = datasets.load_dataset(source.location, data_config, split="test", revision=source.revision)
    except ValueError as exc:
        message = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        raise ScrambledBenchError(f"dataset config {data_config!r} not loadable from {source.location}: {message}") from None
    except (FileNotFoundError, ConnectionError, OSError) as exc:
        raise ScrambledBenchError(f"cannot read dataset {source.location} ({data_config}): {exc}") from None
    return [dict(row) for row in dataset]


def resolve_data(data: str, *, revision: str | None, types: Sequence[str] = (), progress: bool = True) -> DataSource:
    """A local build folder (built first when missing) or a Hub dataset id (``owner/name`` + ``revision``).

    A missing build gets every source at the default types plus ``types`` (what this run needs), so a later
    run of another suite finds its configs in the same folder.
    """
    path = Path(data).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ScrambledBenchError(f"--data {data}: not a folder (give a local build folder or a Hub id)")
        if revision is not None:
            raise ScrambledBenchError(f"--revision applies to a Hub dataset id (owner/name), not to the local folder {data}")
        return DataSource(str(path), path.resolve())
    if _HUB_ID.match(data) and not data.startswith("."):
        return DataSource(data, None, revision)
    if revision is not None:
        raise ScrambledBenchError(f"--revision applies to a Hub dataset id (owner/name), not to the local folder {data}")
    return DataSource(str(path), _build_missing(path, types, progress=progress).resolve(), revision, built_now=True)


def _build_missing(path: Path, needed_types: Sequence[str], *, progress: bool) -> Path:
    """Build every source at the default types and ``needed_types`` into ``path`` (from
    SCRAMBLED_BENCH_SOURCE_DIR or GitHub); the whole default build takes seconds."""
    from rich.console import Console

    from scrambled_bench.builder.build import DEFAULT_TYPES, SOURCES, build_dataset

    types = list(dict.fromkeys([*DEFAULT_TYPES, *needed_types]))
    source_dir = os.environ.get("SCRAMBLED_BENCH_SOURCE_DIR")
    console = Console(stderr=True, soft_wrap=True)
    console.print(f"building the datasets into {path} from {source_dir or 'the upstream GitHub repositories'}")
    build = dict(types=types, source_dir=Path(source_dir) if source_dir else None)
    if not progress:
        return Path(build_dataset(path, **build))
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("[bold]build"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[config]}"), console=console, transient=True) as bar:
        task = bar.add_task("build", total=len(SOURCES) * len(types), config="reading sources")
        built = build_dataset(
            path, **build,
            progress=lambda config, rows: bar.update(task, advance=1, config=f"{config} ({rows} rows)"),
        )
    return Path(built)


# -- planning --------------------------------------------------------------------------------------------


@dataclass
class RunPlan:
    """Everything a run will send, per config, and the settings that define it."""

    configs: list[TaskConfig]
    requests: dict[TaskConfig, list[GenerationRequest]]
    data: DataSource
    settings: dict[str, Any]

    @property
    def all_requests(self) -> list[GenerationRequest]:
        return [request for requests in self.requests.values() for request in requests]


def plan_requests(
    configs: Sequence[TaskConfig],
    data: DataSource,
    *,
    seed: int,
    max_new_tokens: int,
    chat: bool,
    limit: int | None,
) -> dict[TaskConfig, list[GenerationRequest]]:
    """Each config's requests, built from its dataset config's rows."""
    from scrambled_bench.evaluate_cli.tasks import build_requests

    return {
        config: build_requests(
            config, data.rows(config.data_config), seed=seed, max_new_tokens=max_new_tokens, chat=chat, limit=limit
        )
        for config in configs
    }


def model_slug(model: str) -> str:
    """A folder-safe short name for a model id or file.

    >>> model_slug("HuggingFaceTB/SmolLM2-135M-Instruct")
    'SmolLM2-135M-Instruct'
    >>> model_slug("/models/smollm2-135m-instruct.Q8_0.gguf")
    'smollm2-135m-instruct.Q8_0'
    """
    name = model.rstrip("/").rsplit("/", 1)[-1]
    if name.endswith(".gguf"):
        name = name[: -len(".gguf")]
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "model"


#: settings that change what is sent or what it is scored against; the rest (concurrency, timeouts,
#: --limit) only change how fast or how much, so they must not move a resumed run to a new folder
RUN_IDENTITY = ("backend", "model", "base_url", "provider", "suite", "tasks", "datasets", "types",
                "exemplar_rates", "seed", "max_new_tokens", "prompt_mode", "data", "revision", "n_ctx")


def default_run_dir(settings: Mapping[str, Any], model: str, root: Path = DEFAULT_RUNS) -> Path:
    """``runs/<model-slug>-<hash of the run's identity>``: the same command lands in the same folder.

    >>> default_run_dir({"backend": "openai", "seed": 0}, "gpt-4o").name.startswith("gpt-4o-")
    True
    """
    identity = {name: settings.get(name) for name in RUN_IDENTITY}
    identity["model"] = model
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:10]
    return root / f"{model_slug(model)}-{digest}"


# -- executing -------------------------------------------------------------------------------------------


async def _count_prompt_tokens(backend: Any, requests: Sequence[GenerationRequest]) -> tuple[list[int], bool]:
    """Prompt tokens per request by the backend's tokenizer, else a stated estimate (chars / 4).

    In-process backends count the request as they will send it (chat prompts inside the chat template);
    others can at best count the bare prompt text."""
    counts: list[int] = []
    exact = True
    count_request = getattr(backend, "count_request_tokens", None)
    for request in requests:
        if count_request is not None:
            counts.append(await count_request(request))
            continue
        counted = await backend.count_tokens(request.prompt) if exact else None
        if counted is None:
            exact = False
            counted = max(1, round(len(request.prompt) / CHARS_PER_TOKEN_ESTIMATE))
        counts.append(counted)
    return counts, exact


async def dry_run_summary(plan: RunPlan, backend: Any, done_keys: set[str]) -> list[dict[str, Any]]:
    """Per config: requests it holds, how many a resume would still send, and their prompt tokens."""
    from scrambled_bench.evaluate_cli.engine import unique_requests

    summary = []
    seen: set[str] = set()
    for config, requests in plan.requests.items():
        unique = unique_requests(requests, backend.model)
        to_send = [r for k, r in unique.items() if k not in done_keys and k not in seen]
        seen.update(unique)
        counts, exact = await _count_prompt_tokens(backend, to_send)
        summary.append({
            "config": config.name,
            "requests": len(requests),
            "to_send": len(to_send),
            "prompt_tokens": sum(counts),
            "exact": exact,
        })
    return summary


async def execute_run(
    plan: RunPlan,
    backend: Any,
    run_dir: Path,
    engine_settings: Any,
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 1000,
    progress: bool = True,
    announce: Any = None,
) -> dict[str, Any]:
    """Health-check, write config.json, send what is missing, write results.json; return the results.

    ``announce()`` is called once the endpoint answered, before anything is sent."""
    from scrambled_bench.evaluate_cli.engine import run_requests
    from scrambled_bench.evaluate_cli.results import (
        CONFIG_FILE,
        RESULTS_FILE,
        collect_samples,
        compute_results,
        environment_info,
        results_document,
        scrub_settings,
        write_json,
    )
    from scrambled_bench.evaluate_cli.store import RunStore
    from scrambled_bench.evaluate_cli.tasks import on_result

    fingerprint = await backend.health_check()
    store = RunStore(run_dir)
    if announce is not None:
        announce()
    try:
        run_config = {
            **environment_info(),
            "backend": backend.kind,
            "model": backend.model,
            "suite": plan.settings.get("suite"),
            "settings": scrub_settings(plan.settings),
            "engine": scrub_settings(vars(engine_settings)),
            "dataset": plan.data.describe(),
            "fingerprint": scrub_settings(fingerprint),
            "configs": [config.name for config in plan.configs],
        }
        write_json(run_dir / CONFIG_FILE, run_config)
        stats = await run_requests(
            backend, plan.all_requests, store, engine_settings, on_result=on_result, progress=progress
        )
        if stats.fingerprints:
            # server-side fingerprints (OpenAI system_fingerprint...) arrive with the replies
            run_config["fingerprint"] = {**scrub_settings(fingerprint), "reply_fingerprints": stats.fingerprints}
            write_json(run_dir / CONFIG_FILE, run_config)
        collected = collect_samples(plan.requests, store.completed(), store.errors(), backend.model)
        configs = compute_results(
            collected, confidence_level=confidence_level, n_resamples=n_resamples, seed=plan.settings.get("seed", 0)
        )
        engine_summary = {
            "sent": stats.total - stats.skipped_existing,
            "reused": stats.skipped_existing,
            "succeeded": stats.succeeded,
            "failed": stats.failed,
            "retries": stats.retries,
            "wall_seconds": round(stats.wall_seconds, 3),
            "store_warnings": list(store.warnings),
        }
        document = results_document(configs, run_config=run_config, engine=engine_summary)
        write_json(run_dir / RESULTS_FILE, document)
        return document
    finally:
        store.close()


def _create_backend(kind: str, **options: Any) -> Any:
    from scrambled_bench.evaluate_cli.backends import create_backend

    return create_backend(kind, **options)


def _check_base_url(base_url: str | None) -> None:
    if base_url is not None and not re.match(r"^https?://[^\s/]+", base_url):
        from scrambled_bench.evaluate_cli.backends._common import redact

        raise ScrambledBenchError(
            f"--base-url must be an http(s) URL such as http://127.0.0.1:8080, got {redact(base_url)!r}"
        )


def _print_summary(document: Mapping[str, Any], run_dir: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(soft_wrap=True)  # paths in messages stay whole (and greppable)
    table = Table(title=f"{document['model']} ({document['backend']})")
    if not console.is_terminal:
        console.width = max(console.width, 120)  # logs and pipes: no truncated config names
    for column in ("config", "n", "errors", "unparsed", "ED", "RR %", "Acc %", "RPG %", "prompt tok"):
        if column == "config":
            table.add_column(column, no_wrap=True)
        else:
            table.add_column(column, justify="right", no_wrap=True)

    def fmt(score: Mapping[str, Any] | None, digits: int = 2) -> str:
        # intervals are in results.json and `scrambled-bench report --ci`; the summary stays one line per config
        if not score or score.get("value") is None:
            return "-"
        return f"{score['value']:.{digits}f}"

    for name, entry in document["configs"].items():
        errors = f"{entry['n_errors']}" + (f" ({entry['error_rate']:.1%})" if entry["n_errors"] else "")
        mean_tokens = entry["prompt_tokens"]["mean"]
        table.add_row(
            name,
            str(entry["n_scored"]),
            errors,
            str(entry["unparsed"]),
            fmt(entry.get("edit_distance")),
            fmt(entry.get("recovery_rate"), 1),
            fmt(entry.get("accuracy"), 1),
            "-" if entry["scramble_type"] == "sub" else fmt(entry.get("relative_performance_gain"), 1),
            "-" if mean_tokens is None else f"{mean_tokens:.0f}",
        )
    console.print(table)
    totals = document["totals"]
    engine = document["engine"]
    console.print(f"{engine.get('sent', 0)} request(s) sent, {engine.get('reused', 0)} reused from the run folder, "
                  f"{engine.get('retries', 0)} retries; tokens the endpoint reported: {totals['prompt_tokens']:,} "
                  f"prompt + {totals['completion_tokens']:,} completion")
    if totals["n_errors"]:
        console.print(f"[yellow]{totals['n_errors']} request(s) failed after their retries; "
                      "rerun the same command to retry them[/]")
    if totals["n_missing"]:
        console.print(f"[yellow]{totals['n_missing']} request(s) have no answer yet; rerun the same command[/]")
    for warning in document["engine"].get("store_warnings", []):
        console.print(f"[yellow]warning:[/] {warning}")
    console.print(f"results: {run_dir / 'results.json'}")


def register(app: typer.Typer) -> None:
    """Add the ``run`` command to the root app."""

    @app.command("run")
    def run_command(
        backend: str = typer.Option("llama-cpp", "--backend", "-b", help=f"Where the model runs: {', '.join(BACKENDS)}."),
        model: str | None = typer.Option(None, "--model", "-m", help="Model id, or a .gguf path for llama-cpp (default: the embedded SmolLM2-135M-Instruct)."),
        base_url: str | None = typer.Option(None, "--base-url", help="Server URL for openai / tgi, e.g. http://127.0.0.1:8080/v1."),
        api_key: str | None = typer.Option(None, "--api-key", help="API key (else OPENAI_API_KEY or HF_TOKEN); never written anywhere.", show_default=False),
        provider: str | None = typer.Option(None, "--provider", help="Inference Provider for --backend hf (e.g. together)."),
        suite: str = typer.Option("quick", "--suite", "-s", help="quick (a taste, minutes), paper (Tables 1, 3-7), letters (+ Appendix A.2)."),
        datasets: list[str] | None = typer.Option(None, "--datasets", "-d", help="Only these datasets: realtimeqa, dream, aqua (repeat or comma-separate)."),
        types: list[str] | None = typer.Option(None, "--types", "-t", help="Run the suite's tasks at these scramble types, e.g. rs20,kfl (ScrQA adds original and sub)."),
        tasks: list[str] | None = typer.Option(None, "--tasks", help="Only these tasks: scrrec-zero-shot, scrrec-few-shot, scrqa, aqua-cot."),
        limit: int | None = typer.Option(None, "--limit", "-n", help="At most N samples per config (the quick suite defaults to 8)."),
        seed: int = typer.Option(0, "--seed", help="Seed of the exemplar scrambling, the decoding and the bootstrap."),
        data: str = typer.Option(DEFAULT_DATA, "--data", help="Local build folder (built first when missing) or a Hub dataset id."),
        revision: str | None = typer.Option(None, "--revision", help="Hub dataset revision (branch, tag or commit) with a Hub --data."),
        run_dir: Path | None = typer.Option(None, "--run-dir", help="Run folder (default: runs/<model>-<hash of the settings>, so reruns resume)."),
        concurrency: int = typer.Option(8, "--concurrency", "-c", help="Requests in flight at once."),
        max_rps: float | None = typer.Option(None, "--max-rps", help="At most this many requests per second."),
        max_new_tokens: int = typer.Option(256, "--max-new-tokens", help="Generation length cap."),
        request_timeout: float = typer.Option(120.0, "--request-timeout", help="Seconds before one attempt is abandoned and retried."),
        max_retry_after: float = typer.Option(
            300.0, "--max-retry-after",
            help="Longest Retry-After (s) to wait for; a longer one records the request as failed, for the next resume.",
        ),
        retries: int = typer.Option(5, "--retries", help="Retries per request (429, 5xx, timeouts, dropped connections)."),
        n_ctx: int | None = typer.Option(None, "--n-ctx", help="Context window of the llama-cpp model (default: the model's own); longer prompts are counted skips."),
        exemplar_rate: list[int] | None = typer.Option(None, "--exemplar-rate", help="AQuA: percent of exemplar-question words scrambled: 0, 20, 50, 100 (repeatable)."),
        prompt_mode: str = typer.Option("chat", "--prompt-mode", help="chat: the prompt as one user message; completion: the raw prompt."),
        confidence_level: float = typer.Option(0.95, "--confidence-level", help="Bootstrap interval level in results.json."),
        n_resamples: int = typer.Option(1000, "--n-resamples", help="Bootstrap resamples."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Print the requests and prompt tokens the run would send, send nothing."),
        progress: bool = typer.Option(True, "--progress/--no-progress", help="Show progress bars."),
    ) -> None:
        """Evaluate a model on Scrambled Bench; rerunning the same command resumes where it stopped.

        Examples:

          scrambled-bench run   (the embedded SmolLM2-135M-Instruct on the quick suite, offline)

          scrambled-bench run --backend openai --model gpt-4o-mini --suite paper

          scrambled-bench run --backend tgi --base-url http://127.0.0.1:8080 --types rs50,kfl -d dream

          scrambled-bench run --backend hf --model meta-llama/Llama-3.1-8B-Instruct --provider together

          scrambled-bench run --suite paper --tasks aqua-cot --exemplar-rate 0 --exemplar-rate 100 --limit 50
        """
        from rich.console import Console

        from scrambled_bench.evaluate_cli.engine import EngineSettings
        from scrambled_bench.evaluate_cli.suites import default_limit, resolve_configs

        if backend not in BACKENDS:
            raise ScrambledBenchError(f"unknown backend {backend!r}; choose from {', '.join(BACKENDS)}")
        if prompt_mode not in PROMPT_MODES:
            raise ScrambledBenchError(f"unknown --prompt-mode {prompt_mode!r}; choose chat or completion")
        if not 0 < confidence_level < 1:
            raise ScrambledBenchError(f"--confidence-level must be between 0 and 1, got {confidence_level}")
        _check_base_url(base_url)
        # bounds are checked here, not by Typer, so a bad value is one `error:` line like every other problem
        for name, value, lowest in (("--limit", limit, 1), ("--max-new-tokens", max_new_tokens, 1),
                                    ("--n-ctx", n_ctx, 16), ("--n-resamples", n_resamples, 1),
                                    ("--concurrency", concurrency, 1), ("--retries", retries, 0)):
            if value is not None and value < lowest:
                raise ScrambledBenchError(f"{name} must be at least {lowest}, got {value}")
        configs = resolve_configs(suite, tasks=tasks, datasets=datasets, types=types, exemplar_rates=exemplar_rate)
        limit = limit if limit is not None else default_limit(suite)
        engine_settings = EngineSettings(
            concurrency=concurrency, max_rps=max_rps, max_retries=retries, request_timeout=request_timeout,
            max_retry_after=max_retry_after,
        )
        console = Console(stderr=True, soft_wrap=True)

        needed_types = sorted({config.scramble_type for config in configs})
        source = resolve_data(data, revision=revision, types=needed_types, progress=progress)
        settings = {
            "backend": backend, "model": model, "base_url": base_url, "provider": provider, "api_key": api_key,
            "suite": suite, "tasks": tasks, "datasets": datasets, "types": types, "exemplar_rates": exemplar_rate,
            "limit": limit, "seed": seed, "max_new_tokens": max_new_tokens, "prompt_mode": prompt_mode,
            "data": data, "revision": revision, "confidence_level": confidence_level, "n_resamples": n_resamples,
            "n_ctx": n_ctx,
        }
        source.check_configs([config.data_config for config in configs])
        requests = plan_requests(
            configs, source, seed=seed, max_new_tokens=max_new_tokens, chat=prompt_mode == "chat", limit=limit
        )
        plan = RunPlan(configs, requests, source, settings)
        backend_impl = _create_backend(
            backend, model=model, base_url=base_url, api_key=api_key, provider=provider,
            request_timeout=request_timeout, n_ctx=n_ctx,
        )
        folder = run_dir

        async def go() -> dict[str, Any] | None:
            nonlocal folder
            # one event loop for the backend's whole life: async HTTP clients are bound to the loop they start in
            try:
                if folder is None:
                    if not backend_impl.model:
                        # tgi without --model learns it from /info; the folder (and keys) must name that model,
                        # or two models served at one URL would share one run folder
                        await backend_impl.health_check()
                    folder = default_run_dir(settings, backend_impl.model)
                if dry_run:
                    await _print_dry_run(plan, backend_impl, folder)
                    return None
                return await execute_run(
                    plan, backend_impl, folder, engine_settings,
                    confidence_level=confidence_level, n_resamples=n_resamples, progress=progress,
                    announce=lambda: console.print(
                        f"run folder: {folder} ({len(plan.all_requests)} requests in {len(configs)} configs)"
                    ),
                )
            finally:
                await backend_impl.aclose()

        document = asyncio.run(go())
        if document is not None:
            _print_summary(document, folder)


def _done_keys(folder: Path) -> set[str]:
    """Keys already answered in a run folder, read without taking its lock (a dry run writes nothing)."""
    from scrambled_bench.evaluate_cli.store import SAMPLES_FILE, parse_lines

    path = folder / SAMPLES_FILE
    if not path.is_file():
        return set()
    records, _ = parse_lines(path.read_bytes())
    return {record["key"] for record in records}


async def _print_dry_run(plan: RunPlan, backend: Any, folder: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    summary = await dry_run_summary(plan, backend, _done_keys(folder))
    exact = all(item["exact"] for item in summary)
    table = Table(title=f"dry run: {backend.model} ({backend.kind}), nothing sent")
    for column in ("config", "requests", "to send", "prompt tokens"):
        table.add_column(column, justify="left" if column == "config" else "right")
    for item in summary:
        table.add_row(item["config"], str(item["requests"]), str(item["to_send"]), f"{item['prompt_tokens']:,}")
    total_send = sum(item["to_send"] for item in summary)
    total_tokens = sum(item["prompt_tokens"] for item in summary)
    table.add_row("total", str(sum(item["requests"] for item in summary)), str(total_send), f"{total_tokens:,}")
    console = Console(soft_wrap=True)  # paths in messages stay whole (and greppable)
    console.print(table)
    how = "counted by the model's tokenizer" if exact else (
        f"estimated as characters / {CHARS_PER_TOKEN_ESTIMATE:g} (the backend cannot count tokens offline)"
    )
    console.print(f"{total_send} request(s), {total_tokens:,} prompt tokens ({how}); run folder: {folder}")
