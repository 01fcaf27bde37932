"""The scramble types are records: the scrambler asks them, and its public names import from one place.

``builder/scrambler.py`` re-exports what its parts (``families``, ``word_functions``, ``draws``,
``text_streams``) define, so ``from scrambled_bench.builder.scrambler import X`` names the very object.
The records' fields are what a reference page is generated from, so they are checked as data here.
"""

from __future__ import annotations

import ast
import dataclasses
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scrambled_bench.builder
from scrambled_bench.builder import families, scrambler, text_streams, word_functions
from scrambled_bench.builder.families import ALL_TYPES, FAMILIES, ScrambleFamily

BUILDER = Path(scrambled_bench.builder.__file__).resolve().parent


def test_every_public_name_of_the_scrambler_is_its_part_s_own_object():
    parts = (families, word_functions, text_streams)
    for name in scrambler.__all__:
        exported = getattr(scrambler, name)
        homes = [part for part in parts if name in vars(part)]
        if homes:
            assert exported is getattr(homes[0], name), name
        else:  # defined in scrambler.py itself: the text and list level
            assert getattr(exported, "__module__", scrambler.__name__) == scrambler.__name__, name
    assert {"FAMILIES", "ScrambleFamily", "TextPlace", "text_rng", "scramble", "scramble_items"} <= set(
        scrambler.__all__
    )


def test_the_records_fields_read_as_data():
    names = [field.name for field in dataclasses.fields(ScrambleFamily)]
    assert names[:5] == ["name", "word_function", "min_letters", "takes_rate", "description"]
    assert {"group", "shipped_rates", "table_rates", "identity"} <= set(names)
    for key, family in FAMILIES.items():
        assert key == family.name
        assert family.group in {"paper", "letters", "typo", "training"}
        assert family.description and "\n" not in family.description
        # a rate family writes its rate into the description as NN; the others have none
        assert ("NN" in family.description) == family.takes_rate, family.name
        assert callable(family.word_function)
        assert all(0 < rate <= 100 for rate in family.shipped_rates)


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=60), seed=st.integers(min_value=0, max_value=2**31), key=st.text(max_size=8))
def test_an_identity_family_leaves_every_text_and_draws_nothing(text, seed, key):
    identities = [family for family in FAMILIES.values() if family.identity]
    assert identities

    def no_stream(*args, **kwargs):
        raise AssertionError("an identity family drew a random stream")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scrambler, "text_rng", no_stream)
        for family in identities:
            assert family.word_function("scramble", random.Random(seed)) == "scramble"
            assert scrambler.scramble_many(text, [family.name], seed=seed, sample_id=key, place="text") == [
                text
            ]


def test_the_families_that_change_text_still_draw(monkeypatch):
    calls = []
    real = scrambler.text_rng

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(scrambler, "text_rng", counted)
    changing = [name for name in ALL_TYPES if not FAMILIES[families.parse_type(name).family].identity]
    scrambler.scramble_many("A scrambled sentence", changing, seed=0, sample_id="x", place="text")
    assert {args[3] for args in calls} == {families.parse_type(name).family for name in changing}


def _literal_comparisons(tree: ast.AST) -> list[tuple[int, str]]:
    names = set(FAMILIES) | set(ALL_TYPES)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        for operand in (node.left, *node.comparators):
            literals = operand.elts if isinstance(operand, ast.Tuple | ast.List | ast.Set) else [operand]
            for literal in literals:
                if isinstance(literal, ast.Constant) and literal.value in names:
                    found.append((node.lineno, literal.value))
    return found


def test_no_builder_module_compares_a_type_or_family_name():
    """Code that treats types differently asks their records: no ``== "original"``, no ``in ("kf", "kfl")``."""
    found = {
        f"{path.relative_to(BUILDER)}:{line} {name!r}"
        for path in BUILDER.rglob("*.py")
        for line, name in _literal_comparisons(ast.parse(path.read_text(encoding="utf-8")))
    }
    assert not found
