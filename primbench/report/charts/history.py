"""The published site's charts as inline SVG (svg.py): an op's history at one size (each variant's
median time run after run, in panels of at most MAX_LINES lines on one y scale, with the slowdowns
step detection found) and the GPU models page's bars of % of peak.

A history point is a link to its run's report, another page of the site, and its hover title names
the run, its date and commit, the variant, the size and the median. A bar of the GPU models page
links to its row of the table below it. Each function returns the chart as Markup."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from primbench.report.charts import series_styles
from primbench.report.charts.svg import (
    Axis,
    Canvas,
    Panel,
    line_style,
    linear_ticks,
    log10_ticks,
    number_text,
    pow2_text,
    text_width,
    value_range,
    wants_log,
)

WIDTH = 1100  # px of the viewBox: inside a 1280 px window's column without scaling down
LEFT, TOP = 72, 30
PANEL_HEIGHT, PANEL_GAP = 150, 62  # the gap holds the x tick labels and the next panel's heading
MAX_LINES = 8  # more lines than this in one panel can no longer be told apart
MANY_RUNS = 40  # a year of nightly runs: smaller markers, or they cover the lines
# Log where the times span more than a decade: on a linear axis a 120 µs variant leaves a 5 µs one
# (and its 10 % step) a pixel high in a shared panel; svg.wants_log defaults to two decades.
LOG_DECADES = 1.0
LEGEND_CHARS = 48  # a longer name is cut in the legend (its points' titles keep it whole)
REGRESSION = {"colour": "#c0392b", "marker": "down"}
PEAK_COLOURS = ("#0b5cad", "#d55e00", "#009e73", "#7b4173", "#8c564b", "#17becf")  # a GPU model each


def size_label(n) -> str:
    """n as '2²⁵' when a power of two from 2 up, else with thousands separators ('1', '1,000'):
    plain text, for SVG and captions."""
    n = int(n)
    return pow2_text(n) if n > 1 and n & (n - 1) == 0 else f"{n:,}"


def panel_groups(variants: list, most: int = MAX_LINES) -> list[list]:
    """`variants` in order, cut into the fewest groups of at most `most`, as even as they can be."""
    if not variants:
        return []
    count = math.ceil(len(variants) / most)
    size = math.ceil(len(variants) / count)
    return [variants[i:i + size] for i in range(0, len(variants), size)]


def op_styles(members: list) -> dict:
    """A style per variant of an op ((variant, series) in its order), so a variant looks the same at
    every size: its series' colour, as in the report (series_styles), a shade and a marker its own."""
    return series_styles.styles_by_series(members)


def _distinct_styles(groups: list[list], styles: dict) -> dict:
    """`styles`, unless a panel would hold two lines of one style: then styles by place in this
    chart (colours that then mean no series), which never repeat in a panel."""
    if all(len({tuple(sorted(styles[v].items())) for v in group}) == len(group) for group in groups):
        return styles
    return {v: line_style(index) for index, v in enumerate(v for group in groups for v in group)}


def link_to_page(element: ET.Element | None, href: str) -> None:
    """Make a point drawn without a link (`Panel.point`'s href is a '#' fragment of this page) a
    link to another page of the site."""
    if element is not None:
        element.tag = "a"
        element.set("href", href)


def point_title(run: dict, variant: str, n: int, us: float) -> str:
    when = (run.get("started") or "date unknown")[:16].replace("T", " ")
    commit = (run.get("git") or "")[:7] or "unknown"
    return f"run {run['id']} · {when} · commit {commit}\n{variant} · n = {size_label(n)} · median {number_text(us)} µs"


def log_scale(lines: dict) -> bool:
    """Whether a history chart's time axis is log: where its times span more than LOG_DECADES."""
    return wants_log([us for points in lines.values() for _, us in points], LOG_DECADES)


def _run_ticks(count: int, width: float) -> list[int]:
    """The run indexes that get a date label: every one where they fit, else evenly spaced."""
    room = max(int(width // 90), 1)
    step = max(math.ceil(count / room), 1)
    return list(range(0, count, step))


def history_chart(op: str, series: dict, runs: list[dict], dates: list[str], styles: dict):
    """One op at one size: a line per variant (median µs) over the op's runs in time order (x: the
    index in `runs`, labelled by `dates`), in panels of at most MAX_LINES lines on one y scale (log
    where the times span more than LOG_DECADES); a red triangle and '+N %' where a slowdown began.
    Each point links to its run's page: a digest's page is relative to the site's root, where the
    history page is.
    `series`: {"n", "lines": {variant: [(run index, us)]}, "regressions": [(variant, index, us, pct)]}."""
    n, lines = series["n"], series["lines"]
    groups = panel_groups(list(lines))
    styles = _distinct_styles(groups, styles)
    names = {v: v if len(v) <= LEGEND_CHARS else v[:LEGEND_CHARS - 1] + "…" for v in lines}
    legend_w = max(text_width(name, 11) for name in names.values()) + 44
    plot_w = WIDTH - LEFT - legend_w - 16
    title = f"{op} at n = {size_label(n)}: median time per run"
    height = TOP + 18 + len(groups) * (PANEL_HEIGHT + PANEL_GAP) - PANEL_GAP + 28  # the last panel's tick labels
    canvas = Canvas(WIDTH, height, label=title, css_class="chart history-chart")
    canvas.title(title)
    values = [us for points in lines.values() for _, us in points]
    log = log_scale(lines)
    low, high = value_range(values, log=log, headroom=0.14)  # room above for a slowdown's label
    low = low if log else max(low, 0.0)
    for index, group in enumerate(groups):
        top = TOP + 18 + index * (PANEL_HEIGHT + PANEL_GAP)
        panel = Panel(canvas, LEFT, top, plot_w, PANEL_HEIGHT, Axis(-0.5, max(len(runs) - 0.5, 0.5), LEFT, LEFT + plot_w),
                      Axis(low, high, top + PANEL_HEIGHT, top, log=log))
        if len(groups) > 1:
            first = sum(len(g) for g in groups[:index]) + 1
            canvas.text(LEFT, top - 6, f"lines {first}–{first + len(group) - 1} of {len(lines)}", size=11,
                        font_weight="bold")
        _history_panel(panel, {v: lines[v] for v in group}, series["regressions"], runs, dates, styles, n)
        panel.y_label("median µs" + (", log" if log else ""), offset=54)
        canvas.legend([(names[v], styles[v]) for v in group], LEFT + plot_w + 16, top + 10)
    series_styles.series_key(canvas, [styles[v].get("series") for v in lines])
    return canvas.markup()


def _history_panel(panel: Panel, lines: dict, regressions: list, runs: list[dict], dates: list[str], styles: dict,
                   n: int) -> None:
    panel.x_ticks(_run_ticks(len(runs), panel.width), lambda v: dates[int(round(v))])
    axis = panel.y
    panel.y_ticks(log10_ticks(axis.low, axis.high, room=5) if axis.log else linear_ticks(axis.low, axis.high, 4))
    many = len(runs) > MANY_RUNS
    for variant, points in lines.items():
        style = styles[variant]
        panel.polyline(points, style, name=variant)
        # Markers 2 px apart show no shape: small circles, the cheapest to draw (a year of runs is ~70,000 points).
        marker_style, size = ({"colour": style["colour"], "marker": "circle"}, 2.0) if many else (style, 3.5)
        for at, us in points:
            link_to_page(panel.point(at, us, marker_style, title=point_title(runs[at], variant, n, us), size=size),
                         runs[at]["page"])
    for variant, at, us, pct in regressions:
        if variant not in lines:
            continue
        title = f"{pct:+.0f} % slower from this run on\n" + point_title(runs[at], variant, n, us)
        link_to_page(panel.point(at, us, REGRESSION, title=title, size=6, series=variant, slowdown=f"{pct:.1f}"),
                     runs[at]["page"])
        panel.canvas.text(panel.x(at), panel.y(us) - 10, f"{pct:+.0f} %", size=10, anchor="middle",
                          parent=panel.group, fill=REGRESSION["colour"], font_weight="bold")
    panel.frame()


def peak_bars(rows: list[dict], gpus: list[dict]):
    """The GPU models page's table as bars: for each row (op, n, variant) a bar per GPU model of
    its % of that GPU's own peak, rows grouped under their op and size; each bar links to its row
    of the table (`anchor`). None when no row has a figure."""
    if not any(cell and cell.get("pct_peak") is not None for row in rows for cell in row["cells"]):
        return None
    bar_h = 12 if len(gpus) == 1 else max(5, 22 // len(gpus))
    row_h, heading_h = bar_h * len(gpus) + 5, 22
    label_w = min(max(text_width(row["variant"], 11) for row in rows) + 24, 380)
    plot_w = WIDTH - label_w - 70  # room for the last bar's value
    groups = list(dict.fromkeys((row["op"], row["n"]) for row in rows))
    top = TOP + 16 * len(gpus) + 26
    height = top + len(groups) * heading_h + len(rows) * row_h + 40
    title = "% of each GPU's own peak, per op, size and variant"
    canvas = Canvas(WIDTH, height, label=title, css_class="chart peak-bars")
    canvas.title(title)
    styles = [{"colour": PEAK_COLOURS[i % len(PEAK_COLOURS)], "bar": True} for i in range(len(gpus))]
    canvas.legend([(g["gpu"], s) for g, s in zip(gpus, styles)], label_w, TOP + 8)
    values = [c["pct_peak"] for row in rows for c in row["cells"] if c and c.get("pct_peak") is not None]
    x = Axis(0.0, max(100.0, max(values)) * 1.06, label_w, label_w + plot_w)
    panel = Panel(canvas, label_w, top, plot_w, height - top - 40, x, Axis(0, 1, height - 40, top))
    ticks = linear_ticks(x.low, x.high, 5)
    panel.x_ticks(ticks, lambda v: f"{v:g} %")
    for tick in ticks:  # the same labels above the bars: the chart is taller than a screen
        canvas.text(x(tick), top - 5, f"{tick:g} %", size=10, anchor="middle", fill="#333")
    _vline(panel, 100.0, "#555")
    y = top
    for op, n in groups:
        canvas.text(8, y + 15, f"{op} · n = {size_label(n)}", size=11, font_weight="bold")
        y += heading_h
        for row in (r for r in rows if (r["op"], r["n"]) == (op, n)):
            _peak_row(panel, row, gpus, styles, y, bar_h)
            y += row_h
    panel.frame()
    return canvas.markup()


def _peak_row(panel: Panel, row: dict, gpus: list[dict], styles: list[dict], y: float, bar_h: float) -> None:
    canvas = panel.canvas
    canvas.text(panel.left - 8, y + bar_h * len(gpus) / 2 + 4, row["variant"], size=11, anchor="end",
                font_family="DejaVu Sans Mono,monospace")
    for index, (gpu, cell, style) in enumerate(zip(gpus, row["cells"], styles)):
        top = y + index * bar_h
        if not cell or cell.get("pct_peak") is None:
            canvas.text(panel.left + 4, top + bar_h - 2, "no figure", size=9, fill="#777")
            continue
        pct = float(cell["pct_peak"])
        time = f" · {number_text(cell['time_us'])} µs" if cell.get("time_us") is not None else ""
        title = f"{gpu['gpu']} (run {cell['run']})\n{row['op']} · {row['variant']} · n = {size_label(row['n'])}\n" \
                f"{pct:.1f} % of peak{time}"
        panel.hbar(top, bar_h - 1, pct, style, title=title, href=row["anchor"], gpu=gpu["gpu"])
        canvas.text(min(panel.x(pct), panel.right) + 4, top + bar_h - 2, f"{pct:.0f} %", size=9, fill="#333")


def _vline(panel: Panel, value: float, colour: str) -> None:
    """A vertical rule at `value` (100 % of peak) across the panel."""
    if panel.x.inside(value):
        px = f"{panel.x(value):.2f}"
        ET.SubElement(panel.group, "line", {"x1": px, "x2": px, "y1": f"{panel.top:.2f}", "y2": f"{panel.bottom:.2f}",
                                            "stroke": colour, "stroke-dasharray": "4 3"})
