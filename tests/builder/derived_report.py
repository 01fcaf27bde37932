"""The check both harnesses' end-to-end tests make of ``report --from-lm-eval`` / ``--from-lighteval``: the
tables give the ``score`` section's numbers, and the HTML page shows each variant's logged prompts with
exactly the changed words marked."""

from __future__ import annotations

import csv
import html
import io
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

PROMPT_CELL = re.compile(r"<td class='prompt'>(.*?)</td><td class='prompt'>(.*?)</td>", re.S)


def check_derived_report(
    main: Callable[[list[str]], int],
    capsys: pytest.CaptureFixture[str],
    flag: str,
    folder: Path,
    section: Mapping[str, Any],
    tmp_path: Path,
) -> None:
    capsys.readouterr()
    assert main(["report", flag, str(folder), "--n-resamples", "200", "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    values = {(row[1], row[2]): row[3] for row in rows if len(row) > 3 and row[0] != "table"}
    for key, metric in section["metrics"].items():
        assert values[("canonical", key)] == f"{100 * metric['value']:.2f}"
    for scramble_type, variant in section["types"].items():
        for key, metric in variant["metrics"].items():
            assert values[(scramble_type, key)] == f"{100 * metric['value']:.2f}"

    page = tmp_path / "derived.html"
    assert main(["report", flag, str(folder), "--n-resamples", "200", "--format", "html", "-o", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    pairs = PROMPT_CELL.findall(text)
    assert len(pairs) == 3 * len(section["types"])  # three logged documents per type
    for original, marked in pairs:
        scrambled = html.unescape(re.sub(r"</?mark>", "", marked))
        original = html.unescape(original)
        assert len(scrambled.split()) == len(original.split())  # scrambling permutes letters, not words
        changed = {html.unescape(word) for word in re.findall(r"<mark>(.*?)</mark>", marked)}
        differing = {after for before, after in zip(original.split(), scrambled.split()) if before != after}
        assert " ".join(changed).split() and set(" ".join(changed).split()) == differing

    assert main(["report", flag, str(folder), "--paper"]) == 2  # run-folder options are refused, one line
