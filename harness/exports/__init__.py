"""The benchmark's tasks for other evaluation harnesses, made from the package's own task definitions.

- ``task_export``: what every export shares, harness-neutral: which configs are exported and under which
  names, the documents (prompt, gold, scoring metadata) a dataset row becomes, per-sample scoring and the
  aggregate metrics, all through the :class:`~scrambled_bench.harness.tasks.base.Task` objects, the answer
  readers and the packaged metric modules that ``run`` and ``score`` use;
- ``lm_eval``: the generator of lm-evaluation-harness task YAML (the copy in ``lm_eval_tasks/`` ships as
  package data, for ``--include_path "$(scrambled-bench lm-eval-path)"``), and ``lm_eval_hooks``, the
  functions those YAML files name with ``!function``;
- ``lighteval_tasks``: lighteval's ``--custom-tasks`` module (``TASKS_TABLE``), and ``lighteval_cli``,
  lighteval's command line started so that it runs beside this package; both import lighteval, so they
  need the ``harness`` extra;
- ``inspect_tasks``: the ``@task`` of each config for Inspect AI (``scrambled_bench/<slug>``, found through
  the package's ``inspect_ai`` entry point), and ``inspect_scrambled``, ``scrambled_bench/scrambled``: a
  scrambled variant of any Inspect task; both import inspect_ai;
- ``logged_samples``: lm-eval's ``--log_samples`` output, lighteval's details or Inspect's logs
  (``inspect_logs``) read back and scored as ``run`` scores (RPG included, which no harness can compute):
  ``score --from-lm-eval/--from-lighteval/--from-inspect``; Inspect's scrambled variants also paired with
  their canonical runs (``harness/paired.py``).
"""
