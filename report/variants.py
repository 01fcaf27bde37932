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

import difflib
import html
import re
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.metrics.chance import chance_note
from scrambled_bench.metrics.statistics import underpowered_note
from scrambled_bench.tables import Footnotes, ReportTable

INSTANCES_PER_TYPE = 3
WORD = re.compile(r"\S+|\s+")
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

Segments = tuple[tuple[str, bool], ...]
"""A text as pieces, each marked whether it changed."""


def changed_words(original: str, scrambled: str) -> Segments:
    """The scrambled text as pieces, each marked whether it differs from the original's. Scrambling changes
    letters within words, so where both texts have the same words and spaces in the same places, word
    compares with word by position; otherwise (a prompt whose words were added or dropped) ``difflib``
    aligns the words, so an inserted or dropped word does not shift the rest.

    >>> changed_words("The quick brown fox", "The qucik bworn fox")
    (('The ', False), ('qucik', True), (' ', False), ('bworn', True), (' fox', False))
    >>> changed_words("aab aba", "aba aab")
    (('aba', True), (' ', False), ('aab', True))
    >>> changed_words("a b c", "a x b c")
    (('a ', False), ('x', True), (' b c', False))
    """
    before, after = WORD.findall(original), WORD.findall(scrambled)
    pieces: list[tuple[str, bool]] = []

    def add(token: str, changed: bool) -> None:
        if pieces and pieces[-1][1] == changed:
            pieces[-1] = (pieces[-1][0] + token, changed)
        else:
            pieces.append((token, changed))

    same_layout = len(before) == len(after) and all(
        a.isspace() == b.isspace() and (not a.isspace() or a == b) for a, b in zip(before, after)
    )
    if same_layout:
        for token, other in zip(after, before):
            add(token, not token.isspace() and token != other)
        return tuple(pieces)
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, _, _, start, end in matcher.get_opcodes():
        for token in after[start:end]:
            add(token, tag != "equal" and not token.isspace())
    return tuple(pieces)


def numeric_order(doc_id: Hashable) -> tuple[int, int, str]:
    """A sort key putting document ids in numeric order where they are numbers (``2`` before ``10``), the
    others after them in text order.

    >>> sorted(["10", "2", "b", 1, "a"], key=numeric_order)
    [1, '2', '10', 'a', 'b']
    """
    text = str(doc_id)
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


@dataclass(frozen=True)
class InstancePair:
    """One logged document of a variant beside the canonical task's: the prompts (the scrambled one as
    :func:`changed_words` pieces), the choices (each scrambled choice likewise), and each run's output and
    scores."""

    task: str
    scramble_type: str
    doc_id: Any
    original: str | None
    segments: Segments | None
    original_choices: tuple[str, ...] | None = None
    choices: tuple[Segments, ...] | None = None
    outputs: tuple[str | None, str | None] = (None, None)
    scores: tuple[Mapping[str, float], Mapping[str, float]] = ({}, {})


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
    level = f"{confidence_level:.0%}"
    tables = []
    for canonical, entry in section.items():
        notes = Footnotes()
        methods: set[str] = set()
        rows = []
        for key, metric in entry["metrics"].items():
            scale = 100.0 if _is_fraction(metric) else 1.0
            name = label(key) or key
            if scale == 1.0:
                name += " " + notes.mark(f"{label(key) or key}: not a fraction; shown in its own units")
            rows.append(
                ["canonical", name, _number(metric.get("value"), scale), _interval(metric.get("interval"), scale),
                 "", "", "", "", str(metric.get("n") or ""), ""]
            )  # fmt: skip
        for scramble_type, variant in entry["types"].items():
            for key, metric in variant["metrics"].items():
                scale = 100.0 if _is_fraction(metric) else 1.0
                name = label(key) or key
                if scale == 1.0:
                    name += " " + notes.mark(f"{label(key) or key}: not a fraction; shown in its own units")
                if metric.get("method"):
                    methods.add(str(metric["method"]))
                if metric.get("note"):
                    name += " " + notes.mark(f"{label(key) or key}: {metric['note']}")
                gain = metric.get("relative_performance_gain") or {}
                if gain.get("value") is not None:
                    rpg = _number(gain["value"], 100.0)
                    near_chance = chance_note(gain, scale=100, unit="%")
                    if near_chance:
                        rpg += " " + notes.mark(near_chance)
                elif gain.get("undefined"):
                    rpg = "undefined " + notes.mark(f"RPG undefined: {gain['undefined']}")
                else:
                    rpg = ""
                p_value = metric.get("mcnemar_p")
                paired = str(metric.get("n_paired", ""))
                if metric.get("underpowered"):
                    paired += " " + notes.mark(underpowered_note(metric["underpowered_below"]))
                rows.append(
                    [scramble_type, name, _number(metric.get("value"), scale), _interval(metric.get("interval"), scale),
                     _number(metric.get("difference"), scale), _interval(metric.get("ci"), scale),
                     "" if p_value is None else f"{p_value:.3g}", rpg, paired, str(metric.get("n_unpaired", ""))]
                )  # fmt: skip
        caption = (
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
        tables.append(
            ReportTable(
                key=f"scrambled-{canonical}",
                title=f"{canonical}: scrambled variants",
                columns=list(COLUMNS),
                rows=rows,
                notes=notes.lines(),
                caption=caption,
            )
        )
    return tables


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


def _variant_charts(section: Mapping[str, Any], label: Any, subtitle: str) -> Iterator[tuple[str, Any]]:
    """Per canonical task, (its name, a matplotlib figure of each metric's score per type, canonical first,
    with its interval): one figure at a time, which the caller closes."""
    import matplotlib

    matplotlib.use("Agg")
    from scrambled_bench.plots import finish, grid, places, spare, visible

    for canonical, entry in section.items():
        keys = list(entry["metrics"])
        rows, columns, cells = places(len(keys))
        shared = [[0 if (r, c) in cells else None for c in range(columns)] for r in range(rows)]
        fig, axes = grid(
            rows, columns, panel=(max(3.2, 0.9 * (len(entry["types"]) + 1)), 2.8), share_x=shared
        )
        for key, (r, c) in zip(keys, cells):
            ax = axes[r][c]
            records = [("canonical", entry["metrics"][key])] + [
                (scramble_type, variant["metrics"][key])
                for scramble_type, variant in entry["types"].items()
                if key in variant["metrics"]
            ]
            scale = 100.0 if all(_is_fraction(record) for _, record in records) else 1.0
            for x, (name, record) in enumerate(records):
                value = record.get("value")
                if value is None:
                    continue
                interval = record.get("interval")
                error = None
                if interval:
                    error = [
                        [max(0.0, scale * (value - interval[0]))],
                        [max(0.0, scale * (interval[1] - value))],
                    ]
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
        note = (
            "Each point: the task's score at that type, with its interval as an error bar (Wilson for 0/1 "
            "scores, else bootstrap); dashed line: the canonical task's score."
        )
        finish(
            fig,
            visible(axes),
            {},
            [note],
            title=f"{canonical}: score per scramble type ({subtitle})",
            cells=spare(axes),
        )
        yield canonical, fig


def variant_figures(section: Mapping[str, Any], label: Any, subtitle: str) -> list[tuple[str, str, str]]:
    """Per canonical task, a chart of each metric's score per type (canonical first) with its interval, as
    inline SVG: (name, caption, SVG)."""
    import matplotlib.pyplot as plt

    from scrambled_bench.plots import svg_text

    figures = []
    for index, (canonical, fig) in enumerate(_variant_charts(section, label, subtitle)):
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
    import matplotlib.pyplot as plt

    from scrambled_bench.plots import save_png_and_svg

    written: list[Path] = []
    names = chart_file_names(list(section))
    for name, (_, fig) in zip(names, _variant_charts(section, label, subtitle)):
        written += save_png_and_svg(fig, Path(out_dir), name)
        plt.close(fig)
    return written


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
    *,
    confidence_level: float,
    n_resamples: int,
    seed: int,
    allow_unknown_endpoint: bool = False,
    allow_zero_loglikelihood: bool = False,
) -> VariantsReport:
    """The tables, charts, instances and runs of a harness's log folder of scrambled variants; a one-line
    error where it holds none, where runs paired do not tell their endpoint (unless
    ``allow_unknown_endpoint``), or where a task logged a log-likelihood of exactly 0.0 (unless
    ``allow_zero_loglikelihood``: then said in ``warnings`` and in the runs' details)."""
    from scrambled_bench.integrations import get_harness
    from scrambled_bench.integrations.base import read_logs_checked
    from scrambled_bench.integrations.pairing import compare_logged
    from scrambled_bench.metrics.statistics import CompareSettings

    harness = get_harness(harness_name)
    settings = CompareSettings(n_resamples=n_resamples, confidence_level=confidence_level, seed=seed)
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
        tables=variant_tables(paired.section, harness.metric_label, confidence_level),
        figures=variant_figures(paired.section, harness.metric_label, subtitle),
        instances=variant_instances(paired, harness.metric_label),
        runs=runs,
        unknown_endpoints=list(paired.unknown_endpoints),
        warnings=[f"warning: {task}: {what}" for task, what in accepted.items()],
        section=paired.section,
        label=harness.metric_label,
        subtitle=subtitle,
    )


def _marked(segments: Segments) -> str:
    return "".join(
        f"<mark>{html.escape(text)}</mark>" if changed else html.escape(text) for text, changed in segments
    )


def _scores(scores: Mapping[str, float]) -> str:
    return "; ".join(f"{html.escape(key)} = {value:g}" for key, value in scores.items())


def render_instances(instances: Sequence[InstancePair]) -> str:
    """The HTML of the logged instances: per (task, type) a table, per document the canonical prompt beside
    the scrambled one with its changed words in ``<mark>``, the choices likewise, and each run's output and
    scores; every text escaped.

    >>> pair = InstancePair("t", "kfl", 0, "a <b> word", changed_words("a <b> word", "a <b> wrod"),
    ...                     ("yes",), (changed_words("yes", "yse"),), ("A", "B"), ({"acc": 1.0}, {"acc": 0.0}))
    >>> page = render_instances([pair])
    >>> "<mark>wrod</mark>" in page, "&lt;b&gt;" in page, "<mark>yse</mark>" in page, "acc = 0" in page
    (True, True, True, True)
    """
    body = ""
    groups: dict[tuple[str, str], list[InstancePair]] = {}
    for pair in instances:
        groups.setdefault((pair.task, pair.scramble_type), []).append(pair)
    for (task, scramble_type), pairs in groups.items():
        rows = ""
        for pair in pairs:
            doc = html.escape(str(pair.doc_id))
            if pair.original is not None and pair.segments is not None:
                rows += (
                    f"<tr><th>{doc}</th><th>prompt</th><td class='prompt'>{html.escape(pair.original)}</td>"
                    f"<td class='prompt'>{_marked(pair.segments)}</td></tr>"
                )
            if pair.original_choices is not None and pair.choices is not None:
                before = "".join(f"<li>{html.escape(choice)}</li>" for choice in pair.original_choices)
                after = "".join(f"<li>{_marked(choice)}</li>" for choice in pair.choices)
                rows += (
                    f"<tr><th>{doc}</th><th>choices</th><td class='choices'><ol>{before}</ol></td>"
                    f"<td class='choices'><ol>{after}</ol></td></tr>"
                )
            canonical_output, variant_output = pair.outputs
            rows += (
                f"<tr><th>{doc}</th><th>output</th>"
                f"<td class='output'>{html.escape(canonical_output or '')}<br><small>{_scores(pair.scores[0])}</small></td>"
                f"<td class='output'>{html.escape(variant_output or '')}<br><small>{_scores(pair.scores[1])}</small></td></tr>"
            )
        body += (
            f"<section class='instances'><h3>{html.escape(task)}: {html.escape(scramble_type)}</h3>"
            f"<table><tr><th>document</th><th></th><th>canonical</th><th>{html.escape(scramble_type)} "
            f"(changed words marked)</th></tr>{rows}</table></section>"
        )
    return body


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
