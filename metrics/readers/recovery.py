"""The careful reader's ScrRec side: the recovered sentence in a model's answer, without the preambles,
notes, fences and quotes chat models wrap it in."""

from __future__ import annotations

import re

from scrambled_bench.metrics.readers.common import Reading

#: The rules a ScrRec reading names, in the order the steps run (``empty`` when nothing is left). Each is a
#: section of the rulebook, docs/readers/rules.md; a test keeps the two in step.
RECOVERY_RULES = (
    "prompt-continuation",
    "code-fence",
    "preamble",
    "trailing-note",
    "quotes",
    "plain",
    "empty",
)

# The prompt format repeated after the answer (base models), or the model's restating of the input.
_SCRAMBLED_MARKER = re.compile(r"(?:^|(?<=\s))(?:The\s+)?Scrambled(?:\s+sentence)?\s*:", re.IGNORECASE)
_RECOVERED_MARKER = re.compile(
    r"(?:^|(?<=\s))(?:The\s+)?(?:Recovered|Unscrambled)\s+sentence\s*:", re.IGNORECASE
)
_FENCE = re.compile(r"```[^\n`]*\n(.*?)\n?[ \t]*```", re.DOTALL)
_RECOVERY_WORDS = (
    r"(?:recovered|original|unscrambled|descrambled|corrected|restored|fixed|reconstructed|decoded|"
    r"rearranged|unjumbled|correct|recovery|unscrambling)"
)
# "Sure! The original sentence is:", "Here is the recovered sentence:", "Recovered sentence:",
# "Unscrambled:", "Sure, here's the sentence with the words unscrambled:".
_PREAMBLE = re.compile(
    r"^(?:(?:sure|certainly|of\s+course|okay|ok|alright|absolutely|great|here\s+you\s+go)\b[!,.]*\s*)?"
    r"(?:(?:here(?:'s|\u2019s|\s+is)|this\s+is)\s+(?:the\s+|your\s+|my\s+)?[^:\n]{0,60}?:"
    r"|(?:the\s+|your\s+)?" + _RECOVERY_WORDS + r"(?:\s+(?:sentence|text|version))?"
    r"(?:\s+(?:is|would\s+be|reads|should\s+read))?\s*:"
    r"|(?:the\s+)?(?:sentence|text)\s+" + _RECOVERY_WORDS + r"\s*:)[ \t]*\n?",
    re.IGNORECASE,
)
# A first line of its own that introduces the sentence: short, ends with ":", speaks of recovering.
_PREAMBLE_LINE = re.compile(
    r"^[^\n]{0,100}(?:" + _RECOVERY_WORDS + r"|sentence|here)[^\n]{0,60}:[ \t]*\n", re.IGNORECASE
)
_NOTE_START = (
    r"\(?\s*(?:Note|NB|N\.B\.|P\.S\.|Explanation|Changes|Corrections?|Translation)\b"
    r"|\(?\s*I(?:\s+have|'ve|\u2019ve)?\s+(?:corrected|unscrambled|fixed|rearranged|recovered|changed|assumed|"
    r"kept|made|interpreted|replaced|reordered|unjumbled|descrambled|restored)\b"
    r"|\(?\s*(?:This|The)\s+(?:recovered\s+|original\s+|unscrambled\s+)?(?:sentence|text)\s+(?:was|has|is|now)\b"
    r"|\(?\s*(?:Let\s+me\s+know|I\s+hope|Hope\s+this)\b"
)
_NOTE_LINE = re.compile(r"\n[ \t]*(?:[-*][ \t]+)?(?:" + _NOTE_START + r")", re.IGNORECASE)
# A note on the sentence's own line: "... outbreaks. (I unscrambled each word.)", "... Note: I corrected".
_INLINE_NOTE = re.compile(
    r"(?<=[.!?\"')\u201d\u2019])[ \t]+(?:\((?:"
    + _NOTE_START
    + r")[^()\n]*\)|(?:Note|NB|P\.S\.)\s*:[^\n]*)[ \t]*$",
    re.IGNORECASE,
)
_WRAPPING_QUOTES = {
    '"': '"',
    "\u201c": "\u201d",
    "\u201e": "\u201c",
    "\u00ab": "\u00bb",
    "'": "'",
    "\u2018": "\u2019",
}


def read_recovery(output: str) -> Reading:
    """The careful reader's ScrRec side; the steps are listed in :meth:`CarefulReader.read_recovery`."""
    text = output.strip()
    if not text:
        return Reading(None, "empty")
    applied: list[str] = []

    scrambled = _SCRAMBLED_MARKER.search(text)
    if scrambled and scrambled.start() == 0:
        recovered = _RECOVERED_MARKER.search(text, scrambled.end())
        if recovered:  # the model restated the scrambled input, then answered
            text = text[recovered.start() :]
            applied.append("prompt-continuation")
        else:  # "The scrambled sentence: <a recovered sentence>": a mislabelled lead-in
            text = text[scrambled.end() :].lstrip()
            applied.append("preamble")
        scrambled = _SCRAMBLED_MARKER.search(text)
    if scrambled:
        text = text[: scrambled.start()].strip()
        applied.append("prompt-continuation")

    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
        applied.append("code-fence")

    for _ in range(2):  # "Sure! Here is the recovered sentence:\nRecovered sentence: ..."
        preamble = _PREAMBLE_LINE.match(text + "\n") or _PREAMBLE.match(text)
        if not preamble:
            break
        text = text[preamble.end() :].strip()
        applied.append("preamble")

    # a note on a line of its own, then one on the sentence's own line
    for note_pattern in (_NOTE_LINE, _INLINE_NOTE):
        note = note_pattern.search(text)
        if note:
            text = text[: note.start()].rstrip()
            applied.append("trailing-note")

    if text.startswith("**") and text.endswith("**") and len(text) > 4 and "**" not in text[2:-2]:
        text = text[2:-2].strip()
        applied.append("quotes")
    closing = _WRAPPING_QUOTES.get(text[:1])
    if closing and len(text) > 2 and text.endswith(closing) and _quotes_only_at_the_ends(text):
        text = text[1:-1].strip()
        applied.append("quotes")

    if not text:
        return Reading(None, "empty")
    return Reading(text, applied[0] if applied else "plain")


def _quotes_only_at_the_ends(text: str) -> bool:
    """Whether the quote marks opening and closing ``text`` wrap it, rather than quote a part of it.

    ``"We won," he said. "Great."`` opens and closes with a quote that belongs to the sentence itself; an
    apostrophe between two letters ("Wendy's") is no quote.
    """
    inner = text[1:-1]
    if text[0] in "'\u2018":
        return not re.search(r"(?<![^\W\d_])['\u2018\u2019]|['\u2018\u2019](?![^\W\d_])", inner)
    return not re.search('["\u201c\u201d\u201e\u00ab\u00bb]', inner)
