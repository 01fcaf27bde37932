"""Paired significance between runs evaluated on the same samples (``report --compare``).

Two runs of one build answer the same questions, so their difference is measured per sample: every
statistic here pairs the runs' scores on one sample id. The first run is the baseline; every other run
is compared with it, config by config, on the samples both answered with the same prompt. For each
config they share:

- the difference (other minus baseline) of each metric of the task (Acc, RPG, ED, RR) on those samples,
  with its interval: for accuracy (paired right/wrong answers) **Tango's score interval** for the
  difference of paired proportions, for ED, RR and RPG a **paired bootstrap** interval: the same resampled
  ids for both runs (seeded), BCa where it is defined and the percentile interval where it is not;
- one test per config: the **McNemar score test** on the discordant pairs for accuracy (the chi-square
  without continuity correction, statsmodels), which Tango's interval inverts, so the interval excludes 0
  exactly when p < 1 - level; the **Wilcoxon signed-rank test** on per-sample edit distances for ScrRec
  (scipy; RR on the same samples moves with ED exactly, so it shares that test);
- an **underpowered** mark on an accuracy row with fewer shared samples than the McNemar score test needs
  to detect a 10-point difference with the stated power even at its most favourable
  (:func:`~scrambled_bench.metrics.statistics.underpowered_below`: 54 at alpha 0.05 and 80 % power);
- **Benjamini-Hochberg**-adjusted p-values across every test in the comparison (statsmodels);
- **Wilson intervals** for each run's accuracy, as in results.json;
- the **minimum detectable difference**: the smallest true difference that a two-sided test at level
  alpha finds with the stated power at this sample size, given the spread of the paired differences
  (``(z_{1-alpha/2} + z_{power}) * SE``; SE of the mean paired difference, or the bootstrap's for RPG,
  which is not a mean).

Every statistic comes from :mod:`scrambled_bench.metrics.statistics`, which the pairing of a scrambled
variant with its canonical task uses too. Runs that share no sample are refused with the settings that make them differ; a partial overlap is
compared on the intersection and says so.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.results import SCORES_FILE
from scrambled_bench.evaluation.store import SAMPLES_FILE, parse_lines
from scrambled_bench.evaluation.tasks import TaskConfig, get_task
from scrambled_bench.evaluation.tasks.base import ACCURACY, ED, RPG, RR, Metric
from scrambled_bench.io import read_jsonl
from scrambled_bench.metrics.statistics import (
    MCNEMAR_SCORE,
    PERCENTILE,
    CompareSettings,
    benjamini_hochberg,
    minimum_detectable_difference,
    paired_bootstrap,
    paired_proportions,
    resampled_mean,
    standard_error,
    underpowered_note,
    wilcoxon_p,
    wilson_percent,
)
from scrambled_bench.report.marks import level_label
from scrambled_bench.report.runs import Run, setting_in_force
from scrambled_bench.tables import Footnotes, ReportTable

MCNEMAR = MCNEMAR_SCORE
WILCOXON = "Wilcoxon signed-rank"


@dataclass
class MetricComparison:
    """One metric of one config: both runs' values on the shared samples and their paired difference."""

    config: str
    metric: Metric
    n_shared: int
    n_baseline: int
    n_other: int
    baseline: float | None
    other: float | None
    difference: float | None = None
    interval: tuple[float, float] | None = None
    interval_method: str | None = None
    """How ``interval`` was made: ``tango`` (Acc), else ``bca``, or ``percentile`` where BCa is undefined."""
    undefined_resamples: int = 0
    test: str | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    mdd: float | None = None
    wilson_baseline: tuple[float, float] | None = None
    wilson_other: tuple[float, float] | None = None
    discordant: tuple[int, int] | None = None
    """McNemar's discordant pairs: (baseline right and other wrong, baseline wrong and other right)."""
    underpowered: bool | None = None
    """Acc: whether fewer samples are shared than ``underpowered_below`` (None for the other metrics)."""
    underpowered_below: int | None = None
    note: str = ""


@dataclass
class PairComparison:
    """Every shared config of one run against the baseline."""

    baseline: Run
    other: Run
    rows: list[MetricComparison] = field(default_factory=list)
    """A comparison per (config, metric) both runs scored."""
    partial: list[str] = field(default_factory=list)
    """Configs compared on fewer samples than either run has (why, in words)."""


# -- samples ---------------------------------------------------------------------------------------------


def _accepts_reader(task: Any) -> bool:
    return "reader" in inspect.signature(task.score).parameters


def load_samples(run: Run) -> dict[str, dict[str, dict[str, Any]]]:
    """Config name -> sample id -> scored sample, from the run's samples.jsonl.

    Each record is scored again from its raw output, as results.json is (with the answer reader the run
    recorded, where the task reads with one), and carries a hash of its prompt: the same id with another
    prompt (another build seed, other exemplars) is not the same sample. Which samples a config rests on
    comes from scores.jsonl, so a record two configs shared (identical prompts) counts for both.

    >>> import json, tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> record = {"key": "k", "task": "scrqa", "dataset": "dream", "config": "scrqa/dream/rs50", "id": "q1",
    ...           "choices": ["Ann", "Bob", "Cy"], "answer": "B", "prompt": "P", "chat": True, "output": "B"}
    >>> _ = (folder / "samples.jsonl").write_text(json.dumps(record) + "\\n")
    >>> sample = load_samples(Run(folder, {"configs": {}}, {}))["scrqa/dream/rs50"]["q1"]
    >>> sample["correct"], len(sample["prompt_sha"])
    (True, 64)
    """
    path = run.path / SAMPLES_FILE
    if not path.is_file():
        raise ScrambledBenchError(f"{run.path}: no {SAMPLES_FILE}, which --compare pairs samples by")
    records, _ = parse_lines(path.read_bytes())
    samples: dict[str, dict[str, dict[str, Any]]] = {}
    for config, record in _config_records(run, records):
        task = get_task(record["task"])
        options = {"reader": run.reader} if run.reader and _accepts_reader(task) else {}
        scored = task.score(record, record.get("output", ""), chat=record.get("chat", True), **options)
        prompt = str(record.get("prompt", ""))
        samples.setdefault(config, {})[str(record["id"])] = {
            **scored,
            "prompt_sha": hashlib.sha256(prompt.encode("utf-8")).hexdigest(),
        }
    return samples


def _config_records(run: Run, records: Sequence[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(config, record) for every sample each config rests on: from scores.jsonl where the run wrote it
    (a record two configs sent with identical prompts counts for both), else each record's own config."""
    usable = [record for record in records if {"task", "config", "id"} <= set(record)]
    scores_path = run.path / SCORES_FILE
    if not scores_path.is_file():
        return [(record["config"], record) for record in usable]
    by_key = {record.get("key"): record for record in usable}
    return [
        (row["config"], by_key[row["key"]])
        for _, row in read_jsonl(scores_path)
        if isinstance(row, dict) and row.get("key") in by_key and "config" in row
    ]


def shared_ids(
    baseline: Mapping[str, Mapping[str, Any]], other: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    """The ids both answered with the same prompt, in the baseline's order.

    >>> shared_ids({"a": {"prompt_sha": "1"}, "b": {"prompt_sha": "2"}}, {"b": {"prompt_sha": "2"}, "a": {"prompt_sha": "9"}})
    ['b']
    """
    return [i for i, s in baseline.items() if i in other and other[i]["prompt_sha"] == s["prompt_sha"]]


def _set_interval(row: MetricComparison, found: Mapping[str, Any]) -> float | None:
    """Store a :func:`paired_bootstrap` result on ``row``; return its standard error."""
    interval = found["interval"]
    row.interval = None if interval is None else (interval[0], interval[1])
    row.interval_method = found["method"] if interval is not None else None
    row.undefined_resamples = found["undefined_resamples"]
    return found["standard_error"]


# -- one config ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Shared:
    """One config in both runs: each run's scored samples (id -> sample) and the ids compared on."""

    config: str
    ids: list[str]
    a: Mapping[str, Any]
    b: Mapping[str, Any]

    def row(self, metric: Metric, baseline: float | None, other: float | None) -> MetricComparison:
        """The metric's row with both runs' values on the compared ids, before any interval or test."""
        return MetricComparison(self.config, metric, len(self.ids), len(self.a), len(self.b), baseline, other)


def _accuracy(shared: _Shared, settings: CompareSettings) -> MetricComparison:
    ids = shared.ids
    right_a = np.array([bool(shared.a[i]["correct"]) for i in ids])
    right_b = np.array([bool(shared.b[i]["correct"]) for i in ids])
    row = shared.row(ACCURACY, right_a.mean() * 100.0, right_b.mean() * 100.0)
    row.difference = row.other - row.baseline
    found = paired_proportions(right_a, right_b, settings)
    row.interval = (found["interval"][0] * 100.0, found["interval"][1] * 100.0)
    row.interval_method = found["method"]
    row.p_value, row.discordant = found["p_value"], found["discordant"]
    row.underpowered, row.underpowered_below = found["underpowered"], found["underpowered_below"]
    row.test = MCNEMAR
    row.wilson_baseline = wilson_percent(int(right_a.sum()), len(ids), settings.confidence_level)
    row.wilson_other = wilson_percent(int(right_b.sum()), len(ids), settings.confidence_level)
    se = standard_error((right_b.astype(float) - right_a.astype(float)) * 100.0)
    row.mdd = None if se is None else minimum_detectable_difference(se, settings.alpha, settings.power)
    return row


def _recovery(shared: _Shared, settings: CompareSettings) -> list[MetricComparison]:
    ids, a, b = shared.ids, shared.a, shared.b
    ed_a = np.array([float(a[i]["edit_distance"]) for i in ids])
    ed_b = np.array([float(b[i]["edit_distance"]) for i in ids])
    scrambled = np.array([float(a[i]["scrambled_edit_distance"]) for i in ids])
    p_value = wilcoxon_p(ed_b - ed_a)
    se_ed = standard_error(ed_b - ed_a)

    ed = shared.row(ED, float(ed_a.mean()), float(ed_b.mean()))
    ed.difference = ed.other - ed.baseline
    _set_interval(ed, paired_bootstrap(resampled_mean, ed_a, ed_b, settings))
    ed.test, ed.p_value = WILCOXON, p_value
    ed.mdd = None if se_ed is None else minimum_detectable_difference(se_ed, settings.alpha, settings.power)

    def recovery_rate(values: np.ndarray, indices: np.ndarray) -> np.ndarray:
        total = scrambled[indices].sum(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(total > 0, (total - values[indices].sum(axis=-1)) / total * 100.0, np.nan)

    whole = np.arange(len(ids))
    rr = shared.row(RR, float(recovery_rate(ed_a, whole)), float(recovery_rate(ed_b, whole)))
    if rr.baseline != rr.baseline:  # NaN: nothing was scrambled, RR is undefined
        rr.baseline = rr.other = None
        rr.note = "RR undefined: the shared samples hold no scrambled character"
        return [ed, rr]
    rr.difference = rr.other - rr.baseline
    _set_interval(rr, paired_bootstrap(recovery_rate, ed_a, ed_b, settings))
    rr.test, rr.note = None, f"tested with ED ({WILCOXON}): on the same samples RR moves with ED exactly"
    # RR_b - RR_a = -(mean ED_b - mean ED_a) / mean scrambled ED * 100 on the same samples
    if se_ed is not None:
        rr.mdd = minimum_detectable_difference(
            se_ed / scrambled.mean() * 100.0, settings.alpha, settings.power
        )
    return [ed, rr]


def _gain(
    shared: _Shared,
    runs: tuple[Mapping[str, Mapping[str, Any]], Mapping[str, Mapping[str, Any]]],
    anchors: tuple[str, str],
    settings: CompareSettings,
) -> MetricComparison:
    """RPG = (Acc_type - Acc_sub) / (Acc_original - Acc_sub) on ids both runs answered at the type and at
    both anchors; undefined (NaN) where the original gained nothing over the substituted text, as the
    ``relative_performance_gain`` module rules."""

    def arrays(samples: Mapping[str, Mapping[str, Any]]) -> np.ndarray:
        return np.array(
            [[bool(samples[name][i]["correct"]) for name in (shared.config, *anchors)] for i in shared.ids],
            dtype=float,
        )

    def gain(values: np.ndarray, indices: np.ndarray) -> np.ndarray:
        typed, original, substituted = (values[:, k][indices].mean(axis=-1) for k in range(3))
        spread = original - substituted
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(spread > 0, (typed - substituted) / spread * 100.0, np.nan)

    a, b = arrays(runs[0]), arrays(runs[1])
    whole = np.arange(len(shared.ids))
    value_a, value_b = float(gain(a, whole)), float(gain(b, whole))
    row = shared.row(RPG, None if np.isnan(value_a) else value_a, None if np.isnan(value_b) else value_b)
    if row.baseline is None or row.other is None:
        row.note = "RPG undefined on the shared samples for " + " and ".join(
            label
            for label, value in (("the baseline", row.baseline), ("the other run", row.other))
            if value is None
        )
        return row
    row.difference = row.other - row.baseline
    spread = _set_interval(row, paired_bootstrap(gain, a, b, settings))
    row.note = f"interval only (no test): {MCNEMAR} on Acc tests this config"
    if spread:
        row.mdd = minimum_detectable_difference(spread, settings.alpha, settings.power)
    return row


# -- runs ------------------------------------------------------------------------------------------------


def _differences(a: Run, b: Run) -> list[str]:
    """The recorded settings in which two runs differ that change which samples they answered. The
    build's manifest hash is none of them: a build grown since (configs added) has another manifest and
    the same samples; its tag (version, seed, window) says what the samples depend on.

    >>> from pathlib import Path
    >>> def run(manifest, tag, seed=0):
    ...     build = {"version": "1.0.0", "seed": 0, "manifest_sha256": manifest, "tag": tag}
    ...     return Run(Path("r"), {"configs": {"c": {}}}, {"dataset": build, "settings": {"seed": seed}})
    >>> _differences(run("aa", "v1.0.0"), run("bb", "v1.0.0"))  # the second build only grew
    []
    >>> _differences(run("aa", "v1.0.0"), run("bb", "v1.0.0-window-2026-01-01", seed=1))
    ['build tag v1.0.0 vs v1.0.0-window-2026-01-01', 'seed 0 vs 1']
    """
    checks = [
        ("build version", a.build.get("version"), b.build.get("version")),
        ("build seed", a.build.get("seed"), b.build.get("seed")),
        ("build tag", a.build.get("tag"), b.build.get("tag")),
        ("data", a.build.get("location"), b.build.get("location")),
        ("seed", a.settings.get("seed"), b.settings.get("seed")),
        ("limit", setting_in_force(a, "limit"), setting_in_force(b, "limit")),
    ]
    differences = [f"{name} {x} vs {y}" for name, x, y in checks if x != y and None not in (x, y)]
    configs_a, configs_b = set(a.results["configs"]), set(b.results["configs"])
    if not configs_a & configs_b:
        differences.append("configs (none in common)")
    return differences


def _compare_pair(baseline: Run, other: Run, settings: CompareSettings) -> PairComparison:
    """Every config the two runs share, metric by metric, on the samples they share."""
    samples_a, samples_b = load_samples(baseline), load_samples(other)
    pair = PairComparison(baseline, other)
    for config in baseline.results["configs"]:
        if config not in other.results["configs"]:
            continue
        entry = baseline.results["configs"][config]
        task = get_task(entry["task"])
        a, b = samples_a.get(config, {}), samples_b.get(config, {})
        ids = shared_ids(a, b)
        if not ids:
            continue
        if len(ids) < max(len(a), len(b)):
            pair.partial.append(f"{config}: {len(ids)} shared of {len(a)} and {len(b)}")
        shared = _Shared(config, ids, a, b)
        for metric in task.metrics:
            if metric == ACCURACY:
                pair.rows.append(_accuracy(shared, settings))
            elif metric == ED:
                pair.rows.extend(_recovery(shared, settings))
            elif metric == RPG:
                row = _gain_row(task, entry, shared, (samples_a, samples_b), settings)
                if row is not None:
                    pair.rows.append(row)
    if not pair.rows:
        differences = _differences(baseline, other) or ["their prompts (the same ids were asked differently)"]
        raise ScrambledBenchError(
            f"{baseline.path} and {other.path} share no samples to compare: they differ in {'; '.join(differences)}"
        )
    return pair


def _gain_row(
    task: Any,
    entry: Mapping[str, Any],
    shared: _Shared,
    samples: tuple[Mapping[str, Any], Mapping[str, Any]],
    settings: CompareSettings,
) -> MetricComparison | None:
    """RPG's comparison, on the ids answered at the type and at both of the task's anchors by both runs."""
    if entry["scramble_type"] in task.anchors:
        return None  # RPG is 100 at the original and 0 at the substituted text by definition
    this = TaskConfig(entry["task"], entry["dataset"], entry["scramble_type"], entry.get("exemplar_rate"))
    anchor_configs = [task.anchor(this, name).name for name in task.anchors]
    if len(anchor_configs) != 2 or not all(c in s for s in samples for c in anchor_configs):
        return None
    common = [
        i
        for i in shared.ids
        if all(
            i in s[c] and s[c][i]["prompt_sha"] == samples[0][c][i]["prompt_sha"]
            for s in samples
            for c in anchor_configs
        )
    ]
    if not common:
        return None
    return _gain(replace(shared, ids=common), samples, (anchor_configs[0], anchor_configs[1]), settings)


def compare_runs(runs: Sequence[Run], settings: CompareSettings | None = None) -> list[PairComparison]:
    """Every other run against the first, with Benjamini-Hochberg adjusted p-values across all the tests.

    A one-line error for fewer than two runs, or for two that share no sample.

    >>> compare_runs([])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --compare needs two or more runs (the first is the baseline); got 0
    """
    settings = settings or CompareSettings()
    if len(runs) < 2:
        raise ScrambledBenchError(
            f"--compare needs two or more runs (the first is the baseline); got {len(runs)}"
        )
    pairs = [_compare_pair(runs[0], other, settings) for other in runs[1:]]
    tested = [row for pair in pairs for row in pair.rows if row.p_value is not None]
    for row, adjusted in zip(tested, benjamini_hochberg([row.p_value for row in tested], settings.alpha)):
        row.p_adjusted = adjusted
    return pairs


# -- as tables -------------------------------------------------------------------------------------------


def _number(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _interval(interval: Sequence[float] | None, digits: int = 2) -> str:
    return "" if not interval else f"[{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"


def _p(value: float | None) -> str:
    if value is None:
        return ""
    return "< 0.0001" if value < 1e-4 else f"{value:.4f}"


def comparison_tables(pairs: Sequence[PairComparison], settings: CompareSettings) -> list[ReportTable]:
    """One table per pair: a row per (config, metric), the notes saying how each number was made.

    >>> comparison_tables([], CompareSettings())
    []
    """
    return [_pair_table(number, pair, settings) for number, pair in enumerate(pairs, start=1)]


def _pair_table(number: int, pair: PairComparison, settings: CompareSettings) -> ReportTable:
    """The ``number``-th pair's table: its rows, their footnotes, the method notes and the caption."""
    notes = Footnotes()
    table = ReportTable(
        f"compare-{number}",
        f"Paired comparison: {pair.other.label} minus {pair.baseline.label} (baseline)",
        ["config", "metric", "n shared", pair.baseline.label, pair.other.label, "difference",
         f"{level_label(settings.confidence_level)} paired CI", "test", "p", "p (BH)", "MDD"],
    )  # fmt: skip
    table.rows = [_comparison_row(row, settings, notes) for row in pair.rows]
    table.notes.extend(notes.lines())
    table.notes.extend(_method_notes(pair, settings))
    table.caption = (
        f"Difference = {pair.other.label} minus {pair.baseline.label}, on the samples both answered with "
        "the same prompt"
        + (f"; compared on the intersection: {'; '.join(pair.partial)}" if pair.partial else "")
        + "."
    )
    return table


def _comparison_row(row: MetricComparison, settings: CompareSettings, notes: Footnotes) -> list[str]:
    """One (config, metric) of a pair: the samples shared (marked where underpowered), each run's value
    (with its Wilson interval for Acc), the difference with its interval, the test and its p values, and
    the minimum detectable difference."""
    shared = f"{row.n_shared}"
    if row.n_shared < max(row.n_baseline, row.n_other):
        shared += f" of {row.n_baseline}/{row.n_other}"
    if row.underpowered:
        shared += f" {notes.mark(underpowered_note(row.underpowered_below, settings))}"
    baseline, other = _number(row.baseline), _number(row.other)
    if row.wilson_baseline:
        baseline += f" {_interval(row.wilson_baseline)}"
        other += f" {_interval(row.wilson_other)}"
    test = row.test or ""
    if row.note:
        test = f"{test} {notes.mark(row.note)}".strip()
    interval = _interval(row.interval) + _percentile_mark(row, notes)
    return [row.config, row.metric.label, shared, baseline, other, _number(row.difference), interval, test,
            _p(row.p_value), _p(row.p_adjusted), _number(row.mdd)]  # fmt: skip


def _percentile_mark(row: MetricComparison, notes: Footnotes) -> str:
    """A footnote on an interval that fell back from BCa to the percentile bootstrap, saying why."""
    if row.interval is None or row.interval_method != PERCENTILE:
        return ""
    why = (
        f"{row.undefined_resamples} resamples left it undefined"
        if row.undefined_resamples
        else "the resampled differences leave BCa undefined (e.g. all equal)"
    )
    return f" {notes.mark(f'percentile bootstrap interval: {why}')}"


def _method_notes(pair: PairComparison, settings: CompareSettings) -> list[str]:
    level = level_label(settings.confidence_level)
    return [
        (
            f"CI: Acc: Tango's {level} score interval for paired proportions, which inverts the {MCNEMAR} test "
            f"in the p column (it excludes 0 exactly when p < {1 - settings.confidence_level:.2g}); ED, RR, RPG: "
            f"{level} paired bootstrap, BCa (percentile where marked), {settings.n_resamples} resamples of the "
            f"shared sample ids (seed {settings.seed}). Acc cells add each run's Wilson {level} interval."
        ),
        (
            f"p: {MCNEMAR} test (Acc; chi-square without continuity correction) or {WILCOXON} (ED) per config; "
            "p (BH): Benjamini-Hochberg across every test of this report."
        ),
        (
            f"MDD: the smallest true difference a two-sided test at alpha {settings.alpha} finds with "
            f"{settings.power:.0%} power at this sample size, from the spread of the paired differences."
        ),
    ]
