"""Why a pytest-xdist worker ended with tests it had been handed still unrun, printed as the run's last lines.

CI of 94113a1 stopped after 509 s on xdist's ``INTERNALERROR> assert not crashitem``: worker gw0 said its
session had finished while the controller still counted a test handed to it as unrun (a pure test of
tests/metrics that takes milliseconds, and the suite's one expected failure, ``xfail``). xdist says nothing
more, and what a worker printed, if anything, lies far above the tail a CI log keeps. So each worker now
sends, with the message that its session finished, what it was doing: its process id (a forked child that
ran on would show another), the test it last started and last finished, the tests still queued, whether
execnet's receiving thread still ran (if it ends, nothing more reaches the worker), the exception that ended
its loop of tests and any internal error. The controller prints that for every worker that ended early,
after everything else, where the end of a log shows it. A worker that ended normally adds nothing to the
output.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
from typing import Any

import pytest

#: the key of this plugin's record in a worker's ``workeroutput`` (xdist sends that dict back when it finishes)
KEY = "scrambled_bench_worker_state"

_state: dict[str, Any] = {
    "pid": None,
    "last_started": None,
    "last_finished": None,
    "loop_ended_by": None,
    "internal_error": None,
}
#: the controller's accounts of workers that ended early, printed last
_early_ends: list[str] = []


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    _state["pid"] = os.getpid()


def pytest_runtest_logstart(nodeid: str) -> None:
    _state["last_started"] = nodeid


def pytest_runtest_logfinish(nodeid: str) -> None:
    _state["last_finished"] = nodeid


def pytest_internalerror(excrepr: Any) -> None:
    _state["internal_error"] = str(excrepr)[-4000:]


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Any:
    """Keep the exception, if any, that ended the worker's loop of tests: ``Failed``, ``Exit`` and
    ``KeyboardInterrupt`` end a session without an internal error, and say nothing of where they came from."""
    try:
        return (yield)
    except BaseException as exc:
        _state["loop_ended_by"] = "".join(traceback.format_exception(exc))[-4000:]
        raise


def _interactor(config: pytest.Config) -> Any:
    """xdist's plugin in a worker, which holds its queue of tests and its channel to the controller."""
    return next(
        (
            plugin
            for plugin in config.pluginmanager.get_plugins()
            if type(plugin).__name__ == "WorkerInteractor"
        ),
        None,
    )


def _connection(interactor: Any) -> dict[str, Any]:
    """What the worker still held from the controller: its queued test indices (or the shutdown marker), and
    whether execnet's receiving thread still ran (its pool's count) or ended on an error (``_error``). These are
    xdist's and execnet's private attributes, read defensively: this is a diagnosis, never a check."""
    queue = getattr(getattr(interactor, "torun", None), "_items", None)
    gateway = getattr(getattr(interactor, "channel", None), "gateway", None)
    receiving = getattr(getattr(gateway, "_receivepool", None), "active_count", None)
    return {
        "queued": None
        if queue is None
        else [item if isinstance(item, int) else str(item) for item in list(queue)],
        "receiving_threads": receiving() if callable(receiving) else None,
        "receive_error": repr(getattr(gateway, "_error", None)),
    }


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if not _is_worker(config):
        return
    config.workeroutput[KEY] = {  # type: ignore[attr-defined]
        "pid": os.getpid(),
        "configured_pid": _state["pid"],
        "exitstatus": int(exitstatus),
        "shouldstop": str(session.shouldstop),
        "shouldfail": str(session.shouldfail),
        "last_started": _state["last_started"],
        "last_finished": _state["last_finished"],
        **_connection(_interactor(config)),
        "threads": [thread.name for thread in threading.enumerate()],
        "loop_ended_by": _state["loop_ended_by"],
        "internal_error": _state["internal_error"],
    }


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook, called on the controller as each worker goes down
def pytest_testnodedown(node: Any, error: Any) -> None:
    dsession = node.config.pluginmanager.getplugin("dsession")
    scheduler = getattr(dsession, "sched", None)
    unrun = scheduler.unrun_of(node) if hasattr(scheduler, "unrun_of") else []
    if error is None and not unrun:
        return
    state = getattr(node, "workeroutput", {}).get(KEY, {})
    lines = [f"[{node.gateway.id}] ended with {len(unrun)} test(s) it was handed unrun (first: {unrun[:1]})"]
    if error is not None:
        lines.append(f"  error: {error}")
    for name, value in state.items():
        lines.append(f"  {name}: {value}")
    _early_ends.append("\n".join(lines))


def pytest_unconfigure(config: pytest.Config) -> None:
    if _early_ends and not _is_worker(config):
        text = "\n".join(
            ["", "=== xdist workers that ended early (tests/worker_report.py) ===", *_early_ends, ""]
        )
        sys.stdout.flush()  # after the summary pytest printed, where a log interleaves the two streams
        sys.stderr.flush()
        os.write(2, text.encode("utf-8", "replace"))
