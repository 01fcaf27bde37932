"""Evaluation harnesses (lm-evaluation-harness, lighteval, Inspect AI, and any registered by a user), each
one implementation of one interface (:class:`Harness`), looked up by name in one registry.

- :mod:`.base`: the interface and the records it trades in (logged tasks and documents, run identities);
- :mod:`.registry`: :func:`register`, :func:`get_harness`, the ``scrambled_bench.harnesses`` entry points;
- :mod:`.scramble`: ``scramble NAME:SPEC`` for any harness; :mod:`.datasets`: the flow of the harnesses
  whose tasks read a dataset (scramble it, write task files beside it);
- :mod:`.pairing`: a variant paired with its canonical task document by document, across runs;
  :mod:`.scoring`: ``score --from NAME DIR``;
- :mod:`.exported`: the bench's own tasks, harness-neutral; each harness's package writes them its way;
- one package per harness: :mod:`.lm_eval`, :mod:`.lighteval`, :mod:`.inspect`.

Nothing outside a harness's package asks anything of it but the interface, or branches on its name.

>>> from scrambled_bench.integrations import get_harness, harness_names
>>> harness_names()[:3], get_harness("inspect").layout.output_option
(['inspect', 'lighteval', 'lm-eval'], '--log-dir')
"""

from scrambled_bench.integrations.base import (
    NO_TARGET,
    CanonicalTask,
    Harness,
    LoggedDocument,
    LoggedTask,
    LogLayout,
    MetricValue,
    RunIdentity,
    ScrambleRequest,
    WrittenVariants,
)
from scrambled_bench.integrations.registry import (
    ENTRY_POINT_GROUP,
    get_harness,
    harness_names,
    harness_of,
    register,
    unregister,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "NO_TARGET",
    "CanonicalTask",
    "Harness",
    "LogLayout",
    "LoggedDocument",
    "LoggedTask",
    "MetricValue",
    "RunIdentity",
    "ScrambleRequest",
    "WrittenVariants",
    "get_harness",
    "harness_names",
    "harness_of",
    "register",
    "unregister",
]
