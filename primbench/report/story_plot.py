"""The two charts that tell a story over steps: the report's opening chart (absolute time of each
progression step, this GPU beside the published ones, each step with its reason) and a site's
history of one op (median time run after run, with the steps step detection found)."""

from __future__ import annotations

from primbench.report.formats import size_text
from primbench.report.plot_base import data_uri, figure, label, legend_width, line_styles, plain_log_labels, side_legend

STORY_COLOURS = ("#0b5cad", "#d55e00", "#009e73", "#7b4173")  # this GPU first, then each published device
ROW_HEIGHT = 0.42  # inches per step


def _time_text(us: float) -> str:
    return f"{us / 1000:.3g} ms" if us >= 1000 else f"{us:.3g} µs"


def story_chart(steps: list[dict], devices: list[str], title: str) -> str:
    """Horizontal bars on a log axis: for each step (top to bottom) its time on each device that
    has one; the step's name and its one-line reason on the left; groups (the seeds, past them,
    the library) set apart by a rule. `steps`: {"variant", "reason", "group", "times": [us or None
    per device]}."""
    left = 4.9
    height = 0.95 + ROW_HEIGHT * len(steps)
    fig, (axis,) = figure(12.0, height, left=left, right=0.3, top=0.62, bottom=0.42)
    bar = ROW_HEIGHT * 0.78 / max(1, len(devices)) / ROW_HEIGHT
    values = [t for step in steps for t in step["times"] if t]
    for row, step in enumerate(steps):
        for d, time in enumerate(step["times"]):
            if not time:
                continue
            y = row + (d - (len(devices) - 1) / 2) * bar
            axis.barh(y, time, height=bar * 0.92, color=STORY_COLOURS[d % len(STORY_COLOURS)])
            axis.annotate(_time_text(time), (time, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=7)
        axis.annotate(label(step["variant"]), (0, row), xycoords=("axes fraction", "data"), xytext=(-6, 5),
                      textcoords="offset points", ha="right", va="center", fontsize=8.5, family="monospace")
        axis.annotate(label(step["reason"]), (0, row), xycoords=("axes fraction", "data"), xytext=(-6, -6),
                      textcoords="offset points", ha="right", va="center", fontsize=7.5, color="#4a5563")
    for row, (above, below) in enumerate(zip(steps, steps[1:])):
        if above["group"] != below["group"]:
            axis.axhline(row + 0.5, color="#888", linewidth=0.8, linestyle=":")
            axis.annotate(below["group"], (1, row + 0.5), xycoords=("axes fraction", "data"), xytext=(-4, -3),
                          textcoords="offset points", ha="right", va="top", fontsize=7.5, color="#666", style="italic")
    axis.set_xscale("log")
    plain_log_labels(axis.xaxis)
    if values:
        axis.set_xlim(min(values) / 1.6, max(values) * 2.2)  # room for the value labels
    axis.set_ylim(len(steps) - 0.5, -0.5)
    axis.set_yticks([])
    axis.set_xlabel("time per reduction, µs (log scale; shorter is faster)", fontsize=8.5)
    axis.tick_params(labelsize=8)
    axis.grid(axis="x", which="both", alpha=0.25)
    from matplotlib.patches import Patch

    handles = [Patch(color=STORY_COLOURS[d % len(STORY_COLOURS)], label=label(name)) for d, name in enumerate(devices)]
    fig.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(0.1 / 12, 1 - 0.3 / height),
               ncols=len(devices), frameon=False, borderaxespad=0)
    fig.suptitle(label(title), x=0.1 / 12, y=1 - 0.06 / height, ha="left", va="top", fontsize=10.5, weight="bold")
    return data_uri(fig)


def history_chart(panels: list[dict], dates: list[str], title: str) -> str:
    """One op's history: a panel per size, a line per variant (median µs, log) over the runs in
    time order; a red triangle where step detection found a slowdown begin, labelled with its size.
    `panels`: {"n", "lines": {variant: [(run index, us)]}, "regressions": [(variant, index, us, pct)]}."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    variants = list(dict.fromkeys(v for panel in panels for v in panel["lines"]))
    style_of = dict(zip(variants, line_styles(len(variants))))
    right = legend_width(variants)
    # Tall enough for the legend too: one line of 7.5 pt text is ~0.17 in.
    height = max(0.75 + 2.9 * len(panels), 1.5 + 0.17 * len(variants))
    fig, axes = figure(12.0, height, right=right, top=0.7, bottom=0.6, rows=len(panels), hspace=0.5)
    many = len(dates) > 40  # a year of nightly runs: lines only, markers would cover them
    for axis, panel in zip(axes, panels):
        for variant, points in panel["lines"].items():
            xs, ys = zip(*sorted(points))
            style = dict(style_of[variant], markersize=2 if many else 4)
            axis.plot(xs, ys, linewidth=1.1, label=label(variant), **style)
        for variant, index, us, pct in panel["regressions"]:
            axis.plot([index], [us], marker="v", markersize=9, color="#c0392b", zorder=5)
            axis.annotate(f"+{pct:.0f} %", (index, us), xytext=(0, 7), textcoords="offset points", ha="center",
                          fontsize=7.5, color="#c0392b")
        axis.set_yscale("log")
        plain_log_labels(axis.yaxis)
        axis.set_title(f"n = {size_text(panel['n'])}", fontsize=9, loc="left")
        axis.set_ylabel("median µs (log)", fontsize=8)
        axis.set_xlim(-0.5, max(len(dates) - 0.5, 0.5))
        axis.xaxis.set_major_locator(MaxNLocator(nbins=8, integer=True))
        axis.xaxis.set_major_formatter(FuncFormatter(lambda v, _: dates[int(v)] if 0 <= int(v) < len(dates) and v == int(v) else ""))
        axis.tick_params(labelsize=7.5)
        axis.grid(alpha=0.3, which="both")
    axes[-1].set_xlabel("run (start date, oldest left)", fontsize=8)
    side_legend(axes[0])
    fig.suptitle(label(title), x=0.8 / 12, ha="left", fontsize=10)
    return data_uri(fig)

