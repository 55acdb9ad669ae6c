"""A chart of one value per row lays its panel out in one call: the value axis the values pick
(bars from 0, or a log axis of dots past BAR_SPAN), ticked where there is a value to tick."""

from __future__ import annotations

import math
import re
import sys
import xml.etree.ElementTree as ET

import pytest

from primbench.report.charts.op_charts import timing_bars
from primbench.report.charts.svg import Canvas
from primbench.report.charts.value_marks import BAR_SPAN, value_panel


def _tick_labels(canvas: Canvas) -> list[ET.Element]:
    return [t for t in canvas.root.iter("text") if t.get("fill") == "#333"]


def test_values_close_together_get_an_axis_from_zero_ticked_along_the_rows():
    canvas = Canvas(400, 200, label="t")
    panel = value_panel(canvas, [2.0, 5.0, 8.0], 50, 20, 300, 150)
    assert (panel.x.low, panel.x.log) == (0.0, False)
    labels = _tick_labels(canvas)
    assert labels and {t.get("y") for t in labels} == {"184"}  # under the panel: ticks of x
    assert labels[0].text == "0"


def test_values_spread_past_the_bar_span_get_a_log_axis():
    canvas = Canvas(400, 200, label="t")
    panel = value_panel(canvas, [1.0, BAR_SPAN * 10], 50, 20, 300, 150)
    assert panel.x.log and panel.x.low < 1.0 < BAR_SPAN * 10 < panel.x.high


def test_a_vertical_panel_puts_the_values_on_y_and_ticks_them_at_its_left():
    canvas = Canvas(400, 200, label="t")
    panel = value_panel(canvas, [2.0, 5.0, 8.0], 50, 20, 300, 150, vertical=True)
    assert panel.y(0.0) == 170 and panel.y.high > 8.0
    labels = _tick_labels(canvas)
    assert labels and {t.get("x") for t in labels} == {"45"} and {t.get("text-anchor") for t in labels} == {"end"}


def test_a_panel_with_no_value_draws_no_tick_for_an_axis_nothing_is_on():
    canvas = Canvas(400, 200, label="t")
    value_panel(canvas, [None, float("nan")], 50, 20, 300, 150)
    assert not _tick_labels(canvas)


@pytest.mark.parametrize("values", [[5e-324, 1e308], [1.0, sys.float_info.max], [sys.float_info.max], [5e-324]])
def test_values_at_the_ends_of_the_float_range_get_a_finite_axis_and_a_mark_each(values):
    # A plugin's section may carry any positive finite time: the axis's room past its values must not
    # overflow to inf (an OverflowError on the page, as it was) nor drop below the smallest float.
    chart = timing_bars([{"label": f"v{i}", "time_us": v} for i, v in enumerate(values)], title="extremes")
    root = ET.fromstring(chart)
    marks = [e for e in root.iter() if e.get("data-value")]  # each point's group carries its value
    assert len(marks) == len(values), chart
    numbers = [float(n) for n in re.findall(r' (?:x|y|x1|x2|y1|y2|cx|cy|width|height|r)="([^"]+)"', chart)]
    assert numbers and all(math.isfinite(n) for n in numbers)
