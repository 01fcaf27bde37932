"""Evaluating a model, as a library: settings in, a resumable run folder and its results out.

The pieces, each usable alone: :func:`plan_run` (task configs + dataset rows -> requests per config),
:func:`dry_run_summary` (what a run would send, and its prompt tokens), :func:`execute_run` (backend +
engine + results files), and :func:`evaluate_model`, which chains them; ``scrambled-bench run`` is
:func:`evaluate_model` with callbacks that print::

    from scrambled_bench.evaluation import RunSettings, evaluate_model
    results = evaluate_model(RunSettings(suite="quick", limit=2))
    results["configs"]["scrqa/realtimeqa/rs50"]["accuracy"]["value"]

Any backend option goes in ``RunSettings.backend_options``, checked by that backend's config::

    evaluate_model(RunSettings(backend="transformers", model="HuggingFaceTB/SmolLM2-135M-Instruct",
                               backend_options={"batch_size": 32, "device": "cuda"}))
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrambled_bench.builder.scrambler import is_unscrambled
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.aggregate import metric
from scrambled_bench.evaluation.backends import create_backend, create_config
from scrambled_bench.evaluation.backends.base import Backend, GenerationRequest
from scrambled_bench.evaluation.data import BuildProgress, DataSource, resolve_data
from scrambled_bench.evaluation.engine import EngineSettings, EngineStats, run_requests, unique_requests
from scrambled_bench.evaluation.results import (
    CONFIG_FILE,
    RESULTS_FILE,
    SCORES_FILE,
    collect_samples,
    compute_results,
    environment_info,
    results_document,
    score_rows,
    write_json,
    write_jsonl,
)
from scrambled_bench.evaluation.settings import DEFAULT_RUNS, RunSettings, identity_hash, run_dir_for, scrub
from scrambled_bench.evaluation.store import (
    ENDPOINT,
    SAMPLES_FILE,
    Reuse,
    RunStore,
    answers_by_endpoint,
    endpoint_text,
    foreign_answers,
    legacy_endpoint,
    parse_lines,
    shared_records,
)
from scrambled_bench.evaluation.suites import default_limit, resolve_configs
from scrambled_bench.evaluation.tasks import TaskConfig, build_requests, result_hook
from scrambled_bench.evaluation.tokens import TokenCounter, choose_token_counter
from scrambled_bench.metrics import METRIC_NAMES
from scrambled_bench.quiet import quiet_libraries


@dataclass
class RunPlan:
    """Everything a run will send, per config, and the settings that define it."""

    configs: list[TaskConfig]
    requests: dict[TaskConfig, list[GenerationRequest]]
    data: DataSource
    settings: RunSettings
    limit: int | None = None
    """The per-config sample limit in force (``--limit``, else the suite's default)."""

    @property
    def all_requests(self) -> list[GenerationRequest]:
        return [request for requests in self.requests.values() for request in requests]

    def selection(self) -> dict[str, Any]:
        """What ran, whichever options selected it: the tasks, datasets, scramble types and exemplar rates
        of the configs, in order, and the sample limit in force (config.json's ``selection``)."""

        def distinct(values: Any) -> list[Any]:
            return [value for value in dict.fromkeys(values) if value is not None]

        return {
            "suite": self.settings.suite_in_force,
            "tasks": distinct(config.task for config in self.configs),
            "datasets": distinct(config.dataset for config in self.configs),
            "types": distinct(config.scramble_type for config in self.configs),
            "exemplar_rates": distinct(config.exemplar_rate for config in self.configs),
            "limit": self.limit,
        }

    def identity(self, model: str) -> dict[str, Any]:
        """Everything that decides which requests are sent and how they are scored (it names the run folder)."""
        return self.settings.identity(
            model,
            configs=[config.name for config in self.configs],
            limit=self.limit,
            data=self.data.identity([config.data_config for config in self.configs]),
        )


def plan_requests(
    configs: Sequence[TaskConfig],
    data: DataSource,
    *,
    seed: int,
    max_new_tokens: int,
    chat: bool,
    limit: int | None,
) -> dict[TaskConfig, list[GenerationRequest]]:
    """Each config's requests, built by its task from its dataset config's rows."""
    return {
        config: build_requests(
            config,
            data.rows(config.data_config),
            seed=seed,
            max_new_tokens=max_new_tokens,
            chat=chat,
            limit=limit,
        )
        for config in configs
    }


def plan_run(
    settings: RunSettings,
    *,
    announce: Callable[[str], None] | None = None,
    build_progress: BuildProgress | None = None,
) -> RunPlan:
    """The configs the settings select, the data they read (built first when missing) and their requests."""
    configs = resolve_configs(
        settings.suite,
        tasks=settings.tasks,
        datasets=settings.datasets,
        types=settings.types,
        exemplar_rates=settings.exemplar_rates,
    )
    limit = settings.limit if settings.limit is not None else default_limit(settings.suite)
    needed_types = sorted({config.scramble_type for config in configs})
    source = resolve_data(
        settings.data,
        revision=settings.revision,
        types=needed_types,
        build_missing=settings.build_missing,
        announce=announce,
        progress=build_progress,
    )
    added = source.ensure_configs(
        [(config.dataset, config.scramble_type) for config in configs],
        announce=announce,
        progress=build_progress,
    )
    if added and announce is not None:
        announce(f"added {len(added)} config(s) to {source.location}: {', '.join(added)}")
    requests = plan_requests(
        configs,
        source,
        seed=settings.seed,
        max_new_tokens=settings.max_new_tokens,
        chat=settings.chat,
        limit=limit,
    )
    return RunPlan(configs, requests, source, settings, limit)


def create_run_backend(settings: RunSettings, engine: EngineSettings) -> Backend:
    """The backend the settings name, with the engine's request timeout for its HTTP client."""
    return create_backend(settings.backend, **settings.options(), request_timeout=engine.request_timeout)


def options_in_force(settings: RunSettings, engine: EngineSettings) -> dict[str, Any]:
    """Every option of the run's backend as it runs: those given, the defaults of the rest, the engine's
    request timeout (config.json's ``backend_options``, secrets scrubbed).

    >>> options_in_force(RunSettings(backend="llama-cpp", backend_options={"n_threads": 2}), EngineSettings())
    {'request_timeout': 120.0, 'model': None, 'n_ctx': None, 'n_threads': 2}
    """
    config = create_config(settings.backend, **settings.options(), request_timeout=engine.request_timeout)
    return scrub(config.model_dump())


async def resolve_run_dir(
    plan: RunPlan, backend: Backend, run_dir: Path | None, root: Path = DEFAULT_RUNS
) -> Path:
    """``run_dir``, else the folder the run's identity names (the same run resumes there).

    A backend that learns its model from the server (tgi without --model) is asked first: two models
    served at one URL over time must not share a folder."""
    if run_dir is not None:
        return Path(run_dir)
    if not backend.model:
        await backend.health_check()
    return run_dir_for(plan.identity(backend.model), root)


def requests_to_send(
    plan: RunPlan, model: str, done_keys: set[str]
) -> dict[TaskConfig, list[GenerationRequest]]:
    """Per config, the requests a run would still send: each once (the first config that holds it sends
    it), none already answered (``done_keys``)."""
    to_send: dict[TaskConfig, list[GenerationRequest]] = {}
    seen: set[str] = set()
    for config, requests in plan.requests.items():
        unique = unique_requests(requests, model)
        to_send[config] = [r for k, r in unique.items() if k not in done_keys and k not in seen]
        seen.update(unique)
    return to_send


async def dry_run_summary(
    plan: RunPlan, backend: Backend, done_keys: set[str], counter: TokenCounter | None = None
) -> list[dict[str, Any]]:
    """Per config: requests it holds, how many a resume would still send, and their prompt tokens counted
    by ``counter`` (default: :func:`~scrambled_bench.evaluation.tokens.choose_token_counter`'s choice), with
    the config's scramble type and its ``original`` counterpart, for the token inflation per type."""
    own_counter = counter is None
    counter = counter or await choose_token_counter(backend, chat=plan.settings.chat)
    # each config's unscrambled counterpart in the plan: same task, dataset and exemplar rate
    originals = {
        (config.task, config.dataset, config.exemplar_rate): config.name
        for config in plan.configs
        if is_unscrambled(config.scramble_type)
    }
    summary = []
    try:
        for config, to_send in requests_to_send(plan, backend.model, done_keys).items():
            requests = plan.requests[config]
            counts = await counter.count_all(to_send)
            summary.append(
                {
                    "config": config.name,
                    "scramble_type": config.scramble_type,
                    "original": originals.get((config.task, config.dataset, config.exemplar_rate)),
                    "requests": len(requests),
                    "to_send": len(to_send),
                    "prompt_tokens": sum(counts),
                    "exact": counter.exact,
                    "method": counter.method,
                }
            )
    finally:
        if own_counter:
            await counter.aclose()
    return summary


def done_keys(run_dir: Path) -> set[str]:
    """Keys already answered in a run folder, read without taking its lock (a dry run writes nothing)."""
    path = Path(run_dir) / SAMPLES_FILE
    if not path.is_file():
        return set()
    records, _ = parse_lines(path.read_bytes())
    return {record["key"] for record in records}


def results_status(run_dir: Path) -> str:
    """What a run folder's results.json says of the run, in a few words ("" where it has none it can read).

    >>> import json, tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> results_status(folder)
    ''
    >>> _ = (folder / "results.json").write_text(json.dumps({"totals": {"n_scored": 5, "n_requests": 40,
    ...     "complete": False}}))
    >>> results_status(folder)
    'results.json: 5 of 40 requests scored, marked incomplete'
    """
    try:
        totals = json.loads((Path(run_dir) / RESULTS_FILE).read_text(encoding="utf-8"))["totals"]
        scored, requests, complete = totals["n_scored"], totals["n_requests"], totals["complete"]
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    return f"{RESULTS_FILE}: {scored} of {requests} requests scored, " + (
        "complete" if complete else "marked incomplete"
    )


async def execute_run(
    plan: RunPlan,
    backend: Backend,
    run_dir: Path,
    engine_settings: EngineSettings,
    *,
    progress: bool = True,
    announce: Callable[[], None] | None = None,
    share: bool = True,
    replicas: bool = False,
) -> dict[str, Any]:
    """Health-check, write config.json, send what is missing, write results.json; return the results.

    An answer is reused only where this endpoint gave it (the backend's ``endpoint_of`` its health check),
    or, with ``replicas``, where any endpoint did (the run says they serve the same weights); the run
    folder holding answers of another endpoint is a one-line error. With ``share``, a request already
    answered in another run folder beside ``run_dir`` (the same model, prompt and decoding: the same key)
    by an endpoint so accepted is taken from there instead of being sent again. ``announce()`` is called
    once the endpoint answered, before anything is sent.

    Cancelled (Ctrl-C) once config.json is written, it still writes results.json from every answer that
    arrived, marked incomplete (``engine.interrupted``; the requests not answered count as ``n_missing``),
    and the cancellation then goes on."""
    fingerprint = scrub(await backend.health_check())
    reuse = Reuse(backend.endpoint_of(fingerprint), replicas=replicas)
    store = RunStore(run_dir)
    try:
        # read before config.json is written again: whose are the answers stored before records named theirs
        legacy = legacy_endpoint(run_dir)
        needed = {request.key(backend.model) for request in plan.all_requests}
        _refuse_foreign_answers(run_dir, store.completed(), needed, reuse, legacy)
        if announce is not None:
            announce()
        # loaded now, not once the answers are in: loading takes seconds (`evaluate` imports torch where it
        # is installed), and a run stopped early (a dead endpoint) is to write its results and exit at once
        await asyncio.to_thread(_load_metric_modules)
        # a request answered in another run folder (the same model, prompt and decoding: the same key) by this
        # endpoint is not sent again: a run with another limit, reader or data path picks up what was paid for
        shared = shared_records(run_dir, needed, reuse) if share else []
        folder = _RunFolder(
            plan, backend.model, run_dir, store, needed, legacy, shared, adopted=store.adopt(shared),
            config=run_config(plan, backend, engine_settings, fingerprint, reuse, legacy),
        )  # fmt: skip
        write_json(run_dir / CONFIG_FILE, folder.config)
        stats = EngineStats()
        try:
            await run_requests(
                backend, plan.all_requests, store, engine_settings, on_result=result_hook(plan.settings.parser),
                progress=progress, endpoint=reuse.endpoint, stats=stats,
            )  # fmt: skip
        except (asyncio.CancelledError, KeyboardInterrupt):
            # Ctrl-C: every answer that arrived is on disk (run_requests waits for them); the results of the run
            # so far are written, marked incomplete, as a stop for a dead endpoint writes them, so that the
            # run can be reported; then the interruption goes on (a second Ctrl-C stops at once, without them)
            stats.interrupted = True
            folder.write_results(stats)
            raise
        return folder.write_results(stats)
    finally:
        store.close()


def run_config(
    plan: RunPlan,
    backend: Backend,
    engine: EngineSettings,
    fingerprint: Mapping[str, Any],
    reuse: Reuse,
    legacy: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """config.json: what the run is (its identity, settings, backend options in force, selection, data), who
    answers it (the endpoint, its health check's ``fingerprint``) and whose answers it takes (``reuse``), with
    the machine it runs on."""
    settings = plan.settings
    identity = plan.identity(backend.model)
    return {
        **environment_info(),
        "backend": backend.kind,
        "model": backend.model,
        "suite": settings.suite_in_force,
        "run_id": identity_hash(identity),
        "identity": scrub(identity),
        "settings": {**settings.scrubbed(), "suite": settings.suite_in_force},
        "backend_options": options_in_force(settings, engine),
        "selection": plan.selection(),
        "engine": scrub(vars(engine)),
        "dataset": plan.data.describe(),
        "fingerprint": dict(fingerprint),
        # who answers this run's requests; the records stored before records named their endpoint are
        # taken as `legacy_endpoint`'s (see evaluation/store.py)
        ENDPOINT: reuse.endpoint,
        "legacy_endpoint": legacy,
        "replicas": reuse.replicas,
        # the HTTP transport sent with: "httpx" means the slow fallback (warned about on stderr)
        "transport": backend.transport,
        "configs": [config.name for config in plan.configs],
    }


@dataclass
class _RunFolder:
    """A run folder as :func:`execute_run` fills it: its store, its config.json (``config``), the keys of
    the run's requests (``needed``), the endpoint its records of before endpoints were named are taken as
    (``legacy``), and the records taken from the folders beside it (``shared``, ``adopted`` of them new)."""

    plan: RunPlan
    model: str
    path: Path
    store: RunStore
    needed: set[str]
    legacy: dict[str, Any] | None
    shared: list[dict[str, Any]]
    adopted: int
    config: dict[str, Any]

    def write_results(self, stats: EngineStats) -> dict[str, Any]:
        """Score what is in the run folder and write scores.jsonl and results.json (atomically); config.json
        again where the replies brought server-side fingerprints (OpenAI ``system_fingerprint``...)."""
        if stats.fingerprints:
            self.config["fingerprint"] = {
                **self.config["fingerprint"],
                "reply_fingerprints": stats.fingerprints,
            }
            write_json(self.path / CONFIG_FILE, self.config)
        settings = self.plan.settings
        completed = self.store.completed()
        collected = collect_samples(
            self.plan.requests, completed, self.store.errors(), self.model, reader=settings.parser
        )
        configs = compute_results(
            collected,
            confidence_level=settings.confidence_level,
            n_resamples=settings.n_resamples,
            seed=settings.seed,
        )
        engine = {
            **engine_summary(stats, self.path, adopted=self.adopted, shared=self.shared),
            # every endpoint that gave the answers the results rest on
            "endpoints": answers_by_endpoint(completed, self.needed, self.legacy),
            "store_warnings": list(self.store.warnings),
        }
        document = results_document(configs, run_config=self.config, engine=engine, reader=settings.parser)
        write_jsonl(self.path / SCORES_FILE, score_rows(collected))
        write_json(self.path / RESULTS_FILE, document)
        return document


def engine_summary(
    stats: EngineStats, run_dir: Path, *, adopted: int, shared: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """results.json's ``engine``: what the engine sent and reused, and how the run ended.

    >>> summary = engine_summary(EngineStats(total=5, skipped_existing=3, succeeded=2), Path("runs/a"),
    ...     adopted=1, shared=[{"key": "k", "adopted_from": "b"}])
    >>> summary["sent"], summary["reused_from"]
    (2, {'runs/a': 2, 'runs/b': 1})
    """
    adopted_from = Counter(record["adopted_from"] for record in shared)
    return {
        "sent": stats.total - stats.skipped_existing,
        "reused": stats.skipped_existing,
        # where the reused answers came from: this folder (answers it held), or the folders beside it
        # (answers taken from them now); a count per folder
        "reused_from": {
            str(run_dir): stats.skipped_existing - adopted,
            **{str(run_dir.parent / name): count for name, count in sorted(adopted_from.items())},
        },
        "succeeded": stats.succeeded,
        "failed": stats.failed,
        "retries": stats.retries,
        "wall_seconds": round(stats.wall_seconds, 3),
        "adopted": adopted,
        "stopped": stats.stopped,
        # Ctrl-C stopped the run: the requests not yet answered are counted missing (n_missing)
        "interrupted": stats.interrupted,
    }


def _load_metric_modules() -> None:
    """Load the metric modules the results are computed with (once per process)."""
    for name in METRIC_NAMES:
        metric(name)


def _refuse_foreign_answers(
    run_dir: Path,
    completed: dict[str, dict[str, Any]],
    needed: set[str],
    reuse: Reuse,
    legacy: dict[str, Any] | None,
) -> None:
    """A one-line error where the run folder holds answers to this run's requests that another endpoint
    gave: they are never taken as this endpoint's unless the run says the endpoints are replicas."""
    foreign = foreign_answers(completed, needed, reuse, legacy)
    if not foreign:
        return
    listed = "; ".join(f"{count} from {name}" for name, count in foreign.most_common(3))
    raise ScrambledBenchError(
        f"{run_dir} holds answers of another endpoint ({listed}), not of this one "
        f"({endpoint_text(reuse.endpoint)}): give another --run-dir, or --replicas if both serve the "
        "same weights"
    )


@dataclass(frozen=True)
class DryRun:
    """What a run would send, counted and not sent (:func:`evaluate_model` with ``dry_run``)."""

    summary: list[dict[str, Any]]
    """Per config, :func:`dry_run_summary`'s entry."""
    model: str
    backend: str
    run_dir: Path
    counted_by: str
    """What counted the prompt tokens (the token counter's source)."""
    notes: tuple[str, ...] = ()
    """Each token counter passed over before the one that counted, and why."""
    reused_beside: int = 0
    """Requests the folders beside the run folder answered (for this endpoint): a run takes them from there,
    so they are not counted as to send."""
    beside_note: str | None = None
    """Why the folders beside were not looked in, where they were not (the endpoint did not answer)."""


def evaluate_model(
    settings: RunSettings | None = None,
    *,
    engine: EngineSettings | None = None,
    run_dir: str | Path | None = None,
    progress: bool = False,
    announce: Callable[[str], None] | None = None,
    build_progress: BuildProgress | None = None,
    on_run_dir: Callable[[Path], None] | None = None,
    on_start: Callable[[RunPlan, Path], None] | None = None,
    dry_run: Callable[[DryRun], None] | None = None,
    tokenizer: str | None = None,
    replicas: bool = False,
) -> dict[str, Any] | None:
    """Evaluate a model as ``scrambled-bench run`` does and return the results document (results.json).

    ``settings`` default to the quick suite on the embedded SmolLM2-135M-Instruct; ``run_dir`` defaults
    to ``runs/<model>-<hash of the settings>``, so calling again with the same settings resumes.

    The callbacks say how the run goes: ``announce`` and ``build_progress`` while the data is built first
    (as :func:`plan_run`); ``on_run_dir(folder)`` once the run folder is known, before the backend is asked
    anything (a caller that is interrupted then knows where the answers are saved); ``on_start(plan,
    folder)`` once the backend answered, before anything is sent. With ``dry_run``, nothing is sent: what
    the run would send is counted (by ``tokenizer`` where given) and handed to ``dry_run``, and the return
    is None. Answers are reused only where this endpoint gave them, or with ``replicas`` (the endpoints
    serve the same weights) where any did (:func:`execute_run`). Without ``progress``, transformers' and the
    Hub's progress bars and warnings are silenced too.

    >>> evaluate_model(tokenizer="tok.gguf")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --tokenizer applies to --dry-run only (a run counts the tokens the server reports)
    """
    if tokenizer is not None and dry_run is None:
        raise ScrambledBenchError(
            "--tokenizer applies to --dry-run only (a run counts the tokens the server reports)"
        )
    settings = settings or RunSettings()
    engine = engine or EngineSettings()
    folder = Path(run_dir) if run_dir is not None else None
    with quiet_libraries(not progress):  # building or loading the data
        plan = plan_run(settings, announce=announce, build_progress=build_progress)
    backend = create_run_backend(settings, engine)

    with quiet_libraries(not progress):  # loading the model, generating
        return asyncio.run(
            _evaluate(
                plan, backend, engine, folder, progress=progress, replicas=replicas, on_run_dir=on_run_dir,
                on_start=on_start, dry_run=dry_run, tokenizer=tokenizer,
            )
        )  # fmt: skip


async def _evaluate(
    plan: RunPlan,
    backend: Backend,
    engine: EngineSettings,
    folder: Path | None,
    *,
    progress: bool,
    replicas: bool,
    on_run_dir: Callable[[Path], None] | None,
    on_start: Callable[[RunPlan, Path], None] | None,
    dry_run: Callable[[DryRun], None] | None,
    tokenizer: str | None,
) -> dict[str, Any] | None:
    """:func:`evaluate_model` once the plan and the backend are made: the run folder, then the run (or the dry
    run), in one event loop for the backend's whole life (async HTTP clients are bound to the loop they start
    in); the backend is closed after."""
    try:
        resolved = await resolve_run_dir(plan, backend, folder)
        if on_run_dir is not None:
            on_run_dir(resolved)
        # runs in the default folders share answers; a folder of the caller's own choosing stays apart
        share = folder is None
        if dry_run is not None:
            dry_run(await _count_dry_run(plan, backend, resolved, tokenizer, share=share, replicas=replicas))
            return None
        started = (lambda: on_start(plan, resolved)) if on_start is not None else None
        return await execute_run(
            plan,
            backend,
            resolved,
            engine,
            progress=progress,
            share=share,
            replicas=replicas,
            announce=started,
        )
    finally:
        await backend.aclose()


async def _count_dry_run(
    plan: RunPlan, backend: Backend, folder: Path, tokenizer: str | None, *, share: bool, replicas: bool
) -> DryRun:
    """What the run in ``folder`` would still send, counted by ``tokenizer`` or the best counter there is:
    neither what the folder holds, nor (with ``share``) what the folders beside it answered for this
    endpoint, which the run would take from there (:func:`execute_run`)."""
    done = done_keys(folder)
    beside, note = await _answered_beside(plan, backend, folder, done, replicas) if share else (set(), None)
    counter = await choose_token_counter(backend, tokenizer=tokenizer, chat=plan.settings.chat)
    try:
        summary = await dry_run_summary(plan, backend, done | beside, counter)
    finally:
        await counter.aclose()
    return DryRun(
        summary,
        backend.model,
        backend.kind,
        folder,
        counter.source,
        tuple(counter.notes),
        reused_beside=len(beside),
        beside_note=note,
    )


async def _answered_beside(
    plan: RunPlan, backend: Backend, folder: Path, done: set[str], replicas: bool
) -> tuple[set[str], str | None]:
    """The keys of the requests still to answer that the folders beside ``folder`` hold answers to from
    this endpoint (any endpoint's with ``replicas``), as a run would take them (:func:`shared_records`);
    with, where the endpoint could not be asked who it is, why none is counted."""
    wanted = {request.key(backend.model) for request in plan.all_requests} - done
    anyone = Reuse({}, replicas=True)
    held = await asyncio.to_thread(shared_records, folder, wanted, anyone) if wanted else []
    if not held or replicas:  # no endpoint to ask about (or, for replicas, any endpoint's will do)
        return {record["key"] for record in held}, None
    try:
        fingerprint = scrub(await backend.health_check())
    except ScrambledBenchError as exc:
        return set(), (
            f"{len(held)} answer(s) in the folders beside {folder} are not counted: a run takes those this "
            f"endpoint gave, and it did not say who it is ({exc})"
        )
    found = await asyncio.to_thread(shared_records, folder, wanted, Reuse(backend.endpoint_of(fingerprint)))
    return {record["key"] for record in found}, None
