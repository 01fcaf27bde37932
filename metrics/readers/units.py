"""What every named rule of the careful reader is: a :class:`Rule`, with its name, the patterns it looks for,
the rule names its readings carry, and a docstring with an example. The reader runs its rules in the orders
declared in :mod:`~scrambled_bench.metrics.readers.careful` (as lm-evaluation-harness runs its registered
filters), and the rulebook, docs/readers/rules.md, has a section for each name."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar


class Rule:
    """A named rule of the careful reader.

    ``name`` is its name, a section of the rulebook; ``gives`` the rule names the readings it decides may
    carry (its own name, and others where it can decline to read: a letter outside the choices, a letter
    given another choice's text); ``patterns`` the compiled patterns it matches, its own and shared ones.
    A rule that gives no reading of its own (a step that prepares the text, an exemption) gives nothing.

    >>> class Shout(Rule):
    ...     name = "shout"
    ...     patterns = (re.compile("!"),)
    >>> Shout(), Shout().gives
    (<rule shout>, ('shout',))
    """

    name: ClassVar[str]
    patterns: ClassVar[tuple[re.Pattern[str], ...]] = ()
    also_gives: ClassVar[tuple[str, ...]] = ()
    gives_own: ClassVar[bool] = True
    reads_content: ClassVar[bool] = False
    """Whether the rule reads an answer by the content of a choice (which a scrambled echo never states)."""
    weighs_what_follows: ClassVar[bool] = False
    """Whether the check weighs what an output says after its answer (which an answer given twice keeps)."""

    @property
    def gives(self) -> tuple[str, ...]:
        """The rule names the readings this rule decides may carry."""
        return ((self.name,) if self.gives_own else ()) + self.also_gives

    def __repr__(self) -> str:
        return f"<rule {self.name}>"


@dataclass
class Verdict:
    """What the search for an answer noticed on its way: whether an answer was offered beside another, whether
    recitals of the options were set aside, and whether the output is a scrambled echo of the evidence."""

    hedged: bool = False
    recited: bool = False
    scrambled: bool = False
