"""The variant task files of ``scramble lm-eval:TASK`` and ``scramble lighteval:SPEC`` (``lm_eval_variants``,
``lighteval_variants``), on their way to their harnesses' packages in ``scrambled_bench.integrations``."""
