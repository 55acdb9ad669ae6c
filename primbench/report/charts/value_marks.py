"""One value per row (or per column) drawn so that what the eye compares is what the numbers say.

A bar's length is read as its value, so a bar starts at zero: on a linear axis. Where the values
span more than BAR_SPAN, the shortest bars of a linear axis shrink to a few px, and a log axis is
needed; there a bar would start at an arbitrary origin (reduce0's 382 µs bar was 2.3 times as long
as vector_load_sum's 39.9 µs one, for a ratio of 9.6), so each value is a dot instead, and equal
ratios are equal distances. `value_panel` lays out the panel on the axis `value_axis` picks, `draw_value`
draws the mark, both from the values."""

from __future__ import annotations

import math

from primbench.report.charts.svg import (LARGEST_FLOAT, SMALLEST_FLOAT, Axis, Canvas, Panel, linear_ticks, log10_ticks,
                                         number_text)

BAR_SPAN = 20.0  # largest / smallest value up to which bars from zero keep the smallest >= 5 % of the longest
DOT = 4.0  # px: a dot's radius, at most


def positive(values) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(float(v)) and float(v) > 0]


def wants_dots(values) -> bool:
    """Whether values this spread need a log axis, and so dots rather than bars."""
    values = positive(values)
    return bool(values) and max(values) / min(values) > BAR_SPAN


def value_axis(values, start: float, end: float, *, room: float = 1.12, log_room: tuple = (1.5, 1.6)) -> Axis:
    """The axis from px `start` to `end` for `values`: from 0 to a little past the largest (`room`)
    where bars can show them; else log, from the smallest / log_room[0] to the largest x log_room[1]."""
    values = positive(values) or [1.0]
    # the room past the values stays within the floats (a plugin's bar may be 1e308 µs)
    if wants_dots(values):
        low, high = max(min(values) / log_room[0], SMALLEST_FLOAT), min(max(values) * log_room[1], LARGEST_FLOAT)
        return Axis(low, high, start, end, log=True)
    return Axis(0.0, min(max(values) * room, LARGEST_FLOAT), start, end)


def ticks(axis: Axis, room: int = 5) -> list[float]:
    return log10_ticks(axis.low, axis.high, room=room) if axis.log else linear_ticks(axis.low, axis.high, room - 1)


def value_panel(canvas: Canvas, values, left: float, top: float, width: float, height: float, *,
                vertical: bool = False, room: float = 1.12, log_room: tuple = (1.5, 1.6), tick_room: int = 5,
                tick_text=number_text) -> Panel:
    """The panel of a chart of one value per row (or, `vertical`, per column), with its value axis
    (`value_axis`) and that axis's ticks, drawn where a value is there to tick: the one call such a
    chart makes before it draws its marks. Rows and columns are placed in px, so the axis across
    them is a placeholder."""
    axis = value_axis(values, top + height if vertical else left, top if vertical else left + width, room=room,
                      log_room=log_room)
    marks = ticks(axis, tick_room) if positive(values) else []
    across = Axis(0, 1, 0, 1)
    panel = Panel(canvas, left, top, width, height, across if vertical else axis, axis if vertical else across)
    (panel.y_ticks if vertical else panel.x_ticks)(marks, tick_text)
    return panel


def scale_words(axis: Axis, unit: str) -> str:
    """The axis label: the unit and how the marks show it."""
    return f"{unit}, log scale (a dot per value)" if axis.log else f"{unit} (bars from 0)"


def draw_value(panel: Panel, across: float, thickness: float, value: float, style: dict, *, title: str,
               href: str | None = None, vertical: bool = False, **data) -> float | None:
    """The mark of `value` in the row (or, `vertical`, the column) starting at px `across`,
    `thickness` px deep: a bar from zero on a linear axis, a dot on a log one. Returns the px just
    past the mark along the value axis, where a label of the value may start; None where nothing is
    drawn. The mark carries its value (data-value)."""
    axis = panel.y if vertical else panel.x
    if value is None or not math.isfinite(value) or (axis.log and value <= 0):
        return None
    if not axis.log:
        draw = panel.vbar if vertical else panel.hbar
        draw(across + thickness / 2 if vertical else across, thickness, value, style, title=title, href=href,
             **data).set("data-value", f"{value:.6g}")  # what the mark shows, for a reader's tools and the tests
        return min(max(axis(value), panel.top), panel.bottom) - 4 if vertical else min(axis(value), panel.right) + 4
    size = min(DOT, thickness / 2)
    at = min(max(axis(value), panel.top if vertical else panel.left), panel.bottom if vertical else panel.right)
    centre = across + thickness / 2
    panel.mark(centre if vertical else at, at if vertical else centre, style, title=title, href=href, size=size,
               css_class="point dot", **data).set("data-value", f"{value:.6g}")
    return at - size - 4 if vertical else at + size + 4


def value_text(value: float, unit: str = "") -> str:
    return number_text(value) + (f" {unit}" if unit else "")
