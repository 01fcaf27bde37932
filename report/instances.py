"""The logged instances of a harness's scrambled variants, canonical beside scrambled: the scrambled text
with its changed words marked (:func:`changed_words`), one document of both runs (:class:`InstancePair`),
and their HTML (:func:`render_instances`), as HELM shows perturbed instances."""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

WORD = re.compile(r"\S+|\s+")

Segments = tuple[tuple[str, bool], ...]
"""A text as pieces, each marked whether it changed."""


def changed_words(original: str, scrambled: str) -> Segments:
    """The scrambled text as pieces, each marked whether it differs from the original's. Scrambling changes
    letters within words, so where both texts have the same words and spaces in the same places, word
    compares with word by position; otherwise (a prompt whose words were added or dropped) ``difflib``
    aligns the words, so an inserted or dropped word does not shift the rest.

    >>> changed_words("The quick brown fox", "The qucik bworn fox")
    (('The ', False), ('qucik', True), (' ', False), ('bworn', True), (' fox', False))
    >>> changed_words("aab aba", "aba aab")
    (('aba', True), (' ', False), ('aab', True))
    >>> changed_words("a b c", "a x b c")
    (('a ', False), ('x', True), (' b c', False))
    """
    before, after = WORD.findall(original), WORD.findall(scrambled)
    pieces: list[tuple[str, bool]] = []

    def add(token: str, changed: bool) -> None:
        if pieces and pieces[-1][1] == changed:
            pieces[-1] = (pieces[-1][0] + token, changed)
        else:
            pieces.append((token, changed))

    same_layout = len(before) == len(after) and all(
        a.isspace() == b.isspace() and (not a.isspace() or a == b) for a, b in zip(before, after)
    )
    if same_layout:
        for token, other in zip(after, before):
            add(token, not token.isspace() and token != other)
        return tuple(pieces)
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, _, _, start, end in matcher.get_opcodes():
        for token in after[start:end]:
            add(token, tag != "equal" and not token.isspace())
    return tuple(pieces)


@dataclass(frozen=True)
class InstancePair:
    """One logged document of a variant beside the canonical task's: the prompts (the scrambled one as
    :func:`changed_words` pieces), the choices (each scrambled choice likewise), and each run's output and
    scores."""

    task: str
    scramble_type: str
    doc_id: Any
    original: str | None
    segments: Segments | None
    original_choices: tuple[str, ...] | None = None
    choices: tuple[Segments, ...] | None = None
    outputs: tuple[str | None, str | None] = (None, None)
    scores: tuple[Mapping[str, float], Mapping[str, float]] = ({}, {})


def _marked(segments: Segments) -> str:
    return "".join(
        f"<mark>{html.escape(text)}</mark>" if changed else html.escape(text) for text, changed in segments
    )


def _scores(scores: Mapping[str, float]) -> str:
    return "; ".join(f"{html.escape(key)} = {value:g}" for key, value in scores.items())


def render_instances(instances: Sequence[InstancePair]) -> str:
    """The HTML of the logged instances: per (task, type) a table, per document the canonical prompt beside
    the scrambled one with its changed words in ``<mark>``, the choices likewise, and each run's output and
    scores; every text escaped.

    >>> pair = InstancePair("t", "kfl", 0, "a <b> word", changed_words("a <b> word", "a <b> wrod"),
    ...                     ("yes",), (changed_words("yes", "yse"),), ("A", "B"), ({"acc": 1.0}, {"acc": 0.0}))
    >>> page = render_instances([pair])
    >>> "<mark>wrod</mark>" in page, "&lt;b&gt;" in page, "<mark>yse</mark>" in page, "acc = 0" in page
    (True, True, True, True)
    """
    body = ""
    groups: dict[tuple[str, str], list[InstancePair]] = {}
    for pair in instances:
        groups.setdefault((pair.task, pair.scramble_type), []).append(pair)
    for (task, scramble_type), pairs in groups.items():
        rows = ""
        for pair in pairs:
            doc = html.escape(str(pair.doc_id))
            if pair.original is not None and pair.segments is not None:
                rows += (
                    f"<tr><th>{doc}</th><th>prompt</th><td class='prompt'>{html.escape(pair.original)}</td>"
                    f"<td class='prompt'>{_marked(pair.segments)}</td></tr>"
                )
            if pair.original_choices is not None and pair.choices is not None:
                before = "".join(f"<li>{html.escape(choice)}</li>" for choice in pair.original_choices)
                after = "".join(f"<li>{_marked(choice)}</li>" for choice in pair.choices)
                rows += (
                    f"<tr><th>{doc}</th><th>choices</th><td class='choices'><ol>{before}</ol></td>"
                    f"<td class='choices'><ol>{after}</ol></td></tr>"
                )
            canonical_output, variant_output = pair.outputs
            rows += (
                f"<tr><th>{doc}</th><th>output</th>"
                f"<td class='output'>{html.escape(canonical_output or '')}<br><small>{_scores(pair.scores[0])}</small></td>"
                f"<td class='output'>{html.escape(variant_output or '')}<br><small>{_scores(pair.scores[1])}</small></td></tr>"
            )
        body += (
            f"<section class='instances'><h3>{html.escape(task)}: {html.escape(scramble_type)}</h3>"
            f"<table><tr><th>document</th><th></th><th>canonical</th><th>{html.escape(scramble_type)} "
            f"(changed words marked)</th></tr>{rows}</table></section>"
        )
    return body
