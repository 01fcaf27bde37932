"""The ``scrambled-bench`` command line: one Typer app, one file per command group.

- ``build.py``: ``build``, ``push`` (the datasets)
- ``score.py``: ``score``, ``reproduce`` (the metrics)
- ``run.py``: ``run`` (evaluating a model)
- ``report.py``: ``report`` (tables and plots from run folders)
- ``harnesses.py``: ``lm-eval-path`` (the tasks for lm-evaluation-harness), ``check-endpoint`` (which task
  types an endpoint serves), ``dequantise`` (a GGUF as a transformers checkpoint)
- ``metrics_hub.py``: ``push-metrics`` (the metric modules as Hub Spaces)
- ``probe.py``: ``probe`` (hidden-state probes per layer, Appendix A.3)
- ``scramble.py``: ``scramble`` (any dataset's text columns, the paper's fine-tuning corpora)
- ``listing.py``: ``list`` (scramble types, suites, tasks, harnesses, a ``scramble`` output's variants)
- ``reference.py``: the documentation site's generated pages (no command)

Commands are thin: they parse options (``options.py`` holds the shared ones) and call the library
(``scrambled_bench.builder``, ``.metrics``, ``.evaluation``, ``.integrations``, ``.report``); ``display.py`` holds what they print. Every
problem a user can fix is a :class:`~scrambled_bench.errors.ScrambledBenchError`, which :func:`main`
turns into one ``error:`` line and a non-zero exit.
"""

from __future__ import annotations

import os
import sys

# `evaluate` imports transformers, which prints "PyTorch was not found" (twice) where torch is absent; torch
# is only needed by the transformers backend, so the note is noise for every other command.
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import typer

from scrambled_bench import __version__
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli import (
    build,
    harnesses,
    listing,
    metrics_hub,
    probe,
    report,
    run,
    score,
    scramble,
)
from scrambled_bench.evaluate_cli.options import command_group
from scrambled_bench.metrics import claim_process

try:  # typer >= 0.20 vendors click; its usage errors derive from typer.TyperException
    from typer._click.exceptions import NoArgsIsHelpError
except ImportError:  # pragma: no cover - older typer on top of click
    from click.exceptions import NoArgsIsHelpError

app = command_group(
    "scrambled-bench",
    "The Scrambled Bench (Cao et al., EMNLP 2023): build the datasets, score predictions, evaluate models.",
)

# one line per command: the commands are module-level functions in their group's file
app.command("build")(build.build)
app.command("push")(build.push)
app.command("score")(score.score)
app.command("reproduce")(score.reproduce)
app.command("run", epilog=run.EPILOG)(run.run)
app.command("report")(report.report)
app.command("lm-eval-path")(harnesses.lm_eval_path)
app.command("check-endpoint")(harnesses.check_endpoint)
app.command("dequantise")(harnesses.dequantise)
app.command("push-metrics")(metrics_hub.push_metrics)
app.command("probe")(probe.probe)
app.command("scramble")(scramble.scramble)
app.add_typer(listing.app, name="list")


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"scrambled-bench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """The Scrambled Bench (Cao et al., EMNLP 2023): build the datasets, score predictions, evaluate models."""


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; user errors become one line ``error: <message>`` on stderr and a non-zero exit.

    >>> main(["--version"])
    scrambled-bench 1.1.0
    0
    """
    argv = report.expand_bare_paper(sys.argv[1:] if argv is None else argv)
    try:
        # standalone_mode=False: usage errors come back to us instead of as a multi-line panel
        # the command line as typed, for commands that tell the user how to repeat it (resume a run)
        arguments = list(sys.argv[1:] if argv is None else argv)
        result = app(
            args=arguments, prog_name="scrambled-bench", standalone_mode=False, obj={"argv": arguments}
        )
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        print("error: interrupted", file=sys.stderr)
        return 130
    except NoArgsIsHelpError as exc:
        # a bare command group prints its help: that is what the user asked for
        print(exc.ctx.get_help() if exc.ctx else "", file=sys.stderr)
        return 0
    except typer.TyperException as exc:  # usage errors: bad option value, unknown command, missing argument
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        message = message.replace("Value error, ", "")  # the prefix Typer's choice check adds to its reason
        ctx = getattr(exc, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        print(f"error: {message}{hint}", file=sys.stderr)
        return getattr(exc, "exit_code", 2)
    except ScrambledBenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # a full disk or a permission problem met outside the checked paths
        where = f": {exc.filename}" if exc.filename else ""
        print(f"error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 1
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return result if isinstance(result, int) else 0


def console() -> int:
    """The ``scrambled-bench`` program: :func:`main` on the command line, in a process that is the program's
    own (:func:`scrambled_bench.metrics.claim_process`)."""
    claim_process()
    return main()


if __name__ == "__main__":
    sys.exit(console())
