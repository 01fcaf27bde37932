"""Hidden-state probes (the paper's Appendix A.3, Figures 7 and 8): where in a network scrambled text is
understood.

For every layer of a model (the embeddings included), a logistic-regression probe reads the hidden state
of the prompt's last token and predicts the DREAM answer (A, B or C). The probes are trained on a mixture
of scramble settings over DREAM's training set and evaluated on dev + test, one setting at a time.

- :mod:`~scrambled_bench.probing.data`: the questions, the prompt template, the scrambling.
- :mod:`~scrambled_bench.probing.features`: the model, batched extraction, the float16 safetensors cache.
- :mod:`~scrambled_bench.probing.probes`: one probe per layer, streamed from the cache; Wilson intervals.
- :mod:`~scrambled_bench.probing.figures`: Figures 7 and 8.
- :mod:`~scrambled_bench.probing.run`: :func:`~scrambled_bench.probing.run.run_probe`, the whole job.
- :mod:`~scrambled_bench.probing.report`: what ``scrambled-bench report`` shows of a probe run folder.

Needs ``pip install 'scrambled-bench[local,probe]'`` (torch, scikit-learn, safetensors).
"""
