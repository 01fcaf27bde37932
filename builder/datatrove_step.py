"""A datatrove ``PipelineStep`` that scrambles ``Document.text`` (or a metadata field) for corpora beyond one
machine: reader -> :class:`ScrambleStep` -> writer, on datatrove's local, Slurm or Ray executors.

The step applies the ``scramble`` command's very function (:func:`~scrambled_bench.builder.scramble.apply_variant`)
keyed by the document's id and the field's name, so a pipeline whose reader takes the ids from a column (``id_key``) gives,
document for document, what ``scrambled-bench scramble ... --id-column <that column>`` gives: the scrambled
field, the original beside it (``<field>_original`` in the metadata), ``scramble_type``, ``scrambled`` and,
for a recipe, ``recipe``.

datatrove is an optional extra (``pip install 'scrambled-bench[datatrove]'``): this module imports without it,
and :class:`ScrambleStep` is created, from datatrove's ``PipelineStep``, on first use::

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter
    from scrambled_bench.builder.datatrove_step import ScrambleStep

    LocalPipelineExecutor(
        [JsonlReader("corpus/", id_key="id"), ScrambleStep(recipe="ft-rs"), JsonlWriter("scrambled/")],
        tasks=16, workers=4, logging_dir="logs/",
    ).run()
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from scrambled_bench.builder.scramble import ORIGINAL_SUFFIX, Variant, apply_variant, variants_for
from scrambled_bench.errors import ScrambledBenchError

__all__ = ["ScrambleStep", "scramble_document", "step_variant"]  # noqa: F822 - ScrambleStep: module __getattr__


def step_variant(scramble_type: str | None, recipe: str | None, sample_rate: float | None) -> Variant:
    """The one variant a step applies: a type (with an optional sample rate) or a recipe.

    >>> step_variant("kfl", None, None)
    Variant(config='kfl', scramble_type='kfl', sample_rate=100.0, recipe=None)
    >>> step_variant(None, "ft-rs", None).scramble_type
    'ftrs30'
    """
    return variants_for([scramble_type] if scramble_type else None, recipe, sample_rate)[0]


def scramble_document(
    text: str,
    metadata: MutableMapping[str, Any],
    doc_id: str,
    variant: Variant,
    *,
    seed: int = 0,
    field: str | None = None,
) -> str:
    """Scramble one document in place of its fields: the new text is returned, ``metadata`` is updated.

    ``field`` ``None`` scrambles the text (the original goes to ``metadata["text_original"]``); a name
    scrambles ``metadata[field]`` (the original to ``metadata[field + "_original"]``).

    >>> metadata = {}
    >>> scramble_document("Scrambled words", metadata, "doc-1", step_variant("kf", None, None))
    'Scaldebrm wdsor'
    >>> metadata
    {'text_original': 'Scrambled words', 'scramble_type': 'kf', 'scrambled': True}
    """
    name = "text" if field is None else field
    original = text if field is None else metadata.get(field)
    # the field's name is its column path, as `scramble --columns <name>` names it: the same stream
    output, chosen = apply_variant(original, str(doc_id), variant, seed=seed, column=name)
    metadata[name + ORIGINAL_SUFFIX] = original
    if field is not None:
        metadata[field] = output
    metadata["scramble_type"] = variant.scramble_type
    metadata["scrambled"] = chosen
    if variant.recipe is not None:
        metadata["recipe"] = variant.recipe
    return output if field is None else text


def _define_step() -> type:
    """Define :class:`ScrambleStep` on datatrove's ``PipelineStep`` (imported here, not at module import)."""
    try:
        from datatrove.pipeline.base import PipelineStep  # datatrove is an optional extra
    except ImportError as exc:
        raise ScrambledBenchError(
            f"the datatrove step needs datatrove ({exc}); pip install 'scrambled-bench[datatrove]'"
        ) from None

    class ScrambleStep(PipelineStep):
        """Scramble every document's text (or ``field`` of its metadata) with a type or a recipe, keyed by its id.

        Args:
            scramble_type: a type name (``kfl``, ``rs50``...); or give ``recipe``.
            recipe: ``ft-rs``, ``ft-kf-adj`` or ``ft-ori`` (the paper's App. A.4 corpora).
            sample_rate: percent of the documents scrambled (with ``scramble_type``; a recipe sets its own).
            seed: the scramble seed.
            field: a metadata field to scramble instead of the text.
        """

        name = "🔀 Scramble"
        type = "✂️ - FORMAT"

        def __init__(
            self,
            scramble_type: str | None = None,
            *,
            recipe: str | None = None,
            sample_rate: float | None = None,
            seed: int = 0,
            field: str | None = None,
        ):
            super().__init__()
            self.variant = step_variant(scramble_type, recipe, sample_rate)
            self.seed = seed
            self.field = field

        def run(self, data, rank: int = 0, world_size: int = 1):
            for document in data:
                with self.track_time():
                    document.text = scramble_document(
                        document.text,
                        document.metadata,
                        document.id,
                        self.variant,
                        seed=self.seed,
                        field=self.field,
                    )
                self.stat_update("scrambled" if document.metadata["scrambled"] else "unchanged")
                yield document

    # a module-level name, so that executors that pickle the pipeline (by reference) find the class again
    ScrambleStep.__module__ = __name__
    ScrambleStep.__qualname__ = "ScrambleStep"
    return ScrambleStep


def __getattr__(name: str) -> Any:
    if name == "ScrambleStep":
        step = _define_step()
        globals()["ScrambleStep"] = step
        return step
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
