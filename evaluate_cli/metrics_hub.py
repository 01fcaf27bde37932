"""``push-metrics``: the metric modules as Hugging Face Spaces, for ``evaluate.load("ORG/<name>")``."""

from __future__ import annotations

from typing import Annotated

import typer

from scrambled_bench.evaluate_cli.options import PrivateOption, option
from scrambled_bench.metrics import spaces


def push_metrics(
    org: Annotated[str, option("--org", "Hub user or organisation that owns the Spaces.")],
    private: PrivateOption = False,
) -> None:
    """Create or update one Space per metric module and tag it with the package version.

    Each Space (ORG/recovery_rate, ORG/relative_performance_gain,
    ORG/edit_distance) gets its folder as it is: the card with the header
    evaluate-cli create writes (gradio SDK, tags evaluate and metric), the
    script, app.py and requirements.txt. A Space that already holds the
    same files gets no new commit. Afterwards evaluate.load("ORG/recovery_rate")
    loads it. The token comes from HF_TOKEN or `hf auth login` and is never
    printed.

    Examples:

        scrambled-bench push-metrics --org my-org

        scrambled-bench push-metrics --org my-org --private
    """
    for result in spaces.push_metrics(org, private=private):
        what = "uploaded" if result.uploaded else "unchanged, nothing uploaded"
        tagged = f"tagged {result.tag}" if result.tagged else f"tag {result.tag} already there"
        typer.echo(f"{result.url}: {what}; {tagged}")
