"""The rulebook (docs/readers/rules.md) and the readers' code name the same rules.

Every rule a reader can give a reading is found in the code itself (its abstract syntax tree, not a list
kept by hand beside it), and must have its own section in the rulebook, and so must every named rule unit
of the careful reader (``careful.RULES``); every section must be one of those. The careful reader's declared
lists (``CHOICE_RULES``, ``RECOVERY_RULES``) must be those rules too, so the corpus test's coverage check is
made against the real set, and each unit must declare (``Rule.gives``) every rule name its readings carry.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

from scrambled_bench.metrics.readers import careful, chain, checks, letters, paper, recovery, rules
from scrambled_bench.metrics.readers.units import Rule

REPO = Path(__file__).resolve().parents[2]
RULEBOOK = REPO / "docs" / "readers" / "rules.md"
# A rule's section in the rulebook: a heading that is the rule's name in backticks ("### `cycle`").
RULE_HEADING = re.compile(r"^#{3,4} `([a-z]+(?:-[a-z]+)*)`", re.MULTILINE)


def _constants(node: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def rules_in_code(module) -> set[str]:
    """The rule names a reader module gives its readings.

    Found where a rule name can enter a reading: the ``rule`` argument of ``Reading(...)``; an argument
    bound to a parameter called ``rule`` of a function of the module; a ``for rule in (...)`` loop; a step
    appended to the list of applied steps (``applied.append(...)``); and a comparison with a reading's rule
    (``reading.rule not in (...)``). A rule unit's name enters a reading as ``RULE.name``: ``self.name``
    inside the unit's class (its ``name = "..."``), the name of a unit the module holds (``EMPTY.name``), or
    of each unit of a declared tuple a loop goes through (``for why in NOTHING_READ: ... why.name``).
    """
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    return _rules_in(tree, module)


def _unit_names(tree: ast.AST) -> list[tuple[ast.ClassDef, str]]:
    """Each class of the module that assigns itself a ``name = "..."``, with that name."""
    return [
        (node, statement.value.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for statement in node.body
        if isinstance(statement, ast.Assign)
        and [getattr(target, "id", None) for target in statement.targets] == ["name"]
        and isinstance(statement.value, ast.Constant)
    ]


def _unit_name_reads(tree: ast.AST, module) -> dict[ast.AST, set[str]]:
    """Each ``X.name`` of the module that names a rule unit, with the names it can be: see :func:`rules_in_code`."""
    names: dict[ast.AST, set[str]] = {}
    for unit, name in _unit_names(tree):
        for node in ast.walk(unit):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "name"
                and getattr(node.value, "id", None) == "self"
            ):
                names[node] = {name}
    for loop in ast.walk(tree):
        declared = getattr(module, getattr(getattr(loop, "iter", None), "id", ""), None)
        if isinstance(loop, ast.For) and isinstance(declared, tuple) and isinstance(loop.target, ast.Name):
            for node in ast.walk(loop):
                if (
                    isinstance(node, ast.Attribute)
                    and node.attr == "name"
                    and getattr(node.value, "id", None) == loop.target.id
                ):
                    names[node] = {unit.name for unit in declared}
    for node in ast.walk(tree):
        held = getattr(module, getattr(getattr(node, "value", None), "id", ""), None)
        if isinstance(node, ast.Attribute) and node.attr == "name" and isinstance(held, Rule):
            names.setdefault(node, {held.name})
    return names


def _rules_in(tree: ast.AST, module, *, given_only: bool = False) -> set[str]:
    """The rule names :func:`rules_in_code` finds under ``tree``; with ``given_only``, only where a reading is
    given one (not where a reading's rule is compared, nor a loop's)."""
    unit_names = _unit_name_reads(ast.parse(Path(module.__file__).read_text(encoding="utf-8")), module)
    by_position = {(node.lineno, node.col_offset): found for node, found in unit_names.items()}

    def given(node: ast.AST) -> set[str]:
        found = _constants(node)
        for child in ast.walk(node):
            if isinstance(child, ast.Attribute) and child.attr == "name":
                found |= by_position.get((child.lineno, child.col_offset), set())
        return found

    rule_parameter = {
        node.name: [a.arg for a in node.args.args].index("rule")
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and "rule" in [a.arg for a in node.args.args]
    }
    # and the functions the module imports that take a rule ("judge_letter(letter, rest, self.name, ...)")
    rule_parameter |= {
        name: list(inspect.signature(function).parameters).index("rule")
        for name, function in vars(module).items()
        if inspect.isfunction(function) and "rule" in inspect.signature(function).parameters
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name == "Reading" and len(node.args) > 1:
                found |= given(node.args[1])
            if name in rule_parameter and len(node.args) > rule_parameter[name]:
                found |= given(node.args[rule_parameter[name]])
            if name == "append" and getattr(node.func.value, "id", None) == "applied":
                found |= _constants(node.args[0])
            found |= {c for k in node.keywords if k.arg == "rule" for c in given(k.value)}
        elif given_only:
            continue
        elif isinstance(node, ast.For) and getattr(node.target, "id", None) == "rule":
            found |= _constants(node.iter)
        elif isinstance(node, ast.Compare) and getattr(node.left, "attr", None) == "rule":
            found |= {c for comparator in node.comparators for c in _constants(comparator)}
    return found


def rules_in_rulebook() -> list[str]:
    return RULE_HEADING.findall(RULEBOOK.read_text(encoding="utf-8"))


CAREFUL_MODULES = (careful, rules, checks, chain, letters, recovery)
CODE_RULES = {
    "careful": set().union(*map(rules_in_code, CAREFUL_MODULES)),
    "paper": rules_in_code(paper),
}


def test_the_code_scan_finds_the_rules():
    """A guard on the scan itself: it finds rules of every kind of place (none found would pass trivially)."""
    assert {"leading-letter", "cut-off-lead-in", "cycle", "choice-paraphrase", "boxed"} <= CODE_RULES[
        "careful"
    ]
    assert {"plain", "preamble", "quotes", "trailing-note", "empty"} <= CODE_RULES["careful"]
    assert {"paper-none", "paper-choice-text", "paper-first-letter", "paper-answer-is"} <= CODE_RULES["paper"]


def test_every_rule_in_the_code_has_a_section_in_the_rulebook_and_no_other():
    sections = rules_in_rulebook()
    assert len(sections) == len(set(sections)), "a rule has two sections"
    assert set(sections) == CODE_RULES["careful"] | CODE_RULES["paper"] | set(careful.RULES)


def test_the_declared_rules_are_the_rules_in_the_code():
    assert len(set(careful.CHOICE_RULES)) == len(careful.CHOICE_RULES)
    assert set(careful.CHOICE_RULES) | set(recovery.RECOVERY_RULES) == CODE_RULES["careful"]
    declared = {name for unit in careful.RULES.values() for name in unit.gives}
    assert declared == set(careful.CHOICE_RULES)


def test_every_rule_unit_is_registered_and_declares_the_rule_names_its_readings_carry():
    """Each class of the careful reader's modules that names itself is a unit of ``careful.RULES``, and every
    rule name its code gives a reading (a literal, or its own name) is among the names it declares. A check
    (``careful.CHECKS``) may read a passage as a reading rule would (a line's letter as a leading letter) to
    find another commitment; it gives only its objections, so those probes may name any reading rule."""
    registered = {type(unit): name for name, unit in careful.RULES.items()}
    for module in CAREFUL_MODULES[:-1]:  # recovery.py's steps are functions, not units
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        for node, name in _unit_names(tree):
            unit = getattr(module, node.name)
            if not issubclass(unit, Rule):
                continue  # the reader itself ("careful")
            assert registered.get(unit) == name, f"{module.__name__}.{node.name} is not in careful.RULES"
            given = _rules_in(node, module, given_only=True)
            probes = set(careful.CHOICE_RULES) if careful.RULES[name] in careful.CHECKS else set()
            assert given <= set(careful.RULES[name].gives) | probes, (name, given)


HISTORY = REPO / "docs" / "readers" / "history.md"
# A relative link of the two pages: "[`cycle`](#cycle)", "[the history](history.md)", "(rules.md#tour)".
LINK = re.compile(r"\]\((?P<page>[a-z]+\.md)?(?:#(?P<anchor>[a-z0-9-]+))?\)")


def test_the_rulebook_and_its_history_link_each_other_and_every_link_lands():
    """rules.md and history.md link each other with relative links, and a link to an entry names a heading
    of the page it points at (a rule's heading is its name, which is its anchor)."""
    pages = {"rules.md": RULEBOOK, "history.md": HISTORY}
    anchors = {
        name: set(RULE_HEADING.findall(path.read_text(encoding="utf-8"))) for name, path in pages.items()
    }
    for name, path in pages.items():
        links = [link.groupdict() for link in LINK.finditer(path.read_text(encoding="utf-8"))]
        other = "history.md" if name == "rules.md" else "rules.md"
        assert any(link["page"] == other for link in links), f"{name} does not link {other}"
        for link in links:
            page = link["page"] or name
            assert page in pages, link
            assert link["anchor"] is None or link["anchor"] in anchors[page], link
