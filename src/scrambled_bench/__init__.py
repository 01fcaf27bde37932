"""scrambled-bench: the Scrambled Bench of Cao et al. (EMNLP 2023) for the Hugging Face ecosystem.

The package is one import namespace assembled from the repository's top-level folders:

- ``scrambled_bench.builder``: scramblers, source readers and the versioned dataset build.
- ``scrambled_bench.metrics``: the ``evaluate`` metric modules, the answer readers, scoring files.
- ``scrambled_bench.evaluation``: the evaluation library: tasks, backends, engine, results, reports.
- ``scrambled_bench.probing``: hidden-state probes per layer (the paper's Appendix A.3).
- ``scrambled_bench.evaluate_cli``: the ``scrambled-bench`` command line, thin commands over the above.
"""

__version__ = "1.1.0"
