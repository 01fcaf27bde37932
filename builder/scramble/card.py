"""The dataset card (``README.md``, from the packaged template through huggingface_hub's card API) and
``manifest.json`` of a scramble output."""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from scrambled_bench import __version__
from scrambled_bench.builder.build import CARD_NAME, library_versions
from scrambled_bench.builder.card import markdown_table, read_packaged, size_category
from scrambled_bench.builder.manifest import MANIFEST_NAME
from scrambled_bench.builder.nested_columns import column_path, roots
from scrambled_bench.builder.recipes import RECIPES
from scrambled_bench.builder.scramble.sources import LoadedSource
from scrambled_bench.builder.scramble.variants import ORIGINAL_SUFFIX, ScrambleJob, Variant
from scrambled_bench.builder.scrambler import STREAM_VERSION, type_description
from scrambled_bench.io import file_sha256

TEMPLATE_NAME = "scrambled_copy.md"
MANIFEST_KIND = "scramble"
"""``manifest.json``'s ``kind``: what marks a folder as a previous output ``scramble`` may replace."""


def command_line(
    source, columns, types, recipe, out, push, splits, config, revision, seed, id_column, sample_rate
) -> str:
    """The command that makes this output (for the card), reconstructed from the arguments.

    >>> command_line("rows.jsonl", ["text"], ["kfl"], None, "out", None, None, None, None, 0, None, None)
    'scrambled-bench scramble rows.jsonl --columns text --types kfl --out out --seed 0'
    """
    parts = ["scrambled-bench", "scramble", source, "--columns", ",".join(columns)]
    parts += ["--recipe", recipe] if recipe else ["--types", ",".join(types or [])]
    for option, value in (
        ("--out", out),
        ("--push", push),
        ("--split", ",".join(splits) if splits else None),
        ("--config", config),
        ("--revision", revision),
        ("--id-column", id_column),
        ("--sample-rate", None if sample_rate is None else f"{sample_rate:g}"),
    ):
        if value is not None:
            parts += [option, str(value)]
    parts += ["--seed", str(seed)]
    return shlex.join(parts)


def _digest_of(entries: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for entry in entries:
        digest.update(entry.encode("utf-8") + b"\n")
    return digest.hexdigest()


def _data_file_entries(folder: Path) -> dict[str, dict[str, Any]]:
    """Relative path -> config, split, rows and sha256 of every parquet file under ``folder/data``."""
    import pyarrow.parquet as pq  # deferred: pyarrow is heavy

    entries = {}
    for path in sorted((folder / "data").rglob("*.parquet")):
        entries[path.relative_to(folder).as_posix()] = {
            "config": path.parent.name,
            "split": path.name.rsplit("-", 3)[0],  # {split}-00000-of-00001.parquet
            "rows": pq.ParquetFile(path).metadata.num_rows,
            "sha256": file_sha256(path),
        }
    return entries


def _card_data(
    loaded: LoadedSource, job: ScrambleJob, entries: Mapping[str, Mapping[str, Any]], total_rows: int
) -> Any:
    """The card's YAML header: licence carried over, and the ``configs:`` block ``load_dataset`` reads."""
    from huggingface_hub import DatasetCardData  # deferred: huggingface_hub is heavy

    configs = []
    for variant in job.variants:
        files = sorted(
            (path, entry["sha256"]) for path, entry in entries.items() if entry["config"] == variant.config
        )
        configs.append(
            {
                "config_name": variant.config,
                "data_files": [
                    {"split": split, "path": f"data/{variant.config}/{split}-*.parquet"}
                    for split in loaded.splits
                ],
                # datasets keys the cache of a local folder on the YAML configs, not on the files: without the
                # content hash here a rescramble into the same folder would load the rows cached from the first
                "description": "sha256 of the data files: "
                + _digest_of(f"{path} {digest}" for path, digest in files),
            }
        )
    licence: dict[str, Any] = {"license": loaded.license or "unknown"}
    if loaded.license == "other" and loaded.license_name:
        licence["license_name"] = loaded.license_name
    hub = loaded.description.get("kind") == "Hub dataset"
    source = loaded.description["source"]
    return DatasetCardData(
        pretty_name=f"{source if hub else Path(source).name} (scrambled)",
        **licence,
        size_categories=[size_category(total_rows)],
        tags=["scrambled-text", "scrambled-bench", "robustness"],
        source_datasets=[source] if hub else None,
        configs=configs,
    )


def _columns_section(job: ScrambleJob, features: Mapping[str, Any]) -> str:
    rows = []
    paths = [column_path(column, features) for column in job.columns]
    for root in roots(paths):
        inside = [f"`{path.field}`" for path in paths if path.root == root and path.field is not None]
        what = f"{', '.join(inside)} scrambled inside, its other fields as in the source" if inside else None
        rows.append((f"`{root}`", what or "the scrambled text (the config's type, on the rows it scrambles)"))
        rows.append((f"`{root}{ORIGINAL_SUFFIX}`", f"the whole `{root}` as in the source"))
    rows.append(("`scramble_type`", "the type applied to this row's chosen columns"))
    rows.append(
        (
            "`scrambled`",
            "whether this row was scrambled (false where a sample rate or recipe left it unchanged)",
        )
    )
    if job.variants[0].recipe:
        rows.append(("`recipe`", "the recipe that made the row"))
    section = markdown_table(("column", "meaning"), rows)
    others = [name for name in features if name not in roots(paths)]
    if others:
        section += (
            "\n\nThe other columns (" + ", ".join(f"`{name}`" for name in others) + ") are copied unchanged."
        )
    return section


def _license_section(loaded: LoadedSource) -> str:
    if not loaded.license:
        return (
            "The source declares no licence in a dataset card (or its card could not be read), so none is carried "
            "over: check the source's terms before using or redistributing this copy."
        )
    name = f" ({loaded.license_name})" if loaded.license_name else ""
    return (
        f"Carried over from the source's dataset card: `{loaded.license}`{name}. This copy is derived from the "
        "source and keeps its terms; scrambling does not change them."
    )


def _types_section(job: ScrambleJob) -> str:
    types = dict.fromkeys(variant.scramble_type for variant in job.variants)
    table = markdown_table(
        ("type", "what it does"), [(f"`{name}`", type_description(name)) for name in types]
    )
    recipe = job.variants[0].recipe
    if recipe is None:
        return table
    chosen = RECIPES[recipe]
    return f"Recipe `{recipe}` ({chosen.paper_name}, paper App. A.4): {chosen.description}.\n\n{table}"


def _card_text(
    loaded: LoadedSource,
    features: Mapping[str, Any],
    rows: Mapping[str, Mapping[str, int]],
    job: ScrambleJob,
    entries: Mapping[str, Mapping[str, Any]],
    unchanged: Mapping[str, Mapping[str, int]],
    *,
    command: str,
    repo_hint: str,
) -> str:
    """The README.md of a scramble output: packaged template, huggingface_hub's card API."""
    from huggingface_hub import DatasetCard  # deferred: huggingface_hub is heavy

    splits = list(loaded.splits)
    total_rows = sum(sum(per_split.values()) for per_split in rows.values())
    card_data = _card_data(loaded, job, entries, total_rows)
    detail = [
        f"{key} `{loaded.description[key]}`"
        for key in ("config", "revision", "commit")
        if loaded.description.get(key)
    ]
    config_table = markdown_table(
        ("config", "type", "rows scrambled", *splits, "texts left unchanged"),
        [
            (
                f"`{variant.config}`",
                f"`{variant.scramble_type}`",
                f"{variant.sample_rate:g} %",
                *(rows[variant.config].get(split, 0) for split in splits),
                f"{unchanged[variant.config]['unchanged']} of {unchanged[variant.config]['texts']}",
            )
            for variant in job.variants
        ],
    )
    values = {
        "pretty_name": card_data.pretty_name,
        "source": loaded.description["source"],
        "source_detail": " (" + ", ".join(detail) + ")" if detail else "",
        "package_version": __version__,
        "seed": str(job.seed),
        "repo_hint": repo_hint,
        "example_config": job.variants[0].config,
        "example_split": splits[0],
        "config_kind": "recipe" if job.variants[0].recipe else "scramble type",
        "config_table": config_table,
        "columns_section": _columns_section(job, next(iter(features.values()))),
        "row_key": f"the value of its `{job.id_column}` column"
        if job.id_column
        else "its index in its split (0, 1, 2, ...)",
        "types_table": _types_section(job),
        "license_section": _license_section(loaded),
        "command": command,
        "source_files_sentence": " and of every local input file" if loaded.files else "",
    }
    card = DatasetCard.from_template(card_data, template_str=read_packaged(TEMPLATE_NAME), **values)
    return card.content.rstrip() + "\n"


def recorded_settings(
    loaded: LoadedSource,
    columns: Sequence[str],
    id_column: str | None,
    variants: Sequence[Variant],
    seed: int,
    kept_splits: Sequence[str],
) -> dict[str, Any]:
    """What the manifest records about how an output is made, beside its types: the settings a previous
    output must share for a new scramble to grow it (``builder.scramble.previous``)."""
    first = variants[0]
    return {
        "version": __version__,
        "stream_version": STREAM_VERSION,
        "source": {key: value for key, value in loaded.description.items() if value is not None},
        "source_files": dict(sorted(loaded.files.items())),
        "columns": list(columns),
        "row_key": id_column or "index",
        "recipe": first.recipe,
        "sample_rate": first.sample_rate,
        "seed": seed,
        "splits": list(loaded.splits),
        **({"kept_splits": sorted(kept_splits)} if kept_splits else {}),
    }


def write_card_and_manifest(
    tmp: Path,
    loaded: LoadedSource,
    features: Mapping[str, Any],
    rows: Mapping[str, Mapping[str, int]],
    job: ScrambleJob,
    *,
    command: str,
    repo_hint: str,
    settings: Mapping[str, Any],
    unchanged: Mapping[str, Mapping[str, int]],
    extra: Mapping[str, Any] | None = None,
) -> None:
    """README.md and manifest.json of the output in ``tmp`` (the data files are there already): the
    ``settings`` (:func:`recorded_settings`), the types, the counts of ``unchanged`` texts per config, the
    files; ``extra`` adds keys to the manifest."""
    entries: dict[str, dict[str, Any]] = _data_file_entries(tmp)
    card = _card_text(loaded, features, rows, job, entries, unchanged, command=command, repo_hint=repo_hint)
    (tmp / CARD_NAME).write_text(card, encoding="utf-8")
    entries[CARD_NAME] = {"sha256": file_sha256(tmp / CARD_NAME)}
    manifest = {
        "kind": MANIFEST_KIND,
        **settings,
        "source_license": loaded.license,
        "types": list(dict.fromkeys(variant.scramble_type for variant in job.variants)),
        "configs": [variant.config for variant in job.variants],
        "unchanged": {variant.config: dict(unchanged[variant.config]) for variant in job.variants},
        "built_with": library_versions(),
        "outputs": dict(sorted(entries.items())),
        **(extra or {}),
    }
    (tmp / MANIFEST_NAME).write_text(
        json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
