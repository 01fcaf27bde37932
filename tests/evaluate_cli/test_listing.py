"""``scrambled-bench list``: each subcommand prints what the library's records hold (the type records, the
suites, the tasks, the harness registry, a ``scramble`` output's manifest), and bad input is one line, exit 2.
The variants of harness outputs are checked against the files each harness wrote in
tests/integrations/test_outputs.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scrambled_bench.builder.scrambler import FAMILIES
from scrambled_bench.builder.type_reference import type_lines
from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.evaluation.suites import SUITES
from scrambled_bench.evaluation.tasks import TASKS
from scrambled_bench.integrations import LogLayout, register, unregister
from scrambled_bench.integrations.base import Harness


def _lines(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["list", *argv]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out.splitlines()


def test_types_prints_every_family_with_its_definition(capsys) -> None:
    lines = _lines(capsys, "types")
    assert lines == type_lines()
    for family in FAMILIES.values():
        [line] = [line for line in lines if line.split()[:1] == [family.pattern]]
        assert line.split(None, 2) == [family.pattern, family.group, family.description]


def test_suites_and_tasks_print_every_one_the_run_command_takes(capsys) -> None:
    suites = _lines(capsys, "suites")
    assert [line.split()[0] for line in suites] == list(SUITES)
    for line, suite in zip(suites, SUITES.values()):
        assert f"{len(suite.configs)} configs" in line and line.endswith(suite.description)
    tasks = _lines(capsys, "tasks")
    assert [line.split()[0] for line in tasks] == list(TASKS)
    for line, task in zip(tasks, TASKS.values()):
        assert line.split()[1] == ",".join(task.datasets) and line.endswith(task.description)


class _Listed(Harness):
    name, title, spec = "listed-doc", "A listed harness", "FILE"
    module = "no_such_module_for_the_listing_test"
    layout = LogLayout("listed", "--out", "", "logs")

    def resolve(self, spec, task_sources):  # pragma: no cover - never called here
        return []

    def write_variants(self, tasks, request):  # pragma: no cover
        raise NotImplementedError

    def read_logs(self, folder):  # pragma: no cover
        return []


def test_harnesses_lists_the_registered_ones_and_whether_each_is_installed(capsys) -> None:
    register(_Listed())
    try:
        lines = _lines(capsys, "harnesses")
    finally:
        unregister("listed-doc")
    by_name = {line.split()[0]: line for line in lines}
    assert {"inspect", "lighteval", "lm-eval", "listed-doc"} <= set(by_name)
    assert "lm-eval:TASK or GROUP" in by_name["lm-eval"]
    assert by_name["listed-doc"].endswith("not installed (pip install 'scrambled-bench[harness]')")
    assert "listed-doc:FILE" in by_name["listed-doc"]


def test_variants_of_a_dataset_scramble_are_its_configs(tmp_path: Path, capsys) -> None:
    source = tmp_path / "rows.jsonl"
    source.write_text(
        "".join(json.dumps({"id": i, "text": f"Row number {i} holds words"}) + "\n" for i in range(4))
    )
    out = tmp_path / "out"
    assert main(["scramble", str(source), "--columns", "text", "--types", "kfl,sub", "--out", str(out)]) == 0
    capsys.readouterr()
    assert _lines(capsys, "variants", str(out)) == ["kfl", "sub"]
    assert (
        main(
            ["scramble", str(source), "--columns", "text", "--recipe", "ft-rs", "--out", str(tmp_path / "r")]
        )
        == 0
    )
    capsys.readouterr()
    assert _lines(capsys, "variants", str(tmp_path / "r")) == ["ft-rs"]


def _manifest(root: Path, **fields: object) -> Path:
    (root / "manifest.json").write_text(json.dumps({"version": "1", "outputs": {}, **fields}))
    return root


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda root: root / "missing", "missing: no such folder"),
        (lambda root: root, "is not a `scrambled-bench scramble` output (no manifest.json)"),
        (lambda root: _manifest(root, name="scrambled_bench"), "its manifest.json is a build's"),
        (lambda root: (root / "manifest.json").write_text("{") and root, "unreadable manifest"),
        (
            lambda root: _manifest(root, kind="scramble", harness="nope"),
            "names no tasks and types (written by the harness 'nope')",
        ),
        (
            lambda root: _manifest(root, kind="scramble", harness="nope", tasks=["t"], types=["kfl"]),
            "no harness called 'nope'",
        ),
    ],
)
def test_variants_of_what_is_not_a_scramble_output_is_one_line(tmp_path: Path, capsys, make, message) -> None:
    folder = make(tmp_path)
    assert main(["list", "variants", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err, err


def test_a_bare_list_prints_its_subcommands(capsys) -> None:
    assert main(["list"]) == 0
    err = capsys.readouterr().err
    for name in ("types", "suites", "tasks", "harnesses", "variants"):
        assert f"  {name}" in err


def test_the_types_help_points_to_the_definitions(capsys) -> None:
    assert main(["build", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "`scrambled-bench list types`" in help_text and "Reference > Scramble types" in help_text
