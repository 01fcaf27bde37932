"""A scrambled variant of any Inspect task: ``inspect eval scrambled_bench/scrambled -T task=NAME -T type=kfl``.

``NAME`` is anything ``inspect eval`` accepts as one task: a registry name (``inspect_evals/arc_easy``) or a
file spec (``my_tasks.py@my_task``), resolved by Inspect's own loader (with ``-T task_args={...}`` passed to
it). The variant is that very task, its solver, scorer, metrics and generation settings untouched, with every
sample's chosen text scrambled in memory: the user turns of ``input`` (plain text, or chat messages' text
parts) and/or the ``choices`` (``-T fields=input,choices``; default ``input``), never the ``target``. Each
text is scrambled by :func:`~scrambled_bench.builder.scrambler.scramble`, the function of ``build`` and
``scramble``, keyed by the sample's id (a sample without one gets the id Inspect would give it, its position
from 1), the seed (``-T seed=0``) and the text's place (the field, and the position of a message, a text
part or a choice), so a variant's samples are the same bytes on every run, every text draws on its own, and
the choices that differ stay different, none taking another's original wording
(:func:`~scrambled_bench.builder.scrambler.scramble_items`).

The variant is named ``<task>_<type>`` (``inspect_evals/arc_easy_kfl``) and its metadata adds, to the
canonical task's own, ``canonical_task`` (the canonical task's name, as its log records it),
``scramble_type``, ``seed``, ``fields`` and ``scrambled_bench_version``: what ``score --from inspect`` pairs
a variant's samples with the canonical run's by. Run the canonical task and its variants into one log folder,
then ``scrambled-bench score --from inspect LOGDIR``; ``scramble inspect:TASK`` writes a task file that defines
them all (:mod:`.variants`).
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Task, task, task_with
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.dataset import Dataset, MemoryDataset, Sample
from inspect_ai.model import ChatMessage, ContentText

from scrambled_bench import __version__
from scrambled_bench.builder.scrambler import TextPlace, parse_type, scramble, scramble_items
from scrambled_bench.errors import ScrambledBenchError, first_line

FIELDS = ("input", "choices")
"""The sample fields a variant can scramble (``target`` never)."""
DEFAULT_FIELDS = ("input",)
WRAPPER = "scrambled_bench/scrambled"
"""The wrapper's name in Inspect."""
TASK_FILE_SUFFIXES = (".py", ".ipynb")
"""What Inspect's loader takes as a task file."""
ENDPOINT_KEY = "scrambled_bench_endpoint"
"""The task metadata key of the endpoint the evaluated model was served from (:func:`endpoint_metadata`)."""


def chosen_fields(fields: str | Sequence[str]) -> tuple[str, ...]:
    """``-T fields`` as a tuple: a comma-separated string or a list; a one-line error for another field.

    >>> chosen_fields("input,choices"), chosen_fields(["choices"])
    (('input', 'choices'), ('choices',))
    >>> chosen_fields("input,target")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: fields=input,target: the samples have no field 'target' to scramble; choose from input, choices (the target is never scrambled)
    """
    names = [name.strip() for name in (fields.split(",") if isinstance(fields, str) else fields)]
    given = ",".join(names)
    names = [name for name in names if name]
    if not names:
        raise ScrambledBenchError(f"fields={given}: name at least one of {', '.join(FIELDS)}")
    for name in names:
        if name not in FIELDS:
            raise ScrambledBenchError(
                f"fields={given}: the samples have no field {name!r} to scramble; choose from "
                f"{', '.join(FIELDS)} (the target is never scrambled)"
            )
    return tuple(dict.fromkeys(names))


def _scrambled_message(
    message: ChatMessage, place: TextPlace, scramble_type: str, seed: int, key: str
) -> ChatMessage:
    """A user message with its text scrambled (every text part, each at its own place); any other message
    as it was."""
    if message.role != "user":
        return message
    if isinstance(message.content, str):
        content: Any = scramble(message.content, scramble_type, seed=seed, sample_id=key, place=place)
    else:
        content = [
            part.model_copy(
                update={
                    "text": scramble(
                        part.text, scramble_type, seed=seed, sample_id=key, place=place.item(index)
                    )
                }
            )
            if isinstance(part, ContentText)
            else part
            for index, part in enumerate(message.content)
        ]
    return message.model_copy(update={"content": content})


def scrambled_sample(
    sample: Sample, key: str, scramble_type: str, fields: Sequence[str], *, seed: int = 0
) -> Sample:
    """A copy of ``sample`` with the chosen fields scrambled, keyed by ``key`` (pure; the target and every
    other field are the sample's own).

    Each text draws from its own stream, as ``scramble`` draws a row's columns: the field's name is its
    column path (``input``, ``choices``) and its position the message's (and the text part's) or the
    choice's index; the choices are one list, kept distinct
    (:func:`~scrambled_bench.builder.scrambler.scramble_items`).

    >>> sample = Sample(id="q1", input="Which planet is red?", choices=["Venus", "Mars"], target="B")
    >>> out = scrambled_sample(sample, "q1", "rs100", ["input", "choices"])
    >>> out.input != sample.input, out.choices != sample.choices, out.target, out.id, sample.input
    (True, True, 'B', 'q1', 'Which planet is red?')
    >>> scrambled_sample(sample, "q1", "rs100", ["choices"]).input
    'Which planet is red?'
    """
    update: dict[str, Any] = {}
    if "input" in fields:
        place = TextPlace("input")
        if isinstance(sample.input, str):
            update["input"] = scramble(sample.input, scramble_type, seed=seed, sample_id=key, place=place)
        else:
            update["input"] = [
                _scrambled_message(message, place.item(index), scramble_type, seed, key)
                for index, message in enumerate(sample.input)
            ]
    if "choices" in fields and sample.choices is not None:
        update["choices"] = scramble_items(
            list(sample.choices), scramble_type, seed=seed, sample_id=key, place="choices"
        )
    return sample.model_copy(update=update)


def scrambled_dataset(
    dataset: Dataset, scramble_type: str, fields: Sequence[str], *, seed: int = 0
) -> MemoryDataset:
    """Every sample of ``dataset`` scrambled (:func:`scrambled_sample`), keyed by its id, or by its position
    from 1 (the id Inspect gives a sample without one, which the variant then carries); a one-line error
    when no sample has a chosen field.

    >>> dataset = MemoryDataset([Sample(input="The quick brown fox"), Sample(input="jumps over the dog")])
    >>> [sample.id for sample in scrambled_dataset(dataset, "kfl", ["input"])]
    [1, 2]
    >>> scrambled_dataset(dataset, "kfl", ["choices"])
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: fields=choices: no sample has choices (a multiple-choice task's samples do)
    """
    samples = list(dataset)
    if "choices" in fields and all(sample.choices is None for sample in samples):
        raise ScrambledBenchError(
            f"fields={','.join(fields)}: no sample has choices (a multiple-choice task's samples do)"
        )
    out = []
    for position, sample in enumerate(samples, start=1):
        key = str(sample.id) if sample.id is not None else str(position)
        scrambled = scrambled_sample(sample, key, scramble_type, fields, seed=seed)
        out.append(scrambled if sample.id is not None else scrambled.model_copy(update={"id": position}))
    name = f"{dataset.name}_{scramble_type}" if dataset.name else None
    return MemoryDataset(out, name=name, location=dataset.location, shuffled=dataset.shuffled)


def endpoint_metadata() -> dict[str, Any]:
    """What a task records, when an eval creates it, about the endpoint of the model it evaluates:
    ``{ENDPOINT_KEY: base URL}``, the URL the model's API resolved (``--model-base-url``, else the provider's
    environment variable such as ``LLAMA_BASE_URL`` or ``OPENAI_BASE_URL``, else its default), without a
    trailing slash; None where the model is served from no URL (``mockllm``). Empty outside an eval (a task
    created before one knows no model).

    Inspect's log records the base URL only when it was given as ``--model-base-url``
    (``eval.model_base_url``), so without this two runs configured by the environment variable against two
    servers would look alike.

    >>> endpoint_metadata()
    {}
    """
    from inspect_ai.model._model import active_model

    model = active_model()
    if model is None:
        return {}
    api = model.api
    url = getattr(api, "base_url", None) or getattr(getattr(api, "client", None), "base_url", None)
    return {ENDPOINT_KEY: str(url).rstrip("/") if url else None}


def _prerequisite_text(exc: PrerequisiteError) -> str:
    """An Inspect prerequisite error's message as one line, without the ``error:`` it may start with.

    >>> _prerequisite_text(PrerequisiteError("error: data=x: no such folder"))
    'data=x: no such folder'
    """
    text = str(exc.message).strip()
    text = text.splitlines()[0] if text else "PrerequisiteError"
    return text.removeprefix("error: ")


def task_file_tasks(path: Path, label: str) -> list[str]:
    """The tasks a task file defines, as Inspect's loader finds them (its top-level ``@task`` functions,
    read without running the file); a one-line error, starting with ``label``, for a missing file, a folder,
    a file that is not a task file or not Python.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "t.py").write_text("from inspect_ai import task\\n@task\\ndef a(): ...\\n@task(name='b2')\\ndef b(): ...\\n")
    >>> task_file_tasks(folder / "t.py", "x")
    ['a', 'b2']
    >>> _ = (folder / "bad.py").write_text("def oops(:\\n")
    >>> task_file_tasks(folder / "bad.py", "inspect:bad.py")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: inspect:bad.py: the file is not valid Python (line 1: invalid syntax)
    """
    from inspect_ai._util.decorator import parse_decorators

    if path.is_dir():
        raise ScrambledBenchError(
            f"{label}: {path} is a folder; name one task file in it (FILE.py or FILE.py@TASK)"
        )
    if not path.exists():
        raise ScrambledBenchError(f"{label}: no such file {path}")
    if path.suffix.lower() not in TASK_FILE_SUFFIXES:
        raise ScrambledBenchError(
            f"{label}: {path.name} is not an Inspect task file (a .py or .ipynb file of @task functions)"
        )
    if path.suffix.lower() == ".py":
        try:
            ast.parse(path.read_bytes(), filename=str(path))
        except SyntaxError as exc:
            raise ScrambledBenchError(
                f"{label}: the file is not valid Python (line {exc.lineno}: {exc.msg})"
            ) from None
        except ValueError as exc:  # null bytes
            raise ScrambledBenchError(f"{label}: the file is not valid Python ({first_line(exc)})") from None
    try:
        return [name for name, _ in parse_decorators(path, "task")]
    except (OSError, UnicodeDecodeError) as exc:
        raise ScrambledBenchError(f"{label}: cannot read the file ({first_line(exc)})") from None


def _listed(names: Sequence[str], near: str | None = None) -> str:
    """Task names, closest to ``near`` first where it is given.

    >>> _listed(["lakes", "rivers", "seas"], "rivrs")
    'rivers, seas, lakes'
    """
    if near is None:
        return ", ".join(names)
    closest = difflib.get_close_matches(near, names, n=len(names), cutoff=0.0)
    return ", ".join([*closest, *(name for name in names if name not in closest)])


def resolved_spec(spec: str, label: str | None = None) -> str:
    """``spec`` as Inspect's loader takes it from any folder: a task file's path made absolute, with its task
    named (a file of one task needs no ``@TASK``, as ``inspect eval FILE.py`` takes it); a registry name as
    it is. One-line errors, starting with ``label`` (default ``task=SPEC``), for a task file that is missing,
    not one, not Python, defines no task, several without one named, or not the one named (with its tasks,
    closest first).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "t.py").write_text("from inspect_ai import task\\n@task\\ndef rivers(): ...\\n@task\\ndef lakes(): ...\\n")
    >>> resolved_spec(f"{folder}/t.py@rivers") == f"{folder.resolve()}/t.py@rivers"
    True
    >>> resolved_spec("inspect_evals/arc_easy")
    'inspect_evals/arc_easy'
    >>> resolved_spec(f"{folder}/t.py@rivrs", "inspect:t.py@rivrs")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: inspect:t.py@rivrs: t.py has no task 'rivrs'; its tasks, closest first: rivers, lakes
    >>> resolved_spec(f"{folder}/t.py", "inspect:t.py")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: inspect:t.py: t.py defines 2 tasks (rivers, lakes); name one, as t.py@TASK
    """
    from inspect_ai._util.registry import registry_lookup

    label = label or f"task={spec}"
    if "@" not in spec and registry_lookup("task", spec) is not None:
        return spec
    location, at, name = spec.rpartition("@") if "@" in spec else (spec, "", "")
    path = Path(location).expanduser()
    if not at and path.suffix.lower() not in TASK_FILE_SUFFIXES and not path.exists():
        return spec  # a registry name (inspect_evals/arc_easy), or a spec naming none: Inspect's loader says
    if not location:
        raise ScrambledBenchError(f"{label}: names no task file before '@' (FILE.py@TASK)")
    names = task_file_tasks(path, label)
    if not names:
        raise ScrambledBenchError(f"{label}: {path.name} defines no @task function")
    if at and not name:
        raise ScrambledBenchError(f"{label}: names no task after '@'; {path.name} defines {_listed(names)}")
    if at and name not in names:
        raise ScrambledBenchError(
            f"{label}: {path.name} has no task {name!r}; its tasks, closest first: {_listed(names, name)}"
        )
    if not at:
        if len(names) > 1:
            raise ScrambledBenchError(
                f"{label}: {path.name} defines {len(names)} tasks ({_listed(names)}); name one, as {path.name}@TASK"
            )
        [name] = names
    return f"{path.resolve()}@{name}"


def _closest_task_names(name: str) -> list[str]:
    """The registered task names nearest ``name`` (every installed package's, loaded for this)."""
    from inspect_ai._util.entrypoints import ensure_entry_points
    from inspect_ai._util.registry import registry_find, registry_info

    ensure_entry_points()
    names = [registry_info(found).name for found in registry_find(lambda info: info.type == "task")]
    return difflib.get_close_matches(name, names, n=3, cutoff=0.6)


def load_canonical(spec: str, task_args: dict[str, Any] | None = None, label: str | None = None) -> Task:
    """The one task ``spec`` names, through Inspect's loader (a task file's as :func:`resolved_spec` names
    it); a one-line error, starting with ``label`` (default ``task=SPEC``), for an unknown name (with the
    closest registered names), a bad task file, a task that cannot be created (the error it raised, Inspect's
    prerequisite errors included) or a spec naming several tasks."""
    from inspect_ai._eval.loader import load_task_spec

    label = label or f"task={spec}"
    resolved = resolved_spec(spec, label)
    try:
        tasks = load_task_spec(resolved, dict(task_args or {}))
    except ScrambledBenchError:
        raise
    except PrerequisiteError as exc:
        raise ScrambledBenchError(f"{label}: {_prerequisite_text(exc)}") from None
    except Exception as exc:  # noqa: BLE001 - Inspect's loader raises anything for a bad spec; say it in one line
        raise ScrambledBenchError(
            f"{label}: cannot load it ({type(exc).__name__}: {first_line(exc)})"
        ) from None
    if not tasks:
        closest = _closest_task_names(spec)
        hint = f"; closest: {', '.join(closest)}" if closest else ""
        raise ScrambledBenchError(
            f"{label}: no such Inspect task (a registry name such as inspect_evals/arc_easy, or "
            f"file.py@task){hint}"
        )
    if len(tasks) > 1:
        raise ScrambledBenchError(
            f"{label}: names {len(tasks)} tasks ({', '.join(t.name for t in tasks)}); name one, as file.py@task"
        )
    return tasks[0]


def scrambled_variant(
    canonical: Task,
    scramble_type: str,
    fields: Sequence[str] = DEFAULT_FIELDS,
    *,
    seed: int = 0,
    canonical_name: str | None = None,
) -> Task:
    """``canonical`` with its samples scrambled, renamed ``<task>_<type>`` and its metadata extended
    (:func:`task_with`: the solver, scorer and settings stay the canonical task's). ``canonical_name``: the
    name its canonical run logs under, where that is not the task's own (a task file renames it)."""
    if not isinstance(canonical.dataset, Dataset):
        raise ScrambledBenchError(
            f"task={canonical.name}: its samples are made while it runs (a sample source), so there is no "
            "dataset to scramble"
        )
    name = canonical_name or canonical.name
    metadata = {
        **(canonical.metadata or {}),
        "canonical_task": name,
        "scramble_type": scramble_type,
        "seed": seed,
        "fields": list(fields),
        "scrambled_bench_version": __version__,
        **endpoint_metadata(),
    }
    dataset = scrambled_dataset(canonical.dataset, scramble_type, fields, seed=seed)
    return task_with(canonical, dataset=dataset, name=f"{name}_{scramble_type}", metadata=metadata)


@task
def scrambled(
    task: str,
    type: str,  # the option is `-T type=kfl`, as the bench's types are named everywhere
    fields: str | list[str] = "input",
    seed: int = 0,
    task_args: dict[str, Any] | None = None,
) -> Task:
    """A scrambled variant of the Inspect task ``task``: ``-T task=inspect_evals/arc_easy -T type=kfl
    [-T fields=input,choices] [-T seed=0] [-T task_args={...}]``."""
    try:
        parse_type(type)
        chosen = chosen_fields(fields)
        canonical = load_canonical(task, task_args)
        return scrambled_variant(canonical, type, chosen, seed=int(seed))
    except ScrambledBenchError as exc:
        raise PrerequisiteError(f"error: {WRAPPER}: {exc}") from None
