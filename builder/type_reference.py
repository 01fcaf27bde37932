"""The scramble types as a reference, made from the type records (:data:`~.scrambler.FAMILIES`): per family
its type names, group, definition and parameters, and a worked example that the real scrambler makes on one
fixed sentence with a fixed seed.

``scrambled-bench list types`` prints :func:`type_summary` and the documentation's type reference page is
:func:`type_reference_markdown`, which opens with the same rows: both read the records, so neither can
drift from the code (nor from each other).

>>> [row for row in type_summary() if row[0] in ("kfl", "adjNN")]  # doctest: +NORMALIZE_WHITESPACE
[('kfl', 'paper', 'keep the first and last letters, shuffle the inner ones (words with at least 4 letters)'),
 ('adjNN', 'typo', 'natural typo in NN % of the words with at least 3 letters: two adjacent letters swapped,
  never the first (FT-KF&Adj)')]
"""

from __future__ import annotations

from dataclasses import dataclass

from scrambled_bench.builder.recipes import RECIPES
from scrambled_bench.builder.scrambler import FAMILIES, ScrambleFamily, parse_type, scramble

EXAMPLE_SENTENCE = "The quick brown fox jumps over 2 lazy dogs, then naps beside the riverbank."
"""The sentence every worked example scrambles (a digit and punctuation, which never move, included)."""
EXAMPLE_SEED = 0
EXAMPLE_SAMPLE_ID = "example"
EXAMPLE_PLACE = "text"
EXAMPLE_RATE = 50
"""The rate of the example of a rate family that ships no rate and that no recipe uses."""

GROUPS: dict[str, str] = {
    "paper": "the paper's main types (Tables 1 and 3-8)",
    "letters": "Appendix A.2: which letters keep their place",
    "typo": "natural typos",
    "training": "Appendix A.4's fine-tuning corpora (no build ships it)",
}
"""What each :attr:`~.scrambler.ScrambleFamily.group` means, in the reference's words."""


@dataclass(frozen=True)
class TypeEntry:
    """One family as the reference shows it.

    ``name`` is how its types are written (``rsNN``, ``kfl``); ``examples`` holds (type name, the example
    sentence scrambled by it) for every shipped type of the family (a family that ships none: the types of
    the recipes that use it, else :data:`EXAMPLE_RATE`)."""

    name: str
    family: str
    group: str
    definition: str
    min_letters: int
    takes_rate: bool
    shipped: tuple[str, ...]
    table_types: tuple[str, ...]
    recipes: tuple[str, ...]
    examples: tuple[tuple[str, str], ...]


def example(scramble_type: str) -> str:
    """:data:`EXAMPLE_SENTENCE` scrambled by ``scramble_type`` (seed :data:`EXAMPLE_SEED`, row key
    :data:`EXAMPLE_SAMPLE_ID`, place :data:`EXAMPLE_PLACE`): what the reference shows.

    >>> example("original") == EXAMPLE_SENTENCE
    True
    >>> [word[0] + word[-1] for word in example("kfl").split()][:4]
    ['Te', 'qk', 'bn', 'fx']
    """
    return scramble(
        EXAMPLE_SENTENCE, scramble_type, seed=EXAMPLE_SEED, sample_id=EXAMPLE_SAMPLE_ID, place=EXAMPLE_PLACE
    )


def _recipes_of(family: ScrambleFamily) -> tuple[str, ...]:
    return tuple(
        recipe.name for recipe in RECIPES.values() if parse_type(recipe.scramble_type).family == family.name
    )


def _example_types(family: ScrambleFamily) -> tuple[str, ...]:
    shipped = family.type_names()
    if shipped:
        return shipped
    used = tuple(
        dict.fromkeys(
            recipe.scramble_type
            for recipe in RECIPES.values()
            if parse_type(recipe.scramble_type).family == family.name
        )
    )
    return used or (f"{family.name}{EXAMPLE_RATE}",)


def type_entries() -> list[TypeEntry]:
    """Every family, in the order of :data:`~.scrambler.FAMILIES` (the order of tables and figures).

    >>> entry = next(entry for entry in type_entries() if entry.family == "ftrs")
    >>> entry.name, entry.shipped, entry.recipes, [name for name, _ in entry.examples]
    ('ftrsNN', (), ('ft-rs',), ['ftrs30'])
    """
    return [
        TypeEntry(
            name=family.pattern,
            family=family.name,
            group=family.group,
            definition=family.description,
            min_letters=family.min_letters,
            takes_rate=family.takes_rate,
            shipped=family.type_names(),
            table_types=family.type_names(tables=True) if family.table_rates is not None else (),
            recipes=_recipes_of(family),
            examples=tuple((name, example(name)) for name in _example_types(family)),
        )
        for family in FAMILIES.values()
    ]


def type_summary() -> list[tuple[str, str, str]]:
    """(type, group, definition) per family: the lines of ``scrambled-bench list types`` and the table at
    the top of the reference page."""
    return [(family.pattern, family.group, family.description) for family in FAMILIES.values()]


RATE_NOTE = (
    "NN is a whole percentage of a text's eligible words, 1 to 100 (rs35 works as well as the shipped rates); "
    "the words chosen at a lower rate are among those chosen at a higher one."
)


def type_lines() -> list[str]:
    """:func:`type_summary` as aligned text lines, then :data:`RATE_NOTE`: what ``list types`` prints.

    >>> type_lines()[0].split()
    ['original', 'paper', 'no', 'change']
    """
    rows = type_summary()
    name_width = max(len(name) for name, _, _ in rows)
    group_width = max(len(group) for _, group, _ in rows)
    lines = [f"{name:<{name_width}}  {group:<{group_width}}  {text}" for name, group, text in rows]
    return [*lines, "", RATE_NOTE]


def _cell(text: str) -> str:
    """Text for a markdown table cell: pipes escaped, no line break."""
    return text.replace("|", "\\|").replace("\n", " ")


def type_reference_markdown() -> str:
    """The documentation's page of scramble types: the summary table (:func:`type_summary`), then per family
    its definition, parameters and worked examples (:func:`type_entries`)."""
    lines = [
        "# Scramble types",
        "",
        (
            "Every scramble type comes from one record in `FAMILIES` (`builder/families.py`); this page is "
            "generated from those records when the site is built, and `scrambled-bench list types` prints the "
            "same table. A *word* is a maximal run of word characters (so apostrophes and hyphens split words); "
            "only letters move or change, while digits, punctuation and whitespace stay where they were. A type "
            "changes only the *eligible* words: those with at least the family's number of letters. `--types` "
            "(of `build`, `run` and `scramble`) takes these names, repeated or comma-separated."
        ),
        "",
        "| type | group | definition |",
        "|---|---|---|",
        *(f"| `{name}` | {group} | {_cell(text)} |" for name, group, text in type_summary()),
        "",
        RATE_NOTE,
        "",
        "Groups: " + "; ".join(f"**{group}**: {text}" for group, text in GROUPS.items()) + ".",
        "",
        "## Worked examples",
        "",
        (
            "Each example below is the output of the package's own scrambler on one sentence, made when this page "
            "was built:"
        ),
        "",
        f"> {EXAMPLE_SENTENCE}",
        "",
        (
            f"with `scramble(sentence, TYPE, seed={EXAMPLE_SEED}, sample_id={EXAMPLE_SAMPLE_ID!r}, "
            f"place={EXAMPLE_PLACE!r})` (`scrambled_bench.builder.scrambler.scramble`). The output depends only on "
            "the text, the type, the seed, the row key and the place, so the same call gives the same sentence "
            "anywhere."
        ),
        "",
    ]
    for entry in type_entries():
        lines += _family_section(entry)
    return "\n".join(lines)


def _family_section(entry: TypeEntry) -> list[str]:
    """The reference's lines for one family: its definition, parameters and worked examples."""
    rate = (
        "a rate NN in percent of the eligible words"
        + (f"; shipped: {', '.join(f'`{name}`' for name in entry.shipped)}" if entry.shipped else "")
        if entry.takes_rate
        else "none (the type applies to every eligible word)"
    )
    lines = [
        f"### `{entry.name}`",
        "",
        entry.definition[:1].upper() + entry.definition[1:] + ".",
        "",
        f"- family `{entry.family}`, group {entry.group} ({GROUPS.get(entry.group, entry.group)})",
        f"- eligible words: at least {entry.min_letters} letter{'s' if entry.min_letters != 1 else ''}",
        f"- rate: {rate}",
    ]
    if entry.table_types:
        lines.append(f"- in the paper's main tables: {', '.join(f'`{name}`' for name in entry.table_types)}")
    if entry.recipes:
        lines.append(f"- used by the recipe{'s' if len(entry.recipes) > 1 else ''} "
                     f"{', '.join(f'`{name}`' for name in entry.recipes)} (`scramble --recipe`)")  # fmt: skip
    lines += ["", "| type | the sentence scrambled |", "|---|---|"]
    lines += [f"| `{name}` | `{_cell(text)}` |" for name, text in entry.examples]
    lines.append("")
    return lines


__all__ = [
    "EXAMPLE_SENTENCE",
    "GROUPS",
    "RATE_NOTE",
    "TypeEntry",
    "example",
    "type_entries",
    "type_lines",
    "type_reference_markdown",
    "type_summary",
]
