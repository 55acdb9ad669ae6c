"""The roofline figure of the counters section, as inline SVG (svg.py): each profiled variant's
achieved rate against its intensity, under the GPU's DRAM slope and compute roof. Float work on
FLOP axes; integer work (histogram, scan int32, top-k's selection) on warp-instruction axes, its
roof the issue rate. Every point is coloured by its series (as in every chart of the report), shaped
by its op, and titled; each op's fastest point is labelled."""

from __future__ import annotations

import math

from primbench.report.charts import series_styles
from primbench.report.charts.svg import MARKERS, Axis, Canvas, Panel, marker, text_width

WIDTH, PANEL_HEIGHT, TOP, LEFT = 1200, 330, 66, 70


def _decade_text(value: float) -> str:
    exponent = round(math.log10(value))
    return f"1e{exponent}"


def roofline_chart(points: list[dict], roofs: dict):
    """One or two panels (float and integer work) side by side, or None with no points or no DRAM roof."""
    panels = [(True, "flop_per_byte", "flops", roofs.get("flops"), "FLOP/byte (fp32 add, mul, 2 × fma)", "FLOP/s"),
              (False, "inst_per_byte", "warp_ips", roofs.get("warp_ips"), "warp instructions per DRAM byte",
               "warp instructions/s")]
    panels = [p for p in panels if any(point["float"] == p[0] for point in points)]
    if not panels or not roofs.get("dram"):
        return None
    ops = sorted({p["label"].split("/")[0] for p in points})
    shape_of = {op: MARKERS[i % len(MARKERS)] for i, op in enumerate(ops)}
    canvas = Canvas(WIDTH, TOP + PANEL_HEIGHT + 56, label="roofline: each profiled variant's achieved rate against "
                    "its intensity, under the DRAM slope and the compute roof")
    canvas.title(f"Roofline on {roofs.get('name', 'the GPU')}: achieved rate against intensity")
    series_styles.series_key(canvas, [p.get("series") for p in points])
    x_left = 8
    for op in ops:  # the legend of shapes: one line under the title
        canvas.text(x_left + 10, TOP - 30, op, size=11)
        marker(canvas.root, x_left + 3, TOP - 34, {"colour": "#555", "marker": shape_of[op]}, 4)
        x_left += text_width(op, 11) + 30
    gap = 80
    width = (WIDTH - LEFT - 16 - gap * (len(panels) - 1)) / len(panels)
    for index, spec in enumerate(panels):
        _panel(canvas, LEFT + index * (width + gap), width, spec, points, roofs, shape_of)
    return canvas.markup()


def _panel(canvas, left, width, spec, points, roofs, shape_of) -> None:
    is_float, x_key, y_key, roof, x_label, y_label = spec
    chosen = [p for p in points if p["float"] == is_float and p[x_key] > 0 and p[y_key] > 0]
    xs = [p[x_key] for p in chosen] or [1.0]
    ys = [p[y_key] for p in chosen] or [1.0]
    low, high = min(xs + [1e-3]) / 4, max(xs + [10.0]) * 4
    bound_high = min(roofs["dram"] * high, roof) if roof else roofs["dram"] * high
    x = Axis(low, high, left, left + width, log=True)
    y = Axis(min(ys + [roofs["dram"] * low]) / 3, max(ys + [bound_high]) * 3, TOP + PANEL_HEIGHT, TOP, log=True)
    panel = Panel(canvas, left, TOP, width, PANEL_HEIGHT, x, y)
    decades = lambda a: [10.0 ** k for k in range(math.ceil(math.log10(a.low)), math.floor(math.log10(a.high)) + 1)]
    panel.x_ticks(decades(x), _decade_text)
    panel.y_ticks(decades(y), _decade_text)
    grid = [low * (high / low) ** (i / 60) for i in range(61)]
    bound = [(g, min(roofs["dram"] * g, roof) if roof else roofs["dram"] * g) for g in grid]
    panel.polyline(bound, {"colour": "#000000"}, width=1.4, css_class="roof")
    canvas.text(x(grid[4]) + 4, y(bound[4][1]) - 8, f"DRAM {roofs['dram'] / 1e12:.1f} TB/s", size=10)
    if roof:
        canvas.text(left + width - 6, y(roof) - 6, f"peak {roof / 1e12:.1f} T{'FLOP' if is_float else 'inst'}/s", size=10,
                    anchor="end")
    best: dict = {}
    for point in chosen:
        op = point["label"].split("/")[0]
        if op not in best or point[y_key] > best[op][y_key]:
            best[op] = point
    placed: list = []  # the label boxes drawn so far in this panel, so that none covers another
    for point in chosen:
        op = point["label"].split("/")[0]
        title = (f"{point['label']} at n = {point['n']:,}: {point[x_key]:.3g} {x_label.split(' (')[0]}, "
                 f"{point[y_key]:.3g} {y_label}" + (f", {point['time_us']:,.1f} µs" if point.get("time_us") else ""))
        style = {"colour": series_styles.series_colour(point.get("series")), "marker": shape_of[op]}
        panel.point(point[x_key], point[y_key], style, title=title, href=point.get("anchor"), size=3.5)
        if best[op] is point:  # the op's fastest point, labelled inside the panel, clear of the other labels
            _label(canvas, placed, x(point[x_key]), y(point[y_key]), point["label"], left, left + width)
    panel.frame()
    panel.x_label(x_label, size=10)
    panel.y_label(y_label, size=10, offset=52)
    canvas.text(left, TOP - 6, "float work" if is_float else "integer and selection work", size=11, font_weight="bold")


def _label(canvas, placed: list, px: float, py: float, text: str, left: float, right: float) -> None:
    """`text` beside the point at (px, py): right of it where it fits the panel, else left; moved
    down or up a line at a time until its box meets no label already placed."""
    width, height = text_width(text, 10), 12
    start = px + 7 if px + 8 + width < right else max(left + 2, px - 7 - width)
    for shift in (12, -4, 26, -18, 40, -32, 54, -46):
        box = (start, py + shift - height, start + width, py + shift)
        if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed):
            break
    placed.append(box)
    canvas.text(box[0], box[3] - 2, text, size=10)
