"""How ``pytest -n N`` hands the suite to its workers: ``--dist loadscope``'s module groups, handed out costliest
first, with the modules that share a costly session fixture on one worker.

xdist's ``loadscope`` hands modules out by their number of tests, most first, so the suite's slowest modules,
which hold one or two long end-to-end tests each, started last and ran alone at the end while the other core
sat idle. Here the modules CI's durations table shows slowest go first (longest-processing-time-first keeps
the workers' ends close); the rest follow in xdist's order. A stale or missing name here only costs time.
"""

from __future__ import annotations

from typing import Any

#: the slowest modules of the full run, costliest first (the wall seconds per module that
#: ``python benchmarks/bench_test_cpu.py --per-test`` prints for ``-n 2``, on the 2-core development machine);
#: each benchmark's smoke run is a group of its own
COSTLIEST_FIRST = (
    "letter quiz",
    "tests/evaluate_cli/test_run_command.py",
    "tests/evaluation/test_harness_equal_numbers.py",
    "tests/evaluate_cli/test_run_endpoints.py",
    "probing",
    "tests/evaluation/test_backends_transformers.py",
    "tests/integrations/test_exports_inspect_scrambled.py",
    "tests/docs/test_code_blocks.py",
    "tests/evaluate_cli/test_quickstart.py",
    "tests/integrations/test_harness_tasks_lighteval_e2e.py",
    "tests/evaluation/test_engine_sigkill.py",
    "tests/evaluation/test_engine_dead_endpoint.py",
    "tests/integrations/test_harness_tasks_lm_eval.py",
    "tests/report/test_report_figure_layout.py",
    "tests/evaluate_cli/test_run_incomplete.py",
    "tests/servers/test_llama_server.py",
    "tests/examples/test_finetune_scrambled.py",
    "tests/evaluation/test_engine_faults.py",
    "tests/evaluation/test_tokens.py",
    "tests/benchmarks/test_benchmarks_smoke.py::test_the_benchmark_runs_and_prints_its_figures[bench_transformers_batch.py]",
    "tests/integrations/test_inspect_endpoint.py",
    "tests/evaluation/test_backends_llama_cpp.py",
    "tests/benchmarks/test_benchmarks_smoke.py::test_the_benchmark_runs_and_prints_its_figures[bench_dequantise.py]",
    "tests/benchmarks/test_benchmarks_smoke.py::test_the_benchmark_runs_and_prints_its_figures[bench_metrics.py]",
)

#: modules that share a session fixture too costly to make twice, by the name of their group: the letter quiz
#: scrambled by lm-eval and the de-quantised SmolLM2 (tests/integrations/conftest.py); the probe's model
SAME_WORKER = {
    "tests/integrations/test_loglikelihood.py": "letter quiz",
    "tests/integrations/test_local_multiple_choice.py": "letter quiz",
    "tests/probing/test_probe_command.py": "probing",
    "tests/probing/test_probing_features.py": "probing",
}

#: modules whose tests are independent processes: each test is a group of its own, to spread them over workers
EACH_TEST_APART = ("tests/benchmarks/test_benchmarks_smoke.py",)


def scope_of(nodeid: str) -> str:
    """The group a test runs in: its module's, its shared fixture's, or its own.

    >>> scope_of("tests/probing/test_probing_features.py::test_x")
    'probing'
    >>> scope_of("tests/metrics/test_a.py::test_b[1]")
    'tests/metrics/test_a.py'
    """
    module = nodeid.split("::", 1)[0]
    if module in EACH_TEST_APART:
        return nodeid
    return SAME_WORKER.get(module, module)


def rank(scope: str) -> int:
    """A group's place in the hand-out order: its place in ``COSTLIEST_FIRST``, else after all of them."""
    return COSTLIEST_FIRST.index(scope) if scope in COSTLIEST_FIRST else len(COSTLIEST_FIRST)


def make_scheduler(config: Any, log: Any) -> Any:
    """xdist's ``loadscope`` scheduler, grouping by ``scope_of`` and handing out by ``rank``."""
    from xdist.scheduler import LoadScopeScheduling

    class CostliestFirst(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            first = min(self.workqueue, key=rank)  # min keeps xdist's order among equals
            self.workqueue.move_to_end(first, last=False)
            super()._assign_work_unit(node)

        def unrun_of(self, node: Any) -> list[str]:
            """The tests handed to ``node`` that it has not reported run (tests/worker_report.py)."""
            workload = self.assigned_work.get(node, {})
            return [nodeid for unit in workload.values() for nodeid, done in unit.items() if not done]

    return CostliestFirst(config, log)
