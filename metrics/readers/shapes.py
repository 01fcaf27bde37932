"""The shapes of text that several of the careful reader's rules look for: a letter in its common forms, a
statement that commits to an answer, a negation, a sentence's end; and the small pure functions over them.

A pattern that only one rule uses lives with that rule (``rules.py``, ``checks.py``, ``careful.py``); the
ones here are shared. Model output is only ever matched with these and compared as text, never run.
"""

from __future__ import annotations

import itertools
import re

# ------------------------------------------------------------------ normalising the output

# Typographic and guillemet quotes read as their ASCII counterparts.
QUOTES = str.maketrans(
    {
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\uff02": '"',
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2039": "'",
        "\u203a": "'",
    }
)
# An emphasised letter ("**B**", "*(B)*", "`C`", "__A.__") is a strong way of naming it: made "(B)" before
# the remaining markdown marks are dropped, so that it stays distinguishable from an article.
_EMPHASISED_LETTER = re.compile(r"(\*{1,3}|_{1,3}|`+)\s*[(\[]?([A-E])[)\]]?[.:]?\s*\1(?![*_`])")
_MARKDOWN = re.compile(r"\*+|`+|_{2,}|^[ \t]*#+[ \t]*|^[ \t]*>[ \t]*", re.MULTILINE)
# "among A through D" (the prompt's own wording, often repeated) names letters without choosing one.
_LETTER_RANGE = re.compile(r"\b(?:among|from)\s+\(?[A-E]\)?\s*(?:through|to|-|\u2013)\s*\(?[A-E]\)?")


def prepare(output: str) -> str:
    """Typographic quotes made ASCII, markdown dropped (an emphasised letter kept as "(B)"), and the prompt's
    "among A through D" made "among the choices".

    >>> prepare("**B** \u201cRed\u201d, among A through D")
    '(B) "Red", among the choices'
    """
    text = output.translate(QUOTES)
    text = _EMPHASISED_LETTER.sub(r"(\2)", text)
    return _LETTER_RANGE.sub("among the choices", _MARKDOWN.sub("", text))


# ------------------------------------------------------------------ letters

# A letter standing alone: what may follow it so that it is the letter and not the article "A" of
# "A map" or the initial of "D.C.".
_BARE_END = (
    # "C.Huntington Bank": a letter glued by its full stop to a capitalised word (not "D.C." or "U.S.")
    r"(?=\s*$|\s*\n|[):\]}]|[.,;!?](?![A-Za-z0-9])|\.(?=[A-Z][a-z])|\s*[\u2013\u2014]|\s+-\s|\s+\("
    r"|\s+(?:or|and|is|was|would|seems|appears|looks|fits|matches|because|since)\b)"
)
# A letter in any common quoting or bracketing, optionally inside LaTeX's \boxed{\textbf{...}}.
LETTER_FORM = re.compile(
    r"(?:\$?\\boxed\s*\{\s*(?:\\(?:text|textbf|mathrm|mathbf)\s*\{\s*)?)?"
    # in brackets a lower-case letter is a letter too ("(b)"), bare it is a word ("a map")
    r"(?:\(\s*(?P<round>[A-Ea-e])\s*\)|\[\s*(?P<square>[A-Ea-e])\s*\]|\{\s*(?P<curly>[A-E])\s*\}"
    r"|\"\s*(?P<double>[A-E])\s*\"|'\s*(?P<single>[A-E])\s*'|(?P<bare>[A-E])" + _BARE_END + ")"
)
# "A: The answer is ...": "A:" is the answer's label when an answer statement follows it.
A_LABEL_BEFORE_STATEMENT = r"(?i:(?:the\s+)?(?:correct\s+|final\s+|right\s+)?answer\b)"
# Labels that may stand before a leading letter: "Answer:", "Final answer -", "Option", "Choice".
LABEL = re.compile(
    r"(?:(?:the\s+)?(?:final|correct|best|right|my)\s+)?(?:answer|option|choice|letter)\b\s*[:\-=\u2013\u2014]?\s*"
    # "A: (C) Cook", "A: The answer is (B).": the "A:" of a "Q: ... A: ..." format, when another letter or
    # an answer statement follows it
    r"|(?-i:A)\s*:\s*(?=[(\[][A-E][)\]]|[A-E](?:[).:]|\s*$)|" + A_LABEL_BEFORE_STATEMENT + ")",
    re.IGNORECASE,
)
# Words that may stand between a label or an answer statement and the answer itself.
FILLER = re.compile(
    r"(?:\s|[:,=\-\u2013\u2014$]|\\[(\[]|\b(?:therefore|thus|so|then|clearly|probably|likely|most|definitely|certainly|"
    r"indeed|actually|approximately|about|around|roughly|closest\s+to|close\s+to|option|choice|letter|answer|"
    r"it'?s|it\s+is|that|either|both|between|maybe|perhaps|possibly|even)\b)*",
    re.IGNORECASE,
)
# A letter named in a way that cannot be an article or an initial, anywhere in the text.
NAMED_LETTER = re.compile(
    r"\((?P<round>[A-E])\)|\[(?P<square>[A-E])\]|\"(?P<double>[A-E])\"|'(?P<single>[A-E])'"
    r"|\b(?i:option|choice|letter|answer)\s+\(?(?P<labelled>[A-E])\b\)?"
    r"|\b(?P<verb>[A-E])\s+(?:is|seems|appears|looks|would\s+be)\s+(?:the\s+)?(?:most\s+)?"
    r"(?:correct|right|best|answer|likely|accurate|true)\b"
    # "..., the host who left the network, is D.": a bare letter is what the sentence ends by saying it is
    r"|\b(?:is|was)\s+(?P<copula>[A-E])(?=[ \t]*[.!]?[ \t]*(?:\n|$))"
    # a line that starts with the letter: "...explanation.\n\n**B) Microsoft**"
    r"|(?m:^[ \t]*(?P<line>[A-E])(?:[).:]|[ \t]*$))"
)
# A line that starts with a letter and its label ("B) Washington"): an answer given again, or another one.
LETTER_LINE = re.compile(
    r"^[ \t]*(?!A[ \t]*:[ \t]*" + A_LABEL_BEFORE_STATEMENT + ")"
    r"(?:A[ \t]*:[ \t]*(?=[(\[]?[A-E](?:[)\].:]|[ \t]*$)))?[(\[]?(?P<line>[A-E])(?:[)\].:]|\.(?=[A-Z][a-z])|[ \t]*$)",
    re.MULTILINE,
)
# A bracketed letter anywhere ("... (D)IOC"), and what may follow its choice's text for it to be a label.
LETTER_LABELS = re.compile(r"[(\[]([A-E])[)\]]")
LABEL_ENDS = re.compile(r"[\s.,;:!\"']*(?:$|\n|[(\[][A-E][)\]])")
# What may stand between a letter and the words that go with it ("C) 371 days", "(B): Microsoft").
AFTER_LETTER = " )].:-\u2013\u2014\t"


def letter_of(match: re.Match) -> str:
    """The letter a match of :data:`LETTER_FORM` or :data:`NAMED_LETTER` names, upper case.

    >>> letter_of(LETTER_FORM.match("(b) Bob"))
    'B'
    """
    return next(value for value in match.groupdict().values() if value).upper()


# ------------------------------------------------------------------ statements

# Statements that commit to an answer: "the answer is", "Answer:", "I'd go with", "I think it's".
ANSWER_STATEMENT = re.compile(
    # "The answer is based on the dialogue ...", "... is found in the passage" say where the answer comes from
    r"\b(?:answer|option|choice)(?:\s+(?:choice|option|letter))?\s*(?:is\b(?!\s+(?:based|found|derived)\s+(?:on|in|from)\b)"
    r"|would\s+be|should\s+be|must\s+be"
    r"|will\s+be|=)"
    # "Answer:", "Answer choice:", "Correct option:"; a bare "option:" introduces a list, not an answer
    r"|\banswer(?:\s+(?:choice|option|letter))?\s*:|\b(?:correct|final|best|right)\s+(?:option|choice)\s*:"
    r"|\b(?:closest|best|correct|right)\s+(?:one|match|fit)\s+is"
    # "it is closest to (A)", "the closest answer, which is (E)", "... = 0.4167, which is choice (B)"
    r"|\bclosest(?:\s+(?:answer|option|choice))*(?:\s*,?\s*which)?\s*(?:is|to|would\s+be)\b"
    r"|\bwhich\s+is\s+(?:answer\s+)?(?:choice|option)\b"
    # "The only choice that is a multiple of 36 is (A) 36.": a choice described, then its letter
    r"|\b(?:choices?|options?)\b[^.\n]{0,80}?\bis(?=\s+(?:choice\s+|option\s+)?[(\[][A-E][)\]])"
    # "..., so (B).", "Therefore, [C]": a conclusion that is only a letter
    r"|\b(?:so|therefore|thus|hence)\b,?(?=\s*(?:[(\[][A-E][)\]]|\$?\\boxed))"
    r"|\bI(?:\s+would|'d|\s+will|'ll)?\s+(?:go\s+with|choose|pick|select|opt\s+for)"
    r"|\bI(?:\s+(?:think|believe|guess|would\s+say)|'d\s+say)(?:\s+that)?(?:\s+it(?:'s|\s+is|\s+would\s+be))?",
    re.IGNORECASE,
)
HYPOTHETICAL = re.compile(r"\s*(?:if|suppose|assuming|had)\b", re.IGNORECASE)
# "Let's check each answer choice:" goes through the choices; it does not state one.
_NOT_A_STATEMENT_AFTER = re.compile(
    r"\b(?:each|every|all|other|possible|following|these|those)\s*$", re.IGNORECASE
)
SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
# How far after a letter or a statement the reader looks for the words that go with it (a choice's text,
# "or (B)"): far more than any choice's text, and it keeps reading a long degenerate output linear.
NEAR = 400


def statements(text: str) -> list[re.Match]:
    """The statements that commit to an answer in ``text``, in order of where they start.

    They may overlap: in "The closest answer choice to this value is (A)" both "closest ... to" (which
    reads nothing) and "choice ... is" (which reads A) are statements. Not statements: "Let's check each
    option:", a question ("Could the answer be (B)?") and a hypothesis ("If x were 4, the answer would be").

    >>> [m.group() for m in statements("Could the answer be (B)? The answer is (C).")]
    ['answer is']
    """
    found = []
    position = 0
    while match := ANSWER_STATEMENT.search(text, position):
        position = match.start() + 1
        if _NOT_A_STATEMENT_AFTER.search(text, max(0, match.start() - 12), match.start()):
            continue
        window = max(0, match.start() - 300)  # a sentence's start is looked for nearby only
        starts = [end.end() for end in SENTENCE_END.finditer(text, window, match.start())]
        sentence_start = starts[-1] if starts else window
        end = SENTENCE_END.search(text, match.end(), match.end() + NEAR)
        if end and text[end.start()] == "?":
            continue  # "Could the answer be (B)?" asks; it does not state
        if HYPOTHETICAL.match(text, sentence_start) and re.search(r"\bwould\b", match.group(), re.IGNORECASE):
            continue  # "If x were 4, the answer would be (B)."
        found.append(match)
    return found


# ------------------------------------------------------------------ words

_TOKEN = re.compile(r"[^\W_]+")
# The most words a choice's label may have after its letter ("C) 371 days"): longer, it is an explanation.
LABEL_WORDS = 12
# Words that, up to three words before a choice's text, keep it from being the answer ("never mentions
# Microsoft", "doesn't say", "whether it is").
_NEGATING = {"not", "no", "nor", "never", "neither", "than", "instead", "t", "cannot", "without", "except"}
_NEGATING |= {"whether", "if", "unlike"}


def tokens(text: str) -> list[str]:
    """Lower-case words and numbers: how a choice's text is compared, whatever its case and punctuation.

    >>> tokens("“Red squirrels.”")
    ['red', 'squirrels']
    """
    return _TOKEN.findall(text.translate(QUOTES).lower())


def words_after(text: str, count: int) -> str:
    """``text`` after its first ``count`` words (the words :func:`tokens` sees).

    >>> words_after("Red squirrels, said the man", 2)
    ', said the man'
    """
    if count <= 0:
        return text
    words = _TOKEN.finditer(text)  # quote marks are no words, so translating them would change nothing
    last = next(itertools.islice(words, count - 1, None), None)
    return text[last.end() :] if last else text


def sentence_rest(text: str) -> str:
    """The rest of the sentence ``text`` goes on with (its first ``NEAR`` characters at most).

    >>> sentence_rest(" Baltimore. Then more")
    ' Baltimore'
    """
    end = SENTENCE_END.search(text, 0, NEAR)
    return text[: end.start()] if end else text[:NEAR]


def line_of(text: str, start: int, end: int) -> tuple[int, int]:
    """Where the line (or lines) holding ``text[start:end]`` start and end.

    >>> line_of("one\\ntwo three\\nfour", 6, 7)
    (4, 13)
    """
    line_end = text.find("\n", end)
    return text.rfind("\n", 0, start) + 1, len(text) if line_end < 0 else line_end


def undenied(words: list[str], part: list[str]) -> list[int]:
    """Where the word sequence ``part`` starts in ``words``, where no negation comes in the three words before
    ("should not minimize the use of fossil fuels"); none for an empty ``part``.

    >>> undenied("he should not minimize fuels but start fuels".split(), ["minimize", "fuels"])
    []
    >>> undenied("start fuels now".split(), ["start", "fuels"])
    [0]
    """
    if not part:
        return []
    return [
        start
        for start in range(len(words) - len(part) + 1)
        if words[start : start + len(part)] == part and not _NEGATING & set(words[max(0, start - 3) : start])
    ]


def outermost(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The (start, end, letter) spans not inside another one: a choice inside the words of a longer one ("at
    seven" in "at seven fifty") is not mentioned itself. One sweep, so that a long output stays linear.

    >>> outermost([(0, 2, "B"), (0, 3, "C"), (5, 6, "A")])
    [(0, 3, 'C'), (5, 6, 'A')]
    """
    spans: dict[tuple[int, int], set[str]] = {}
    for start, end, letter in found:
        spans.setdefault((start, end), set()).add(letter)
    kept, reach = [], -1
    for (start, end), letters in sorted(spans.items(), key=lambda span: (span[0][0], -span[0][1])):
        if end > reach:  # not inside an earlier, longer span
            kept += [(start, end, letter) for letter in sorted(letters)] if len(letters) == 1 else []
            reach = end
    return kept


def short_sentences(text: str) -> list[str]:
    """``text`` cut at sentence ends and line breaks, without the parts that hold no word: how the rules
    that read a short answer count its sentences.

    >>> short_sentences("They are in a library. Really!\\n\\n-")
    ['They are in a library.', 'Really!']
    """
    return [part for part in re.split(r"(?<=[.!?])\s+|\n+", text.strip()) if tokens(part)]


# ------------------------------------------------------------------ a scrambled echo of the evidence

# A scrambled word a model copied from the evidence: a lower-case word that opens with consonants no English
# word opens with ("ttah", "hmwo", "rdnsoug"), or holds four consonants in a row ("omcndutse"), or none of
# a, e, i, o, u, y ("tcnp"), or a capital inside it ("seNapl", "iBtLyMpn", the substitution type's words).
# A capitalised word may be a name ("Nguyen", "Tsai"), so only its inner capitals count.
_WORD = re.compile(r"\b[A-Za-z]{3,}\b")
# fmt: off
_ONSETS = frozenset({
    "bl", "br", "ch", "cl", "cr", "dr", "dw", "fl", "fr", "gl", "gr", "gn", "kn", "kl", "kr", "ph", "pl", "pr",
    "ps", "qu", "sc", "sh", "sk", "sl", "sm", "sn", "sp", "st", "sw", "th", "tr", "tw", "wh", "wr", "sch", "scr",
    "shr", "spl", "spr", "str", "thr", "squ", "chr", "phr", "sph",
})
# fmt: on
_ONSET = re.compile(r"[^aeiouy]+")
_CONSONANT_RUN = re.compile(r"[^aeiouy]{4}")
_CAMEL_CASE = re.compile(r"(?:[A-Z][a-z]+)+")  # "McDonald", "PlayStation": names, not scrambles
# An output is a scrambled echo of the evidence when at least this many of its words, and this share of
# them, are scrambled; none of the SmolLM2 outputs on unscrambled evidence comes near.
_SCRAMBLED_WORDS = 3
_SCRAMBLED_SHARE = 0.1


#: The patterns a scrambled word is recognised by (see :func:`is_scrambled`).
SCRAMBLED_WORD = (_WORD, _ONSET, _CONSONANT_RUN, _CAMEL_CASE)


def is_scrambled(word: str) -> bool:
    """Whether ``word`` (three letters or more) looks scrambled: see ``_ONSETS``.

    >>> [w for w in "Cheri ofsepror from seNapl found ttah iwchh the artist wnkno McDonald".split() if is_scrambled(w)]
    ['seNapl', 'ttah', 'iwchh', 'wnkno']
    """
    if not (word[1:].islower() or word.isupper()):
        return not _CAMEL_CASE.fullmatch(word)
    if word[0].isupper():
        return False
    lower = word.lower()
    onset = _ONSET.match(lower)
    return bool(
        (onset and len(onset.group()) >= 2 and onset.group() not in _ONSETS)
        or _CONSONANT_RUN.search(lower)
        or not re.search("[aeiouy]", lower)
    )


def is_scrambled_echo(text: str) -> bool:
    """Whether ``text`` is mostly the evidence copied in its scrambled form, which states no answer.

    >>> is_scrambled_echo("A toddler ltitadfneir White House rdnsoug, tnsgeti off security alerts.")
    True
    >>> is_scrambled_echo("A toddler got into the White House grounds, setting off security alerts.")
    False
    """
    words = _WORD.findall(text)
    scrambled = sum(map(is_scrambled, words))
    return scrambled >= _SCRAMBLED_WORDS and scrambled >= _SCRAMBLED_SHARE * len(words)
