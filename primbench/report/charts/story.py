"""The report's two charts of the reduce story, as inline SVG (svg.py): the opening chart (each
progression step's time here beside the published devices', each step with its reason) and the
accuracy study (relative error against n for every variant, the serial loop and the float32 floor)."""

from __future__ import annotations

import math

from primbench.report.charts import series_styles, value_marks
from primbench.report.charts.svg import (
    Axis,
    Canvas,
    Panel,
    log2_ticks,
    pow2_text,
    text_width,
)

# A marker shape per device (this GPU first, then each published one); colour is the step's series.
DEVICE_MARKERS = ("circle", "diamond", "triangle", "square")
WIDTH = 1200


def time_text(us: float) -> str:
    return f"{us / 1000:.3g} ms" if us >= 1000 else f"{us:.3g} µs"


def story_chart(steps: list[dict], devices: list[str], title: str):
    """Each step's time on each device that has one, a row per step (top to bottom): dots on a log
    axis where the times span more than value_marks.BAR_SPAN (here, 40 µs to 8 ms), else bars from
    0, in the colour of the step's series and a marker shape per device; the step's name and its
    one-line reason on the left; groups (the seeds, past them, the library) set apart by a rule.
    `steps`: {"variant", "reason", "group", "series", "times": [us or None per device], "anchor"
    (optional: the case's row), "energy" (optional: this GPU's, report/energy.py)}.
    Where a step has energy, a panel on the right gives each step's energy per sum beside its time."""
    from primbench.report.charts import energy as energy_chart

    energy_room = energy_chart.story_panel_room(steps)  # 0 without energy: the chart as it always was
    row_h = 22 + 10 * len(devices)
    left = min(max(max(text_width(s["variant"], 12), text_width(s["reason"], 10.5)) for s in steps) + 20, 560)
    top = 52
    height = top + row_h * len(steps) + 44
    canvas = Canvas(WIDTH, height, label=title, css_class="chart story")
    canvas.title(title)
    shapes = [DEVICE_MARKERS[d % len(DEVICE_MARKERS)] for d in range(len(devices))]
    canvas.legend([(name, {"colour": "#555", "marker": shape, "dot": True}) for name, shape in zip(devices, shapes)],
                  8, 35, columns=len(devices), column_width=max(text_width(name, 11) for name in devices) + 50)
    series = [step.get("series") for step in steps]
    series_styles.series_key(canvas, series)
    colours = [series_styles.series_colour(name) for name in series]  # a step's, in both panels
    right = WIDTH - 16 - energy_room
    panel = value_marks.value_panel(canvas, [t for step in steps for t in step["times"] if t], left, top, right - left,
                                    row_h * len(steps), log_room=(1.6, 2.4), tick_room=10, tick_text=_tick)
    bar = (row_h - 8) / max(1, len(devices))
    for row, (step, colour) in enumerate(zip(steps, colours)):
        y0 = top + row * row_h + 4
        canvas.text(left - 8, y0 + row_h / 2 - 2, step["variant"], size=12, anchor="end",
                    font_family="DejaVu Sans Mono,monospace")
        canvas.text(left - 8, y0 + row_h / 2 + 11, step["reason"], size=10.5, anchor="end", fill="#4a5563")
        for d, time in enumerate(step["times"]):
            if not time:
                continue
            style = {"colour": colour, "marker": shapes[d]}
            end = value_marks.draw_value(panel, y0 + d * bar, bar * 0.88, time, style, href=step.get("anchor") if d == 0 else None,
                                         title=f"{step['variant']} on {devices[d]}: {time_text(time)}")
            canvas.text(end, y0 + d * bar + bar * 0.88 - 1.5, time_text(time), size=10, fill="#222")
    for row, (above, below) in enumerate(zip(steps, steps[1:])):
        if above["group"] != below["group"]:
            y = top + (row + 1) * row_h
            panel._line(8, WIDTH - 16, y, y, "#888", dash="2 3")
            # At the time panel's right edge: over the energy panel it would meet a step's bar.
            canvas.text(right - 4, y + 12, below["group"], size=10, anchor="end", fill="#666", font_style="italic")
    panel.frame()
    words = "log scale; further left is faster" if panel.x.log else "bars from 0; shorter is faster"
    canvas.text(left + panel.width / 2, top + panel.height + 34, f"time per reduction, µs ({words})", size=11,
                anchor="middle")
    if energy_room:
        energy_chart.story_energy_panel(canvas, steps, colours, left=right + energy_chart.STORY_GAP, top=top, row_h=row_h,
                                        bar=bar)
    return canvas.markup()


def _tick(value: float) -> str:
    return f"{value:,.6g}"


SEED_SERIES = ("harris", "seed000", "seed004")  # drawn grey in the accuracy chart: context, not the point
ZERO_DRAWN_AT = 1e-17  # where an error of exactly 0 is drawn on the log axis


def accuracy_chart(accuracy, title: str):
    """Relative error against n (both log) per variant: the serial loop, the trees, the floor."""
    highlighted = [r for r in accuracy.rows if r["kind"] not in SEED_SERIES]
    # Each variant in its series' colour (a shade and a marker each); the loop and the floor are references.
    by_series = series_styles.styles_by_series((id(r), r["kind"]) for r in highlighted if r["kind"] not in REFERENCES)
    styles = [_accuracy_style(row, by_series) for row in accuracy.rows]  # each row's, for its line and its key
    legend = [(row["label"], style) for row, style in zip(accuracy.rows, styles) if row["kind"] not in SEED_SERIES]
    legend_w = max(text_width(name, 11) for name, _ in legend) + 44
    left, top, height = 80, 34, 360
    plot_w = WIDTH - left - legend_w - 16
    canvas = Canvas(WIDTH, top + height + 50, label=title)
    canvas.title(title)
    errors = [max(e, ZERO_DRAWN_AT) for r in accuracy.rows for e in r["errors"] if e is not None]
    x = Axis(min(accuracy.sizes) / 1.3, max(accuracy.sizes) * 1.3, left, left + plot_w, log=True)
    y = Axis(min(errors + [ZERO_DRAWN_AT]) / 3, max(errors) * 3, top + height, top, log=True)
    panel = Panel(canvas, left, top, plot_w, height, x, y)
    panel.x_ticks(log2_ticks(accuracy.sizes, x), pow2_text)
    decades = [10.0 ** k for k in range(math.ceil(math.log10(y.low)), math.floor(math.log10(y.high)) + 1)]
    panel.y_ticks(decades[::max(1, math.ceil(len(decades) / 12))], lambda v: f"{v:.0e}")
    panel.hline(ZERO_DRAWN_AT, "exactly 0", colour="#888", dash="2 2", above=True)
    for row, style in zip(accuracy.rows, styles):
        points = [(n, max(e, ZERO_DRAWN_AT)) for n, e in zip(accuracy.sizes, row["errors"]) if e is not None]
        panel.polyline(points, style, width=2.2 if row["kind"] == "serial" else 1.4, name=row["label"])
        for n, error in points:
            exact = error == ZERO_DRAWN_AT
            panel.point(n, error, style, size=3 if style["colour"] != "#bbbbbb" else 2,
                        title=f"{row['label']} at n = {pow2_text(n)}: relative error {'0 (exact)' if exact else f'{error:.2e}'}")
    panel.frame()
    panel.x_label("n (elements, log2)")
    panel.y_label("|result − exact sum| / |exact sum| (log)", offset=62)
    canvas.legend(legend + [("the seeds' kernels (grey)", {"colour": "#bbbbbb", "marker": "circle"})],
                  left + plot_w + 16, top + 10)
    series_styles.series_key(canvas, [r["kind"] for r in highlighted if r["kind"] not in REFERENCES])
    return canvas.markup()


REFERENCES = ("serial", "floor")  # the host's loop and float32's floor: not series, in colours no series has


def _accuracy_style(row, styles) -> dict:
    if row["kind"] == "floor":
        return {"colour": "#777777", "marker": "square", "dash": "6 3"}
    if row["kind"] == "serial":
        return {"colour": "#b8860b", "marker": "circle"}
    return styles.get(id(row)) or {"colour": "#bbbbbb", "marker": "circle"}
