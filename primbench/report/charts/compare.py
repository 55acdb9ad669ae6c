"""The compare page's charts: the cases' ratios with their 95 % intervals, per op, sorted and coloured
by verdict; and, across GPU models, each case's % of its own GPU's peak on both sides.

The ratio chart is inline SVG built here, not a matplotlib picture: each point is a link to its
table row with a <title> naming its case, so hovering a point says which case it is and clicking
it goes to the row. It is built with ElementTree, which escapes every text and attribute, so a case
name from a run file cannot become markup."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from primbench.report.charts.matplotlib_figure import data_uri as _data_uri
from primbench.report.charts.matplotlib_figure import figure
from primbench.report.charts.matplotlib_figure import label as _label
from primbench.report.formats import slug

# BELOW_FLOOR is purple: not red/green (no speed verdict), not yellow (UNSURE) nor grey (SAME).
VERDICT_COLOURS = {"SLOWER": "#c0392b", "FAILED": "#8a1c12", "FASTER": "#1e8449", "UNSURE": "#b7950b",
                   "BELOW_FLOOR": "#8e44ad", "SAME": "#95a5a6", "MISSING": "#bdc3c7", "OTHER_GPU": "#2e86c1",
                   "PUBLISHED": "#2e86c1"}
OTHER_COLOUR = "#7f8c8d"

# The chart's geometry, in px of its viewBox: 1200 wide, the content column at 1280 px drawn 1:1.
WIDTH, LEFT, RIGHT, TOP = 1200, 58, 12, 4
ROW_HEIGHT, ROW_HEADER, ROW_GAP = 92, 18, 10
FONT = "font-family:DejaVu Sans,Arial,sans-serif;font-size:11px"


def _nice_ticks(low: float, high: float, count: int = 4) -> list[float]:
    """About `count` round values (steps of 1, 2, 2.5 or 5 times a power of ten) within [low, high]."""
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step - 1e-9)
    return [round(k * step, 12) for k in range(first, int(math.floor(high / step + 1e-9)) + 1)]


def _tick_text(value: float, step: float) -> str:
    """The tick at as many decimals as its step needs (0.025 steps: three), so neighbours differ."""
    decimals = next(d for d in range(10) if abs(round(step, d) - step) < 1e-9)
    return f"{value:.{decimals}f}"


def _span(points: list[dict], metric: str) -> tuple[float, float]:
    """The y range of one op's row: its ratios and intervals, and 1, with a margin."""
    values = [1.0] + [p["ratio"] for p in points]
    if metric == "time":
        values += [v for p in points for v in (p["ci_low"], p["ci_high"]) if math.isfinite(v)]
    low, high = min(values), max(values)
    margin = max((high - low) * 0.08, 0.01)
    return low - margin, high + margin


def _title(p: dict, metric: str) -> str:
    ratio_name = "new ÷ baseline % of peak" if metric == "pct_peak" else "new ÷ baseline time"
    interval = f", 95 % interval {p['interval']}" if metric == "time" and p["interval"] != "-" else ""
    return f"{p['text']}\n{p['verdict']}: {ratio_name} {p['ratio']:.3f}{interval}"


def ratio_chart(pairs_by_op: dict, metric: str, *, greyed: bool = False):
    """An inline SVG (Markup): one row per op in the given order, its cases sorted by ratio (new/base),
    each a point with its interval, coloured by verdict, linked to its table row (the row dict's
    "id"); a line at 1. `greyed` draws the points faded (the folded cases, where nothing changed).
    None when no pair has a ratio."""
    from markupsafe import Markup

    rows = {op: sorted((p for p in pairs if math.isfinite(p["ratio"])), key=lambda p: p["ratio"])
            for op, pairs in pairs_by_op.items()}
    rows = {op: pairs for op, pairs in rows.items() if pairs}
    if not rows:
        return None
    height = TOP + len(rows) * (ROW_HEADER + ROW_HEIGHT + ROW_GAP)
    # No xmlns: inline in HTML the parser puts <svg> in the SVG namespace, and the page holds no URL.
    svg = ET.Element("svg", {"class": "ratio-chart" + (" greyed" if greyed else ""),
                             "viewBox": f"0 0 {WIDTH} {height}", "width": str(WIDTH), "height": str(height),
                             "role": "img", "style": FONT,
                             "aria-label": "each case's ratio, new ÷ baseline, per op; each point links to its row"})
    for index, (op, points) in enumerate(rows.items()):
        _op_row(svg, op, points, TOP + index * (ROW_HEADER + ROW_HEIGHT + ROW_GAP), metric)
    return Markup(ET.tostring(svg, encoding="unicode"))


def _op_row(svg, op: str, points: list[dict], top: float, metric: str) -> None:
    """One op's row at `top`: its name, a frame, y ticks (1 always), the line at 1, and its points."""
    plot_width = WIDTH - LEFT - RIGHT
    group = ET.SubElement(svg, "g", {"class": "op-row", "data-op": op})
    ET.SubElement(group, "text", {"x": str(LEFT), "y": str(top + 13), "font-weight": "bold"}).text = (
        f"{op[:60]}: {len(points)} case{'s' if len(points) != 1 else ''}")
    plot_top = top + ROW_HEADER
    low, high = _span(points, metric)

    def y(value: float) -> str:
        return str(round(plot_top + (high - value) / (high - low) * ROW_HEIGHT, 2))

    def hline(value: float, colour: str) -> None:
        ET.SubElement(group, "line", {"x1": str(LEFT), "x2": str(LEFT + plot_width), "y1": y(value), "y2": y(value),
                                      "stroke": colour})

    ET.SubElement(group, "rect", {"x": str(LEFT), "y": str(plot_top), "width": str(plot_width),
                                  "height": str(ROW_HEIGHT), "fill": "none", "stroke": "#ccd1d9"})
    ticks = _nice_ticks(low, high)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 0.1
    if all(abs(t - 1.0) > step * 0.4 for t in ticks):  # 1 is the line to read against: always labelled
        ticks = sorted(ticks + [1.0])
    for tick in ticks:
        hline(tick, "#eef0f3")
        ET.SubElement(group, "text", {"x": str(LEFT - 5), "y": str(float(y(tick)) + 4), "text-anchor": "end",
                                      "fill": "#555"}).text = _tick_text(tick, step)
    hline(1.0, "#555")
    # Points spread over the width; a dot and its hover target never reach the next point's
    # centre, so the point under the pointer is the one whose title shows.
    spacing = plot_width / len(points)
    dot = max(1.5, min(4.0, spacing * 0.4))
    target = max(dot, min(7.0, spacing * 0.5))
    for index, p in enumerate(points):
        x = str(round(LEFT + (index + 0.5) * spacing, 2))
        colour = VERDICT_COLOURS.get(p["verdict"], OTHER_COLOUR)
        link = ET.SubElement(group, "a", {"href": f"#{p['id']}", "class": f"point verdict-{slug(p['verdict'])}",
                                          "data-case": p["text"]})
        ET.SubElement(link, "title").text = _title(p, metric)
        if metric == "time" and math.isfinite(p["ci_low"]) and math.isfinite(p["ci_high"]):
            ET.SubElement(link, "line", {"x1": x, "x2": x, "y1": y(p["ci_low"]), "y2": y(p["ci_high"]),
                                         "stroke": colour, "stroke-width": "1.2", "stroke-opacity": "0.6"})
        ET.SubElement(link, "circle", {"cx": x, "cy": y(p["ratio"]), "r": f"{dot:.2f}", "fill": colour})
        # Transparent, not "none": a transparent fill still takes the pointer, a larger target.
        ET.SubElement(link, "circle", {"class": "target", "cx": x, "cy": y(p["ratio"]), "r": f"{target:.2f}",
                                       "fill": "transparent"})


def legend(verdicts) -> list[tuple[str, str]]:
    """(verdict, colour) of each verdict drawn, in the colour table's order: the caption's key."""
    present = set(verdicts)
    return [(v, c) for v, c in VERDICT_COLOURS.items() if v in present] + \
           [(v, OTHER_COLOUR) for v in sorted(present - VERDICT_COLOURS.keys())]


def peak_chart(pairs: list[dict], base_name: str, new_name: str) -> str | None:
    """Across GPU models: each case's % of peak on the baseline's GPU (x) and the new run's (y)."""
    points = [p for p in pairs if math.isfinite(p["base_pct_peak"]) and math.isfinite(p["new_pct_peak"])]
    if not points:
        return None
    fig, (axis,) = figure(6.0, 5.0, left=0.8, right=0.3, top=0.3, bottom=0.7)
    ops = sorted({p["op"] for p in points})
    for index, op in enumerate(ops):
        mine = [p for p in points if p["op"] == op]
        axis.scatter([p["base_pct_peak"] for p in mine], [p["new_pct_peak"] for p in mine], s=10, label=_label(op),
                     color=f"C{index}")
    top = max(max(p["base_pct_peak"], p["new_pct_peak"]) for p in points) * 1.05
    axis.plot([0, top], [0, top], color="#555", linewidth=0.8)
    axis.set_xlim(0, top)
    axis.set_ylim(0, top)
    axis.set_xlabel(_label(f"% of peak on {base_name[:40]}"), fontsize=8)
    axis.set_ylabel(_label(f"% of peak on {new_name[:40]}"), fontsize=8)
    axis.legend(fontsize=7)
    axis.tick_params(labelsize=7)
    return _data_uri(fig)
