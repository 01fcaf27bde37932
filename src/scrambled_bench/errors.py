"""The one exception type that the CLI turns into a one-line message and a non-zero exit."""

from __future__ import annotations


class ScrambledBenchError(Exception):
    """A problem with the user's input or environment, stated in one line.

    The CLI prints ``error: <message>`` and exits with ``exit_code``; no traceback is shown.

    >>> str(ScrambledBenchError("unknown scramble type 'kfx'"))
    "unknown scramble type 'kfx'"
    """

    exit_code = 2

    def __init__(self, message: str, *, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class IncompleteRunError(ScrambledBenchError):
    """A run that ended with requests still failed after their retries, or never answered: its results are
    written but rest on fewer samples than asked for. Exit code 3, apart from bad input's 2, so that a
    script can tell "retry later" (rerun the same command) from "fix your command".

    >>> IncompleteRunError("2 requests failed").exit_code
    3
    """

    exit_code = 3


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, for a one-line error; its type's name when it has none.

    >>> first_line(OSError("no such file\\n  (details follow)")), first_line(KeyError())
    ('no such file', 'KeyError')
    """
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
