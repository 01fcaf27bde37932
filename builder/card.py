"""The dataset card (README.md of a build): the template in ``dataset_cards/`` filled from the build.

The card is built with huggingface_hub's card API (:class:`~huggingface_hub.DatasetCardData` for the YAML
header, :meth:`~huggingface_hub.DatasetCard.from_template` for the body). The header carries the
``configs:`` block that makes ``load_dataset(folder_or_repo, config)`` find the parquet files without a
loading script.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from scrambled_bench.builder.scrambler import type_description
from scrambled_bench.builder.sources.common import SourceInfo

TEMPLATE_NAME = "scrambled_bench.md"
HISTORY_NAME = "CHANGELOG.md"


@dataclass(frozen=True)
class ConfigSummary:
    """One config of a build, as the card lists it."""

    name: str
    source: str
    scramble_type: str
    path: str
    rows: int
    sha256: str = ""


def size_category(rows: int) -> str:
    """The Hub's ``size_categories`` bucket.

    >>> size_category(512), size_category(54000)
    ('n<1K', '10K<n<100K')
    """
    for limit, label in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
    ):
        if rows < limit:
            return label
    return "1M<n<10M"


def card_data(configs: Sequence[ConfigSummary], infos: Sequence[SourceInfo], total_rows: int) -> Any:
    """The card's YAML metadata as a :class:`huggingface_hub.DatasetCardData`.

    >>> from scrambled_bench.builder.sources import aqua
    >>> data = card_data([ConfigSummary("aqua_kf", "aqua", "kf", "data/aqua_kf/x.parquet", 254, "ab")], [aqua.INFO], 254)
    >>> data.license, data.configs[0]["description"]
    ('apache-2.0', 'sha256 of the test data: ab')
    """
    from huggingface_hub import DatasetCardData  # deferred: huggingface_hub is heavy

    licenses = sorted({info.license for info in infos})
    single = len(licenses) == 1 and licenses[0] not in ("other", "unknown")
    # each config follows its source's licence; the card's Licence section lists them
    licence = {"license": licenses[0]} if single else {"license": "other", "license_name": "mixed"}
    config_entries = []
    for config in configs:
        entry: dict[str, Any] = {
            "config_name": config.name,
            "data_files": [{"split": "test", "path": config.path}],
        }
        if config.sha256:
            # `datasets` keys the cache of a local folder on its YAML configs, not on the files' content or
            # mtime (huggingface/datasets#2956): without the hash here, load_dataset("scrambled_bench", ...)
            # after a rebuild with another seed or window, or in another folder of that name, returns the
            # rows of the first build it cached. A config's description is part of that cache key.
            entry["description"] = f"sha256 of the test data: {config.sha256}"
        config_entries.append(entry)
    return DatasetCardData(
        pretty_name="Scrambled Bench",
        **licence,
        language=["en"],
        task_categories=["question-answering", "multiple-choice", "text-generation"],
        task_ids=["multiple-choice-qa"],
        size_categories=[size_category(total_rows)],
        tags=["scrambled-text", "robustness", "typos", "error-correction"],
        configs=config_entries,
    )


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (the cards' config, type and column tables).

    >>> print(markdown_table(("type", "rows"), [("kf", 3)]))
    | type | rows |
    |---|---|
    | kf | 3 |
    """
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def read_packaged(name: str) -> str:
    """A file shipped in ``scrambled_bench.dataset_cards``."""
    return resources.files("scrambled_bench.dataset_cards").joinpath(name).read_text(encoding="utf-8")


def render_card(
    *,
    version: str,
    tag: str,
    seed: int,
    window: str | None,
    configs: Sequence[ConfigSummary],
    infos: Sequence[SourceInfo],
    types: Sequence[str],
    example_config: str,
    example_row: Mapping[str, Any],
    repo_hint: str = "scrambled_bench",
    template: str | None = None,
    history: str | None = None,
) -> str:
    """The full README.md of a build (pure given ``template`` and ``history``; they default to the packaged ones).

    ``template`` is a Jinja template whose ``{{ card_data }}`` is the YAML header (huggingface_hub's card
    template convention)."""
    template = read_packaged(TEMPLATE_NAME) if template is None else template
    history = read_packaged(HISTORY_NAME) if history is None else history
    total_rows = sum(config.rows for config in configs)
    config_table = markdown_table(
        ("config", "source", "type", "rows"),
        [(f"`{c.name}`", c.source, f"`{c.scramble_type}`", c.rows) for c in configs],
    )
    types_table = markdown_table(("type", "what it does"), [(f"`{t}`", type_description(t)) for t in types])
    sources_section = "\n".join(
        f"- **{info.pretty_name}** (`{info.name}_*`), from [{info.upstream.owner}/{info.upstream.repo}]"
        f"({info.upstream.url}) (branch `{info.upstream.branch}`); `original`/`scrambled` hold {info.scrambled_field}. "
        f"Licence: {info.license_note}"
        for info in infos
    )
    license_list = "\n".join(f"- `{info.name}_*` ({info.pretty_name}): {info.license_note}" for info in infos)
    source_citations = "Sources:\n\n```bibtex\n" + "\n\n".join(info.citation for info in infos) + "\n```"
    window_sentence = f" and RealtimeQA window `{window}`" if window else ""
    history_body = history.split("\n", 1)[1] if history.startswith("# ") else history
    values = {
        "version": version,
        "tag": tag,
        "seed": str(seed),
        "window_sentence": window_sentence,
        "config_count": str(len(configs)),
        "total_rows": f"{total_rows:,}",
        "repo_hint": repo_hint,
        "example_config": example_config,
        "config_table": config_table,
        "sources_section": sources_section,
        "types_table": types_table,
        "example_row": json.dumps(dict(example_row), ensure_ascii=False, indent=2),
        "license_list": license_list,
        "source_citations": source_citations,
        "version_history": "## Version history\n" + history_body.rstrip() + "\n",
    }
    from huggingface_hub import DatasetCard  # deferred: huggingface_hub is heavy

    card = DatasetCard.from_template(card_data(configs, infos, total_rows), template_str=template, **values)
    return card.content.rstrip() + "\n"
