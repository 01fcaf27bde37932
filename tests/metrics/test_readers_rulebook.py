"""The rulebook (docs/readers_disagreements.md) and the readers' code name the same rules.

Every rule a reader can give a reading is found in the code itself (its abstract syntax tree, not a list
kept by hand beside it), and must have its own section in the rulebook; every section must be a rule the
code gives. The careful reader's declared lists (``CHOICE_RULES``, ``RECOVERY_RULES``) must be those rules
too, so the corpus test's coverage check is made against the real set.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from scrambled_bench.metrics.readers import careful, paper, recovery

REPO = Path(__file__).resolve().parents[2]
RULEBOOK = REPO / "docs" / "readers_disagreements.md"
# A rule's section in the rulebook: a heading that is the rule's name in backticks ("### `cycle`").
RULE_HEADING = re.compile(r"^#{3,4} `([a-z]+(?:-[a-z]+)*)`", re.MULTILINE)


def _constants(node: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def rules_in_code(path: Path) -> set[str]:
    """The rule names a reader module gives its readings.

    Found where a rule name can enter a reading: the ``rule`` argument of ``Reading(...)``; an argument
    bound to a parameter called ``rule`` of a function of the module; a ``for rule in (...)`` loop; a step
    appended to the list of applied steps (``applied.append(...)``); and a comparison with a reading's rule
    (``reading.rule not in (...)``).
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    rule_parameter = {
        node.name: [a.arg for a in node.args.args].index("rule")
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and "rule" in [a.arg for a in node.args.args]
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name == "Reading" and len(node.args) > 1:
                found |= _constants(node.args[1])
            if name in rule_parameter and len(node.args) > rule_parameter[name]:
                found |= _constants(node.args[rule_parameter[name]])
            if name == "append" and getattr(node.func.value, "id", None) == "applied":
                found |= _constants(node.args[0])
            found |= {c for k in node.keywords if k.arg == "rule" for c in _constants(k.value)}
        elif isinstance(node, ast.For) and getattr(node.target, "id", None) == "rule":
            found |= _constants(node.iter)
        elif isinstance(node, ast.Compare) and getattr(node.left, "attr", None) == "rule":
            found |= {c for comparator in node.comparators for c in _constants(comparator)}
    return found


def rules_in_rulebook() -> list[str]:
    return RULE_HEADING.findall(RULEBOOK.read_text(encoding="utf-8"))


CODE_RULES = {
    "careful": rules_in_code(Path(careful.__file__)) | rules_in_code(Path(recovery.__file__)),
    "paper": rules_in_code(Path(paper.__file__)),
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
    assert set(sections) == CODE_RULES["careful"] | CODE_RULES["paper"]


def test_the_declared_rules_are_the_rules_in_the_code():
    assert len(set(careful.CHOICE_RULES)) == len(careful.CHOICE_RULES)
    assert set(careful.CHOICE_RULES) | set(recovery.RECOVERY_RULES) == CODE_RULES["careful"]
