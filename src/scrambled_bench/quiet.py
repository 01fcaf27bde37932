"""Silence the Hugging Face libraries' progress bars and warnings for a command run with ``--no-progress``.

transformers (de-quantising a GGUF, loading and writing weights), huggingface_hub (downloads) and datasets
(preparing splits) each draw their own tqdm bars and log their own warnings on stderr; a ``--no-progress``
run, whose stderr a script or a CI log keeps, wants none of them. :func:`quiet_libraries` turns them off for
a ``with`` block without importing any of them (a run of the embedded llama.cpp model never imports
transformers, and should not pay for it): a library already imported is switched off through its own API
and switched back on leaving; one imported inside the block reads its environment variables
(``HF_HUB_DISABLE_PROGRESS_BARS``, ``TRANSFORMERS_VERBOSITY``...) at import and stays quiet afterwards.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

#: the loggers whose warnings a quiet run drops (errors still show)
QUIET_LOGGERS = ("transformers", "huggingface_hub", "datasets", "accelerate", "gguf")
#: the modules whose Python warnings a quiet run ignores (transformers' generate() flags, tokenizer notes)
QUIET_WARNING_MODULES = r"(transformers|huggingface_hub|datasets|accelerate|torch|gguf)(\..*)?"
#: what a library imported inside the block reads at import
QUIET_ENVIRONMENT = {
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "DATASETS_VERBOSITY": "error",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
}
#: (module, is it on?, switch off, switch on) of each library's own progress-bar switch
_SWITCHES = (
    ("huggingface_hub.utils", "are_progress_bars_disabled", "disable_progress_bars", "enable_progress_bars"),
    ("transformers.utils.logging", "is_progress_bar_enabled", "disable_progress_bar", "enable_progress_bar"),
    ("datasets.utils.logging", "is_progress_bar_enabled", "disable_progress_bar", "enable_progress_bar"),
)


@contextmanager
def quiet_libraries(quiet: bool = True) -> Iterator[None]:
    """While inside, no progress bar nor warning from transformers, huggingface_hub or datasets (``quiet``
    False: nothing changes). Errors still print; what was switched off is switched back on leaving.

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
        for name, value in QUIET_ENVIRONMENT.items():
            restore.callback(_restore_env, name, os.environ.get(name))
            os.environ[name] = value
        for module_name, query, disable, enable in _SWITCHES:
            if module_name.split(".")[0] not in sys.modules:
                continue  # not imported: it will read the environment above when it is
            module = importlib.import_module(module_name)
            enabled = not getattr(module, query)() if query.startswith("are_") else getattr(module, query)()
            if enabled:
                getattr(module, disable)()
                restore.callback(getattr(module, enable))
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
