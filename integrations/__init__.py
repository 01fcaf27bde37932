"""Evaluation harnesses (lm-evaluation-harness, lighteval, Inspect AI, and any registered by a user), each
one implementation of one interface (:class:`Harness`), looked up by name in one registry.

- :mod:`.base`: the interface and the records it trades in (logged tasks and documents, run identities);
- :mod:`.registry`: :func:`register`, :func:`get_harness`, the built-ins and the ``scrambled_bench.harnesses``
  entry points;
- :mod:`.scramble`: ``scramble NAME:SPEC`` for any harness; :mod:`.datasets`: the flow of the harnesses
  whose tasks read a dataset (scramble it, write task files beside it);
- :mod:`.logs`: what the harnesses' log readers share (below ``score --from``);
- :mod:`.pairing`: a variant paired with its canonical task document by document, across runs;
  :mod:`.scoring`: ``score --from NAME DIR``;
- :mod:`.exported`: the bench's own tasks, harness-neutral; each harness's package writes them its way;
- one package per harness: :mod:`.lm_eval`, :mod:`.lighteval`, :mod:`.inspect`.

Nothing outside a harness's package asks anything of it but the interface, or branches on its name.

>>> from scrambled_bench.integrations import get_harness, harness_names
>>> {"inspect", "lighteval", "lm-eval"} <= set(harness_names()), get_harness("inspect").layout.output_option
(True, '--log-dir')
"""

from scrambled_bench.integrations import base, registry

# the interface and the lookups, as base.__all__ and registry.__all__ name them (once, there)
from scrambled_bench.integrations.base import *
from scrambled_bench.integrations.registry import *

__all__ = base.__all__ + registry.__all__
