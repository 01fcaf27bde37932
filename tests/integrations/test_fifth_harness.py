"""A fifth harness, defined in this file alone and registered through the public interface, gets
``scramble`` (with a task-definition option of its own on the command line), ``score --from`` and ``report
--from`` (markdown, CSV, HTML) with no edit anywhere else.

The "harness" is JSON Lines: a task is a file of prompts (``id``, ``prompt``, ``choices``, ``target``), named
by its path or, with the harness's own ``--prompts-dir DIR``, by its name in that folder; its variants are
the same file with the chosen fields scrambled, and its logs are one file per run: a header
line (the task, its canonical task and type where it is a variant, the model, the endpoint, the generation
settings, when it ran) and one line per document (prompt, choices, output, score). Its runner here answers
with a fixed rule (the first choice whose text appears in the prompt, else the first), deterministic and
instant: what is under test is the interface, not a model.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from scrambled_bench.builder.scrambler import scramble, scramble_items
from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluate_cli.main import main
from scrambled_bench.integrations import (
    CanonicalTask,
    Harness,
    LoggedDocument,
    LoggedTask,
    LogLayout,
    RunIdentity,
    ScrambleRequest,
    TaskOption,
    WrittenVariants,
    register,
    unregister,
)

# ---------------------------------------------------------------------------------------------- the harness


@dataclass
class PromptsTask(CanonicalTask):
    name: str
    path: Path


class JsonLinesHarness(Harness):
    name = "jsonl"
    title = "JSON Lines prompts"
    spec = "FILE.jsonl"
    layout = LogLayout("the JSON Lines runner", "--logs", "", "run logs (*.log.jsonl)")
    columns_are = "fields (prompt, choices)"
    task_options = (
        TaskOption("--prompts-dir", "a folder of prompt files, jsonl:NAME naming its NAME.jsonl", "<dir>"),
    )

    def resolve(self, spec: str, task_sources: Mapping[str, str]) -> Sequence[CanonicalTask]:
        folder = task_sources.get("--prompts-dir")
        path = Path(folder) / f"{spec}.jsonl" if folder is not None else Path(spec)
        if not path.is_file():
            raise ScrambledBenchError(f"jsonl:{spec}: no such file of prompts")
        return [PromptsTask(path.stem, path.resolve())]

    def write_variants(self, tasks: Sequence[CanonicalTask], request: ScrambleRequest) -> WrittenVariants:
        [task] = tasks
        assert isinstance(task, PromptsTask)
        rows = [json.loads(line) for line in task.path.read_text().splitlines() if line.strip()]
        unknown = set(request.columns) - {"prompt", "choices"}
        if unknown:
            raise ScrambledBenchError(
                f"--columns {','.join(sorted(unknown))}: the prompts have no such field"
            )
        folder = request.out / "jsonl"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{task.name}.jsonl").write_text(task.path.read_text())
        for scramble_type in request.types:
            lines = []
            for row in rows:
                key = str(row["id"])
                changed = dict(
                    row, task=f"{task.name}_{scramble_type}", canonical=task.name, scramble_type=scramble_type
                )
                if "prompt" in request.columns:  # each field at its own place, as `scramble` draws a row's
                    changed["prompt"] = scramble(
                        row["prompt"], scramble_type, seed=request.seed, sample_id=key, place="prompt"
                    )
                if "choices" in request.columns:  # the choices one list, kept distinct
                    changed["choices"] = scramble_items(
                        list(row["choices"]), scramble_type, seed=request.seed, sample_id=key, place="choices"
                    )
                lines.append(json.dumps(changed))
            (folder / f"{task.name}_{scramble_type}.jsonl").write_text("\n".join(lines) + "\n")
        (request.out / "manifest.json").write_text(json.dumps({"kind": "scramble", "harness": self.name}))
        return WrittenVariants(
            request.out, self.name, [task.name], f"run each file of {folder} into one log folder"
        )

    def read_folder(self, folder: Path) -> list[LoggedTask]:
        tasks = []
        for path in sorted(folder.rglob("*.log.jsonl")):
            header, *lines = [json.loads(line) for line in path.read_text().splitlines()]
            documents = {
                line["id"]: LoggedDocument(
                    line["id"],
                    {"correct": line["score"]},
                    line["target"],
                    line["prompt"],
                    tuple(line["choices"]),
                    line["output"],
                )
                for line in lines
            }
            tasks.append(
                LoggedTask(
                    name=header["task"],
                    run=RunIdentity(header["model"], header["endpoint"], header["settings"], str(path)),
                    created=header["created"],
                    documents=documents,
                    location=str(path),
                    canonical=header.get("canonical"),
                    scramble_type=header.get("scramble_type"),
                )
            )
        return tasks


def run_file(tasks_file: Path, logs: Path, *, created: str, settings: dict[str, Any] | None = None) -> None:
    """The "harness" running one task file: answer each prompt by the fixed rule, log the run."""
    rows = [json.loads(line) for line in tasks_file.read_text().splitlines() if line.strip()]
    first = rows[0]
    header = {
        "task": first.get("task", tasks_file.stem),
        "canonical": first.get("canonical"),
        "scramble_type": first.get("scramble_type"),
        "model": "fixed-rule",
        "endpoint": "local",
        "settings": settings if settings is not None else {"temperature": 0},
        "created": created,
    }
    lines = [json.dumps(header)]
    for row in rows:
        letters = "ABCD"
        words = re.findall(r"\w+", row["prompt"])
        picked = next((i for i, choice in enumerate(row["choices"]) if choice in words), 0)
        output = letters[picked]
        lines.append(
            json.dumps(
                {
                    "id": row["id"],
                    "prompt": row["prompt"],
                    "choices": row["choices"],
                    "output": output,
                    "target": row["target"],
                    "score": float(output == row["target"]),
                }
            )
        )
    logs.mkdir(parents=True, exist_ok=True)
    (logs / f"{header['task']}__{created}.log.jsonl").write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------------------------- the tests

PLANETS = [
    ("Mars is the red planet. Which planet is red?", ["Mars", "Venus"], "A"),
    ("Jupiter has the great red spot. Which planet has it?", ["Saturn", "Jupiter"], "B"),
    ("Mercury is closest to the sun. Which planet is closest?", ["Mercury", "Neptune"], "A"),
    ("Saturn has the most famous rings. Which planet has them?", ["Uranus", "Saturn"], "B"),
    ("Earth is where we live. Which planet is ours?", ["Earth", "Mars"], "A"),
    ("Jupiter is the largest planet. Which planet is largest?", ["Jupiter", "Mercury"], "A"),
    ("Neptune is the farthest planet. Which planet is farthest?", ["Venus", "Neptune"], "B"),
    ("Venus is the hottest planet. Which planet is hottest?", ["Venus", "Uranus"], "A"),
    ("Uranus spins on its side. Which planet does?", ["Earth", "Uranus"], "B"),
    ("Mars has Olympus Mons. Which planet has it?", ["Mars", "Saturn"], "A"),
    ("Saturn has the moon Titan. Which planet has it?", ["Saturn", "Venus"], "A"),
]


@pytest.fixture
def jsonl_harness():
    registered = register(JsonLinesHarness())
    yield registered
    unregister(registered.name)


def _prompts(tmp_path: Path) -> Path:
    path = tmp_path / "planets.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"id": str(index), "prompt": prompt, "choices": choices, "target": target})
            for index, (prompt, choices, target) in enumerate(PLANETS)
        )
        + "\n"
    )
    return path


def test_a_fifth_harness_gets_scramble_score_and_report(jsonl_harness, tmp_path: Path, capsys) -> None:
    out, logs = tmp_path / "scrambled", tmp_path / "logs"
    code = main(
        [
            "scramble",
            f"jsonl:{_prompts(tmp_path)}",
            "--columns",
            "prompt",
            "--types",
            "kfl,sub",
            "--out",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    assert "run each file" in capsys.readouterr().out
    assert sorted(path.name for path in (out / "jsonl").iterdir()) == [
        "planets.jsonl", "planets_kfl.jsonl", "planets_sub.jsonl"
    ]  # fmt: skip
    # canonical and variants by separate invocations into one folder; an older run of the canonical task too
    run_file(
        out / "jsonl" / "planets.jsonl", logs, created="2026-01-01T09:00:00", settings={"temperature": 1}
    )
    run_file(out / "jsonl" / "planets.jsonl", logs, created="2026-01-02T09:00:00")
    run_file(out / "jsonl" / "planets_kfl.jsonl", logs, created="2026-01-02T10:00:00")
    run_file(out / "jsonl" / "planets_sub.jsonl", logs, created="2026-01-02T11:00:00")

    assert main(["score", "--from", "jsonl", str(logs), "--n-resamples", "200"]) == 0
    document = json.loads(capsys.readouterr().out)
    entry = document["scrambled_tasks"]["planets"]
    assert entry["metrics"]["correct"]["value"] == 1.0 and entry["metrics"]["correct"]["n"] == len(PLANETS)
    kfl = entry["types"]["kfl"]["metrics"]["correct"]
    assert kfl["n_paired"] == len(PLANETS) and kfl["n_unpaired"] == 0
    assert kfl["difference"] == pytest.approx(kfl["value"] - 1.0)
    assert "relative_performance_gain" in kfl
    assert document["runs"][0]["model"] == "fixed-rule"

    assert main(["report", "--from", "jsonl", str(logs), "--n-resamples", "200", "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert ["scrambled-planets", "kfl", "correct"] == rows[2][:3]
    page = tmp_path / "page.html"
    assert main(["report", "--from", "jsonl", str(logs), "--format", "html", "-o", str(page)]) == 0
    text = page.read_text()
    assert "<title>Scrambled variants: fixed-rule (JSON Lines prompts)</title>" in text
    assert text.count("<svg") == 1 and "<mark>" in text
    shown = re.findall(r"<tr><th>(\d+)</th><th>output</th>", text)
    assert shown == ["0", "1", "2"] * 2  # three documents per type, in numeric order


def test_runs_of_different_settings_in_one_folder_are_refused_in_one_line(
    jsonl_harness, tmp_path: Path, capsys
):
    out, logs = tmp_path / "scrambled", tmp_path / "logs"
    assert (
        main(
            [
                "scramble",
                f"jsonl:{_prompts(tmp_path)}",
                "--columns",
                "prompt",
                "--types",
                "kfl",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    run_file(out / "jsonl" / "planets.jsonl", logs, created="2026-01-02T09:00:00", settings={"chat": True})
    run_file(
        out / "jsonl" / "planets_kfl.jsonl", logs, created="2026-01-02T10:00:00", settings={"chat": False}
    )
    capsys.readouterr()
    for command in ("score", "report"):
        assert main([command, "--from", "jsonl", str(logs)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("error: "), err
        assert "planets (run " in err and "planets_kfl (run " in err and "chat True vs False" in err


def test_a_variant_without_its_canonical_run_is_refused(jsonl_harness, tmp_path: Path, capsys):
    out, logs = tmp_path / "scrambled", tmp_path / "logs"
    assert (
        main(
            [
                "scramble",
                f"jsonl:{_prompts(tmp_path)}",
                "--columns",
                "prompt",
                "--types",
                "kfl",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    run_file(out / "jsonl" / "planets_kfl.jsonl", logs, created="2026-01-02T10:00:00")
    capsys.readouterr()
    assert main(["score", "--from", "jsonl", str(logs)]) == 2
    assert "planets_kfl is a variant of planets, whose run is not in the folder" in capsys.readouterr().err


def test_options_the_harness_does_not_take_are_refused(jsonl_harness, tmp_path: Path, capsys):
    source = f"jsonl:{_prompts(tmp_path)}"
    for extra, message in (
        (["--include-path", str(tmp_path)], "--include-path does not apply to jsonl tasks"),
        (["--demos", "scrambled"], "--demos does not apply to jsonl tasks"),
        (["--push", "org/x"], "--push does not apply to jsonl tasks"),
    ):
        assert main(["scramble", source, "--columns", "prompt", "--out", str(tmp_path / "o"), *extra]) == 2
        assert message in capsys.readouterr().err


def test_report_from_a_harness_plots_the_variants_charts_as_png_and_svg(
    jsonl_harness, tmp_path: Path, capsys
) -> None:
    """``report --from HARNESS DIR --plot FIGDIR`` writes each canonical task's chart as PNG and SVG, as
    ``report --plot`` does for run folders, beside the tables it prints."""
    from xml.etree import ElementTree

    out, logs, figures = tmp_path / "scrambled", tmp_path / "logs", tmp_path / "figures"
    source = f"jsonl:{_prompts(tmp_path)}"
    assert main(["scramble", source, "--columns", "prompt", "--types", "kfl,sub", "--out", str(out)]) == 0
    run_file(out / "jsonl" / "planets.jsonl", logs, created="2026-01-02T09:00:00")
    run_file(out / "jsonl" / "planets_kfl.jsonl", logs, created="2026-01-02T10:00:00")
    run_file(out / "jsonl" / "planets_sub.jsonl", logs, created="2026-01-02T11:00:00")
    capsys.readouterr()

    assert main(["report", "--from", "jsonl", str(logs), "--n-resamples", "200", "--plot", str(figures)]) == 0
    captured = capsys.readouterr()
    assert "planets: scrambled variants" in captured.out  # the tables still go to stdout
    png, svg = figures / "variants-planets.png", figures / "variants-planets.svg"
    assert sorted(figures.iterdir()) == [png, svg]
    assert f"wrote {png}" in captured.err and f"wrote {svg}" in captured.err
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and png.stat().st_size > 10_000
    root = ElementTree.parse(svg).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    text = svg.read_text()
    assert "score per scramble type" in text and "kfl" in text and "sub" in text  # title and x labels


def test_the_harness_s_own_task_option_is_on_the_command_line(tmp_path: Path, capsys):
    """The harness declares ``--prompts-dir``; ``scramble`` takes it (and lists it in ``--help``) while the
    harness is registered, and not after."""
    prompts = _prompts(tmp_path).parent
    with_harness = register(JsonLinesHarness())
    try:
        assert main(["scramble", "--help"]) == 0
        shown = " ".join(capsys.readouterr().out.split())
        assert (
            "--prompts-dir <dir> jsonl: a folder of prompt files, jsonl:NAME naming its NAME.jsonl." in shown
        )
        out = tmp_path / "scrambled"
        arguments = ["--columns", "prompt", "--types", "kfl", "--out", str(out)]
        assert main(["scramble", "jsonl:planets", "--prompts-dir", str(prompts), *arguments]) == 0
        assert f"scrambled jsonl:planets (planets) into {out}" in capsys.readouterr().out
        assert sorted(path.name for path in (out / "jsonl").iterdir()) == [
            "planets.jsonl",
            "planets_kfl.jsonl",
        ]
    finally:
        unregister(with_harness.name)
    assert main(["scramble", "--help"]) == 0
    assert "--prompts-dir" not in capsys.readouterr().out


def test_the_harness_s_own_option_elsewhere_is_one_line(jsonl_harness, tmp_path: Path, capsys):
    """Given with another harness's task, or with a dataset, the option is refused in one line, as the built-in
    harnesses' own options are."""
    out = ["--columns", "question", "--types", "kfl", "--out", str(tmp_path / "o")]
    data = tmp_path / "data.jsonl"
    data.write_text('{"question": "Which planet is red?"}\n')
    for source, message in (
        ("lm-eval:arc_easy", "error: --prompts-dir does not apply to lm-eval tasks; it takes --include-path"),
        (str(data), "error: --prompts-dir applies to a harness task (HARNESS:TASK), not to a dataset"),
    ):
        assert main(["scramble", source, "--prompts-dir", str(tmp_path), *out]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(message), err
