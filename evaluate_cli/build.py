"""The ``build`` and ``push`` commands: the Scrambled Bench datasets, locally and on the Hub."""

from __future__ import annotations

from pathlib import Path

import typer

from scrambled_bench.errors import ScrambledBenchError


def _split_names(values: list[str] | None) -> list[str] | None:
    """Accept both ``--types kf --types kfl`` and ``--types kf,kfl``."""
    if not values:
        return None
    names = [name.strip() for value in values for name in value.split(",")]
    if any(not name for name in names):
        raise ScrambledBenchError(f"empty name in {','.join(values)!r}")
    return names


def register(app: typer.Typer) -> None:
    """Add this group's commands to the root app."""

    @app.command("build")
    def build(
        out: Path = typer.Option(
            Path("scrambled_bench"),
            "--out",
            "-o",
            help="Build folder (replaced atomically if it holds a previous build).",
        ),
        sources: list[str] | None = typer.Option(
            None,
            "--sources",
            "-s",
            help="Sources to build: realtimeqa, dream, aqua (repeat or comma-separate; default: all).",
        ),
        types: list[str] | None = typer.Option(
            None,
            "--types",
            "-t",
            help="Scramble types: original, rs10..rs100, kf, kfl, kr2, klkr1, kfkr1, sub, adjNN, insNN, delNN, repNN; 'all' for every shipped type (default: the paper's plus kr2, klkr1, kfkr1).",
        ),
        seed: int = typer.Option(
            0, "--seed", help="Scramble seed; the same version and seed give byte-identical parquet files."
        ),
        source_dir: Path | None = typer.Option(
            None,
            "--source-dir",
            help="Upstream mirror laid out <owner>/<repo>/<path> (default: $SCRAMBLED_BENCH_SOURCE_DIR, else download from GitHub).",
        ),
        window: str | None = typer.Option(
            None,
            "--window",
            help="RealtimeQA weeks START:END (YYYY-MM-DD:YYYY-MM-DD; default: the paper's 2023-03-17:2023-08-04).",
        ),
    ) -> None:
        """Build the Scrambled Bench: parquet per config, a dataset card and a manifest.

        Configs are named {source}_{type} with one split, test, so that
        `load_dataset("scrambled_bench", "dream_kfl")` works from the folder where the build ran. The
        manifest records the version, the seed and the sha256 of every source and output file.

        Examples:

            scrambled-bench build

            scrambled-bench build --out sb --sources dream --types kfl,rs50 --seed 1

            scrambled-bench build --source-dir ../shared/data/sources --window 2026-01-01:2026-07-17
        """
        import time

        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        from scrambled_bench.builder.build import build_dataset, resolve_sources, resolve_types
        from scrambled_bench.builder.manifest import Manifest
        from scrambled_bench.builder.sources.fetch import resolve_source_dir

        source_names = resolve_sources(_split_names(sources))
        type_names = resolve_types(_split_names(types))
        console = Console(stderr=True)
        mirror = resolve_source_dir(source_dir)
        console.print(
            f"[bold]building[/] {len(source_names) * len(type_names)} configs into {out} from "
            f"{mirror if mirror is not None else 'the upstream GitHub repositories'}"
        )
        started = time.perf_counter()
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        ) as progress:
            task = progress.add_task("reading sources", total=len(source_names) * len(type_names))

            def advance(config: str, rows: int) -> None:
                progress.update(task, advance=1, description=f"{config} ({rows} rows)")

            build_dataset(
                out,
                sources=source_names,
                types=type_names,
                seed=seed,
                source_dir=mirror,
                window=window,
                progress=advance,
            )
        manifest = Manifest.read(out)
        rows = sum(entry.get("rows", 0) for entry in manifest.outputs.values())
        console.print(
            f"[green]built[/] {out} (version {manifest.version}, tag {manifest.tag}, seed {manifest.seed}, "
            f"{len(manifest.configs)} configs, {rows} rows) in {time.perf_counter() - started:.1f}s"
        )
        typer.echo(str(out))

    @app.command("push")
    def push(
        repo: str = typer.Option(
            ..., "--repo", help="Hub dataset repository ORG/NAME, e.g. my-org/scrambled_bench."
        ),
        build: Path = typer.Option(
            Path("scrambled_bench"), "--build", help="Build folder made by `scrambled-bench build`."
        ),
        private: bool = typer.Option(False, "--private", help="Create the repository as private."),
    ) -> None:
        """Upload a build to the Hugging Face Hub and tag it with its version.

        Afterwards `load_dataset("ORG/scrambled_bench", "dream_kfl", revision="v1.0.0")` pins it. Pushing a
        rebuild of an unchanged version uploads nothing. The token comes from HF_TOKEN or `hf auth login`
        and is never printed.

        Examples:

            scrambled-bench push --repo my-org/scrambled_bench

            scrambled-bench push --repo my-org/scrambled_bench --build sb --private
        """
        from scrambled_bench.builder.hub import push_build

        result = push_build(build, repo, private=private)
        what = "uploaded" if result.uploaded else "unchanged, nothing uploaded"
        tagged = f"tagged {result.tag}" if result.tagged else f"tag {result.tag} already there"
        typer.echo(f"{result.url}: {what}; {tagged}")
