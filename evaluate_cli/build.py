"""``build`` and ``push``: the Scrambled Bench datasets, locally and on the Hub."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from scrambled_bench.builder.build import build_dataset, planned_build
from scrambled_bench.builder.hub import push_build
from scrambled_bench.builder.manifest import Manifest
from scrambled_bench.builder.sources.fetch import resolve_source_dir
from scrambled_bench.evaluate_cli.options import (
    DEFAULT_BUILD,
    BuildDirOption,
    PrivateOption,
    SeedOption,
    TypesOption,
    option,
    with_build_tag,
)
from scrambled_bench.evaluation.hub_benchmark import eval_yaml_for
from scrambled_bench.names import split_names


def build(
    out: BuildDirOption = DEFAULT_BUILD,
    sources: Annotated[list[str] | None, option("--sources", "Sources: realtimeqa, dream, aqua (repeat or comma-separate; default: all).")] = None,
    types: TypesOption = None,
    seed: SeedOption = 0,
    source_dir: Annotated[Path | None, option("--source-dir", "Upstream mirror laid out <owner>/<repo>/<path> (default: $SCRAMBLED_BENCH_SOURCE_DIR, else GitHub).")] = None,
    window: Annotated[str | None, option("--window", "RealtimeQA weeks START:END (YYYY-MM-DD:YYYY-MM-DD; default: the paper's).")] = None,
    replace: Annotated[bool, option("--replace", "Build exactly these sources and types, replacing the build in --out (default: add to it).")] = False,
) -> None:  # fmt: skip
    """Build the Scrambled Bench: parquet per config, a dataset card and a manifest.

    Configs are named {source}_{type} with one split, test, so that
    `load_dataset("scrambled_bench", "dream_kfl")` works from the folder where the build ran. The
    manifest records the version, the seed and the sha256 of every source and output file. Without
    --types a build has the paper's types and Appendix A.2's; 'all' builds every shipped type. A build
    already in --out grows: it keeps its configs and gains those asked for (no existing file changes);
    --replace builds exactly what is asked for instead.

    Examples:

        scrambled-bench build

        scrambled-bench build --out sb --sources dream --types kfl,rs50 --seed 1

        scrambled-bench build --source-dir ../shared/data/sources --window 2026-01-01:2026-07-17
    """
    # rich is imported when a command runs, not for `scrambled-bench --help`
    from scrambled_bench.evaluate_cli.display import build_progress, console

    mirror = resolve_source_dir(source_dir)
    before = set() if replace or not Manifest.exists(out) else Manifest.read(out).configs
    source_names, type_names = planned_build(
        out, sources=split_names(sources), types=split_names(types), seed=seed, window=window, replace=replace
    )
    total = len(source_names) * len(type_names)
    out_console = console(stderr=True)
    out_console.print(_building(out, total, mirror, before))
    started = time.perf_counter()
    with build_progress(total, out_console) as bar:
        build_dataset(
            out, sources=source_names, types=type_names, seed=seed, source_dir=mirror, window=window,
            progress=bar.advance_config, replace=replace, benchmark=eval_yaml_for,
        )  # fmt: skip
    for line in _built(out, Manifest.read(out), before, time.perf_counter() - started):
        out_console.print(line)
    typer.echo(str(out))


def _building(out: Path, total: int, mirror: Path | None, before: set[str]) -> str:
    """The line that opens a build: how many configs, into which folder, from where; what it adds to.

    >>> _building(Path("sb"), 4, None, {"dream_kfl"})
    '[bold]building[/] 4 configs into sb from the upstream GitHub repositories (adding to the 1 it holds; --replace to start over)'
    """
    return (
        f"[bold]building[/] {total} configs into {out} from "
        f"{mirror if mirror is not None else 'the upstream GitHub repositories'}"
        + (f" (adding to the {len(before)} it holds; --replace to start over)" if before else "")
    )


def _built(out: Path, manifest: Manifest, before: set[str], seconds: float) -> list[str]:
    """The lines that close a build: what the folder now holds, and what this build added to it."""
    rows = sum(entry.get("rows", 0) for entry in manifest.outputs.values())
    built = (
        f"[green]built[/] {out} (version {manifest.version}, tag {manifest.tag}, seed {manifest.seed}, "
        f"{len(manifest.configs)} configs, {rows} rows) in {seconds:.1f}s"
    )
    lines = [built]
    if before:
        added = sorted(manifest.configs - before)
        lines.append(f"added {len(added)} config(s)" + (f": {', '.join(added)}" if added else ""))
    return lines


@with_build_tag
def push(
    repo: Annotated[str, option("--repo", "Hub dataset repository ORG/NAME, e.g. my-org/scrambled_bench.")],
    build: Annotated[Path, option("--build", "Build folder made by `scrambled-bench build`.")] = DEFAULT_BUILD,
    private: PrivateOption = False,
) -> None:  # fmt: skip
    """Upload a build to the Hugging Face Hub and tag it with its version.

    Afterwards `load_dataset("ORG/scrambled_bench", "dream_kfl", revision="{build_tag}")` pins it. Pushing a
    rebuild of an unchanged version uploads nothing. The token comes from HF_TOKEN or `hf auth login`
    and is never printed.

    Examples:

        scrambled-bench push --repo my-org/scrambled_bench

        scrambled-bench push --repo my-org/scrambled_bench --build sb --private
    """
    result = push_build(build, repo, private=private)
    what = "uploaded" if result.uploaded else "unchanged, nothing uploaded"
    tagged = f"tagged {result.tag}" if result.tagged else f"tag {result.tag} already there"
    typer.echo(f"{result.url}: {what}; {tagged}")
