"""``lm_eval`` as the tests run it: lm-eval's own command line, its built-in tasks' index read from a cache.

On every ``lm_eval run``, lm-eval's ``TaskManager`` indexes every YAML file lm-eval ships (15,000 files in 0.4.13,
about 6 s of CPU on the 2-core development machine) before the ``--include_path`` a test wrote, and the suite
runs ``lm_eval`` six times. That part of the index depends only on the installed lm-eval, so this command takes
it from the cache ``scramble lm-eval:`` already keeps of the very same ``TaskIndex.build``
(:func:`scrambled_bench.integrations.lm_eval.tasks_source._builtin_task_index`, keyed by lm-eval's version and
the path, size and modification time of each of its task files). Everything else is lm-eval's: the
``--include_path`` folders are indexed by lm-eval's ``TaskIndex.build``, after the built-in tasks and merged as
lm-eval merges them (a later path's task overrides an earlier one's, with lm-eval's warning), and the command
line is ``lm_eval.__main__``'s. tests/test_lm_eval_command.py checks that the index is the one lm-eval builds.

    python tests/lm_eval_command.py run --model ... --include_path DIR --tasks ...   (as python -m lm_eval)
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

#: the command the tests run where a user runs ``python -m lm_eval``
LM_EVAL = [sys.executable, str(Path(__file__).resolve())]


def build_with_cached_builtins(
    stock_build: Callable[..., dict[str, Any]], root: Path, builtin_index: Callable[[], Mapping[str, Any]]
) -> Callable[..., dict[str, Any]]:
    """``TaskIndex.build`` where the first path is lm-eval's own task folder ``root`` (as ``TaskManager`` passes
    it): that folder's index from ``builtin_index()``, every later path's from ``stock_build``, merged as
    ``stock_build`` merges them. Any other call is ``stock_build``'s."""
    log = logging.getLogger("lm_eval.tasks._index")

    def build(paths: Iterable[Path], *, resolve_includes: bool = True) -> dict[str, Any]:
        paths = [Path(path) for path in paths]
        if not paths or paths[0] != root or not resolve_includes:
            return stock_build(paths, resolve_includes=resolve_includes)
        index = dict(builtin_index())
        for path in paths[1:]:
            for name, entry in stock_build([path], resolve_includes=resolve_includes).items():
                if name in index:  # lm-eval's own merge and warning (TaskIndex.build)
                    log.warning(
                        "Task '%s' from %s overrides existing task from %s",
                        name,
                        entry.yaml_path,
                        index[name].yaml_path,
                    )
                index[name] = entry
        return index

    return build


def _cached_builtin_index() -> Mapping[str, Any]:
    """The product's cached index of lm-eval's task folder, lm-eval's logger left as this run set it."""
    from scrambled_bench.integrations.lm_eval.tasks_source import _builtin_task_index

    logger = logging.getLogger("lm_eval")
    level = logger.level
    try:
        return _builtin_task_index()
    finally:
        logger.setLevel(level)  # the cache quietens lm-eval's logger for its own callers; this run keeps it


def main() -> None:
    # tests/ is not lm-eval's import path: nothing of it may shadow a module lm-eval imports
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        del sys.path[0]
    import lm_eval.tasks
    from lm_eval.__main__ import cli_evaluate
    from lm_eval.tasks._index import TaskIndex

    root = Path(lm_eval.tasks.__file__).parent
    TaskIndex.build = staticmethod(build_with_cached_builtins(TaskIndex.build, root, _cached_builtin_index))
    sys.argv[0] = "lm_eval"
    cli_evaluate()


if __name__ == "__main__":
    main()
