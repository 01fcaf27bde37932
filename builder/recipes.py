"""The paper's fine-tuning corpora (Cao et al., 2023, Appendix A.4) as named recipes.

A recipe scrambles a share of the *samples* (rows) of a text dataset, and within each chosen sample a share
of the *words*, with one scramble type. The paper fine-tuned Llama-2-13b on Wikipedia ``20220301.simple``
prepared three ways; it describes the corpora but did not release them:

- **FT-RS** (``ft-rs``): in 60 % of the samples, randomly scramble 30 % of the words with more than two
  letters: type ``ftrs30``. The existing ``rs`` family counts words from two letters on, so FT-RS has its
  own family, ``ftrs``, with the same shuffle and the paper's minimum of three letters.
- **FT-KF&Adj** (``ft-kf-adj``): in 60 % of the samples, for 30 % of the words with more than two letters,
  keep the first letter and swap two adjacent letters in other positions: type ``adj30``. This is the
  existing natural-typo family ``adj`` (:func:`~scrambled_bench.builder.scrambler.typo_adjacent_swap`):
  words with at least three letters, the first letter never moves, two neighbouring letters after it
  trade places. ``adj`` only swaps two *different* letters (swapping equal ones changes nothing), so a
  chosen word changes whenever it can.
- **FT-Ori** (``ft-ori``): the unchanged control; no sample is scrambled.

Which samples a recipe scrambles is decided per row, from a hash of (seed, row key) alone: the same row is
chosen whatever the dataset's size, order of processing, number of processes or streaming, and the chosen
rows at 30 % are chosen at 60 % too. The share is therefore the sample rate on average, within the
binomial spread (about ±1.5 % at 10,000 rows, three standard deviations).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

from scrambled_bench.builder.scrambler import parse_type
from scrambled_bench.errors import ScrambledBenchError


@dataclass(frozen=True)
class Recipe:
    """One named corpus recipe: which type scrambles the words, and in what share of the samples."""

    name: str
    """The name the command line takes (``ft-rs``)."""
    paper_name: str
    """The name in the paper (``FT-RS``)."""
    scramble_type: str
    """The type applied to a chosen sample: its rate is the share of eligible words (``ftrs30``)."""
    sample_rate: float
    """Percent of the samples that are scrambled (0 for the control)."""
    description: str

    @property
    def word_rate(self) -> int:
        """Percent of a chosen sample's eligible words the type changes.

        >>> RECIPES["ft-kf-adj"].word_rate
        30
        """
        return parse_type(self.scramble_type).rate if self.sample_rate else 0


RECIPES: dict[str, Recipe] = {
    recipe.name: recipe
    for recipe in (
        Recipe(
            "ft-rs",
            "FT-RS",
            "ftrs30",
            60,
            "in 60 % of the samples, 30 % of the words with more than two letters randomly scrambled",
        ),
        Recipe(
            "ft-kf-adj",
            "FT-KF&Adj",
            "adj30",
            60,
            "in 60 % of the samples, 30 % of the words with more than two letters keep their first letter "
            "and have two adjacent letters in other positions swapped",
        ),
        Recipe("ft-ori", "FT-Ori", "original", 0, "the unchanged control: no sample is scrambled"),
    )
}
"""The paper's Appendix A.4 corpora, by command-line name."""


def get_recipe(name: str) -> Recipe:
    """The recipe called ``name``, or a one-line error listing the known ones.

    >>> get_recipe("ft-rs").scramble_type
    'ftrs30'
    >>> get_recipe("ft-xx")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: unknown recipe 'ft-xx' (known: ft-rs, ft-kf-adj, ft-ori)
    """
    recipe = RECIPES.get(name) if isinstance(name, str) else None
    if recipe is None:
        raise ScrambledBenchError(f"unknown recipe {name!r} (known: {', '.join(RECIPES)})")
    return recipe


def check_sample_rate(rate: float) -> float:
    """``rate`` when it is a percentage in (0, 100], else a one-line error.

    >>> check_sample_rate(60)
    60.0
    >>> check_sample_rate(0)
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --sample-rate must be in (0, 100] (percent of the rows), got 0
    """
    if isinstance(rate, bool) or not isinstance(rate, int | float) or math.isnan(rate) or not 0 < rate <= 100:
        raise ScrambledBenchError(f"--sample-rate must be in (0, 100] (percent of the rows), got {rate!r}")
    return float(rate)


def row_draw(seed: int, row_key: str) -> float:
    """The row's uniform number in [0, 1): a hash of (seed, row key), the same in every process and run.

    >>> row_draw(0, "17") == row_draw(0, "17"), 0 <= row_draw(0, "17") < 1
    (True, True)
    """
    key = f"{int(seed)}\x1f{row_key}\x1fsample".encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") / 2**64


def row_selected(row_key: str, *, seed: int, sample_rate: float) -> bool:
    """Whether a sample-level rate of ``sample_rate`` percent scrambles the row ``row_key``.

    Rows chosen at a lower rate are chosen at every higher rate (the draw does not depend on the rate).

    >>> row_selected("3", seed=0, sample_rate=100), row_selected("3", seed=0, sample_rate=0)
    (True, False)
    >>> all(row_selected(str(k), seed=0, sample_rate=60) for k in range(200) if row_selected(str(k), seed=0, sample_rate=30))
    True
    """
    if sample_rate >= 100:
        return True
    return row_draw(seed, row_key) * 100 < sample_rate
