"""The report's charts of an op, as inline SVG (svg.py): bandwidth against size with the L2 region
from each case's bytes, GB/s against block size and against a parameter, by input distribution,
the accuracy study, and a bar chart beside each list of timings.

Every point links to its case's row (the frame's `anchor` column) and carries a hover title with
the case's time, GB/s and % of its speed of light. Each function returns the chart as Markup."""

from __future__ import annotations

import math

from primbench.report.anchors import case_title, point_records
from primbench.report.charts import series_styles, value_marks
from primbench.report.charts.svg import (
    Axis,
    Canvas,
    Panel,
    linear_ticks,
    log2_ticks,
    log10_ticks,
    number_text,
    pow2_text,
    text_width,
    value_range,
    wants_log,
)
from primbench.runfile.frame import block_or_none, is_number

WIDTH = 1200
LEFT, TOP, PLOT_HEIGHT, BOTTOM = 74, 34, 330, 50
L2_TEXT = "fits in L2:\nnot DRAM bandwidth"


def styles_by_variant(members) -> dict:
    """A fixed style per variant, so that one variant looks the same in every chart of an op: its
    series' colour in a shade of its own, and a marker (series_styles). `members`: (variant,
    series) pairs in the op's order."""
    return series_styles.styles_by_series(members)


def _styles(styles: dict | None, rows, name_key: str = "variant") -> dict:
    """The chart's styles: those given, and for a variant they lack, one by its row's series."""
    missing = dict.fromkeys((r[name_key], r.get("series")) for r in rows if r[name_key] not in (styles or {}))
    return {**series_styles.styles_by_series(missing), **(styles or {})}


def _series_key(canvas: Canvas, styles: dict, names) -> None:
    """The key to the chart's colours: the series of the drawn variants, top right."""
    series_styles.series_key(canvas, [styles[name].get("series") for name in names])


def _legend_width(names, size: float = 11) -> float:
    return max((text_width(name, size) for name in names), default=0) + 44


def _y_axis(values, top: float, height: float, *, extra=(), log: bool | None = None) -> Axis:
    """A GB/s-like axis: log where the values span more than two decades, else from 0, with headroom."""
    log = wants_log(values) if log is None else log
    low, high = value_range(list(values) + list(extra), log=log, from_zero=not log)
    return Axis(low, high, top + height, top, log=log)


def _y_ticks(panel: Panel) -> None:
    axis = panel.y
    panel.y_ticks(log10_ticks(axis.low, axis.high) if axis.log else linear_ticks(axis.low, axis.high))


def bandwidth_vs_size(rows: list[dict], *, peak_gbps, copy_gbps, l2_edge: float | None, l2_bytes, unit: str, title: str,
                      styles: dict | None = None):
    """GB/s against n (log2) per variant, with the NVML peak and the measured copy where the run
    has them, and the sizes whose cases fit in L2 shaded (up to `l2_edge`: report/sections.py)."""
    styles = _styles(styles, rows)
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    labels = {}
    for r in rows:
        block = block_or_none(r.get("chosen_block", r.get("block")))
        labels.setdefault(r["variant"], f"{r['variant']} ({'library block' if block is None else block})")
    legend_w = _legend_width(labels.values())
    plot_w = WIDTH - LEFT - legend_w - 16
    canvas = Canvas(WIDTH, TOP + PLOT_HEIGHT + BOTTOM, label=title)
    canvas.title(title)
    sizes = [float(r["n"]) for r in rows] or [1.0]
    low_n = min(sizes + ([l2_edge] if l2_edge else [])) / 1.25
    x = Axis(low_n, max(sizes) * 1.25, LEFT, LEFT + plot_w, log=True)
    # The two rules, each where the run has its figure: (GB/s, its name, how it is drawn).
    rules = [(float(gbps), name, look) for gbps, name, look in
             ((peak_gbps, "NVML peak", {}), (copy_gbps, "measured copy", {"colour": "#555", "dash": "5 3", "above": False}))
             if is_number(gbps)]
    y = _y_axis([r["gbps"] for r in rows], TOP, PLOT_HEIGHT, extra=[gbps for gbps, _, _ in rules])
    panel = Panel(canvas, LEFT, TOP, plot_w, PLOT_HEIGHT, x, y)
    if l2_edge and l2_edge > x.low:
        panel.x_band(x.low, l2_edge, L2_TEXT, n_max=f"{l2_edge:.6g}", l2_bytes=int(l2_bytes))
    panel.x_ticks(log2_ticks(sizes, x), pow2_text)
    _y_ticks(panel)
    for gbps, name, look in rules:
        panel.hline(gbps, f"{name} {gbps:,.0f} GB/s", **look)
    for variant in variants:
        mine = sorted((r for r in rows if r["variant"] == variant), key=lambda r: r["n"])
        style = styles[variant]
        panel.polyline([(r["n"], r["gbps"]) for r in mine], style, name=variant)
        for r in mine:
            panel.point(r["n"], r["gbps"], style, title=case_title(r), href=r.get("anchor"), key=r.get("key", ""),
                        n=int(r["n"]), bytes=_int_or_blank(r.get("bytes")))
    panel.frame()
    panel.x_label(f"n ({unit}, log2)")
    panel.y_label("GB/s (minimal bytes / median time)" + (", log" if y.log else ""))
    canvas.legend([(labels[v], styles[v]) for v in variants], LEFT + plot_w + 16, TOP + 10)
    _series_key(canvas, styles, variants)
    return canvas.markup()


def _int_or_blank(value) -> str:
    return str(int(value)) if is_number(value) else ""


def block_sweep_multiples(sweeps: dict, *, title: str, styles: dict | None = None):
    """Small multiples: a panel per size n, GB/s against block size (log2), a line per variant
    measured at more than one block; one legend for all panels, headroom above the highest line."""
    sizes = sorted(sweeps)
    records_at = {n: point_records(sweeps[n]) for n in sizes}
    styles = _styles(styles, [r for n in sizes for r in records_at[n]])
    variants = list(dict.fromkeys(v for n in sizes for v in sweeps[n]["variant"]))
    legend_w = _legend_width(variants)
    columns = min(3, len(sizes))
    rows_count = math.ceil(len(sizes) / columns)
    gap, panel_h, row_h = 62, 170, 170 + 58
    panel_w = (WIDTH - LEFT - legend_w - 16 - gap * (columns - 1)) / columns
    height = max(TOP + rows_count * row_h, TOP + 22 + 16 * len(variants))
    canvas = Canvas(WIDTH, height, label=title)
    canvas.title(title)
    for index, n in enumerate(sizes):
        sweep = sweeps[n]
        left = LEFT + (index % columns) * (panel_w + gap)
        top = TOP + 16 + (index // columns) * row_h
        blocks = [float(b) for b in sweep["block"]]
        x = Axis(min(blocks) / 1.3, max(blocks) * 1.3, left, left + panel_w, log=True)
        y = _y_axis(list(sweep["gbps"]), top, panel_h)
        panel = Panel(canvas, left, top, panel_w, panel_h, x, y)
        canvas.text(left, top - 5, f"n = {pow2_text(n)}", size=11, font_weight="bold")
        panel.x_ticks(log2_ticks(blocks, x, label_px=30), lambda v: f"{v:g}")
        _y_ticks(panel)
        records = records_at[n]
        for variant in dict.fromkeys(sweep["variant"]):
            mine = sorted((r for r in records if r["variant"] == variant), key=lambda r: r["block"])
            style = styles[variant]
            panel.polyline([(float(r["block"]), r["gbps"]) for r in mine], style, name=variant)
            for r in mine:
                panel.point(float(r["block"]), r["gbps"], style, title=case_title(r), href=r.get("anchor"),
                            key=r.get("key", ""))
        panel.frame()
        if index % columns == 0:
            panel.y_label("GB/s", offset=46)
        panel.x_label("block size (threads)", size=10)
    canvas.legend([(v, styles[v]) for v in variants], WIDTH - legend_w, TOP + 20)
    _series_key(canvas, styles, variants)
    return canvas.markup()


def param_sweep_chart(sweep: dict, *, title: str):
    """GB/s against one parameter's value (log2), a line per variant and block size."""
    labels = list(sweep["lines"])
    legend_w = _legend_width(labels)
    plot_w = WIDTH - LEFT - legend_w - 16
    canvas = Canvas(WIDTH, TOP + PLOT_HEIGHT + BOTTOM, label=title)
    canvas.title(title)
    values = [float(p[0]) for points in sweep["lines"].values() for p in points]
    x = Axis(min(values) / 1.3, max(values) * 1.3, LEFT, LEFT + plot_w, log=True)
    y = _y_axis([p[1] for points in sweep["lines"].values() for p in points], TOP, PLOT_HEIGHT)
    panel = Panel(canvas, LEFT, TOP, plot_w, PLOT_HEIGHT, x, y)
    panel.x_ticks(log2_ticks(values, x, label_px=30), lambda v: f"{v:g}")
    _y_ticks(panel)
    # A line per variant and block: coloured by its variant's series, shaded and marked per line.
    styles = series_styles.styles_by_series((text, _line_series(sweep["lines"][text])) for text in labels)
    for text in labels:
        style = styles[text]
        points = sweep["lines"][text]
        panel.polyline([(p[0], p[1]) for p in points], style, name=text)
        for p in points:
            row = p[2] if len(p) > 2 else {}
            panel.point(p[0], p[1], style, href=row.get("anchor"),
                        title=f"{text} · {sweep['param']} = {p[0]}\n" + (case_title(row).split("\n")[1] if row else
                                                                       f"{p[1]:,.0f} GB/s"))
    panel.frame()
    panel.x_label(f"{sweep['param']} (log2)")
    panel.y_label("GB/s" + (", log" if y.log else ""))
    canvas.legend([(t, styles[t]) for t in labels], LEFT + plot_w + 16, TOP + 10)
    _series_key(canvas, styles, labels)
    return canvas.markup()


def _line_series(points) -> str | None:
    """The series of a parameter sweep's line: its cases' (each point holds its case, where known)."""
    return next((p[2].get("series") for p in points if len(p) > 2 and p[2].get("series")), None)


def distribution_bars_chart(bars: list[dict], *, title: str, styles: dict | None = None):
    """A group per input distribution, a mark per variant: bars from 0 where GB/s span up to
    value_marks.BAR_SPAN, else dots on a log axis (a histogram's contended variants are 100 times
    slower than the fast ones)."""
    styles = _styles(styles, bars)
    distributions = list(dict.fromkeys(r["distribution"] for r in bars))
    variants = list(dict.fromkeys(r["variant"] for r in bars))
    legend_w = _legend_width(variants)
    plot_w = WIDTH - LEFT - legend_w - 16
    height = 290
    canvas = Canvas(WIDTH, TOP + height + BOTTOM, label=title)
    canvas.title(title)
    panel = value_marks.value_panel(canvas, [r["gbps"] for r in bars], LEFT, TOP, plot_w, height, vertical=True,
                                    log_room=(3, 3), tick_room=8)
    group_w = plot_w / max(len(distributions), 1)
    bar_w = group_w * 0.8 / max(len(variants), 1)
    for d, distribution in enumerate(distributions):
        centre = LEFT + (d + 0.5) * group_w
        canvas.text(centre, TOP + height + 16, distribution, size=11, anchor="middle")
        for i, variant in enumerate(variants):
            row = next((r for r in bars if r["variant"] == variant and r["distribution"] == distribution), None)
            if row is None:
                continue
            style = styles[variant]
            title_text = case_title({**row, "median_ms": row["median_us"] / 1e3 if is_number(row.get("median_us")) else None})
            value_marks.draw_value(panel, centre + (i - len(variants) / 2) * bar_w + bar_w * 0.04, bar_w * 0.92,
                                   row["gbps"], style, title=title_text, href=row.get("anchor"), vertical=True)
    panel.frame()
    panel.x_label("input distribution")
    panel.y_label("GB/s" + (", log scale" if panel.y.log else " (bars from 0)"))
    canvas.legend([(v, {**styles[v], "dot" if panel.y.log else "bar": True}) for v in variants], LEFT + plot_w + 16, TOP + 10)
    _series_key(canvas, styles, variants)
    return canvas.markup()


def timing_bars(rows: list[dict], *, title: str, value_key: str = "time_us", label_key: str = "label",
                unit: str = "µs", width: float = WIDTH):
    """A row per timing, longest = slowest: bars from zero where the times span up to BAR_SPAN,
    else dots on a log axis (value_marks), so the fast ones stay visible and no length is measured
    from an arbitrary origin. A mark's colour is its row's series (the key names them); each links
    to its case."""
    rows = [r for r in rows if is_number(r.get(value_key)) and float(r[value_key]) > 0]
    if not rows:
        return None
    bar_h, gap = 14, 5
    names = [str(r[label_key]) for r in rows]
    left = min(max(text_width(name, 11) for name in names) + 16, 520)
    plot_w = width - left - 60
    height = len(rows) * (bar_h + gap) + gap
    canvas = Canvas(width, TOP + height + BOTTOM - 8, label=title, css_class="chart bars")
    canvas.title(title, x=4)
    values = [float(r[value_key]) for r in rows]
    panel = value_marks.value_panel(canvas, values, left, TOP, plot_w, height)
    x = panel.x
    for index, (row, name, value) in enumerate(zip(rows, names, values)):
        top = TOP + gap + index * (bar_h + gap)
        style = series_styles.series_style(row.get("series"))
        if x.log:  # a dot's row, drawn faintly across: the eye follows it from the name to the dot
            panel._line(left, left + plot_w, top + bar_h / 2, top + bar_h / 2, "#eef0f3")
        end = value_marks.draw_value(panel, top, bar_h, value, style, href=row.get("anchor"),
                                     title=f"{name}\n{number_text(value)} {unit}")
        canvas.text(left - 6, top + bar_h - 3, name, size=11, anchor="end", font_family="DejaVu Sans Mono,monospace")
        canvas.text(end, top + bar_h - 3, number_text(value), size=10, fill="#333")
    panel.frame()
    panel.x_label(value_marks.scale_words(x, unit), size=10)
    series_styles.series_key(canvas, [row.get("series") for row in rows])
    return canvas.markup()
