"""``report --from HARNESS DIR``: the scrambled variants of another benchmark, as a harness ran them.

Whatever the harness (lm-eval, lighteval, Inspect, or one registered by a user), its log folder is read
through the registry (:func:`scrambled_bench.integrations.get_harness`) and paired by
:func:`scrambled_bench.integrations.pairing.compare_logged`, as ``score --from`` pairs it. Per canonical
task the report gives:

- a table: the score per type with its interval, the paired difference from the canonical task in
  percentage points with its interval (Tango's for 0/1 metrics, beside the McNemar score test's p it
  inverts; a paired bootstrap for other metrics), RPG where ``sub`` ran (or why it is undefined), and the
  documents paired and left out, the paired count marked where the comparison is underpowered; metric names
  as a reader reads them;
- a chart of the score per type with its interval (the HTML page);
- per type, the first documents both runs logged, in numeric order: the canonical prompt beside the
  scrambled one with the changed words marked (as HELM shows perturbed instances), the choices likewise,
  and each run's output with its score (the HTML page).

The page's title names the model and the harness; its settings section, each run's identity.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.integrations import get_harness
from scrambled_bench.integrations.base import read_logs_checked
from scrambled_bench.integrations.pairing import compare_logged
from scrambled_bench.metrics.chance import chance_note
from scrambled_bench.metrics.statistics import DEFAULT_SETTINGS, CompareSettings, underpowered_note
from scrambled_bench.plots import (
    finish,
    grid,
    places,
    save_png_and_svg,
    shared_keys,
    spare,
    svg_text,
    visible,
)
from scrambled_bench.report.instances import InstancePair, changed_words, render_instances
from scrambled_bench.report.render import RENDERERS, render_html
from scrambled_bench.tables import Footnotes, ReportTable

INSTANCES_PER_TYPE = 3
PP = "percentage points"
COLUMNS = [
    "type",
    "metric",
    "score (%)",
    "interval (%)",
    f"difference ({PP})",
    f"interval ({PP})",
    "McNemar p",
    "RPG (%)",
    "n paired",
    "n unpaired",
]


def numeric_order(doc_id: Hashable) -> tuple[int, int, str]:
    """A sort key putting document ids in numeric order where they are numbers (``2`` before ``10``), the
    others after them in text order.

    >>> sorted(["10", "2", "b", 1, "a"], key=numeric_order)
    [1, '2', '10', 'a', 'b']
    """
    text = str(doc_id)
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


@dataclass(frozen=True)
class VariantsReport:
    """What ``report --from`` shows: the page title, one table and one chart per canonical task, the
    logged instances and each run's identity."""

    title: str
    tables: list[ReportTable]
    figures: list[tuple[str, str, str]]
    instances: list[InstancePair]
    runs: list[tuple[str, list[tuple[str, str]]]]
    unknown_endpoints: list[str] = field(default_factory=list)
    """The tasks paired whose logs do not tell their endpoint (accepted by ``--allow-unknown-endpoint``)."""
    warnings: list[str] = field(default_factory=list)
    """One line per task whose log-likelihoods of exactly 0.0 were accepted (``--allow-zero-loglikelihood``)."""
    section: Mapping[str, Any] = field(default_factory=dict)
    """The paired ``scrambled_tasks`` section the tables and charts are made from."""
    label: Any = str
    """The harness's readable metric names (:meth:`~scrambled_bench.integrations.base.Harness.metric_label`)."""
    subtitle: str = ""
    """The models and the harness, as the charts' titles name them."""

    def plot(self, out_dir: Path) -> list[Path]:
        """The charts as PNG and SVG files in ``out_dir`` (``report --from HARNESS DIR --plot OUT_DIR``)."""
        return plot_variant_figures(self.section, self.label, self.subtitle, out_dir)

    def render(self, fmt: str) -> str:
        """The report in ``fmt``: the tables (``markdown``, ``csv``), or one ``html`` page under its title
        with the charts, the logged instances and each run's identity."""
        if fmt != "html":
            return RENDERERS[fmt](self.tables)
        return render_html(
            self.tables, figures=self.figures, instances=self.instances, runs=self.runs, title=self.title
        )


def _is_fraction(metric: Mapping[str, Any]) -> bool:
    values = [metric.get("value"), *(metric.get("interval") or [])]
    return all(value is None or 0.0 <= value <= 1.0 for value in values)


def _number(value: Any, scale: float) -> str:
    return "" if value is None else f"{scale * value:.2f}"


def _interval(interval: Sequence[float] | None, scale: float) -> str:
    return f"[{_number(interval[0], scale)}, {_number(interval[1], scale)}]" if interval else ""


def variant_tables(
    section: Mapping[str, Any], label: Any = str, confidence_level: float = 0.95
) -> list[ReportTable]:
    """One table per canonical task of a ``scrambled_tasks`` section: the canonical task's metrics, then
    each type's, with the score's interval, the paired difference in percentage points with its interval,
    McNemar's p and RPG (or why it is undefined), the paired count marked where the comparison is
    underpowered. ``label`` turns a metric key into its readable name.

    >>> section = {"t": {"metrics": {"acc": {"value": 0.5, "n": 2, "interval": [0.1, 0.9]}}, "types": {"kfl": {
    ...     "task": "t_kfl", "n_unpaired": 0, "metrics": {"acc": {"value": 0.0, "interval": [0.0, 0.6],
    ...     "difference": -0.5, "ci": [-0.89, 0.29], "method": "Tango", "mcnemar_p": 0.32, "n_paired": 2,
    ...     "underpowered": True, "underpowered_below": 54,
    ...     "n_unpaired": 0, "relative_performance_gain": {"value": None, "undefined": "equal anchors"}}}}}}}
    >>> [table] = variant_tables(section, label={"acc": "accuracy"}.get)
    >>> table.rows[1]
    ['kfl', 'accuracy', '0.00', '[0.00, 60.00]', '-50.00', '[-89.00, 29.00]', '0.32', 'undefined [1]', '2 [2]', '0']
    >>> table.notes[0]
    '[1] RPG undefined: equal anchors'
    >>> table.notes[1].startswith("[2] underpowered: fewer than 54 paired samples")
    True
    """
    tables = []
    for canonical, entry in section.items():
        notes = Footnotes()
        rows = [_canonical_row(key, metric, label, notes) for key, metric in entry["metrics"].items()]
        rows += [
            _variant_row(scramble_type, key, metric, label, notes)
            for scramble_type, variant in entry["types"].items()
            for key, metric in variant["metrics"].items()
        ]
        methods = {
            str(metric["method"])
            for variant in entry["types"].values()
            for metric in variant["metrics"].values()
            if metric.get("method")
        }
        tables.append(
            ReportTable(
                key=f"scrambled-{canonical}",
                title=f"{canonical}: scrambled variants",
                columns=list(COLUMNS),
                rows=rows,
                notes=notes.lines(),
                caption=_variants_caption(canonical, confidence_level, methods),
            )
        )
    return tables


def _metric_name(key: str, metric: Mapping[str, Any], label: Any, notes: Footnotes) -> tuple[str, float]:
    """A metric's readable name, marked where it is shown in its own units, and its scale to percent."""
    scale = 100.0 if _is_fraction(metric) else 1.0
    name = label(key) or key
    if scale == 1.0:
        name += " " + notes.mark(f"{label(key) or key}: not a fraction; shown in its own units")
    return name, scale


def _canonical_row(key: str, metric: Mapping[str, Any], label: Any, notes: Footnotes) -> list[str]:
    """The canonical task's score of one metric, with its interval and count."""
    name, scale = _metric_name(key, metric, label, notes)
    return ["canonical", name, _number(metric.get("value"), scale), _interval(metric.get("interval"), scale),
            "", "", "", "", str(metric.get("n") or ""), ""]  # fmt: skip


def _variant_row(
    scramble_type: str, key: str, metric: Mapping[str, Any], label: Any, notes: Footnotes
) -> list[str]:
    """A variant's score of one metric beside the canonical one: the paired difference, McNemar's p, RPG
    and the paired count (marked where underpowered)."""
    name, scale = _metric_name(key, metric, label, notes)
    if metric.get("note"):
        name += " " + notes.mark(f"{label(key) or key}: {metric['note']}")
    rpg = _rpg_cell(metric, notes)  # marked before the paired count: the notes number in column order
    p_value = metric.get("mcnemar_p")
    paired = str(metric.get("n_paired", ""))
    if metric.get("underpowered"):
        paired += " " + notes.mark(underpowered_note(metric["underpowered_below"]))
    return [scramble_type, name, _number(metric.get("value"), scale), _interval(metric.get("interval"), scale),
            _number(metric.get("difference"), scale), _interval(metric.get("ci"), scale),
            "" if p_value is None else f"{p_value:.3g}", rpg, paired, str(metric.get("n_unpaired", ""))]  # fmt: skip


def _rpg_cell(metric: Mapping[str, Any], notes: Footnotes) -> str:
    """RPG in percent (marked where it is near chance), ``undefined`` with why, or empty where sub did not
    run."""
    gain = metric.get("relative_performance_gain") or {}
    if gain.get("value") is not None:
        near_chance = chance_note(gain, scale=100, unit="%")
        return _number(gain["value"], 100.0) + (" " + notes.mark(near_chance) if near_chance else "")
    if gain.get("undefined"):
        return "undefined " + notes.mark(f"RPG undefined: {gain['undefined']}")
    return ""


def _variants_caption(canonical: str, confidence_level: float, methods: set[str]) -> str:
    """What a variants table shows and how its intervals are made."""
    level = f"{confidence_level:.0%}"
    return (
        f"Each variant against {canonical} over the documents both logged (paired by id, targets checked). "
        f"Scores in percent with their {level} interval (Wilson for 0/1 scores, else bootstrap); the "
        f"difference (variant minus canonical) in percentage points with its {level} interval: for 0/1 "
        "metrics Tango's score interval for paired proportions, beside the p of the McNemar score test it "
        "inverts (the interval excludes 0 exactly when p < "
        f"{1 - confidence_level:.2g}), else a paired bootstrap; RPG where the sub variant ran; n unpaired: "
        "documents only one of the two runs logged, left out. Values are the harness's own. Method: "
        + ("; ".join(sorted(methods)) or "no paired metric")
        + "."
    )


def variant_instances(
    paired: Any, label: Any = str, *, per_type: int = INSTANCES_PER_TYPE
) -> list[InstancePair]:
    """The first ``per_type`` documents (in numeric order) of each variant that both it and its canonical
    task logged, with their prompts, choices, outputs and scores under their readable names (``label``;
    ``paired``: a :class:`~scrambled_bench.integrations.pairing.PairedFolder`)."""
    pairs = []
    for canonical_name, variants in paired.groups.items():
        canonical = paired.tasks[canonical_name]
        for scramble_type, variant in variants.items():
            shared = sorted(set(canonical.documents) & set(variant.documents), key=numeric_order)
            for doc_id in shared[:per_type]:
                before, after = canonical.documents[doc_id], variant.documents[doc_id]
                choices = None
                if before.choices is not None and after.choices is not None:
                    choices = tuple(changed_words(a, b) for a, b in zip(before.choices, after.choices))
                pairs.append(
                    InstancePair(
                        canonical_name,
                        scramble_type,
                        doc_id,
                        before.prompt,
                        None
                        if before.prompt is None or after.prompt is None
                        else changed_words(before.prompt, after.prompt),
                        before.choices,
                        choices,
                        (before.output, after.output),
                        (
                            {label(key) or key: value for key, value in before.scores.items()},
                            {label(key) or key: value for key, value in after.scores.items()},
                        ),
                    )
                )
    return pairs


FIGURE_NOTE = (
    "Each point: the task's score at that type, with its interval as an error bar (Wilson for 0/1 scores, "
    "else bootstrap); dashed line: the canonical task's score."
)


def variant_figures(section: Mapping[str, Any], label: Any, subtitle: str) -> list[tuple[str, str, str]]:
    """Per canonical task, a chart of each metric's score per type (canonical first) with its interval, as
    inline SVG: (name, caption, SVG)."""
    # deferred: matplotlib is heavy, and only the HTML page draws these
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = []
    for index, (canonical, entry) in enumerate(section.items()):
        fig = _variant_figure(entry, label, title=f"{canonical}: score per scramble type ({subtitle})")
        figures.append(
            (
                f"scrambled-{index}",
                f"{canonical}: the score per scramble type with its interval ({subtitle})",
                svg_text(fig, f"variants-{index}"),
            )
        )
        plt.close(fig)
    return figures


def chart_file_names(tasks: Sequence[str]) -> list[str]:
    """The file name (without suffix) of each canonical task's chart: ``variants-<task>``, the characters a
    file system may refuse replaced by ``_``, and distinct where two names would come out alike.

    >>> chart_file_names(["arc_easy", "gsm8k|0", "gsm8k/0"])
    ['variants-arc_easy', 'variants-gsm8k_0', 'variants-gsm8k_0-2']
    """
    names: list[str] = []
    for task in tasks:
        name = "variants-" + re.sub(r"[^A-Za-z0-9._-]", "_", task)
        candidate, count = name, 1
        while candidate in names:
            count += 1
            candidate = f"{name}-{count}"
        names.append(candidate)
    return names


def plot_variant_figures(section: Mapping[str, Any], label: Any, subtitle: str, out_dir: Path) -> list[Path]:
    """The charts of :func:`variant_figures` as PNG and SVG files in ``out_dir``, one pair per canonical task
    named by :func:`chart_file_names`; the files written, in that order."""
    # deferred: matplotlib is heavy, and only --plot draws these files
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written: list[Path] = []
    for name, (canonical, entry) in zip(chart_file_names(list(section)), section.items()):
        fig = _variant_figure(entry, label, title=f"{canonical}: score per scramble type ({subtitle})")
        written += save_png_and_svg(fig, Path(out_dir), name)
        plt.close(fig)
    return written


def _variant_figure(entry: Mapping[str, Any], label: Any, *, title: str) -> Any:
    """A canonical task's chart: a panel per metric, sharing the types' axis."""
    keys = list(entry["metrics"])
    rows, columns, cells = places(len(keys))
    shared = shared_keys(rows, columns, cells)
    fig, axes = grid(rows, columns, panel=(max(3.2, 0.9 * (len(entry["types"]) + 1)), 2.8), share_x=shared)
    for key, (r, c) in zip(keys, cells):
        _draw_variant_panel(axes[r][c], entry, key, label)
    finish(fig, visible(axes), {}, [FIGURE_NOTE], title=title, cells=spare(axes))
    return fig


def _draw_variant_panel(ax: Any, entry: Mapping[str, Any], key: str, label: Any) -> None:
    """One metric's score per type, canonical first, with its interval, and the canonical score dashed."""
    records = [("canonical", entry["metrics"][key])] + [
        (scramble_type, variant["metrics"][key])
        for scramble_type, variant in entry["types"].items()
        if key in variant["metrics"]
    ]
    scale = 100.0 if all(_is_fraction(record) for _, record in records) else 1.0
    for x, (_, record) in enumerate(records):
        value = record.get("value")
        if value is None:
            continue
        interval = record.get("interval")
        error = None
        if interval:
            error = [[max(0.0, scale * (value - interval[0]))], [max(0.0, scale * (interval[1] - value))]]
        ax.errorbar([x], [scale * value], yerr=error, fmt="o", color="C0" if x else "0.3", capsize=4)
    base = entry["metrics"][key].get("value")
    if base is not None:
        ax.axhline(scale * base, color="0.5", linestyle="--", linewidth=1, label="canonical score")
    ax.set_xticks(range(len(records)), [name for name, _ in records])
    ax.set_title(label(key) or key, fontsize=10)
    ax.set_ylabel("score (%)" if scale == 100.0 else "score")
    if scale == 100.0:
        ax.set_ylim(-3, 103)
    ax.set_xlabel("scramble type")
    ax.grid(alpha=0.3, axis="y")


def logged_endpoint(run: Mapping[str, Any]) -> str:
    """A run's endpoint as the settings section shows it: its URL; where the model has none, that; where the
    log does not tell, why (such runs are paired only under ``--allow-unknown-endpoint``).

    >>> logged_endpoint({"endpoint": "http://127.0.0.1:8080/v1"}), logged_endpoint({"endpoint": None})
    ('http://127.0.0.1:8080/v1', 'none (the model is served from no URL)')
    >>> logged_endpoint({"endpoint": None, "endpoint_unknown": "not logged"})
    'unknown: not logged (paired under --allow-unknown-endpoint)'
    """
    if run.get("endpoint_unknown"):
        return f"unknown: {run['endpoint_unknown']} (paired under --allow-unknown-endpoint)"
    return str(run.get("endpoint") or "none (the model is served from no URL)")


def _run_details(
    entry: Mapping[str, Any], variants: Mapping[str, Any] | None = None
) -> list[tuple[str, str]]:
    """The settings rows of a canonical task and its variants: the canonical run's identity (the variants
    share it, checked by the pairing), and the endpoint of each variant whose log does not tell it."""
    run = entry.get("run") or {}
    details = [("model", str(run.get("model"))), ("endpoint", logged_endpoint(run))]
    for scramble_type, variant in (variants or {}).items():
        if variant.run.endpoint_unknown and not run.get("endpoint_unknown"):
            details.append(
                (f"endpoint of {variant.name} ({scramble_type})", logged_endpoint(variant.run.as_record()))
            )
    details += [(f"setting: {key}", str(value)) for key, value in sorted((run.get("settings") or {}).items())]
    details.append(("recorded in", str(run.get("source") or entry.get("log") or "")))
    return details


def variants_report(
    harness_name: str,
    folder: Path,
    settings: CompareSettings = DEFAULT_SETTINGS,
    *,
    allow_unknown_endpoint: bool = False,
    allow_zero_loglikelihood: bool = False,
) -> VariantsReport:
    """The tables, charts, instances and runs of a harness's log folder of scrambled variants, paired and
    their intervals made as ``settings`` say; a one-line error where it holds none, where runs paired do not
    tell their endpoint (unless ``allow_unknown_endpoint``), or where a task logged a log-likelihood of
    exactly 0.0 (unless ``allow_zero_loglikelihood``: then said in ``warnings`` and in the runs' details)."""
    harness = get_harness(harness_name)
    paired = compare_logged(
        folder,
        read_logs_checked(harness, Path(folder)),
        settings,
        allow_unknown_endpoint=allow_unknown_endpoint,
        allow_zero_loglikelihood=allow_zero_loglikelihood,
    )
    if not paired.section:
        raise ScrambledBenchError(
            f"{folder} holds no scrambled variants of other tasks (made by `scrambled-bench scramble "
            f"{harness.name}:{harness.spec.split(' or ')[0]}`); the bench's own tasks there are scored by "
            f"`scrambled-bench score --from {harness.name} {folder}`"
        )
    models = list(
        dict.fromkeys(str((entry.get("run") or {}).get("model")) for entry in paired.section.values())
    )
    subtitle = f"{', '.join(models)}, {harness.title}"
    accepted = {
        found.task: f"{found.zeros} of {found.logged} log-likelihoods exactly 0.0, accepted by --allow-zero-loglikelihood"
        for found in paired.zero_log_likelihoods
    }
    runs = []
    for canonical, entry in paired.section.items():
        details = _run_details(entry)
        for task in (canonical, *(variant.name for variant in paired.groups[canonical].values())):
            if task in accepted:
                details.append((f"accepted: {task}", accepted[task]))
        runs.append((f"{canonical} and its variants", details))
    return VariantsReport(
        title=f"Scrambled variants: {', '.join(models)} ({harness.title})",
        tables=variant_tables(paired.section, harness.metric_label, settings.confidence_level),
        figures=variant_figures(paired.section, harness.metric_label, subtitle),
        instances=variant_instances(paired, harness.metric_label),
        runs=runs,
        unknown_endpoints=list(paired.unknown_endpoints),
        warnings=[f"warning: {task}: {what}" for task, what in accepted.items()],
        section=paired.section,
        label=harness.metric_label,
        subtitle=subtitle,
    )


__all__ = [
    "InstancePair",
    "VariantsReport",
    "changed_words",
    "chart_file_names",
    "numeric_order",
    "plot_variant_figures",
    "render_instances",
    "variant_figures",
    "variant_instances",
    "variant_tables",
    "variants_report",
]
