"""The tests' ``lm_eval`` command (tests/lm_eval_command.py) indexes tasks as lm-eval does: the index of
lm-eval's own folder from the cache, the include paths by lm-eval, merged in lm-eval's order."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from lm_eval_command import build_with_cached_builtins


def _tasks(folder: Path, **tasks: str) -> Path:
    folder.mkdir()
    for name, path in tasks.items():
        (folder / f"{name}.yaml").write_text(
            f"task: {name}\ndataset_path: {path}\noutput_type: generate_until\n"
        )
    return folder


def test_the_index_is_lm_evals_with_the_first_folder_read_from_the_cache(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pytest.importorskip("lm_eval", reason="needs lm-eval: pip install -e '.[harness]'")
    from lm_eval.tasks._index import TaskIndex

    builtin = _tasks(tmp_path / "builtin", alpha="a", beta="b")
    include = _tasks(tmp_path / "include", beta="mine", gamma="g")  # beta overrides the built-in one
    later = _tasks(tmp_path / "later", gamma="last")
    cached_calls, stock_calls = [], []

    def stock(paths, **kwargs):
        stock_calls.append([Path(path) for path in paths])
        return TaskIndex.build(paths, **kwargs)

    def cached() -> dict:
        cached_calls.append(builtin)
        return TaskIndex.build([builtin])

    build = build_with_cached_builtins(stock, builtin, cached)
    with caplog.at_level(logging.WARNING, logger="lm_eval.tasks._index"):
        index = build([builtin, include, later])
    wrapped_warnings = [record.getMessage() for record in caplog.records]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="lm_eval.tasks._index"):
        expected = TaskIndex.build([builtin, include, later])
    assert index == expected
    assert sorted(index) == ["alpha", "beta", "gamma"]
    assert (
        index["beta"].yaml_path == include / "beta.yaml" and index["gamma"].yaml_path == later / "gamma.yaml"
    )
    assert (
        wrapped_warnings == [record.getMessage() for record in caplog.records] and len(wrapped_warnings) == 2
    )
    # the built-in folder was never walked: the cache gave it; each include path was lm-eval's own build
    assert cached_calls == [builtin] and stock_calls == [[include], [later]]

    # any other call is lm-eval's own, untouched
    stock_calls.clear()
    assert build([include]) == TaskIndex.build([include]) and stock_calls == [[include]]
    assert build([builtin], resolve_includes=False) == TaskIndex.build([builtin], resolve_includes=False)
    assert cached_calls == [builtin]
