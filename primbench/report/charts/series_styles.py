"""A colour means a series, in every chart of the report: the family a variant belongs to (Variant.series:
Harris's steps, a seed's kernels, primbench's own, the libraries, ...), named in each chart's key.

Within a series each variant of an op gets a shade of the series' colour (dark to light in the op's
order) and a marker of its own, so that the lines of a chart stay apart while their hue still says
which family they are. A series this table does not name (a plugin's) gets a spare colour chosen
by its name, the same on every chart and page."""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zlib

from primbench.report.charts.svg import DASHES, MARKERS, Canvas, marker, text_width
from primbench.variant import series_name

# Okabe and Ito's colours where they go (told apart with the common colour-vision deficiencies).
SERIES_COLOURS = {
    "harris": "#0072b2",  # blue
    "seed000": "#d55e00",  # vermillion
    "seed004": "#009e73",  # bluish green
    "textbook": "#8c564b",  # brown
    "beyond": "#7b3294",  # purple
    "accuracy": "#cc79a7",  # reddish purple
    "library": "#333333",  # near black: what every ratio is against
}
SPARE_COLOURS = ("#e69f00", "#56b4e9", "#bcbd22", "#17becf", "#9c755f", "#e377c2")
SHADES = 0.32  # how far the darkest and the lightest shade of a series move toward black and white


def series_colour(series) -> str:
    """The colour of a series: its own, or for a series not named here a spare one by its name."""
    name = series_name(series) or "unnamed"
    return SERIES_COLOURS.get(name) or SPARE_COLOURS[zlib.crc32(str(name).encode()) % len(SPARE_COLOURS)]


def shade(colour: str, amount: float) -> str:
    """`colour` moved toward white (amount > 0) or black (amount < 0) by |amount| of the way."""
    channels = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    moved = [c + (255 - c) * amount if amount > 0 else c * (1 + amount) for c in channels]
    return "#" + "".join(f"{round(c):02x}" for c in moved)


def styles_by_series(members) -> dict:
    """{name: style} for (name, series) pairs in order: the series' colour, a shade per member from
    dark to light within its series, a marker each (a dash too past the markers' count)."""
    by_series: dict = {}
    for name, series in members:
        by_series.setdefault(series_name(series), []).append(name)
    styles = {}
    for series, names in by_series.items():
        colour = series_colour(series)
        for index, name in enumerate(names):
            amount = 0.0 if len(names) == 1 else -SHADES + 2 * SHADES * index / (len(names) - 1)
            styles[name] = {"colour": shade(colour, amount), "marker": MARKERS[index % len(MARKERS)],
                            "dash": DASHES[(index // len(MARKERS)) % len(DASHES)], "series": series}
    return styles


def series_style(series) -> dict:
    """A mark of the series with nothing else to tell apart: its own colour, a circle."""
    return {"colour": series_colour(series), "marker": "circle", "series": series_name(series)}


def series_key(canvas: Canvas, series, *, y: float = 16, right: float | None = None, size: float = 11) -> float:
    """The series' names, each after a dot of its colour, in one line ending at `right` (the
    canvas's right edge by default) on baseline `y`: the chart's key to its colours. Returns the
    left end of the line (so the title can be kept clear of it)."""
    names = list(dict.fromkeys(series_name(s) for s in series if s))
    if not names:
        return canvas.width if right is None else right
    right = canvas.width - 8 if right is None else right
    words = "colour: series"
    widths = [14 + text_width(name, size) + 12 for name in names]
    x = right - sum(widths) - text_width(words, size) - 8
    group = ET.SubElement(canvas.root, "g", {"class": "series-key"})
    canvas.text(x, y, words, size=size, fill="#555", parent=group)
    x += text_width(words, size) + 8
    for name, width in zip(names, widths):
        item = ET.SubElement(group, "g", {"class": "legend-item", "data-series": name})
        marker(item, x + 5, y - 4, series_style(name), 4.5)
        canvas.text(x + 14, y, name, size=size, parent=item)
        x += width
    return right - sum(widths) - text_width(words, size) - 8
