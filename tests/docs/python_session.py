"""A page's Python session (``code_blocks.PythonSession``): reads one JSON request a line on stdin (a block's
code, whether it is a doctest, its page and line) and runs it in the one namespace of the page, then writes
one JSON reply a line to the file descriptor given as its argument: whether it ran as the page says, and what
it printed (with the traceback or the doctest's report). The block's own output never reaches the replies.

Line numbers in a traceback or a doctest report are the page's.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import json
import os
import sys
import traceback


def main() -> None:
    replies = os.fdopen(int(sys.argv[1]), "w", buffering=1)
    namespace: dict[str, object] = {"__name__": "__main__"}
    for line in sys.stdin:
        request = json.loads(line)
        out = io.StringIO()
        ok = True
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                if request["doctest"]:
                    test = doctest.DocTestParser().get_doctest(
                        request["code"], namespace, request["name"], request["name"], request["line"]
                    )
                    runner = doctest.DocTestRunner(
                        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
                    )
                    runner.run(test, out=out.write, clear_globs=False)
                    namespace.update(
                        test.globs
                    )  # a DocTest runs in a copy: what it defined stays for the page
                    ok = runner.failures == 0 and runner.tries > 0
                else:
                    # the code's first line is the page's line after the fence: tracebacks name the page's lines
                    code = "\n" * request["line"] + request["code"]
                    exec(compile(code, request["name"], "exec"), namespace)  # noqa: S102 - the page's own example
        except BaseException:  # noqa: BLE001 - any failure of the example (SystemExit included) is reported
            ok = False
            out.write(traceback.format_exc())
        replies.write(json.dumps({"ok": ok, "output": out.getvalue()}) + "\n")


if __name__ == "__main__":
    main()
