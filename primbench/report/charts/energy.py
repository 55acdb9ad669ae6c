"""The report's energy charts, as inline SVG (svg.py): the story chart's energy panel (energy per
sum of each step, beside its time) and an op's GB/J against GB/s, one labelled point per variant
with the line of the median draw through the origin. Drawn only where a run measured energy."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from primbench.report.charts import series_styles, value_marks
from primbench.report.charts.svg import Axis, Canvas, Panel, line_style, linear_ticks, pow2_text, text_width
from primbench.report.energy import energy_title
from primbench.report.formats import format_mj, format_watts

WIDTH = 1200
STORY_PANEL_W, STORY_GAP = 250, 34  # the story chart's energy panel, right of its time panel
LABEL_SIZE = 10


def story_panel_room(steps: list[dict]) -> float:
    """How much of the story chart's width the energy panel takes: 0 where no step has energy."""
    return STORY_PANEL_W + STORY_GAP if any(step.get("energy") for step in steps) else 0


def story_energy_panel(canvas: Canvas, steps: list[dict], colours: list[str], *, left: float, top: float, row_h: float,
                       bar: float) -> None:
    """Energy per sum of each step on this GPU, a mark per step in its row: bars from 0 where the
    energies span up to value_marks.BAR_SPAN (energy adds up: a bar twice as long spends twice as
    much), else dots on a log axis, in the step's colour (`colours`, its series', as the time panel
    draws it); a step asked for energy but not measured says so, its reason in the hover text."""
    right = left + STORY_PANEL_W
    height = row_h * len(steps)
    values = [s["energy"]["mj"] for s in steps if s.get("energy") and s["energy"].get("mj") is not None]
    canvas.text(left, top - 6, "energy per sum on this GPU", size=10.5, font_weight="bold")
    panel = value_marks.value_panel(canvas, values, left, top, STORY_PANEL_W, height, room=1.3, log_room=(1.6, 2.4),
                                    tick_room=4, tick_text=lambda v: f"{v:,.6g}")
    for row, (step, colour) in enumerate(zip(steps, colours)):
        facts = step.get("energy")
        if not facts:
            continue
        y0 = top + row * row_h + 4
        if facts.get("mj") is None:
            text = canvas.text(left + 6, y0 + bar * 0.88 - 1.5, "not measured", size=10, fill="#666", font_style="italic")
            ET.SubElement(text, "title").text = energy_title(facts)
            continue
        end = value_marks.draw_value(panel, y0, bar * 0.88, facts["mj"], {"colour": colour, "marker": "circle"},
                                     href=step.get("anchor"), title=f"{step['variant']} on this GPU: {energy_title(facts)}",
                                     mj=f"{facts['mj']:.6g}")
        canvas.text(end, y0 + bar * 0.88 - 1.5, f"{format_mj(facts['mj'])} mJ", size=10, fill="#222")
    panel.frame()
    words = "mJ per sum, log scale" if panel.x.log else "mJ per sum, bars from 0"
    canvas.text(left + STORY_PANEL_W / 2, top + height + 34, words, size=11, anchor="middle")


LEFT, TOP, PLOT_HEIGHT, BOTTOM = 74, 34, 340, 50
# Past this many points their names cannot all sit beside them on a 1200 px chart, and placing each
# (against every name before it) grows with the square of their number: 1,000 variants took 42 s.
# Each point still names its variant when hovered, and links to its case.
MAX_NAMED_POINTS = 60


def energy_scatter(points: list[dict], *, median_w: float | None, title: str, styles: dict | None = None):
    """GB/J (y) against GB/s over the energy windows (x), both from 0, one point per variant named
    beside it (past MAX_NAMED_POINTS, on hover only); the line through the origin at the median
    draw: GB/J = GB/s / W, so points on one line through the origin draw the same power, and a
    point above it does the same work for less."""
    styles = dict(styles or {})
    drawn = [p for p in points if p.get("window_gbps") and p.get("gb_per_j")]
    if not drawn:
        return None
    plot_w = WIDTH - LEFT - 16
    canvas = Canvas(WIDTH, TOP + PLOT_HEIGHT + BOTTOM, label=title)
    canvas.title(title)
    x = Axis(0, max(p["window_gbps"] for p in drawn) * 1.12, LEFT, LEFT + plot_w)
    y = Axis(0, max(p["gb_per_j"] for p in drawn) * 1.15, TOP + PLOT_HEIGHT, TOP)
    panel = Panel(canvas, LEFT, TOP, plot_w, PLOT_HEIGHT, x, y)
    panel.x_ticks(linear_ticks(x.low, x.high))
    panel.y_ticks(linear_ticks(y.low, y.high))
    # Every marker's box first, so that no name covers a point; then the rule's name, which has few
    # places to go, and last the points' names, which can move to any side of their point.
    taken = [(x(p["window_gbps"]) - 5, y(p["gb_per_j"]) - 5, x(p["window_gbps"]) + 5, y(p["gb_per_j"]) + 5) for p in drawn]
    rule = _constant_power(panel, median_w, taken) if median_w else None
    for index, point in sorted(enumerate(drawn), key=lambda item: -item[1]["gb_per_j"]):
        style = styles.get(point["variant"]) or line_style(index)
        panel.point(point["window_gbps"], point["gb_per_j"], style, title=_point_title(point), href=point.get("anchor"),
                    key=point["key"], mj=f"{point['mj']:.6g}", gb_per_j=f"{point['gb_per_j']:.6g}",
                    gbps=f"{point['window_gbps']:.6g}")
        if len(drawn) <= MAX_NAMED_POINTS:
            _label(canvas, panel, point["variant"], x(point["window_gbps"]), y(point["gb_per_j"]), taken, rule)
    if len(drawn) > MAX_NAMED_POINTS:
        canvas.text(LEFT + plot_w - 4, TOP + 14, f"{len(drawn)} variants: hover a point for its name", size=10,
                    anchor="end", fill="#555")
    series_styles.series_key(canvas, [(styles.get(p["variant"]) or {}).get("series") for p in drawn])
    panel.frame()
    panel.x_label("GB/s while energy was measured (minimal bytes / time per operation)")
    panel.y_label("GB/J (minimal bytes per joule)")
    return canvas.markup()


def _constant_power(panel: Panel, watts: float, taken: list) -> tuple:
    """The line GB/J = GB/s / W from the origin to the panel's edge, named along it by its draw
    where its name covers the fewest of the points (`taken`, their boxes, to which the name's boxes
    are added). Returns the line's ends, which the points' names then keep off where they can."""
    x_end = min(panel.x.high, panel.y.high * watts)
    x1, y1 = panel.x(0), panel.y(0)
    x2, y2 = panel.x(x_end), panel.y(x_end / watts)
    line = panel._line(x1, x2, y1, y2, "#555", 1.2, "6 4")
    line.set("class", "constant-power")
    line.set("data-watts", f"{watts:.6g}")
    length, angle = math.hypot(x2 - x1, y2 - y1), math.atan2(y2 - y1, x2 - x1)
    rule = (x1, y1, x2, y2)
    text = f"median draw, {format_watts(watts)} W: the same power all along"
    width = text_width(text, 10)
    if length < width + 24:
        return rule

    def start(distance):  # where the name starts: `distance` px from the origin, 4 px above the line
        return (x1 + math.cos(angle) * distance + math.sin(angle) * 4,
                y1 + math.sin(angle) * distance - math.cos(angle) * 4)

    def boxes(distance):
        return _boxes_along(*start(distance), angle, width, 0.75 * 10, 0.2 * 10)

    def cost(distance):
        mine = boxes(distance)
        whole = (min(b[0] for b in mine), min(b[1] for b in mine), max(b[2] for b in mine), max(b[3] for b in mine))
        near = [other for other in taken if _overlap(whole, other)]
        return sum(_overlap(box, other) for box in mine for other in near)

    starts = [length - 12 - width - (length - width - 24) * k / 16 for k in range(17)]  # from the far end back
    best = min(starts, key=cost)
    taken.extend(boxes(best))
    tx, ty = start(best)
    panel.canvas.text(tx, ty, text, size=10, fill="#555", parent=panel.group,
                      transform=f"rotate({math.degrees(angle):.2f} {tx:.2f} {ty:.2f})")
    return rule


def _boxes_along(x0: float, y0: float, angle: float, length: float, above: float, below: float,
                 step: float = 8.0) -> list:
    """Upright boxes that together cover a strip `length` px long from (x0, y0) at `angle`
    (radians), reaching `above` px to its left (up, for a strip left to right) and `below` px to its right."""
    cos, sin = math.cos(angle), math.sin(angle)
    boxes = []
    for k in range(max(1, math.ceil(length / step))):
        a, b = k * step, min((k + 1) * step, length)
        ends = [(x0 + cos * d, y0 + sin * d) for d in (a, b)]
        corners = [(px + sin * side, py - cos * side) for px, py in ends for side in (above, -below)]
        xs, ys = [c[0] for c in corners], [c[1] for c in corners]
        boxes.append((min(xs), min(ys), max(xs), max(ys)))
    return boxes


# Where a label may sit beside its point: (dx, dy) of the text's start and its anchor; the nearest
# first, then a line further up or down at a time (with a leader back to the point).
_OFFSETS = [(7, 4, "start"), (-7, 4, "end"), (7, -8, "start"), (-7, -8, "end"), (7, 15, "start"), (-7, 15, "end")]
_OFFSETS += [(side, 4 + 12 * step * sign, anchor) for step in range(2, 10) for sign in (1, -1)
             for side, anchor in ((7, "start"), (-7, "end"))]


def _label(canvas: Canvas, panel: Panel, text: str, px: float, py: float, taken: list, rule=None) -> None:
    """The variant's name beside its point, where it covers the fewest other names and points and
    stays in the frame (several variants of one speed crowd a corner), next to its point rather than
    a line away, then off the constant-power line (`rule`, its ends) where it can be; `taken` holds
    the names' and points' boxes."""
    width, height = text_width(text, LABEL_SIZE), LABEL_SIZE + 1

    def box(dx, dy, anchor):
        x0 = px + dx if anchor == "start" else px + dx - width
        return (x0, py + dy - height + 2, x0 + width, py + dy + 2)

    # Only what lies where a candidate can go (_OFFSETS: a name's width to either side, 9 lines up or down).
    reach = (px - width - 8, py - 120 - height, px + width + 8, py + 122)
    near = [other for other in taken if _overlap(reach, other)]

    def cost(candidate):
        b = box(*candidate)
        outside = not (panel.left < b[0] and b[2] < panel.right and panel.top < b[1] and b[3] < panel.bottom)
        covered = sum(_overlap(b, other) for other in near)
        return (outside, covered > 0, abs(candidate[1]) > 16, rule is not None and _crosses(b, rule), covered,
                abs(candidate[1]))

    dx, dy, anchor = min(_OFFSETS, key=cost)
    taken.append(box(dx, dy, anchor))
    if abs(dy) > 16:
        panel._line(px, px + dx, py, py + dy - 4, "#999", 0.6)
    canvas.text(px + dx, py + dy, text, size=LABEL_SIZE, anchor=anchor, fill="#222", parent=panel.group,
                font_family="DejaVu Sans Mono,monospace", **{"class": "point-label"})


def _crosses(box, segment) -> bool:
    """Whether the segment (x1, y1, x2, y2) passes through the box (x0, y0, x1, y1): Liang and
    Barsky's clipping, the part of the segment inside each of the box's four edges."""
    x1, y1, x2, y2 = segment
    low, high = 0.0, 1.0
    for p, q in ((x1 - x2, x1 - box[0]), (x2 - x1, box[2] - x1), (y1 - y2, y1 - box[1]), (y2 - y1, box[3] - y1)):
        if p == 0:
            if q < 0:
                return False
            continue
        t = q / p
        low, high = (max(low, t), high) if p < 0 else (low, min(high, t))
        if low > high:
            return False
    return True


def _overlap(a, b) -> float:
    """The area two boxes (x0, y0, x1, y1) share."""
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def _point_title(point: dict) -> str:
    block = point.get("block")
    where = f"{point['variant']} · n = {pow2_text(point['n'])} · block {block if block is not None else 'library'}"
    timed = f"{point['time_us']:,.1f} µs, {point['gbps']:,.0f} GB/s timed" if point.get("time_us") and point.get("gbps") else ""
    window = f"{point['window_gbps']:,.0f} GB/s while energy was measured"
    return "\n".join((where, " · ".join(filter(None, (timed, window))), energy_title(point["energy"])))
