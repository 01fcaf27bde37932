"""``scramble inspect:TASK``: one task file that defines an Inspect task's canonical run and one scrambled
variant per type, so that one ``inspect eval`` runs the comparison (as lm-eval's group and lighteval's
custom-tasks module do).

``TASK`` is anything ``inspect eval`` accepts as one task: a registry name (``inspect_evals/arc_easy``) or a
file spec (``my_tasks.py@my_task``), resolved by Inspect's own loader. The file (``DIR/inspect/scrambled_tasks.py``)
names the canonical task ``<name>`` (the task's name without its package) and each variant
``<name>_<type>``; a variant is the canonical task, its solver, scorer and settings untouched, with each
sample's chosen fields (``--columns input,choices``: the user turns of the input, the choices; never the
target) scrambled in memory when the task loads, by ``build``'s and ``scramble``'s functions, keyed by the
sample's id and the seed (:mod:`.scrambled`). No data is written; the samples are the same bytes on every
run. Run it whole, or one task at a time (``inspect eval FILE@<name>_kfl``) into the same log folder.
"""

from __future__ import annotations

import keyword
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scrambled_bench.integrations.base import CanonicalTask, ScrambleRequest, WrittenVariants
from scrambled_bench.integrations.outputs import manifest_head, staged_output, write_manifest

RESERVED = {"Task", "task", "canonical_task", "variant_task", "SPEC", "TASK_ARGS", "NAME", "FIELDS", "SEED"}
"""The task file's own names, which a task's function may not take."""
FOLDER = "inspect"
MODULE_FILE = "scrambled_tasks.py"
HEADER = '''"""Scrambled variants of the Inspect task {spec}, written by `{command}`.

One `inspect eval` runs the comparison, the canonical task beside one variant per type; from this folder:

    inspect eval {file} --model MODEL --log-dir LOGS
    scrambled-bench score --from inspect LOGS

from any folder, each task named (Inspect's loader looks for a file given without @TASK with Path.glob,
which refuses an absolute path):

    inspect eval {tasks} --model MODEL --log-dir LOGS

or one task at a time into the same log folder:

    inspect eval {path}@{name}_kfl ...

Each task records in its metadata the endpoint of the model it runs against ({endpoint_key}),
which Inspect's own log keeps only when given as --model-base-url: `score --from inspect` pairs the runs
of one endpoint only.
"""

from inspect_ai import Task, task

from scrambled_bench.integrations.inspect.variants import canonical_task, variant_task

SPEC = {spec!r}
TASK_ARGS = {task_args!r}
NAME = {name!r}
FIELDS = {fields!r}
SEED = {seed!r}


@task(name=NAME)
def {name}() -> Task:
    """{spec}, as it is."""
    return canonical_task(SPEC, NAME, TASK_ARGS)
'''
VARIANT = '''

@task(name=NAME + "_{scramble_type}")
def {name}_{scramble_type}() -> Task:
    """{spec} with its {fields} scrambled: {scramble_type}."""
    return variant_task(SPEC, NAME, "{scramble_type}", FIELDS, SEED, TASK_ARGS)
'''


def short_name(task: str) -> str:
    """The canonical task's name in the file (and its function's): its registry name without the package,
    as an identifier.

    >>> short_name("inspect_evals/arc_easy"), short_name("planets"), short_name("my-tasks/gsm 8k"), short_name("2wiki")
    ('arc_easy', 'planets', 'gsm_8k', 'task_2wiki')
    >>> short_name("task"), short_name("class")
    ('task_task', 'task_class')
    """
    name = re.sub(r"\W", "_", task.rsplit("/", 1)[-1])
    if not name[:1].isalpha() or keyword.iskeyword(name) or name in RESERVED:
        return f"task_{name}"
    return name


@dataclass
class InspectCanonicalTask(CanonicalTask):
    """An Inspect task as its loader resolves it: the spec it was named by and the loaded ``Task``."""

    name: str
    spec: str
    task: Any = field(repr=False)
    task_args: Mapping[str, Any] = field(default_factory=dict)

    @property
    def short(self) -> str:
        return short_name(self.name)

    def describe(self) -> dict[str, Any]:
        return {"task": self.name, "spec": self.spec, "name": self.short}


def canonical_task(spec: str, name: str, task_args: Mapping[str, Any] | None = None) -> Any:
    """The task ``spec`` names, through Inspect's loader, renamed ``name`` (the task file's canonical task),
    its metadata recording the endpoint it runs against (:func:`~.scrambled.endpoint_metadata`)."""
    # deferred: inspect_ai is optional (the harness extra), and .scrambled imports it
    from inspect_ai import task_with

    from scrambled_bench.integrations.inspect.scrambled import endpoint_metadata, load_canonical

    loaded = load_canonical(spec, dict(task_args or {}))
    return task_with(loaded, name=name, metadata={**(loaded.metadata or {}), **endpoint_metadata()})


def variant_task(
    spec: str,
    name: str,
    scramble_type: str,
    fields: Sequence[str],
    seed: int = 0,
    task_args: Mapping[str, Any] | None = None,
) -> Any:
    """The task ``spec`` names with its samples' ``fields`` scrambled, named ``<name>_<type>``; its metadata
    names ``name`` as its canonical task (what ``score --from inspect`` pairs it by)."""
    from scrambled_bench.integrations.inspect.scrambled import (  # deferred: inspect_ai
        load_canonical,
        scrambled_variant,
    )

    return scrambled_variant(
        load_canonical(spec, dict(task_args or {})), scramble_type, fields, seed=seed, canonical_name=name
    )


def task_file(task: InspectCanonicalTask, request: ScrambleRequest, path: str) -> str:
    """The text of the task file: the canonical task and one variant per type.

    >>> from pathlib import Path
    >>> request = ScrambleRequest("inspect:t.py@planets", "t.py@planets", ("input",), ("kfl",), Path("/o"))
    >>> text = task_file(InspectCanonicalTask("planets", "t.py@planets", None), request, "/o/inspect/scrambled_tasks.py")
    >>> 'NAME = "planets"' in text.replace("'", '"'), "def planets_kfl() -> Task:" in text
    (True, True)
    """
    from scrambled_bench.integrations.inspect.scrambled import ENDPOINT_KEY  # deferred: it imports inspect_ai

    fields = list(request.columns)
    names = [task.short, *(f"{task.short}_{scramble_type}" for scramble_type in request.all_types)]
    text = HEADER.format(
        spec=task.spec,
        command=request.command or f"scrambled-bench scramble {request.source}",
        file=Path(path).name,
        tasks=" ".join(f"{path}@{name}" for name in names),
        path=path,
        name=task.short,
        endpoint_key=ENDPOINT_KEY,
        task_args=dict(task.task_args),
        fields=fields,
        seed=request.seed,
    )
    for scramble_type in request.all_types:
        text += VARIANT.format(
            name=task.short, scramble_type=scramble_type, spec=task.spec, fields=" and ".join(fields)
        )
    return text


def write_task_file(task: InspectCanonicalTask, request: ScrambleRequest) -> WrittenVariants:
    """Write ``DIR/inspect/scrambled_tasks.py`` and ``DIR/manifest.json``, all or nothing."""
    out = request.out
    final = out / FOLDER / MODULE_FILE
    with staged_output(out) as folder:
        (folder / FOLDER).mkdir()
        (folder / FOLDER / MODULE_FILE).write_text(task_file(task, request, str(final)), encoding="utf-8")
        write_manifest(
            folder,
            {
                **manifest_head(request, "inspect", [task.name]),
                "inspect": task.describe(),
                "outputs": {f"{FOLDER}/{MODULE_FILE}": {}},
            },
        )
    return WrittenVariants(out, "inspect", [task.name], run_hint(final))


def run_hint(task_file: Path, cwd: Path | None = None) -> str:
    """The command that runs a task file whole, as ``scramble`` prints it: its path relative to the folder
    ``scramble`` ran in, which ``inspect eval`` takes wherever ``--out`` was (Inspect's loader looks for a
    file given without ``@TASK`` with ``Path.glob``, which refuses an absolute path).

    >>> run_hint(Path("/work/out/inspect/scrambled_tasks.py"), Path("/work"))
    'inspect eval out/inspect/scrambled_tasks.py --model MODEL --log-dir LOGS'
    >>> run_hint(Path("/data/out/inspect/scrambled_tasks.py"), Path("/work/a"))
    'inspect eval ../../data/out/inspect/scrambled_tasks.py --model MODEL --log-dir LOGS'
    """
    relative = os.path.relpath(task_file, cwd if cwd is not None else Path.cwd())
    return f"inspect eval {shlex.quote(relative)} --model MODEL --log-dir LOGS"


__all__ = [
    "InspectCanonicalTask",
    "canonical_task",
    "run_hint",
    "short_name",
    "task_file",
    "variant_task",
    "write_task_file",
]
