"""``run``: evaluate one model on a suite of Scrambled Bench tasks, resumably.

The command parses options into :class:`~scrambled_bench.harness.settings.RunSettings` and
:class:`~scrambled_bench.harness.engine.EngineSettings` and calls the harness
(:mod:`scrambled_bench.harness.evaluate`), the same functions a Python user calls.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.options import (
    BackendChoice,
    ConfidenceLevelOption,
    NResamplesOption,
    ParserChoice,
    ParserOption,
    ProgressOption,
    PromptModeChoice,
    SuiteChoice,
    TypesOption,
    option,
)
from scrambled_bench.harness.backends import backends_help
from scrambled_bench.harness.settings import DEFAULT_DATA
from scrambled_bench.harness.suites import suites_help
from scrambled_bench.harness.tasks import DATASETS, TASKS
from scrambled_bench.metrics.readers import DEFAULT_READER

#: the backends and suites, listed from their registries under the options of ``run --help``
EPILOG = "\b\nBackends:\n" + backends_help() + "\n\n\b\nSuites:\n" + suites_help()
#: the datasets and tasks that --datasets and --tasks select from, listed from their registries
DATASETS_HELP = f"Only these datasets: {', '.join(DATASETS)} (repeat or comma-separate)."
TASKS_HELP = f"Only these tasks: {', '.join(TASKS)}."


def run(
    ctx: typer.Context,
    backend: Annotated[BackendChoice, option("--backend", "Where the model runs (backends below).")] = BackendChoice.llama_cpp,
    model: Annotated[str | None, option("--model", "Model id, or a .gguf path for llama-cpp (default: the embedded SmolLM2-135M-Instruct).")] = None,
    base_url: Annotated[str | None, option("--base-url", "Server URL for openai / tgi, e.g. http://127.0.0.1:8080/v1.")] = None,
    api_key: Annotated[str | None, option("--api-key", "API key (else OPENAI_API_KEY or HF_TOKEN); never written anywhere.", show_default=False)] = None,
    provider: Annotated[str | None, option("--provider", "Inference Provider for --backend hf (e.g. together).")] = None,
    suite: Annotated[SuiteChoice, option("--suite", "A named grid of configs (suites below).")] = SuiteChoice.quick,
    datasets: Annotated[list[str] | None, option("--datasets", DATASETS_HELP)] = None,
    types: TypesOption = None,
    tasks: Annotated[list[str] | None, option("--tasks", TASKS_HELP)] = None,
    limit: Annotated[int | None, option("--limit", "At most N samples per config (the quick suite defaults to 8).", min=1)] = None,
    seed: Annotated[int, option("--seed", "Seed of the exemplar scrambling, the decoding and the bootstrap.", min=0)] = 0,
    data: Annotated[str, option("--data", "Local build folder (built first when missing) or a Hub dataset id.")] = DEFAULT_DATA,
    revision: Annotated[str | None, option("--revision", "Hub dataset revision (branch, tag or commit) with a Hub --data.")] = None,
    build_missing: Annotated[bool, option("--build-missing", "Build the datasets into --data when that folder does not exist (the default folder always is).")] = False,
    run_dir: Annotated[Path | None, option("--run-dir", "Run folder (default: runs/<model>-<hash of the settings>, so reruns resume).")] = None,
    concurrency: Annotated[int, option("--concurrency", "Requests in flight at once.", min=1)] = 8,
    max_rps: Annotated[float | None, option("--max-rps", "At most this many requests per second.", min=0.001)] = None,
    max_new_tokens: Annotated[int, option("--max-new-tokens", "Generation length cap.", min=1)] = 256,
    request_timeout: Annotated[float, option("--request-timeout", "Seconds before one attempt is abandoned and retried.", min=0.001)] = 120.0,
    max_retry_after: Annotated[float, option("--max-retry-after", "Longest Retry-After (s) to wait for; a longer one records the request as failed, for the next resume.", min=0.0)] = 300.0,
    retries: Annotated[int, option("--retries", "Retries per request (429, 5xx, timeouts, dropped connections).", min=0)] = 5,
    n_ctx: Annotated[int | None, option("--n-ctx", "Context window of the llama-cpp model (default: the model's own); longer prompts are counted skips.", min=16)] = None,
    exemplar_rate: Annotated[list[int] | None, option("--exemplar-rate", "AQuA: percent of exemplar-question words scrambled: 0, 20, 50, 100 (repeatable).")] = None,
    prompt_mode: Annotated[PromptModeChoice, option("--prompt-mode", "chat: the prompt as one user message; completion: the raw prompt.")] = PromptModeChoice.chat,
    parser: ParserOption = ParserChoice[DEFAULT_READER],
    confidence_level: ConfidenceLevelOption = 0.95,
    n_resamples: NResamplesOption = 1000,
    dry_run: Annotated[bool, option("--dry-run", "Print the requests and prompt tokens the run would send, per config and scramble type; send nothing.")] = False,
    tokenizer: Annotated[str | None, option("--tokenizer", "With --dry-run: count tokens with this tokenizer (a .gguf file, a tokenizer folder or a Hub id) instead of the server's or the model's.")] = None,
    progress: ProgressOption = True,
) -> None:  # fmt: skip
    """Evaluate a model on Scrambled Bench; rerunning the same command resumes where it stopped.

    Exit status: 0 when every request was answered; 3 when the run is incomplete (requests still failed
    after their retries, e.g. the server went away): results.json is written and marks each incomplete
    config, and rerunning the same command sends only those; 2 for bad input (fix the command).

    Examples:

      scrambled-bench run   (the embedded SmolLM2-135M-Instruct on the quick suite, offline)

      scrambled-bench run --backend openai --model gpt-4o-mini --suite paper

      scrambled-bench run --backend tgi --base-url http://127.0.0.1:8080 --types rs50,kfl -d dream

      scrambled-bench run --backend hf --model meta-llama/Llama-3.1-8B-Instruct --provider together

      scrambled-bench run --suite paper --tasks aqua-cot --exemplar-rate 0 --exemplar-rate 100 --limit 50
    """
    from scrambled_bench.evaluate_cli.display import BuildAnnouncer, console, print_dry_run, print_run_summary
    from scrambled_bench.harness.engine import EngineSettings
    from scrambled_bench.harness.evaluate import (
        create_run_backend,
        done_keys,
        dry_run_summary,
        execute_run,
        plan_run,
        resolve_run_dir,
    )
    from scrambled_bench.harness.settings import RunSettings
    from scrambled_bench.harness.tokens import choose_token_counter

    settings = RunSettings(
        backend=backend.value, model=model, base_url=base_url, provider=provider, api_key=api_key, n_ctx=n_ctx,
        suite=suite.value, tasks=tasks, datasets=datasets, types=types, exemplar_rates=exemplar_rate, limit=limit,
        seed=seed, max_new_tokens=max_new_tokens, prompt_mode=prompt_mode.value, parser=parser.value, data=data,
        revision=revision, build_missing=build_missing or None,
        confidence_level=confidence_level, n_resamples=n_resamples,
    )  # fmt: skip
    engine = EngineSettings(
        concurrency=concurrency, max_rps=max_rps, max_retries=retries, request_timeout=request_timeout,
        max_retry_after=max_retry_after,
    )  # fmt: skip
    if tokenizer is not None and not dry_run:
        raise ScrambledBenchError(
            "--tokenizer applies to --dry-run only (a run counts the tokens the server reports)"
        )
    err = console(stderr=True)
    with BuildAnnouncer(err, progress=progress) as build:  # says so only if the data must be built first
        plan = plan_run(settings, announce=build.announce, build_progress=build.advance)
    backend_impl = create_run_backend(settings, engine)
    folder: Path | None = None

    async def go() -> dict[str, Any] | None:
        nonlocal folder
        # one event loop for the backend's whole life: async HTTP clients are bound to the loop they start in
        try:
            folder = await resolve_run_dir(plan, backend_impl, run_dir)
            if dry_run:
                counter = await choose_token_counter(
                    backend_impl, tokenizer=tokenizer, chat=plan.settings.chat
                )
                try:
                    for note in counter.notes:  # each step of the order passed over, once
                        err.print(f"[yellow]token count:[/] {note}")
                    summary = await dry_run_summary(plan, backend_impl, done_keys(folder), counter)
                finally:
                    await counter.aclose()
                print_dry_run(summary, backend_impl.model, backend_impl.kind, folder, counter.source)
                return None
            return await execute_run(
                plan,
                backend_impl,
                folder,
                engine,
                progress=progress,
                share=run_dir is None,  # the default folders share answers; --run-dir stays apart
                announce=lambda: err.print(
                    f"run folder: {folder} ({len(plan.all_requests)} requests in {len(plan.configs)} configs)"
                ),
            )
        finally:
            await backend_impl.aclose()

    try:
        document = asyncio.run(go())
    except KeyboardInterrupt:
        raise ScrambledBenchError(
            _interrupted(folder, (ctx.obj or {}).get("argv", [])), exit_code=130
        ) from None
    if document is not None and folder is not None:
        print_run_summary(document, folder)
        _check_complete(document, (ctx.obj or {}).get("argv", []))


def _check_complete(document: dict[str, Any], argv: list[str]) -> None:
    """Exit 3 (:class:`~scrambled_bench.errors.IncompleteRunError`) where requests are still failed or
    unanswered: the results are written, but a script must not take them for a finished run.

    >>> _check_complete({"configs": {"c": {"complete": True}}}, ["run"])
    >>> _check_complete({"configs": {"c": {"n_requests": 4, "n_scored": 3, "n_failed": 1, "complete": False}}}, ["run"])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.IncompleteRunError: the run is incomplete (1 of 1 configs): c: 3 of 4 requests scored: 1 failed after their retries; rerun the same command to complete it: scrambled-bench run
    """
    import shlex

    from scrambled_bench.errors import IncompleteRunError
    from scrambled_bench.harness.results import incomplete_configs

    incomplete = incomplete_configs(document)
    if not incomplete:
        return
    listed = "; ".join(f"{name}: {what}" for name, what in list(incomplete.items())[:3])
    if len(incomplete) > 3:
        listed += f"; and {len(incomplete) - 3} more"
    raise IncompleteRunError(
        f"the run is incomplete ({len(incomplete)} of {len(document['configs'])} configs): {listed}; "
        f"rerun the same command to complete it: {shlex.join(['scrambled-bench', *argv])}"
    )


def _interrupted(folder: Path | None, argv: list[str]) -> str:
    """What Ctrl-C leaves: how many answers are safe in the run folder, and the command that resumes.

    >>> _interrupted(None, ["run", "--limit", "30"])
    'interrupted before anything was sent; run it again: scrambled-bench run --limit 30'
    """
    import shlex

    from scrambled_bench.harness.evaluate import done_keys

    command = shlex.join(["scrambled-bench", *argv])
    if folder is None:
        return f"interrupted before anything was sent; run it again: {command}"
    return f"interrupted: {len(done_keys(folder))} answer(s) saved in {folder}; resume with: {command}"
