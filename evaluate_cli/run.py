"""``run``: evaluate one model on a suite of Scrambled Bench tasks, resumably.

The command parses options into :class:`~scrambled_bench.evaluation.settings.RunSettings` and
:class:`~scrambled_bench.evaluation.engine.EngineSettings` and calls
:func:`~scrambled_bench.evaluation.evaluate.evaluate_model`, the function a Python user calls, with
callbacks that print. A backend's options are its config's fields: the common ones have flags here, every
one is reached by ``--backend-option KEY=VALUE``, and the epilog lists them from the configs.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scrambled_bench.errors import IncompleteRunError, ScrambledBenchError
from scrambled_bench.evaluate_cli.options import (
    BackendChoice,
    ConfidenceLevelOption,
    NResamplesOption,
    ProgressOption,
    PromptModeChoice,
    ReaderChoice,
    ReaderOption,
    SuiteChoice,
    TypesOption,
    option,
)
from scrambled_bench.evaluation.backends import backend_options_help, backends_help, option_name
from scrambled_bench.evaluation.engine import EngineSettings
from scrambled_bench.evaluation.evaluate import DryRun, RunPlan, done_keys, evaluate_model, results_status
from scrambled_bench.evaluation.results import incomplete_configs
from scrambled_bench.evaluation.settings import DEFAULT_DATA, RunSettings
from scrambled_bench.evaluation.suites import suites_help
from scrambled_bench.evaluation.tasks import DATASETS, TASKS
from scrambled_bench.metrics.readers import DEFAULT_READER

if TYPE_CHECKING:
    from rich.console import Console

    from scrambled_bench.evaluate_cli.display import BuildAnnouncer

#: the backends, their options and the suites, listed from their registries under the options of ``run --help``
EPILOG = (
    "\b\nBackends:\n"
    + backends_help()
    + "\n\n\b\nBackend options (a flag, or --backend-option KEY=VALUE, repeatable):\n\n"
    + backend_options_help()
    + "\n\n\b\nSuites:\n"
    + suites_help()
)
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
    backend_option: Annotated[list[str] | None, option("--backend-option", "An option of the backend, KEY=VALUE (repeatable; each backend's options below), e.g. batch_size=32.", metavar="KEY=VALUE")] = None,
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
    dead_after: Annotated[float, option("--dead-after", "Stop the run (exit 3, resumable) once no request has succeeded for this many seconds and the latest attempts all failed to connect (a server gone away); 0: never.", min=0.0)] = 60.0,
    replicas: Annotated[bool, option("--replicas", "The endpoints serving this model are replicas of the same weights: reuse answers another endpoint gave (from the run folder or the folders beside it); without it, only this endpoint's answers are reused.")] = False,
    n_ctx: Annotated[int | None, option("--n-ctx", "Context window of the llama-cpp model (default: the model's own); longer prompts are counted skips.", min=16)] = None,
    exemplar_rate: Annotated[list[int] | None, option("--exemplar-rate", "AQuA: percent of exemplar-question words scrambled: 0, 20, 50, 100 (repeatable).")] = None,
    prompt_mode: Annotated[PromptModeChoice, option("--prompt-mode", "chat: the prompt as one user message; completion: the raw prompt.")] = PromptModeChoice.chat,
    reader: ReaderOption = ReaderChoice[DEFAULT_READER],
    confidence_level: ConfidenceLevelOption = 0.95,
    n_resamples: NResamplesOption = 1000,
    dry_run: Annotated[bool, option("--dry-run", "Print the requests and prompt tokens the run would send, per config and scramble type; send nothing.")] = False,
    tokenizer: Annotated[str | None, option("--tokenizer", "With --dry-run: count tokens with this tokenizer (a .gguf file, a tokenizer folder or a Hub id) instead of the server's or the model's.")] = None,
    progress: ProgressOption = True,
) -> None:  # fmt: skip
    """Evaluate a model on Scrambled Bench; rerunning the same command resumes where it stopped.

    Exit status: 0 when every request was answered; 3 when the run is incomplete (requests still failed
    after their retries, or the server went away and the run stopped): results.json is written and marks
    each incomplete config, and rerunning the same command sends only those; 2 for bad input (fix the
    command); 130 for Ctrl-C: results.json is written from every answer received, marked incomplete, and
    rerunning the same command resumes.

    Examples:

      scrambled-bench run   (the embedded SmolLM2-135M-Instruct on the quick suite, offline)

      scrambled-bench run --backend openai --model gpt-4o-mini --suite paper

      scrambled-bench run --backend tgi --base-url http://127.0.0.1:8080 --types rs50,kfl -d dream

      scrambled-bench run --backend hf --model meta-llama/Llama-3.1-8B-Instruct --provider together

      scrambled-bench run --suite paper --tasks aqua-cot --exemplar-rate 0 --exemplar-rate 100 --limit 50
    """
    # rich is imported when a command runs, not for `scrambled-bench --help`
    from scrambled_bench.evaluate_cli.display import BuildAnnouncer, console, print_run_summary

    flags = {"base_url": base_url, "provider": provider, "api_key": api_key, "n_ctx": n_ctx}
    settings = RunSettings(
        backend=backend.value, model=model, backend_options=_backend_options(flags, backend_option or []),
        suite=suite.value, tasks=tasks, datasets=datasets, types=types, exemplar_rates=exemplar_rate, limit=limit,
        seed=seed, max_new_tokens=max_new_tokens, prompt_mode=prompt_mode.value, parser=reader.value, data=data,
        revision=revision, build_missing=build_missing or None,
        confidence_level=confidence_level, n_resamples=n_resamples,
    )  # fmt: skip
    engine = EngineSettings(
        concurrency=concurrency, max_rps=max_rps, max_retries=retries, request_timeout=request_timeout,
        max_retry_after=max_retry_after, dead_after=dead_after,
    )  # fmt: skip
    argv = (ctx.obj or {}).get("argv", [])
    err = console(stderr=True)
    with BuildAnnouncer(err, progress=progress) as build:  # says so only if the data must be built first
        shown = _RunPrinter(err, build)
        try:
            document = evaluate_model(
                settings, engine=engine, run_dir=run_dir, progress=progress,
                announce=build.announce, build_progress=build.advance, on_run_dir=shown.found,
                on_start=shown.started, dry_run=shown.dry_run if dry_run else None, tokenizer=tokenizer,
                replicas=replicas,
            )  # fmt: skip
        except KeyboardInterrupt:
            raise ScrambledBenchError(_interrupted(shown.folder, argv), exit_code=130) from None
    if document is not None and shown.folder is not None:
        print_run_summary(document, shown.folder)
        _check_complete(document, argv)


class _RunPrinter:
    """What ``run`` prints as :func:`evaluate_model` goes (its callbacks), on ``err``; and the run folder once
    it is known (``folder``), for the message of a Ctrl-C."""

    def __init__(self, err: Console, build: BuildAnnouncer):
        self.err = err
        self.build = build
        self.folder: Path | None = None

    def found(self, at: Path) -> None:
        """The run folder is known: the data is ready, and its bar makes way for the run's."""
        self.folder = at
        self.build.close()

    def started(self, plan: RunPlan, at: Path) -> None:
        """The endpoint answered: the run folder, and what the run holds."""
        self.err.print(f"run folder: {at} ({len(plan.all_requests)} requests in {len(plan.configs)} configs)")

    def dry_run(self, counted: DryRun) -> None:
        """What the run would send, per config and scramble type, and how it was counted."""
        # rich is imported when a command runs, not for `scrambled-bench --help`
        from scrambled_bench.evaluate_cli.display import print_dry_run

        for note in counted.notes:  # each step of the order passed over, once
            self.err.print(f"[yellow]token count:[/] {note}")
        if counted.beside_note:
            self.err.print(f"[yellow]dry run:[/] {counted.beside_note}")
        print_dry_run(
            counted.summary, counted.model, counted.backend, counted.run_dir, counted.counted_by,
            reused_beside=counted.reused_beside,
        )  # fmt: skip


def _backend_options(flags: dict[str, Any], pairs: list[str]) -> dict[str, Any]:
    """The backend options given: the common ones' flags, and each ``--backend-option KEY=VALUE`` (the
    backend's config types and checks them). An option given both ways is an error, never a silent pick.

    >>> _backend_options({"base_url": None}, ["batch_size=32", "device=cuda:1"])
    {'batch_size': '32', 'device': 'cuda:1'}
    >>> _backend_options({"n_ctx": 512}, ["n_ctx=1024"])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --backend-option n_ctx together with --n-ctx: give it once
    >>> _backend_options({}, ["batch_size"])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --backend-option takes KEY=VALUE, got 'batch_size'
    """
    options = {name: value for name, value in flags.items() if value is not None}
    flagged = set(options)
    for pair in pairs:
        key, equals, value = pair.partition("=")
        key = key.strip()
        if not equals or not key:
            raise ScrambledBenchError(f"--backend-option takes KEY=VALUE, got {pair!r}")
        if key in options:  # values unsaid: one may be a key
            twice = option_name(key) if key in flagged else f"another --backend-option {key}"
            raise ScrambledBenchError(f"--backend-option {key} together with {twice}: give it once")
        options[key] = value
    return options


def _check_complete(document: dict[str, Any], argv: list[str]) -> None:
    """Exit 3 (:class:`~scrambled_bench.errors.IncompleteRunError`) where requests are still failed or
    unanswered: the results are written, but a script must not take them for a finished run.

    >>> _check_complete({"configs": {"c": {"complete": True}}}, ["run"])
    >>> _check_complete({"configs": {"c": {"n_requests": 4, "n_scored": 3, "n_failed": 1, "complete": False}}}, ["run"])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.IncompleteRunError: the run is incomplete (1 of 1 configs): c: 3 of 4 requests scored: 1 failed after their retries; rerun the same command to complete it: scrambled-bench run
    """
    incomplete = incomplete_configs(document)
    if not incomplete:
        return
    listed = "; ".join(f"{name}: {what}" for name, what in list(incomplete.items())[:3])
    if len(incomplete) > 3:
        listed += f"; and {len(incomplete) - 3} more"
    stopped = (document.get("engine") or {}).get("stopped")
    why = f"; stopped early, the endpoint is unreachable: {stopped}" if stopped else ""
    raise IncompleteRunError(
        f"the run is incomplete ({len(incomplete)} of {len(document['configs'])} configs): {listed}{why}; "
        f"rerun the same command to complete it: {shlex.join(['scrambled-bench', *argv])}"
    )


def _interrupted(folder: Path | None, argv: list[str]) -> str:
    """What Ctrl-C leaves: how many answers are safe in the run folder, what its results.json says (written
    with the answers received, marked incomplete), and the command that resumes.

    >>> _interrupted(None, ["run", "--limit", "30"])
    'interrupted before anything was sent; run it again: scrambled-bench run --limit 30'
    """
    command = shlex.join(["scrambled-bench", *argv])
    if folder is None:
        return f"interrupted before anything was sent; run it again: {command}"
    status = results_status(folder)
    results = f" ({status})" if status else ""
    return (
        f"interrupted: {len(done_keys(folder))} answer(s) saved in {folder}{results}; resume with: {command}"
    )
