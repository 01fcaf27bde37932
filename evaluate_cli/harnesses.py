"""``lm-eval-path``: the Scrambled Bench tasks for lm-evaluation-harness (``--include_path``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.options import option, with_build_tag


@with_build_tag
def lm_eval_path(
    data: Annotated[str | None, option("--data", "The tasks read this build folder or Hub dataset id (default: ./scrambled_bench where lm_eval runs).")] = None,
    revision: Annotated[str | None, option("--revision", "Hub dataset revision (tag, branch or commit), with a Hub --data.")] = None,
    out: Annotated[Path | None, option("--out", "Write the tasks for --data here (default: a folder in ~/.cache/scrambled_bench).")] = None,
) -> None:  # fmt: skip
    """Print the folder of the Scrambled Bench tasks for lm_eval's --include_path.

    One task per config of the paper suite (scrambled_bench_scrqa_dream_kfl,
    scrambled_bench_scrrec_realtimeqa_rs50_fewshot, scrambled_bench_aqua_cot_rs100, ...)
    and the group scrambled_bench. Without --data the tasks ship with the
    package and read ./scrambled_bench; with --data they are written for
    that build folder or Hub dataset (at --revision), and that folder is
    printed. Only the folder goes to stdout, for $(...).

    Examples:

        lm_eval run --model local-chat-completions --tasks scrambled_bench --include_path "$(scrambled-bench lm-eval-path)" ...

        scrambled-bench lm-eval-path --data my-org/scrambled_bench --revision {build_tag}

        scrambled-bench lm-eval-path --data /data/scrambled_bench --out lm_eval_tasks
    """
    from scrambled_bench.integrations.lm_eval.bench import (
        PACKAGED_TASKS,
        data_location,
        default_folder,
        write_tasks,
    )

    if data is None:
        if revision is not None or out is not None:
            raise ScrambledBenchError(
                "--revision and --out apply with --data (the packaged tasks read ./scrambled_bench)"
            )
        typer.echo(str(PACKAGED_TASKS))
        return
    location = data_location(data, revision)
    typer.echo(str(write_tasks(out if out is not None else default_folder(location), location).resolve()))
