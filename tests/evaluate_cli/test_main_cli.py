"""The root CLI: every usage problem is one ``error:`` line and exit 2, never a panel or a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scrambled_bench import __version__
from scrambled_bench.evaluate_cli.main import main

SCRIPT = Path(sys.executable).with_name("scrambled-bench")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["nosuch"], "No such command 'nosuch'"),
        (["run", "--limit", "abc"], "Invalid value for '--limit'"),
        (["score"], "give prediction FILES (with --task), or --from HARNESS DIR"),
        (["build", "--no-such-option"], "No such option"),
    ],
)
def test_usage_errors_are_one_line(capsys, argv, expected):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and expected in err
    assert err.count("\n") == 1, err


def test_version_and_help(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"scrambled-bench {__version__}"
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("build", "push", "score", "reproduce", "run", "report"):
        assert command in out


def test_bare_command_prints_help_and_succeeds(capsys):
    assert main([]) == 0
    captured = capsys.readouterr()
    assert "Usage" in captured.out + captured.err


@pytest.mark.skipif(
    not SCRIPT.exists(), reason="the scrambled-bench console script is not installed in this venv"
)
def test_console_script_prints_no_traceback():
    result = subprocess.run(
        [str(SCRIPT), "run", "--backend", "nosuch"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1


def test_a_short_option_means_one_thing_in_every_command():
    """``-s`` is ``--suite`` wherever it exists (it was also ``build --sources``), and a command's short options
    are the ones the one table, options.SHORT_FLAGS, gives its long options."""
    import typer

    from scrambled_bench.evaluate_cli.main import app
    from scrambled_bench.evaluate_cli.options import SHORT_FLAGS

    meaning: dict[str, set[str]] = {}
    for name, command in typer.main.get_command(app).commands.items():
        for param in command.params:
            longs = [opt for opt in param.opts if opt.startswith("--")]
            shorts = [opt for opt in param.opts if not opt.startswith("--")]
            for long in longs:
                assert shorts == ([SHORT_FLAGS[long]] if long in SHORT_FLAGS else []), (name, param.opts)
            for short in shorts:
                meaning.setdefault(short, set()).update(longs)
    # one meaning per letter; -o is where a command writes, a folder (--out) or a file (--output)
    assert {short: longs for short, longs in meaning.items() if len(longs) > 1} == {
        "-o": {"--out", "--output"}
    }
    assert meaning["-s"] == {"--suite"} and meaning["-t"] == {"--types"}
