"""The boxes an SVG chart's <text> labels take, estimated as primbench's charts estimate them when they
place a label (svg.text_width: characters x font size x CHAR_WIDTH; a line's height from 0.75 of
the font size above the baseline to 0.2 below), rotated where the label is; and the pairs of
labels whose boxes overlap. Used by the tests that no two labels of a chart meet."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

from primbench.report.charts.svg import text_width

ASCENT, DESCENT = 0.75, 0.2  # of the font size, above and below the baseline
DEPTH = 0.5  # px: boxes that overlap by less than this touch, they do not cover each other
ROTATE = re.compile(r"rotate\(\s*([-\d.]+)(?:[\s,]+([-\d.]+)[\s,]+([-\d.]+))?\s*\)")


def label_boxes(svg: ET.Element) -> list[tuple[str, list[tuple[float, float]]]]:
    """(text, the four corners of its box) for every non-empty <text> of `svg`."""
    boxes = []

    def walk(element, size):
        size = float(element.get("font-size") or size)
        if element.tag == "text" and (element.text or "").strip():
            boxes.append((element.text, _corners(element, size)))
        for child in element:
            walk(child, size)

    walk(svg, 11.0)
    return boxes


def _corners(text: ET.Element, size: float) -> list[tuple[float, float]]:
    x, y, width = float(text.get("x", 0)), float(text.get("y", 0)), text_width(text.text, size)
    left = x - {"end": width, "middle": width / 2}.get(text.get("text-anchor"), 0)
    corners = [(left, y - ASCENT * size), (left + width, y - ASCENT * size), (left + width, y + DESCENT * size),
               (left, y + DESCENT * size)]
    turn = ROTATE.search(text.get("transform") or "")
    if not turn:
        return corners
    angle = math.radians(float(turn[1]))
    cx, cy = (float(turn[2]), float(turn[3])) if turn[2] else (0.0, 0.0)
    cos, sin = math.cos(angle), math.sin(angle)
    return [(cx + (px - cx) * cos - (py - cy) * sin, cy + (px - cx) * sin + (py - cy) * cos) for px, py in corners]


def _depth(a: list, b: list) -> float:
    """How far two convex boxes overlap along the axis where they overlap least (0: apart)."""
    least = math.inf
    for shape in (a, b):
        for (x1, y1), (x2, y2) in zip(shape, shape[1:] + shape[:1]):
            length = math.hypot(x2 - x1, y2 - y1) or 1.0
            nx, ny = (y1 - y2) / length, (x2 - x1) / length
            pa = [px * nx + py * ny for px, py in a]
            pb = [px * nx + py * ny for px, py in b]
            least = min(least, min(max(pa), max(pb)) - max(min(pa), min(pb)))
            if least <= 0:
                return 0.0
    return least


def overlapping_labels(svg: ET.Element) -> list[tuple[str, str]]:
    """The pairs of labels of `svg` whose boxes overlap by more than DEPTH px."""
    boxes = label_boxes(svg)
    bounds = [(min(p[0] for p in c), min(p[1] for p in c), max(p[0] for p in c), max(p[1] for p in c)) for _, c in boxes]
    found = []
    for i, (text, corners) in enumerate(boxes):
        for j in range(i + 1, len(boxes)):
            a, b = bounds[i], bounds[j]
            if a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]:
                continue
            if _depth(corners, boxes[j][1]) > DEPTH:
                found.append((text, boxes[j][0]))
    return found
