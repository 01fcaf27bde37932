"""How many parameters a run's model has, to place it beside the paper's models by size (the paper's
Figure 5): a ``--params`` value, else a count read from the model's own files where the backend recorded
where they are (llama.cpp's GGUF file, a local ``transformers`` folder of safetensors). A model served
over HTTP has no files here: it is placed only by ``--params``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.report.runs import Run

_SUFFIXES = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}
_COUNT = re.compile(r"^\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*([kmbt]?)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class ParameterCount:
    """A model's size and where it was read from."""

    count: int
    source: str


def parse_parameter_count(text: str) -> int:
    """``135M``, ``7b``, ``1.5e9`` or ``70000000000`` as a count; a one-line error otherwise.

    >>> parse_parameter_count("135M"), parse_parameter_count("7b"), parse_parameter_count("1.5e9")
    (135000000, 7000000000, 1500000000)
    >>> parse_parameter_count("big")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --params: 'big' is not a parameter count (write 135M, 7B or 1.5e9)
    """
    match = _COUNT.match(text.replace(",", "").replace("_", ""))
    if not match or float(match.group(1)) <= 0:
        raise ScrambledBenchError(f"--params: {text!r} is not a parameter count (write 135M, 7B or 1.5e9)")
    return round(float(match.group(1)) * _SUFFIXES[match.group(2).lower()])


def parameter_overrides(values: Sequence[str], runs: Sequence[Run]) -> dict[str, ParameterCount]:
    """Run label -> the size ``--params`` gives it: ``VALUE`` for a single run, ``MODEL=VALUE`` to name one of
    several (by its label, its model name or its folder name).

    >>> runs = [Run(Path("runs/a"), {"model": "tiny", "configs": {}}, {}, label="tiny")]
    >>> parameter_overrides(["135M"], runs)["tiny"].count
    135000000
    >>> parameter_overrides(["huge=1B"], runs)
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --params: no run is called 'huge'; the runs: tiny
    """
    overrides: dict[str, ParameterCount] = {}
    for value in values:
        name, _, count = value.rpartition("=")
        if not name:
            if len(runs) != 1:
                raise ScrambledBenchError(
                    f"--params {value!r}: {len(runs)} runs; name the one it sizes as MODEL={value}"
                )
            overrides[runs[0].label] = ParameterCount(parse_parameter_count(count), "--params")
            continue
        matches = [run for run in runs if name in (run.label, run.results.get("model"), run.path.name)]
        if not matches:
            listing = ", ".join(run.label for run in runs)
            raise ScrambledBenchError(f"--params: no run is called {name!r}; the runs: {listing}")
        for run in matches:
            overrides[run.label] = ParameterCount(parse_parameter_count(count), "--params")
    return overrides


def recorded_parameters(fingerprint: Mapping[str, Any]) -> ParameterCount | None:
    """The size read from the model files a backend's fingerprint (config.json) points at, where they are
    still on this machine: a GGUF file (``model_file``) or a folder of safetensors (``model_source``).

    >>> recorded_parameters({"backend": "openai", "model": "gpt-4o"}) is None
    True
    """
    model_file = fingerprint.get("model_file")
    if isinstance(model_file, str) and model_file.endswith(".gguf") and Path(model_file).is_file():
        count = _gguf_parameters(Path(model_file))
        if count is not None:
            return ParameterCount(count, f"tensors of {Path(model_file).name}")
    source = fingerprint.get("model_source")
    if isinstance(source, str) and Path(source).is_dir():
        count = _safetensors_parameters(Path(source))
        if count is not None:
            return ParameterCount(count, f"safetensors in {Path(source).name}")
    return None


def _gguf_parameters(path: Path) -> int | None:
    """The elements of every tensor a GGUF file holds (its header only is read); None without the ``gguf``
    package (the ``local`` extra)."""
    try:
        import gguf  # deferred and optional: the `local` extra's GGUF reader
    except ImportError:
        return None
    return sum(int(tensor.n_elements) for tensor in gguf.GGUFReader(path).tensors)


def _safetensors_parameters(folder: Path) -> int | None:
    """The elements of every tensor in a folder's ``*.safetensors`` files (headers only); None without any."""
    from safetensors import safe_open  # deferred: read only for a folder of weights

    files = sorted(folder.glob("*.safetensors"))
    if not files:
        return None
    total = 0
    for path in files:
        with safe_open(str(path), framework="numpy") as handle:
            for name in handle.keys():  # noqa: SIM118 - safe_open is not a mapping
                shape = handle.get_slice(name).get_shape()
                count = 1
                for size in shape:
                    count *= size
                total += count
    return total


def run_parameters(runs: Sequence[Run], values: Sequence[str] = ()) -> dict[str, ParameterCount]:
    """Run label -> its size: ``--params`` first, else what its model files say; runs of unknown size are
    left out (the figure then says how to place them).

    >>> runs = [Run(Path("runs/a"), {"model": "tiny", "configs": {}}, {}, label="tiny")]
    >>> run_parameters(runs, ["135M"]), run_parameters(runs)
    ({'tiny': ParameterCount(count=135000000, source='--params')}, {})
    """
    sizes = parameter_overrides(values, runs)
    for run in runs:
        if run.label not in sizes:
            recorded = recorded_parameters(run.config.get("fingerprint") or {})
            if recorded is not None:
                sizes[run.label] = recorded
    return sizes


def format_parameters(count: int) -> str:
    """A size as people write it.

    >>> format_parameters(134515008), format_parameters(7_000_000_000), format_parameters(180e9)
    ('135M', '7B', '180B')
    """
    for suffix, scale in (("T", 10**12), ("B", 10**9), ("M", 10**6), ("k", 10**3)):
        if count >= scale:
            value = count / scale
            return f"{value:.0f}{suffix}" if value >= 10 or value == int(value) else f"{value:.1f}{suffix}"
    return str(int(count))
