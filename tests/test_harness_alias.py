"""``scrambled_bench.harness``, the old name of ``scrambled_bench.evaluation``, for one release: importing it
warns, and every module under it is the new module itself (one registry, one class), never a copy."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning:__main__", "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_old_name_warns_once_and_names_the_new_one() -> None:
    done = _python(
        """
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import scrambled_bench.harness.backends
            import scrambled_bench.harness.engine
        messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
        print(messages)
        assert len([m for m in messages if "scrambled_bench.harness is renamed scrambled_bench.evaluation" in m]) == 1
        """
    )
    assert done.returncode == 0, done.stderr


def test_modules_under_the_old_name_are_the_new_modules() -> None:
    done = _python(
        """
        import warnings
        warnings.simplefilter("ignore", DeprecationWarning)
        from scrambled_bench.harness.backends import create_backend
        from scrambled_bench.harness.tasks.base import Task
        from scrambled_bench.harness import evaluate_model
        import scrambled_bench.harness.engine as old_engine
        import scrambled_bench.evaluation.backends
        import scrambled_bench.evaluation.engine
        import scrambled_bench.evaluation.tasks.base
        import scrambled_bench.evaluation
        assert create_backend is scrambled_bench.evaluation.backends.create_backend
        assert Task is scrambled_bench.evaluation.tasks.base.Task
        assert evaluate_model is scrambled_bench.evaluation.evaluate_model
        assert old_engine is scrambled_bench.evaluation.engine
        # the module keeps its own name and spec: reloads and pickles name the new path
        assert old_engine.__name__ == old_engine.__spec__.name == "scrambled_bench.evaluation.engine"
        assert not hasattr(scrambled_bench.evaluation.engine, "__path__")  # a module stays a module
        """
    )
    assert done.returncode == 0, done.stderr


def test_a_name_the_new_package_lacks_is_an_import_error() -> None:
    done = _python(
        """
        import warnings
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            import scrambled_bench.harness.no_such_module
        except ModuleNotFoundError as exc:
            print(exc)
        else:
            raise AssertionError("imported a module that does not exist")
        """
    )
    assert done.returncode == 0, done.stderr
