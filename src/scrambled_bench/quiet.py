"""Silence the Hugging Face libraries' progress bars and warnings for a command run with ``--no-progress``.

transformers (de-quantising a GGUF, loading shards), huggingface_hub (downloads) and datasets (preparing
splits) each draw their own tqdm bars and log their own warnings on stderr; a ``--no-progress`` run, whose
stderr a script or a CI log keeps, wants none of them. :func:`quiet_libraries` turns them off for the
duration of a ``with`` block and puts each library's setting back afterwards, so a notebook that calls the
library with ``progress=False`` gets its bars back after the call.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

#: the loggers whose warnings a quiet run drops (errors still show)
QUIET_LOGGERS = ("transformers", "huggingface_hub", "datasets", "accelerate", "gguf")
#: the modules whose Python warnings a quiet run ignores (transformers' generate() flags, tokenizer notes)
QUIET_WARNING_MODULES = r"(transformers|huggingface_hub|datasets|accelerate|torch|gguf)(\..*)?"


def _progress_switches() -> Iterator[tuple[Callable[[], bool], Callable[[], None], Callable[[], None]]]:
    """``(enabled?, disable, enable)`` for each installed library's own progress-bar switch."""
    switches = (
        ("huggingface_hub.utils", "are_progress_bars_disabled", "disable_progress_bars", "enable_progress_bars"),
        ("transformers.utils.logging", "is_progress_bar_enabled", "disable_progress_bar", "enable_progress_bar"),
        ("datasets.utils.logging", "is_progress_bar_enabled", "disable_progress_bar", "enable_progress_bar"),
    )  # fmt: skip
    for module_name, query, disable, enable in switches:
        if module_name.startswith("datasets") and "datasets" not in sys.modules:
            # datasets takes a second to import; a run that never imported it draws none of its bars
            continue
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        ask = getattr(module, query)
        enabled = (lambda ask=ask: not ask()) if query.startswith("are_") else ask
        yield enabled, getattr(module, disable), getattr(module, enable)


@contextmanager
def quiet_libraries(quiet: bool = True) -> Iterator[None]:
    """While inside, no progress bar nor warning from transformers, huggingface_hub or datasets (``quiet``
    False: nothing changes). Errors still print; each setting is restored on leaving.

    >>> import logging
    >>> before = logging.getLogger("transformers").level
    >>> with quiet_libraries():
    ...     logging.getLogger("transformers.modeling_utils").getEffectiveLevel() >= logging.ERROR
    True
    >>> logging.getLogger("transformers").level == before
    True
    """
    if not quiet:
        yield
        return
    with ExitStack() as restore:
        previous_env = os.environ.get("HF_HUB_DISABLE_PROGRESS_BARS")
        os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"  # read by libraries imported inside the block
        restore.callback(_restore_env, "HF_HUB_DISABLE_PROGRESS_BARS", previous_env)
        # the switches first: importing a library sets its root logger's level, which must not undo ours
        for enabled, disable, enable in _progress_switches():
            if enabled():
                disable()
                restore.callback(enable)
        for name in QUIET_LOGGERS:
            logger = logging.getLogger(name)
            restore.callback(logger.setLevel, logger.level)
            logger.setLevel(logging.ERROR)
        restore.enter_context(warnings.catch_warnings())
        warnings.filterwarnings("ignore", module=QUIET_WARNING_MODULES)
        yield


def _restore_env(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
