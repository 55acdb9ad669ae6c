"""The report's charts as inline SVG, built with ElementTree: no picture, no library.

Each point is a link to its case's table row (`href`) holding a <title>, so hovering a point names
the case with its figures, clicking it goes to the row, and the page's text search finds them.
ElementTree escapes every text and attribute, so a name from a run file cannot become markup.
Text is real <text> in the page's sans-serif; its width is estimated (`text_width`, on the wide
side) to keep labels inside the frame.

A chart is a `Canvas` (the <svg>) holding `Panel`s (a plot area with its two `Axis` scales);
op_charts.py draws the report's charts with them."""

from __future__ import annotations

import math
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass

FONT_FAMILY = "DejaVu Sans,Verdana,Arial,sans-serif"
CHAR_WIDTH = 0.62  # of the font size: DejaVu Sans's average letter and digit, a little wide
# Twenty colours, none repeated: tab10 without its grey (grey draws context), then darker and
# other hues. Beyond 20 lines, marker and dash still tell lines apart.
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
           "#000080", "#800000", "#1b9e77", "#e7298a", "#7570b3", "#d95f02", "#66a61e", "#a6761d", "#2f4f4f",
           "#b10dc9", "#0074d9")
MARKERS = ("circle", "square", "triangle", "diamond", "down", "cross")
DASHES = ("", "6 3", "2 2")
BAND_FILL, BAND_EDGE = "#f2c744", "#b8860b"
SUPERSCRIPTS = str.maketrans("0123456789-", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b")


def text_width(text: str, size: float) -> float:
    """Estimated px of `text` at `size` px: wide enough that a label placed by it is not cut."""
    return len(str(text)) * size * CHAR_WIDTH


def pow2_text(value: float) -> str:
    """2 to an integer power as '2²⁸' (plain text: fine in an attribute or a <title>), else '%g'."""
    if value > 0:
        exponent = math.log2(value)
        if abs(exponent - round(exponent)) < 1e-9:
            return "2" + str(int(round(exponent))).translate(SUPERSCRIPTS)
    return f"{value:g}"


def number_text(value: float) -> str:
    """A tick or a figure: 3 significant digits, thousands separated, no exponent below 1e9."""
    if value == 0:
        return "0"
    if abs(value) >= 1e9 or abs(value) < 1e-3:
        return f"{value:.2g}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def line_style(index: int) -> dict:
    """The `index`-th line's colour, marker and dash: colours do not repeat within 20 lines, colour
    and marker together within 60 (their periods' least common multiple), all three within 180."""
    period = math.lcm(len(COLOURS), len(MARKERS))
    return {"colour": COLOURS[index % len(COLOURS)], "marker": MARKERS[index % len(MARKERS)],
            "dash": DASHES[(index // period) % len(DASHES)]}


@dataclass
class Axis:
    """A scale from data values to px: linear, or log (any base) when `log`."""

    low: float
    high: float
    start: float  # px of `low`
    end: float  # px of `high`
    log: bool = False

    def __post_init__(self):
        if self.log:
            self.low, self.high = max(self.low, 1e-300), max(self.high, 1e-300)
        if not self.high > self.low:
            self.low, self.high = (self.low / 2, self.low * 2) if self.log else (self.low - 1, self.low + 1)

    def __call__(self, value: float) -> float:
        if self.log:
            share = (math.log(max(value, 1e-300)) - math.log(self.low)) / (math.log(self.high) - math.log(self.low))
        else:
            share = (value - self.low) / (self.high - self.low)
        return self.start + share * (self.end - self.start)

    def inside(self, value: float) -> bool:
        return self.low <= value <= self.high


# The positive floats (5e-324 .. 1.8e308) and their decades: an axis's ends stay inside, so no power
# of ten overflows and no log axis starts at 0.
SMALLEST_FLOAT, LARGEST_FLOAT = 5e-324, sys.float_info.max
LOWEST_DECADE, HIGHEST_DECADE = math.log10(SMALLEST_FLOAT), math.log10(LARGEST_FLOAT)


def value_range(values, *, log: bool, from_zero: bool = False, headroom: float = 0.08) -> tuple[float, float]:
    """The span an axis shows for `values`: with headroom at the top (and bottom), so no line
    sits on the frame; from 0 on a linear axis when asked."""
    values = [v for v in values if v is not None and math.isfinite(v) and (v > 0 or not log)]
    if not values:
        return (1.0, 10.0) if log else (0.0, 1.0)
    low, high = min(values), max(values)
    if log:  # in decades: high / low alone overflows for values 600 decades apart (a plugin's bars can be)
        first, last = math.log10(low), math.log10(high)
        pad = max(last - first, math.log10(1.01)) * headroom
        return 10.0 ** max(first - pad, LOWEST_DECADE), 10.0 ** min(last + pad, HIGHEST_DECADE)
    if from_zero:
        low = min(low, 0.0)
    span = (high - low) or abs(high) or 1.0
    return (low if from_zero else low - span * headroom), high + span * headroom


def wants_log(values, decades: float = 2.0) -> bool:
    """True when positive values span more than `decades` decades: a linear axis would flatten the small ones."""
    values = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    return bool(values) and max(values) / min(values) > 10 ** decades


def linear_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About `count` round values (1, 2, 2.5 or 5 times a power of ten) within [low, high]."""
    raw = (high - low) / max(count, 1) or 1.0
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * 0.999)
    first = math.ceil(low / step - 1e-9)
    return [round(k * step, 12) for k in range(first, int(math.floor(high / step + 1e-9)) + 1)]


def log10_ticks(low: float, high: float, room: int = 8) -> list[float]:
    """1, 2, 5 per decade where there is room for them, else decades only (every other one if needed)."""
    decades = range(math.floor(math.log10(low)), min(math.ceil(math.log10(high)), math.floor(HIGHEST_DECADE)) + 1)
    for subs in ((1, 2, 5), (1, 3), (1,)):
        ticks = [m * 10.0 ** d for d in decades for m in subs if low <= m * 10.0 ** d <= high]
        if len(ticks) <= room:
            return ticks
    ticks = [10.0 ** d for d in decades if low <= 10.0 ** d <= high]
    step = math.ceil(len(ticks) / room)
    return ticks[::step]


def log2_ticks(values, axis: Axis, label_px: float = 42) -> list[float]:
    """Of the values, those that get a tick so that no two labels meet: powers of two first."""
    values = sorted({float(v) for v in values if v and v > 0})
    powers = [v for v in values if math.log2(v).is_integer()]
    chosen: list[float] = []
    for value in powers + [v for v in values if v not in powers]:
        if all(abs(axis(value) - axis(c)) >= label_px for c in chosen):
            chosen.append(value)
    return sorted(chosen)


def _fmt(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


class Canvas:
    """An <svg> of `width` x `height` px (its viewBox; the page scales it to its column)."""

    def __init__(self, width: float, height: float, *, label: str, css_class: str = "chart"):
        if not label.strip():
            raise ValueError("a chart needs a description")
        self.width, self.height = width, height
        # No xmlns: inline in HTML the parser puts <svg> in the SVG namespace.
        self.panels: list = []
        self.root = ET.Element("svg", {"class": css_class, "viewBox": f"0 0 {_fmt(width)} {_fmt(height)}",
                                       "width": _fmt(width), "height": _fmt(height), "role": "img",
                                       "aria-label": label, "font-family": FONT_FAMILY, "font-size": "11"})

    def text(self, x: float, y: float, text: str, *, size: float = 11, anchor: str = "start", parent=None,
             **attributes) -> ET.Element:
        element = ET.SubElement(self.root if parent is None else parent, "text",
                                {"x": _fmt(x), "y": _fmt(y), **({"font-size": _fmt(size)} if size != 11 else {}),
                                 **({"text-anchor": anchor} if anchor != "start" else {}),
                                 **{k.replace("_", "-"): str(v) for k, v in attributes.items()}})
        element.text = str(text)
        return element

    def title(self, text: str, x: float = 8, y: float = 16) -> None:
        self.text(x, y, text, size=13, font_weight="bold")

    def legend(self, entries, x: float, y: float, *, size: float = 11, row: float = 16, columns: int = 1,
               column_width: float | None = None) -> float:
        """Swatches with names from (x, y), a row each (in `columns` columns); returns the bottom y."""
        group = ET.SubElement(self.root, "g", {"class": "legend"})
        per_column = math.ceil(len(entries) / max(columns, 1))
        width = column_width or max((text_width(name, size) for name, _ in entries), default=0) + 34
        for index, (name, style) in enumerate(entries):
            left, top = x + (index // per_column) * width, y + (index % per_column) * row
            item = ET.SubElement(group, "g", {"class": "legend-item", "data-series": str(name)})
            if style.get("bar"):
                ET.SubElement(item, "rect", {"x": _fmt(left), "y": _fmt(top - 9), "width": "18", "height": "10",
                                             "fill": style["colour"]})
            elif style.get("dot"):  # a mark of a dot plot: no line through it
                marker(item, left + 11, top - 4, style, 4)
            else:
                line = {"x1": _fmt(left), "x2": _fmt(left + 22), "y1": _fmt(top - 4), "y2": _fmt(top - 4),
                        "stroke": style["colour"], "stroke-width": "2"}
                if style.get("dash"):
                    line["stroke-dasharray"] = style["dash"]
                ET.SubElement(item, "line", line)
                marker(item, left + 11, top - 4, style, 3.5)
            self.text(left + 28, top, name, size=size, parent=item)
        return y + per_column * row

    def markup(self):
        from markupsafe import Markup

        for panel in self.panels:  # points over the grid, the bands and the lines: drawn last
            panel.group.remove(panel.points)
            panel.group.append(panel.points)
        return Markup(ET.tostring(self.root, encoding="unicode"))


def marker(parent, x: float, y: float, style: dict, size: float = 3.5) -> ET.Element:
    """The style's marker centred at (x, y), `size` px from the centre."""
    kind, colour, s = style.get("marker", "circle"), style["colour"], size
    if kind == "circle":
        return ET.SubElement(parent, "circle", {"cx": _fmt(x), "cy": _fmt(y), "r": _fmt(s), "fill": colour})
    shapes = {
        "square": [(-s, -s), (s, -s), (s, s), (-s, s)],
        "triangle": [(0, -s * 1.2), (s * 1.1, s * 0.8), (-s * 1.1, s * 0.8)],
        "down": [(0, s * 1.2), (s * 1.1, -s * 0.8), (-s * 1.1, -s * 0.8)],
        "diamond": [(0, -s * 1.3), (s * 1.1, 0), (0, s * 1.3), (-s * 1.1, 0)],
        "cross": [(-s, -s / 3), (-s / 3, -s / 3), (-s / 3, -s), (s / 3, -s), (s / 3, -s / 3), (s, -s / 3), (s, s / 3),
                  (s / 3, s / 3), (s / 3, s), (-s / 3, s), (-s / 3, s / 3), (-s, s / 3)],
    }
    points = " ".join(f"{_fmt(x + dx)},{_fmt(y + dy)}" for dx, dy in shapes.get(kind, shapes["square"]))
    return ET.SubElement(parent, "polygon", {"points": points, "fill": colour})


class Panel:
    """A plot area at (left, top), `width` x `height` px, with its x and y scales."""

    def __init__(self, canvas: Canvas, left: float, top: float, width: float, height: float, x: Axis | None = None,
                 y: Axis | None = None):
        self.canvas, self.left, self.top, self.width, self.height = canvas, left, top, width, height
        self.x, self.y = x, y
        self.group = ET.SubElement(canvas.root, "g", {"class": "panel"})
        self.points = ET.SubElement(self.group, "g", {"class": "points"})
        canvas.panels.append(self)

    @property
    def right(self) -> float:
        return self.left + self.width

    @property
    def bottom(self) -> float:
        return self.top + self.height

    def frame(self) -> None:
        ET.SubElement(self.group, "rect", {"x": _fmt(self.left), "y": _fmt(self.top), "width": _fmt(self.width),
                                           "height": _fmt(self.height), "fill": "none", "stroke": "#aab"})

    def x_ticks(self, ticks, text=number_text, *, grid: bool = True, size: float = 10) -> None:
        for tick in ticks:
            if not self.x.inside(tick):
                continue
            px = self.x(tick)
            if grid:
                self._line(px, px, self.top, self.bottom, "#e6e8ec")
            self.canvas.text(px, self.bottom + 14, text(tick), size=size, anchor="middle", parent=self.group, fill="#333")

    def y_ticks(self, ticks, text=number_text, *, grid: bool = True, size: float = 10) -> None:
        for tick in ticks:
            if not self.y.inside(tick):
                continue
            py = self.y(tick)
            if grid:
                self._line(self.left, self.right, py, py, "#e6e8ec")
            self.canvas.text(self.left - 5, py + 3.5, text(tick), size=size, anchor="end", parent=self.group, fill="#333")

    def x_label(self, text: str, size: float = 11) -> None:
        self.canvas.text(self.left + self.width / 2, self.bottom + 32, text, size=size, anchor="middle", parent=self.group)

    def y_label(self, text: str, size: float = 11, offset: float = 48) -> None:
        x, y = self.left - offset, self.top + self.height / 2
        self.canvas.text(x, y, text, size=size, anchor="middle", parent=self.group,
                         transform=f"rotate(-90 {_fmt(x)} {_fmt(y)})")

    def _line(self, x1, x2, y1, y2, colour, width: float = 1.0, dash: str = "", parent=None) -> ET.Element:
        attributes = {"x1": _fmt(x1), "x2": _fmt(x2), "y1": _fmt(y1), "y2": _fmt(y2), "stroke": colour}
        if width != 1.0:
            attributes["stroke-width"] = _fmt(width)
        if dash:
            attributes["stroke-dasharray"] = dash
        return ET.SubElement(self.group if parent is None else parent, "line", attributes)

    def hline(self, value: float, text: str, *, colour: str = "#000", dash: str = "", above: bool = True) -> None:
        """A horizontal rule at `value` (a peak), labelled at its left end."""
        if not self.y.inside(value):
            return
        py = self.y(value)
        self._line(self.left, self.right, py, py, colour, 1.3, dash)
        self.canvas.text(self.left + 6, py - 4 if above else py + 12, text, size=10, parent=self.group, fill=colour)

    def x_band(self, low: float, high: float, text: str, **data) -> None:
        """A shaded span of x from `low` to `high` (clipped to the panel), its edge marked and labelled."""
        low, high = max(low, self.x.low), min(high, self.x.high)
        if not high > low:
            return
        x1, x2 = self.x(low), self.x(high)
        band = ET.SubElement(self.group, "rect", {"class": "band", "x": _fmt(x1), "y": _fmt(self.top),
                                                  "width": _fmt(x2 - x1), "height": _fmt(self.height),
                                                  "fill": BAND_FILL, "fill-opacity": "0.2",
                                                  **{f"data-{k.replace('_', '-')}": str(v) for k, v in data.items()}})
        ET.SubElement(band, "title").text = text.replace("\n", " ")
        self._line(x2, x2, self.top, self.bottom, BAND_EDGE)
        for index, line in enumerate(text.split("\n")):
            anchor = "end" if x2 - x1 > text_width(line, 10) + 8 or x2 > self.left + self.width / 2 else "start"
            # Near the bottom: the top holds the peaks' labels, and small sizes sit low on a GB/s chart.
            lines = text.count("\n") + 1
            self.canvas.text(x2 - 5 if anchor == "end" else x2 + 5, self.bottom - 8 - 13 * (lines - 1 - index), line, size=10,
                             anchor=anchor, parent=self.group, fill="#8a6d00")

    def polyline(self, points, style: dict, *, width: float = 1.6, css_class: str = "series", name: str = "") -> None:
        """A line through (x, y) data points, in the style's colour and dash."""
        drawn = [(self.x(x), self.y(y)) for x, y in points if _finite(x, y, self)]
        if len(drawn) < 2:
            return
        attributes = {"class": css_class, "points": " ".join(f"{_fmt(a)},{_fmt(b)}" for a, b in drawn), "fill": "none",
                      "stroke": style["colour"], "stroke-width": _fmt(width)}
        if style.get("dash"):
            attributes["stroke-dasharray"] = style["dash"]
        if name:
            attributes["data-series"] = name
        ET.SubElement(self.group, "polyline", attributes)

    def _link(self, css_class: str, title: str, href: str | None, data: dict) -> ET.Element:
        """A mark's element in the points layer: a link to `href` (its table row) where it has one,
        with its hover <title> and its data-* attributes."""
        attributes = {"class": css_class, **{f"data-{k.replace('_', '-')}": str(v) for k, v in data.items()}}
        if href:
            attributes["href"] = "#" + href
        link = ET.SubElement(self.points, "a" if href else "g", attributes)
        ET.SubElement(link, "title").text = title
        return link

    def point(self, x: float, y: float, style: dict, *, title: str, href: str | None = None, size: float = 3.5,
              **data) -> ET.Element | None:
        """One data point at data (x, y): see `mark`."""
        if not _finite(x, y, self):
            return None
        return self.mark(self.x(x), self.y(y), style, title=title, href=href, size=size, **data)

    def mark(self, px: float, py: float, style: dict, *, title: str, href: str | None = None, size: float = 3.5,
             css_class: str = "point", **data) -> ET.Element:
        """A marker at px (px, py) inside a link to `href` (its table row) with a hover <title>, and a
        larger transparent target, so a small marker is still easy to point at."""
        link = self._link(css_class, title, href, data)
        marker(link, px, py, style, size)
        # Transparent, not "none": a transparent fill still takes the pointer.
        ET.SubElement(link, "circle", {"class": "target", "cx": _fmt(px), "cy": _fmt(py), "r": _fmt(size + 3),
                                       "fill": "transparent"})
        return link

    def hbar(self, y_top: float, thickness: float, value: float, style: dict, *, title: str, href: str | None = None,
             **data) -> ET.Element | None:
        """A horizontal bar from the axis start to `value` at px row `y_top`, linked and titled like a point."""
        if value is None or not math.isfinite(value) or (self.x.log and value <= 0):
            return None
        end = min(max(self.x(value), self.left), self.right)
        link = self._link("point bar", title, href, data)
        ET.SubElement(link, "rect", {"x": _fmt(self.left), "y": _fmt(y_top), "width": _fmt(max(end - self.left, 1)),
                                     "height": _fmt(thickness), "fill": style["colour"]})
        return link

    def vbar(self, x_centre: float, thickness: float, value: float, style: dict, *, title: str,
             href: str | None = None, **data) -> ET.Element | None:
        """A vertical bar from the axis bottom up to `value`, centred at px `x_centre`."""
        if value is None or not math.isfinite(value) or (self.y.log and value <= 0):
            return None
        top = min(max(self.y(value), self.top), self.bottom)
        link = self._link("point bar vertical", title, href, data)
        ET.SubElement(link, "rect", {"x": _fmt(x_centre - thickness / 2), "y": _fmt(top), "width": _fmt(thickness),
                                     "height": _fmt(max(self.bottom - top, 1)), "fill": style["colour"]})
        return link


def _finite(x, y, panel: Panel) -> bool:
    if x is None or y is None or not (math.isfinite(x) and math.isfinite(y)):
        return False
    return not ((panel.x.log and x <= 0) or (panel.y.log and y <= 0))
