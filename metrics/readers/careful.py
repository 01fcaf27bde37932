"""The ``careful`` reader (the default): what a careful human reader would read in a ScrQA answer; its
ScrRec side is :mod:`scrambled_bench.metrics.readers.recovery`.

Its rules are named units (:class:`~scrambled_bench.metrics.readers.units.Rule`: a name, the patterns it
looks for, what it reads, a docstring with an example), in ``rules.py`` (zero-shot), ``checks.py`` (the checks
on an answer read), ``chain.py`` (a worked solution) and here (the prompt's echo). This module declares the
orders they run in, as lm-evaluation-harness declares the filters of a task, and :data:`RULES` registers
every one by name; the rulebook, docs/readers/rules.md, has a section for each.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from scrambled_bench.metrics.readers.chain import BOXED, LAST_SENTENCE_LETTER, LAST_STATEMENT
from scrambled_bench.metrics.readers.checks import (
    ANOTHER_COMMITMENT,
    ANSWER_GIVEN_TWICE,
    CONTENT_AFTER_ANSWER,
    ECHO_AFTER_ANSWER,
    FIRST_LINE_ANSWER,
    LETTER_TEXT_CONFLICT_RESOLVED,
    NO_CHOICE_FITS,
    TOUR,
    WEIGHED_APART,
    Answer,
)
from scrambled_bench.metrics.readers.common import Reading, check_arguments, check_output, parse_choices
from scrambled_bench.metrics.readers.letters import cut, mismatched_pairs, read_stated
from scrambled_bench.metrics.readers.question import Choices
from scrambled_bench.metrics.readers.recovery import read_recovery
from scrambled_bench.metrics.readers.rules import (
    ANSWER_IS,
    ANSWER_LABEL,
    CHOICE_MENTION,
    CHOICE_PARAPHRASE,
    CHOICE_TEXT,
    CUT_OFF_LEAD_IN,
    DIALOGUE_ECHO,
    HEDGE,
    LEADING_LETTER,
    NAMED_LETTER_RULE,
    NO_ANSWER,
    PROMPT_ECHO,
    RECITAL,
    SCRAMBLED_ECHO,
)
from scrambled_bench.metrics.readers.shapes import prepare, statements
from scrambled_bench.metrics.readers.units import Rule, Verdict

_CHOICES = Choices(["Amazon", "Microsoft", "Meta", "Google"])  # the examples' question
# leading punctuation, bullets, arrows and emoji ("✅ B", "-> (C)") carry no answer
_LEADING_SYMBOLS = re.compile(r"^[^\w(\[{\"'\\$]+")


class Empty(Rule):
    """Nothing but whitespace, punctuation and markdown (which :func:`~.shapes.prepare` has dropped): no answer.

    >>> EMPTY.holds(" . \\n"), EMPTY.holds(" B")
    (True, False)
    """

    name = "empty"

    def holds(self, text: str) -> bool:
        return not text.strip(" \t\r\n.,:;-")


_ECHOED_CHOICES = re.compile(r"(?:Choices|Options)\s*:[^\n]*")


class AnswerAfterEcho(Rule):
    """Nothing answered before the model began to repeat the prompt, but the echo restates this very question
    (its "Choices:" line has these choices) and then answers it: the answer after it, read like a whole
    output. An echo without a "Choices:" line (a cited "Evidence:") is read only for a statement that commits
    to an answer.

    >>> echo = "Question: Who?\\nChoices: (A)Amazon (B)Microsoft (C)Meta (D)Google\\nAnswer: (C)"
    >>> ANSWER_AFTER_ECHO.read(echo, _CHOICES, CarefulReader()._read_zero_shot, chain_of_thought=False)
    Reading(value='C', rule='answer-after-echo')
    """

    name = "answer-after-echo"
    patterns = (_ECHOED_CHOICES,)

    @staticmethod
    def restated(
        echo: str, choices: Choices, read: Callable[[str, Choices], Reading], *, dialogue: bool = False
    ) -> Reading | None:
        """What the answer after the echo's "Choices:" line reads, where they are this question's choices (the
        last possibly cut off); None where the echo has no such line, or lists other choices (a new question
        the model made up)."""
        echoed = _ECHOED_CHOICES.search(echo)
        if not echoed:
            return None
        listed = parse_choices("Choices:" + echoed.group().split(":", 1)[1])
        if listed and not choices.same_as(listed):
            return None
        rest = echo[echoed.end() :]
        following = PROMPT_ECHO.start(rest, dialogue=dialogue)
        return read(rest[:following] if following is not None else rest, choices)

    def read(
        self,
        echo: str,
        choices: Choices,
        read: Callable[[str, Choices], Reading],
        *,
        chain_of_thought: bool,
        dialogue: bool = False,
    ) -> Reading | None:
        if _ECHOED_CHOICES.search(echo):
            reading = self.restated(echo, choices, read, dialogue=dialogue)
        else:
            verdict = Verdict()
            found = statements(echo)
            if chain_of_thought:  # a worked solution states its answer last
                found.reverse()
            readings = (read_stated(echo[statement.end() :], choices, verdict) for statement in found)
            reading = next((reading for reading in readings if reading is not None), None)
        if reading is None or reading.value is None:
            return None
        return Reading(reading.value, self.name)


class EchoAnswerConflict(Rule):
    """A zero-shot answer given before the model repeats the prompt, when the repeated prompt restates this very
    question (its "Choices:" line has these choices) and answers it with another choice, commits to neither:
    "They will go to the museum.\\n\\nQuestion: ...\\nChoices: (A)... \\nAnswer: ... the answer is (B)" reads
    none. An echo that answers the same, or answers nothing, or asks another question, takes nothing back.

    >>> echo = "Question: Who?\\nChoices: (A)Amazon (B)Microsoft (C)Meta (D)Google\\nAnswer: (C)"
    >>> reader = CarefulReader()._read_zero_shot
    >>> ECHO_ANSWER_CONFLICT.check(Reading("B", "choice-mention"), echo, _CHOICES, reader)
    Reading(value=None, rule='echo-answer-conflict')
    >>> ECHO_ANSWER_CONFLICT.check(Reading("C", "choice-mention"), echo, _CHOICES, reader) is None
    True
    """

    name = "echo-answer-conflict"
    patterns = (_ECHOED_CHOICES,)

    def check(
        self,
        reading: Reading,
        echo: str,
        choices: Choices,
        read: Callable[[str, Choices], Reading],
        *,
        dialogue: bool = False,
    ) -> Reading | None:
        restated = ANSWER_AFTER_ECHO.restated(echo, choices, read, dialogue=dialogue)
        if restated is not None and restated.value is not None and restated.value != reading.value:
            return Reading(None, self.name)
        return None


EMPTY = Empty()
ANSWER_AFTER_ECHO = AnswerAfterEcho()
ECHO_ANSWER_CONFLICT = EchoAnswerConflict()

# ------------------------------------------------------------------ the declared orders

#: Zero-shot (RealtimeQA, DREAM): what is done to the output before any rule reads it, in order. The whole
#: output may be one choice's text (which reads it); recitals of the options are set aside; an opening "A:"
#: followed by text, an answer label, is dropped.
PREPARATION: tuple[Rule, ...] = (CHOICE_TEXT, RECITAL, ANSWER_LABEL)
#: Zero-shot: the rules that read an answer, in priority order; the first that reads decides. The content
#: rules (``reads_content``) are not tried on a scrambled echo of the evidence.
READING: tuple[Rule, ...] = (
    LEADING_LETTER,
    CUT_OFF_LEAD_IN,
    CHOICE_TEXT,
    ANSWER_IS,
    NAMED_LETTER_RULE,
    CHOICE_MENTION,
    CHOICE_PARAPHRASE,
)
#: Zero-shot: the checks an answer read must pass, in order; the first that objects gives the reading. The
#: checks that weigh what follows the answer are skipped where one of :data:`SETTLED` applies.
CHECKS: tuple[Rule, ...] = (NO_CHOICE_FITS, FIRST_LINE_ANSWER, ANOTHER_COMMITMENT, CONTENT_AFTER_ANSWER, TOUR)
#: Zero-shot: when what follows an answer is not weighed.
SETTLED: tuple[Rule, ...] = (ANSWER_GIVEN_TWICE, ECHO_AFTER_ANSWER)
# (What those checks set aside first, in order, is declared beside them: checks.WEIGHED_APART, the choices an
# output names only to reject them, which the content rules set aside too, and the sentences that give its
# letter again.)
#: Zero-shot: why nothing was read, in order; the first that explains it names the reading.
NOTHING_READ: tuple[Rule, ...] = (HEDGE, RECITAL, SCRAMBLED_ECHO, PROMPT_ECHO, NO_ANSWER)
#: AQuA (a worked solution): the rules that read its answer, in order; none read: ``no-answer``.
CHAIN_OF_THOUGHT: tuple[Rule, ...] = (LAST_STATEMENT, BOXED, LAST_SENTENCE_LETTER)
#: Every output: nothing in it, then where the echo of the prompt (or of the dialogue) starts; an answer before
#: the echo that the echo's restated question contradicts (zero-shot), and the answer after an echo where
#: nothing came before.
ECHO: tuple[Rule, ...] = (EMPTY, PROMPT_ECHO, DIALOGUE_ECHO, ECHO_ANSWER_CONFLICT, ANSWER_AFTER_ECHO)

#: Every named rule of the careful reader's ScrQA side, by name.
RULES: dict[str, Rule] = {
    rule.name: rule
    for rule in (
        *ECHO,
        *PREPARATION,
        *READING,
        SCRAMBLED_ECHO,
        *CHECKS,
        *SETTLED,
        *WEIGHED_APART,
        LETTER_TEXT_CONFLICT_RESOLVED,
        *NOTHING_READ,
        *CHAIN_OF_THOUGHT,
    )
}

#: The rules a ScrQA reading names: those that read a letter, then those that say why none was read. Each is
#: a section of the rulebook, docs/readers/rules.md, and a test keeps the two in step.
CHOICE_RULES = (
    "choice-text",
    "leading-letter",
    "cut-off-lead-in",
    "answer-is",
    "named-letter",
    "choice-mention",
    "choice-paraphrase",
    "boxed",
    "answer-after-echo",
    "letter-text-conflict-resolved",
    # no answer, and why
    "empty",
    "prompt-echo",
    "scrambled-echo",
    "recital",
    "hedge",
    "ambiguous",
    "cycle",
    "letter-text-conflict",
    "letter-outside-choices",
    "echo-answer-conflict",
    "no-answer",
)


class CarefulReader:
    """What a careful human reader reads as the model's answer. The rulebook, docs/readers/rules.md, has every
    rule with an example and how it differs from the paper's parse.

    ScrQA on RealtimeQA and DREAM (zero-shot):

    1. :data:`ECHO`: an empty output is "empty"; only what comes before the model starts repeating the prompt
       counts ("B. Question: ..." reads B), and where nothing before it answers, the echo may restate this
       very question and answer it ("answer-after-echo"), or be only an echo ("prompt-echo").
    2. :data:`PREPARATION`: the whole output one choice's text ("choice-text"); recitals of the options set
       aside; an opening "A:" that labels an answer dropped.
    3. :data:`READING`: the rules that read an answer, in priority order; the first that reads decides.
    4. :data:`CHECKS`: an answer read is no commitment when the output says no choice fits, gives another
       answer on its first line, commits to another choice elsewhere ("cycle"), or goes on to state other
       choices' content; what follows an answer given twice, or a scrambled echo, is not weighed
       (:data:`SETTLED`). A letter given with another choice's words is a mismatched pair
       ("letter-text-conflict"): the output is read again without such pairs, and a stated answer of the rest
       that is one of a pair's two choices mends them ("letter-text-conflict-resolved").
    5. :data:`NOTHING_READ`: why nothing was read.

    AQuA (chain of thought): the echo's cut, then :data:`CHAIN_OF_THOUGHT`, else "no-answer". A worked
    solution may correct itself: no cycle is looked for.

    Knowingly left unread (no answer rather than a guess): a bare lower-case letter ("b"), part of a
    choice's text ("A restaurant" for "At a restaurant."), half of a choice's distinctive words ("Burgers"
    for "Burger King"), a choice mentioned once inside a longer explanation, a synonym beyond a shared stem
    or world knowledge ("the Crucible" for the World Snooker Championship), an equivalent quantity ("2
    hours and 30 minutes" for "2.5 hours").

    ScrRec: see :meth:`read_recovery`.

    >>> careful = CarefulReader()
    >>> choices = ["Salad dressing", "Baby formula", "Ground beef", "Whole milk"]
    >>> careful.read_choice("**B**", choices, dataset="realtimeqa")
    Reading(value='B', rule='leading-letter')
    >>> careful.read_choice(" B.\\nQuestion: Which product ...", choices, dataset="realtimeqa")
    Reading(value='B', rule='leading-letter')
    >>> careful.read_choice("“Ground beef”", choices, dataset="realtimeqa")
    Reading(value='C', rule='choice-text')
    >>> careful.read_choice("Based on the evidence, the answer is (D).", choices, dataset="realtimeqa")
    Reading(value='D', rule='answer-is')
    >>> careful.read_choice("(C) Baby formula", choices, dataset="realtimeqa")
    Reading(value=None, rule='letter-text-conflict')
    >>> careful.read_choice("Baby formula\\n\\nThe answer is (C) Baby formula.", choices, dataset="realtimeqa")
    Reading(value='B', rule='letter-text-conflict-resolved')
    >>> careful.read_choice("(A) or (B)", choices, dataset="realtimeqa")
    Reading(value=None, rule='hedge')
    >>> careful.read_choice("A map is not mentioned.", choices, dataset="realtimeqa")
    Reading(value=None, rule='no-answer')
    >>> careful.read_choice("x = 12, so the answer is \\\\boxed{E}.", list("12345"), dataset="aqua")
    Reading(value='E', rule='answer-is')
    """

    name = "careful"

    def read_choice(self, output: str, choices: Sequence[str], *, dataset: str) -> Reading:
        """The letter a careful human reads as ``output``'s answer; ``value`` None with the reason."""
        answer_format = check_arguments(output, choices, dataset)
        options = Choices(choices)
        text = prepare(output)
        if EMPTY.holds(text):
            return Reading(None, EMPTY.name)
        dialogue = answer_format.context_marker == "Dialogue: "  # DREAM's questions come with a dialogue
        start = PROMPT_ECHO.start(text, dialogue=dialogue)
        region = text if start is None else text[:start]
        chain_of_thought = answer_format.chain_of_thought
        read = self._read_chain_of_thought if chain_of_thought else self._read_zero_shot
        reading = read(region, options)
        if reading.value is not None and start is not None and not chain_of_thought:
            # the echo may restate this very question and answer it otherwise
            conflict = ECHO_ANSWER_CONFLICT.check(reading, text[start:], options, read, dialogue=dialogue)
            return conflict or reading
        if reading.value is not None or start is None or reading.rule not in ("no-answer", "hedge"):
            return reading
        # Nothing answered before the model began to repeat the prompt: it may have restated this question
        # and answered it, or only echoed the prompt (or asked a new question) and never answered.
        after_echo = ANSWER_AFTER_ECHO.read(
            text[start:], options, read, chain_of_thought=chain_of_thought, dialogue=dialogue
        )
        if after_echo is not None:
            return after_echo
        return reading if region.strip(" \t\r\n.,:;-\"'()") else Reading(None, PROMPT_ECHO.name)

    # ------------------------------------------------------------ zero-shot

    def _read_zero_shot(self, region: str, choices: Choices) -> Reading:
        text = _LEADING_SYMBOLS.sub("", region.strip())
        if not text:
            return Reading(None, NO_ANSWER.name)
        whole = CHOICE_TEXT.whole(text, choices)
        if whole is not None:
            return whole
        text, recited = RECITAL.set_aside(text, choices)
        text = ANSWER_LABEL.apply(_LEADING_SYMBOLS.sub("", text.strip()), choices)
        reading = self._read_by_rules(text, choices, recited)
        if reading.rule != "letter-text-conflict":
            return reading
        # A letter given with another choice's words commits to neither; what the rest of the output commits
        # to, if it commits to exactly one choice, is the answer ("Baltimore\n\nThe answer is (B) Baltimore"
        # with Baltimore C reads C).
        pairs = mismatched_pairs(text, choices)
        if not pairs:
            return reading
        rest = cut(text, [(pair.start, pair.end) for pair in pairs])
        resolved = self._read_by_rules(_LEADING_SYMBOLS.sub("", rest.strip()), choices, recited)
        if not LETTER_TEXT_CONFLICT_RESOLVED.mends(resolved, rest, pairs, choices):
            return reading
        return Reading(resolved.value, LETTER_TEXT_CONFLICT_RESOLVED.name)

    @staticmethod
    def _read_by_rules(text: str, choices: Choices, recited: bool) -> Reading:
        verdict = Verdict(recited=recited)
        looked_for_echo = False
        for rule in READING:  # in priority order; a hedge seen on the way is remembered in the verdict
            # a scrambled echo of the evidence states no choice by its content, whatever words it shares with
            # one (looked for only once no letter rule has read, as most outputs are read before)
            if rule.reads_content and not looked_for_echo:
                looked_for_echo = True
                verdict.scrambled = SCRAMBLED_ECHO.holds(text)
                if verdict.scrambled:
                    break
            reading = rule.read(text, choices, verdict)
            if reading is not None:
                if reading.value is not None:
                    return _checked(reading, text, choices)
                return reading
        for why in NOTHING_READ:  # the last, no-answer, explains anything
            if why.explains(text, verdict):
                return Reading(None, why.name)
        raise AssertionError("no-answer explains anything")  # pragma: no cover

    # ------------------------------------------------------------ chain of thought

    @staticmethod
    def _read_chain_of_thought(region: str, choices: Choices) -> Reading:
        for rule in CHAIN_OF_THOUGHT:
            reading = rule.read(region, choices)
            if reading is not None:
                return reading
        return Reading(None, NO_ANSWER.name)

    # ------------------------------------------------------------ ScrRec

    def read_recovery(self, output: str) -> Reading:
        """The recovered sentence of a ScrRec ``output``, without what a chat model wraps around it.

        Steps, in order; ``rule`` names the first that changed anything ("plain" when none did):

        1. "prompt-continuation": cut where the model goes on with the prompt's format ("Scrambled
           sentence: ..."); if the output begins by restating the scrambled input, the part from its
           "Recovered sentence:" on is kept instead. An output that begins with "The scrambled sentence:"
           and never says "Recovered sentence:" has only mislabelled its answer ("preamble").
        2. "code-fence": the content of the first ```` ``` ```` block.
        3. "preamble": a lead-in such as "Here is the recovered sentence:", "Recovered sentence:" or
           "Sure! The original sentence is:", on its own line or before the sentence.
        4. "trailing-note": a following line that comments ("Note: I corrected ...", "I unscrambled ...",
           "Let me know ..."), or such a note in parentheses or after "Note:" at the end of the sentence.
        5. "quotes": quote marks (ASCII, typographic, guillemets) or ``**`` that wrap the whole sentence, not
           those that belong to it (``"We won," he said.`` keeps its quotes).

        Surrounding whitespace goes too; the sentence itself is kept byte for byte. Nothing left: ``None``
        ("empty").

        >>> careful = CarefulReader()
        >>> careful.read_recovery("Here is the recovered sentence:\\n\\n“The cat sat on the mat.”")
        Reading(value='The cat sat on the mat.', rule='preamble')
        >>> careful.read_recovery("The cat sat.\\n\\nNote: I corrected the spelling of 'cat'.").value
        'The cat sat.'
        >>> careful.read_recovery(" The cat sat.\\nScrambled sentence: Teh dgo")
        Reading(value='The cat sat.', rule='prompt-continuation')
        >>> careful.read_recovery("   ")
        Reading(value=None, rule='empty')
        """
        check_output(output)
        return read_recovery(output)


def _checked(reading: Reading, text: str, choices: Choices) -> Reading:
    """``reading``, a zero-shot answer, after :data:`CHECKS`: no answer, and why, where one objects."""
    answer = Answer(reading.value, text, choices)
    for check in CHECKS:
        if check.weighs_what_follows and any(rule.applies(answer) for rule in SETTLED):
            return reading
        objection = check.check(answer)
        if objection is not None:
            return objection
    return reading
