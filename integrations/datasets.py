"""The variants of harness tasks that read a dataset (lm-eval's, lighteval's): the shared flow of
:meth:`DatasetHarness.write_variants`.

The task's dataset is loaded as its harness loads it (offline where it is cached or local) and scrambled by
``scramble``'s own functions, seed and row keys (``builder.scramble``); nothing here scrambles text. The
evaluation split is scrambled. Every other split the task names (its demonstrations' among them) is copied
with its text unchanged under ``--demos original`` (the default), scrambled too under ``--demos
scrambled``. A task that draws its demonstrations from its evaluation split gets them scrambled with it:
the manifest says so. A column that holds the target is refused (each task's ``refuse_target_columns``).

Output layout (``--out DIR``): ``DIR/<task>/`` per canonical task is a ``scramble`` output (one config per
type, the card, the manifest), the harness's own task files go beside it (:meth:`write_task_files`), and
``DIR/manifest.json`` lists the tasks. With ``--push`` (one task) the task's data is uploaded by
``scramble``'s push and the task files read it at the pushed commit. All or nothing: the folder is moved
into place once whole.
"""

from __future__ import annotations

import difflib
import shutil
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrambled_bench.builder.hub import push_scrambled
from scrambled_bench.builder.scramble import (
    LoadedSource,
    ScrambleResult,
    Variant,
    check_columns,
    is_scramble_output,
    row_keys,
    scramble_batch,
    scramble_dataset,
    variants_for,
)
from scrambled_bench.errors import ScrambledBenchError, first_line
from scrambled_bench.hub import require_token
from scrambled_bench.integrations.base import CanonicalTask, Harness, ScrambleRequest, WrittenVariants
from scrambled_bench.integrations.outputs import manifest_head, staged_output, write_manifest

DEMOS = ("original", "scrambled")
TARGET_CHECK_DOCS = 20
"""Documents on which a target is compared, original against scrambled."""


def variant_name(task: str, scramble_type: str) -> str:
    """A derived task's name in its harness: the canonical task's and the type's.

    >>> variant_name("arc_easy", "rs50")
    'arc_easy_rs50'
    """
    return f"{task}_{scramble_type}"


def closest_names(name: str, names: Sequence[str]) -> str:
    """`` (closest: ...)`` with the registered names nearest to an unknown one, else nothing.

    >>> closest_names("arc_esy", ["arc_easy", "gsm8k"]), closest_names("zzz", ["arc_easy"])
    (' (closest: arc_easy)', '')
    """
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    return f" (closest: {', '.join(close)})" if close else ""


def first_documents(
    dataset: Any, columns: Sequence[str], variants: Sequence[Variant], seed: int
) -> tuple[Any, dict[Variant, Any]]:
    """The first :data:`TARGET_CHECK_DOCS` rows of ``dataset`` and, per variant, the same rows scrambled as
    ``scramble`` scrambles them (same seed and row keys): what a target check compares."""
    first = dataset.select(range(min(TARGET_CHECK_DOCS, len(dataset))))
    batch = first.to_dict()
    keys = row_keys(batch, range(len(first)), None)
    return first, {
        variant: type(first).from_dict(
            scramble_batch(batch, keys, columns=columns, variant=variant, seed=seed)
        )
        for variant in variants
    }


def target_changes(task: str, columns: Sequence[str], index: int, variant: Variant) -> ScrambledBenchError:
    """The refusal of columns whose scrambling changes a document's target."""
    return ScrambledBenchError(
        f"--columns {','.join(columns)}: task {task}'s target of document {index} changes "
        f"under {variant.scramble_type}; scramble the inputs, never the target"
    )


class DatasetTask(CanonicalTask):
    """A canonical task that reads a dataset: where from (``load_dataset(dataset_path, dataset_name,
    **dataset_kwargs)``), which splits it evaluates and draws demonstrations from, and how a column that
    holds its target is refused."""

    @property
    @abstractmethod
    def dataset_path(self) -> str: ...

    @property
    @abstractmethod
    def dataset_name(self) -> str | None: ...

    @property
    @abstractmethod
    def dataset_kwargs(self) -> dict[str, Any]: ...

    @property
    @abstractmethod
    def eval_splits(self) -> list[str]: ...

    @property
    @abstractmethod
    def demo_split(self) -> str: ...

    @property
    def splits(self) -> list[str]:
        """Every split the task reads, the evaluation splits first."""
        return list(dict.fromkeys([*self.eval_splits, self.demo_split]))

    @property
    def num_fewshot(self) -> int | None:
        """How many demonstrations the task shows as configured (0: zero-shot); None where unknown."""
        return None

    @abstractmethod
    def refuse_target_columns(
        self, dataset: Any, columns: Sequence[str], variants: Sequence[Variant], seed: int
    ) -> None:
        """A one-line error where scrambling ``columns`` would change the task's target."""

    def check_template_columns(self, dataset: Any) -> None:
        """A one-line error where the task reads a column its documents do not have (its harness would fail
        on every document, so no variant is written); nothing to check by default."""


def demonstrations_note(task: DatasetTask, demos: str) -> str | None:
    """What the user is told about a task whose demonstrations would come from its evaluation split, which
    is scrambled (None: nothing to tell, the split they come from is copied unchanged or ``demos`` is
    ``scrambled``). A zero-shot task shows none: the note says so, and what a run with demonstrations
    would show.

    >>> from types import SimpleNamespace
    >>> task = SimpleNamespace(name="quiz", eval_splits=["test"], demo_split="test", num_fewshot=0)
    >>> demonstrations_note(task, "original")
    "quiz is zero-shot as configured: it shows no demonstrations (run with some, it would draw them from its evaluation split 'test', scrambled with it)"
    >>> demonstrations_note(SimpleNamespace(**{**vars(task), "num_fewshot": 5}), "original")
    "quiz draws its demonstrations from its evaluation split 'test': they are scrambled with it"
    >>> demonstrations_note(SimpleNamespace(**{**vars(task), "demo_split": "train"}), "original") is None
    True
    """
    if demos != "original" or task.demo_split not in task.eval_splits:
        return None
    if task.num_fewshot == 0:
        return (
            f"{task.name} is zero-shot as configured: it shows no demonstrations (run with some, it would draw "
            f"them from its evaluation split {task.demo_split!r}, scrambled with it)"
        )
    return f"{task.name} draws its demonstrations from its evaluation split {task.demo_split!r}: they are scrambled with it"


@dataclass(frozen=True)
class HubData:
    """Where ``--push`` put a task's scrambled data: the dataset repository and the commit it made, which
    the derived task files read (never a branch that a later push moves)."""

    repo_id: str
    revision: str


@dataclass(frozen=True)
class TaskFiles:
    """What a harness wrote for the variants: the files (relative to ``DIR``), the command that runs the
    comparison, and what ``DIR/manifest.json`` records for the harness (under its name)."""

    files: list[str]
    run_hint: str
    manifest: Any = None


def push_task_data(folder: Path, repo_id: str, *, private: bool = False, api: Any | None = None) -> HubData:
    """Upload one task's scrambled data (a ``scramble`` output) with ``scramble``'s own push; the repository
    and the commit the upload made."""
    pushed = push_scrambled(folder, repo_id, private=private, api=api)
    if not pushed.commit:
        raise ScrambledBenchError(f"--push {repo_id}: the Hub did not say which commit the upload made")
    return HubData(repo_id, pushed.commit)


class DatasetHarness(Harness):
    """A harness whose tasks read a dataset: the variants are the scrambled dataset, one config per type,
    and the harness's task files that read it (:meth:`write_task_files`)."""

    demos = True
    pushes = True

    @abstractmethod
    def write_task_files(
        self, folder: Path, tasks: Sequence[Any], request: ScrambleRequest, hub: HubData | None
    ) -> TaskFiles:
        """Write the derived task files into ``folder`` (the output being assembled; it becomes
        ``request.out``), their data read from ``request.out/<task folder>`` or, after ``--push``, ``hub``."""

    def load_dataset(self, task: DatasetTask) -> LoadedSource:
        """The splits ``task`` names, loaded as its harness loads them (``load_dataset(path, name,
        **dataset_kwargs)``; lighteval's ``hf_revision`` is such a keyword); a dataset that cannot be loaded
        (offline, say) is a one-line error."""
        import datasets  # deferred: the datasets library is heavy, and only a scramble loads data

        kwargs = task.dataset_kwargs
        kwargs.pop("trust_remote_code", None)
        try:
            loaded = datasets.load_dataset(task.dataset_path, task.dataset_name, **kwargs)
        except Exception as exc:  # noqa: BLE001 - every loader failure (offline included) is one line
            raise ScrambledBenchError(
                f"task {task.name}: cannot load dataset {task.dataset_path!r}: {first_line(exc)}"
            ) from None
        missing = [split for split in task.splits if split not in loaded]
        if missing:
            raise ScrambledBenchError(
                f"task {task.name}: dataset {task.dataset_path!r} has no split {missing[0]!r} (splits: {', '.join(loaded)})"
            )
        description = {
            "source": f"{self.name}:{task.name}",
            "kind": f"{self.name} task",
            "dataset_path": task.dataset_path,
            "config": task.dataset_name,
            "revision": kwargs.get("revision"),
        }
        return LoadedSource({split: loaded[split] for split in task.splits}, description)

    def write_variants(self, tasks: Sequence[CanonicalTask], request: ScrambleRequest) -> WrittenVariants:
        """The request checked, each task's dataset loaded and its columns checked, then, all or nothing in
        ``request.out``: each task's dataset scrambled (:meth:`scramble_task`), pushed where asked, the
        harness's task files written (:meth:`write_task_files`) and the manifest."""
        found = dataset_tasks(self.name, tasks)
        demos = checked_demos(request)
        check_push(request, found)
        variants = variants_for(list(request.types), None, None)
        loaded = {task.name: self.load_dataset(task) for task in found}
        for task in found:
            check_task_columns(task, loaded[task.name], request, variants)
        with staged_output(request.out) as tmp:
            results = {
                task.name: self.scramble_task(task, loaded[task.name], tmp, request, demos) for task in found
            }
            hub = None
            if request.push is not None:
                hub = push_task_data(
                    tmp / found[0].folder, request.push, private=request.private, api=request.api
                )
            written = self.write_task_files(tmp, found, request, hub)
            notes = [note for note in (demonstrations_note(task, demos) for task in found) if note]
            write_manifest(tmp, self.manifest(request, found, demos, notes, written, hub))
        return WrittenVariants(
            request.out,
            self.name,
            [task.name for task in found],
            written.run_hint,
            {name: result.rows for name, result in results.items()},
            notes,
            None if hub is None else (hub.repo_id, hub.revision),
            {name: result.unchanged_summary() for name, result in results.items()},
        )

    def scramble_task(
        self, task: DatasetTask, loaded: LoadedSource, tmp: Path, request: ScrambleRequest, demos: str
    ) -> ScrambleResult:
        """Scramble one task's dataset into ``tmp/<task folder>`` with ``scramble``'s own function: its
        evaluation splits, and its other splits too under ``--demos scrambled`` (else copied unchanged); a
        previous output of the task grows, as ``scramble`` grows one."""
        if request.previous_types and is_scramble_output(request.out / task.folder):
            shutil.copytree(request.out / task.folder, tmp / task.folder)  # grown below, as `scramble` grows
        kept = [] if demos == "scrambled" else [s for s in task.splits if s not in task.eval_splits]
        described = {"harness": {"name": self.name, **task.describe(), "demos": demos, "kept_splits": kept}}
        return scramble_dataset(
            f"{self.name}:{task.name}",
            columns=list(request.columns),
            types=list(request.types),
            out=tmp / task.folder,
            seed=request.seed,
            num_proc=request.num_proc,
            loaded=loaded,
            kept_splits=kept,
            command=request.command or f"scrambled-bench scramble {request.source}",
            extra_outputs=lambda _folder: described,
        )

    def manifest(
        self,
        request: ScrambleRequest,
        tasks: Sequence[DatasetTask],
        demos: str,
        notes: list[str],
        written: TaskFiles,
        hub: HubData | None,
    ) -> dict[str, Any]:
        """``DIR/manifest.json``: what every harness's holds, the demonstrations, the notes, the files
        written, the Hub dataset pushed, and what the harness records (under its name)."""
        manifest = {
            **manifest_head(request, self.name, [task.name for task in tasks]),
            "demos": demos,
            "notes": notes,
            "outputs": {path: {} for path in written.files},
        }
        if hub is not None:
            manifest["hub"] = {"repo_id": hub.repo_id, "revision": hub.revision}
        if written.manifest is not None:
            manifest[self.name] = written.manifest
        return manifest


def dataset_tasks(harness: str, tasks: Sequence[CanonicalTask]) -> list[DatasetTask]:
    """``tasks`` as the dataset tasks a :class:`DatasetHarness` resolves them to (a ``TypeError`` for
    another kind: a task is written by the harness that resolved it)."""
    found = [task for task in tasks if isinstance(task, DatasetTask)]
    if len(found) != len(tasks):
        raise TypeError(f"{harness} writes the variants of tasks that read a dataset (DatasetTask)")
    return found


def checked_demos(request: ScrambleRequest) -> str:
    """What the demonstrations' splits become (``original`` unless asked); a one-line error for another
    word.

    >>> checked_demos(ScrambleRequest("s", "t", ("q",), ("kfl",), Path("o")))
    'original'
    """
    demos = request.demos or "original"
    if demos not in DEMOS:
        raise ScrambledBenchError(f"--demos must be original or scrambled, got {demos!r}")
    return demos


def check_push(request: ScrambleRequest, tasks: Sequence[DatasetTask]) -> None:
    """A one-line error for ``--push`` of several tasks, or without a Hub token (unless ``request.api``
    stands in for the Hub)."""
    if request.push is None:
        return
    if len(tasks) != 1:
        raise ScrambledBenchError(
            f"--push takes one task; {request.spec} is {len(tasks)} tasks ({', '.join(t.name for t in tasks)}): "
            "scramble and push them one at a time"
        )
    if request.api is None:
        require_token()


def check_task_columns(
    task: DatasetTask, loaded: LoadedSource, request: ScrambleRequest, variants: Sequence[Variant]
) -> None:
    """One-line errors, naming the task, where a column to scramble is missing or not text in a split, where
    scrambling it changes the target of an evaluated document, or where the task reads a column its
    documents do not have."""
    for split, dataset in loaded.splits.items():
        try:
            check_columns(split, dataset.features, list(request.columns), None)
        except ScrambledBenchError as exc:
            raise ScrambledBenchError(f"task {task.name}: {exc}") from None
    for split in task.eval_splits:
        task.refuse_target_columns(loaded.splits[split], list(request.columns), variants, request.seed)
        task.check_template_columns(loaded.splits[split])


__all__ = [
    "DEMOS",
    "DatasetHarness",
    "DatasetTask",
    "HubData",
    "TaskFiles",
    "check_push",
    "check_task_columns",
    "checked_demos",
    "closest_names",
    "dataset_tasks",
    "demonstrations_note",
    "first_documents",
    "push_task_data",
    "target_changes",
    "variant_name",
]
