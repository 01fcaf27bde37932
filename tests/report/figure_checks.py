"""What a reviewer checks on a printed figure, read from the SVG matplotlib writes: how much of the canvas
the axes cover, whether a legend covers an axes, and whether two legend entries share a color and a
marker (so that two series could be told apart only by reading their labels)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}href"
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")

Box = tuple[float, float, float, float]
"""x0, y0, x1, y1 in the SVG's points."""


def _box(path: ET.Element) -> Box:
    numbers = [float(n) for n in _NUMBER.findall(path.get("d", ""))]
    xs, ys = numbers[0::2], numbers[1::2]
    return min(xs), min(ys), max(xs), max(ys)


def _area(box: Box) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def _overlap(a: Box, b: Box) -> float:
    return _area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def _style(element: ET.Element) -> dict[str, str]:
    pairs = (part.split(":", 1) for part in element.get("style", "").split(";") if ":" in part)
    return {key.strip(): value.strip() for key, value in pairs}


def _groups(root: ET.Element, prefix: str) -> list[ET.Element]:
    return [group for group in root.iter(f"{SVG}g") if group.get("id", "").startswith(prefix)]


def _first_path(group: ET.Element) -> ET.Element:
    """A group's first patch's path: an axes' background (its data area), a legend's frame."""
    patch = next(child for child in group if child.get("id", "").startswith("patch_"))
    return patch.find(f"{SVG}path")


@dataclass
class FigureLayout:
    """The measured layout of one SVG figure."""

    canvas: Box
    axes: list[Box]
    legends: list[Box]
    keys: list[tuple[str, tuple[str, str]]]
    """Each legend entry: its label and what draws it (color, marker or kind of mark)."""

    @property
    def coverage(self) -> float:
        """The sum of the axes' boxes over the canvas's area."""
        return sum(map(_area, self.axes)) / _area(self.canvas)

    def legend_overlaps(self) -> list[tuple[int, int]]:
        """(legend, axes) pairs whose boxes overlap."""
        return [
            (i, j)
            for i, legend in enumerate(self.legends)
            for j, axes in enumerate(self.axes)
            if _overlap(legend, axes) > 0
        ]

    def shared_keys(self) -> list[list[str]]:
        """Labels of legend entries drawn alike (same color and marker), one list per clash."""
        by_key: dict[tuple[str, str], list[str]] = {}
        for label, key in self.keys:
            by_key.setdefault(key, []).append(label)
        return [labels for labels in by_key.values() if len(labels) > 1]


def _handle_key(groups: list[ET.Element], markers: dict[str, str]) -> tuple[str, str] | None:
    """(color, marker) of a legend handle: a marker's shape (its path) and edge color, else a line's color
    and dashes, else a patch's fill and hatch."""
    for group in groups:
        for use in group.iter(f"{SVG}use"):
            href = use.get(XLINK, "").lstrip("#")
            if href in markers:
                style = _style(use)
                return style.get("stroke", style.get("fill", "")), markers[href]
    for group in groups:
        for path in group.iter(f"{SVG}path"):
            style = _style(path)
            if group.get("id", "").startswith("patch_"):
                return style.get("fill", ""), "patch " + style.get("stroke", "")
            if style.get("stroke"):
                return style["stroke"], "line " + style.get("stroke-dasharray", "solid")
    return None


def read_layout(path: Path) -> FigureLayout:
    """Measure an SVG written by matplotlib (``svg.fonttype: none``, so that texts are ``<text>``)."""
    root = ET.parse(path).getroot()
    width, height = (float(n) for n in root.get("viewBox", "").split()[2:])
    markers = {
        element.get("id"): element.get("d", "")
        for element in root.iter(f"{SVG}path")
        if element.get("id", "").startswith("m")
    }
    axes = [_box(_first_path(group)) for group in _groups(root, "axes_")]
    legends, keys = [], []
    for legend in _groups(root, "legend_"):
        legends.append(_box(_first_path(legend)))
        pending: list[ET.Element] = []
        for child in list(legend)[1:]:
            if child.tag == f"{SVG}g" and child.get("id", "").startswith("text_"):
                label = "".join(child.itertext()).strip()
                key = _handle_key(pending, markers)
                if key is not None:  # a text after no handle is the legend's title
                    keys.append((label, key))
                pending = []
            elif child.tag == f"{SVG}g":
                pending.append(child)
    return FigureLayout((0.0, 0.0, width, height), axes, legends, keys)
