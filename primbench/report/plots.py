"""The report's figures (matplotlib, Agg), each returned as a PNG data URI so the page needs no files."""

from __future__ import annotations

import base64
import io
import math

FIGURE_DPI = 110
MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "<", ">")


def _figure(width: float, height: float):
    # A bare Figure (no pyplot) keeps no global state between reports and needs no display.
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=FIGURE_DPI, layout="constrained")


def _data_uri(figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _label(text) -> str:
    # Run-file strings are plain text: a '$' would start mathtext, a leading '_' hides a legend entry.
    text = str(text).replace("$", r"\$")
    return " " + text if text.startswith("_") else text


def line_styles(count: int) -> list[dict]:
    """Colour, line style and marker for `count` lines, distinguishable well past 16."""
    from matplotlib import colormaps

    # tab20's dark shades first, then its light ones (dashed), then tab20b: neighbours differ.
    tab20 = colormaps["tab20"].colors
    colours = list(tab20[0::2]) + list(tab20[1::2]) + list(colormaps["tab20b"].colors)
    styles = []
    for i in range(count):
        styles.append(
            {
                "color": colours[i % len(colours)],
                "linestyle": ("-", "--", ":", "-.")[(i // 10) % 4],
                "marker": MARKERS[i % len(MARKERS)],
            }
        )
    return styles


def styles_by_variant(variants) -> dict:
    """A fixed style per variant, so that one variant looks the same in every plot of an op."""
    return dict(zip(variants, line_styles(len(variants))))


def _styles_for(variants, styles):
    styles = styles or {}
    spare = iter(line_styles(len(variants) + len(styles)))
    return [styles.get(v) or next(spare) for v in variants]


def _log2_axis(axis, values, as_powers: bool) -> None:
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    axis.set_xscale("log", base=2)
    ticks = sorted({int(v) for v in values})
    axis.xaxis.set_major_locator(FixedLocator(ticks))
    axis.xaxis.set_minor_locator(NullLocator())
    axis.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _pow2_label(v) if as_powers else f"{v:g}"))


def _pow2_label(value: float) -> str:
    exponent = math.log2(value) if value > 0 else 0.5
    if abs(exponent - round(exponent)) < 1e-9:
        return f"$2^{{{int(round(exponent))}}}$"
    return f"{value:g}"


def progression_chart(progression, references, device_label: str) -> str:
    """Grouped bars, log y: cumulative speedup of each progression step here and in each reference."""
    import numpy as np

    figure = _figure(10, 4.2)
    axis = figure.add_subplot()
    variants = list(progression["variant"])
    groups = [(device_label, list(progression["cumulative_speedup"]))]
    for reference in references:
        groups.append((f"{reference.label} (published)", list(progression[f"{reference.id}_cumulative"])))
    width = 0.8 / len(groups)
    x = np.arange(len(variants))
    colours = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b")
    for i, (label, values) in enumerate(groups):
        heights = [v if v is not None and math.isfinite(v) else 0 for v in values]
        bars = axis.bar(x + (i - (len(groups) - 1) / 2) * width, heights, width, label=_label(label),
                        color=colours[i % len(colours)])
        for bar, value in zip(bars, values):
            if value is not None and math.isfinite(value):
                axis.annotate(f"{value:.1f}", (bar.get_x() + bar.get_width() / 2, value), ha="center",
                              va="bottom", fontsize=7, xytext=(0, 1), textcoords="offset points")
    axis.set_yscale("log")
    axis.axhline(1.0, color="#888", linewidth=0.8)
    axis.set_xticks(x, [_label(v) for v in variants], rotation=30, ha="right", fontsize=8)
    axis.set_ylabel("cumulative speedup over the first kernel (log)")
    axis.set_title("Reduce progression: each device against its own first kernel")
    axis.legend(fontsize=8, loc="upper left")
    axis.grid(axis="y", which="both", alpha=0.3)
    return _data_uri(figure)


def bandwidth_vs_size(lines, *, peak_gbps, copy_gbps, l2_bytes, itemsize: int, title: str, styles=None) -> str:
    """GB/s against n (log2) per variant, with both peaks and the L2-resident sizes shaded."""
    figure = _figure(11, 5.5)
    axis = figure.add_subplot()
    variants = list(dict.fromkeys(lines["variant"]))
    for style, variant in zip(_styles_for(variants, styles), variants):
        mine = lines[lines["variant"] == variant]
        block = mine["chosen_block"].iloc[0]
        suffix = " (library block)" if block is None or (isinstance(block, float) and math.isnan(block)) else f" ({int(block)})"
        axis.plot(mine["n"], mine["gbps"], label=_label(f"{variant}{suffix}"), markersize=4, linewidth=1.3, **style)
    if peak_gbps and math.isfinite(peak_gbps):
        axis.axhline(peak_gbps, color="black", linewidth=1.2, linestyle="-")
        axis.annotate(f"NVML peak {peak_gbps:.0f} GB/s", (0.01, peak_gbps), xycoords=("axes fraction", "data"),
                      va="bottom", fontsize=8)
    if copy_gbps and math.isfinite(copy_gbps):
        axis.axhline(copy_gbps, color="dimgray", linewidth=1.2, linestyle="--")
        axis.annotate(f"measured copy {copy_gbps:.0f} GB/s", (0.01, copy_gbps), xycoords=("axes fraction", "data"),
                      va="top", fontsize=8, color="dimgray")
    sizes = list(lines["n"]) or [1]
    if l2_bytes and itemsize:
        l2_n = l2_bytes / itemsize
        low = min(min(sizes), l2_n) / 1.2
        axis.axvspan(low, l2_n, color="#f2c744", alpha=0.18, linewidth=0)
        axis.axvline(l2_n, color="#b8860b", linewidth=1)
        axis.annotate("fits in L2:\nnot DRAM bandwidth", (l2_n, 0.6), xycoords=("data", "axes fraction"),
                      ha="right", va="center", fontsize=9, color="#8a6d00", xytext=(-6, 0), textcoords="offset points")
        axis.set_xlim(left=low)
    _log2_axis(axis, sizes, as_powers=True)
    axis.set_xlabel("n (elements, log2)")
    axis.set_ylabel("GB/s (minimal bytes / median cold time)")
    return _finish_with_side_legend(figure, axis, title)


def _finish_with_side_legend(figure, axis, title: str, *, from_zero: bool = True, grid_axis: str = "both",
                             grid_which: str = "major") -> str:
    """Common ending of the charts: y from 0 (not on a log axis), title, grid, legend beside the plot."""
    if from_zero:
        axis.set_ylim(bottom=0)
    axis.set_title(_label(title))
    axis.grid(alpha=0.3, axis=grid_axis, which=grid_which)
    axis.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return _data_uri(figure)


def block_sweep_chart(sweep, *, n: int, title: str, styles=None) -> str:
    """GB/s against block size (log2) per variant, at one size n."""
    figure = _figure(10, 4.5)
    axis = figure.add_subplot()
    variants = list(dict.fromkeys(sweep["variant"]))
    for style, variant in zip(_styles_for(variants, styles), variants):
        mine = sweep[sweep["variant"] == variant].sort_values("block")
        axis.plot([int(b) for b in mine["block"]], mine["gbps"], label=_label(variant), markersize=5,
                  linewidth=1.3, **style)
    _log2_axis(axis, [int(b) for b in sweep["block"]], as_powers=False)
    axis.set_xlabel("block size (threads, log2)")
    axis.set_ylabel("GB/s")
    return _finish_with_side_legend(figure, axis, title)


def distribution_bars_chart(bars, *, title: str, styles=None) -> str:
    """Grouped bars: one group per input distribution, one bar per variant (GB/s, log scale: the
    contended variants are 100x slower than the fast ones)."""
    figure = _figure(10, 4.5)
    axis = figure.add_subplot()
    distributions = list(dict.fromkeys(bars["distribution"]))
    variants = list(dict.fromkeys(bars["variant"]))
    width = 0.8 / max(1, len(variants))
    for i, (style, variant) in enumerate(zip(_styles_for(variants, styles), variants)):
        mine = bars[bars["variant"] == variant].set_index("distribution")["gbps"]
        positions = [d + (i - (len(variants) - 1) / 2) * width for d in range(len(distributions))]
        axis.bar(positions, [mine.get(d, float("nan")) for d in distributions], width=width * 0.95,
                 color=style["color"], label=_label(variant))
    axis.set_yscale("log")
    axis.set_xticks(range(len(distributions)), [_label(d) for d in distributions])
    axis.set_xlabel("input distribution")
    axis.set_ylabel("GB/s (log)")
    return _finish_with_side_legend(figure, axis, title, from_zero=False, grid_axis="y")


def param_sweep_chart(sweep: dict, *, title: str) -> str:
    """GB/s against one parameter's value (log2), a line per variant and block size."""
    figure = _figure(10, 4.5)
    axis = figure.add_subplot()
    labels = list(sweep["lines"])
    values = []
    for style, label in zip(line_styles(len(labels)), labels):
        points = sweep["lines"][label]
        values += [v for v, _ in points]
        axis.plot([v for v, _ in points], [g for _, g in points], label=_label(label), markersize=5, linewidth=1.3, **style)
    _log2_axis(axis, values, as_powers=False)
    axis.set_xlabel(f"{sweep['param']} (log2)")
    axis.set_ylabel("GB/s")
    return _finish_with_side_legend(figure, axis, title)


SEED_SERIES = ("harris", "seed000", "seed004")  # drawn grey in the accuracy chart: context, not the point
ZERO_DRAWN_AT = 1e-17  # where an error of exactly 0 is drawn on the log axis


def accuracy_chart(accuracy, title: str) -> str:
    """Relative error against n (both log) per variant: the serial loop, the trees, the floor."""
    figure = _figure(11, 5.5)
    axis = figure.add_subplot()
    highlighted = [r for r in accuracy.rows if r["kind"] not in SEED_SERIES]
    styles = line_styles(len(highlighted))
    style_of = {id(r): s for r, s in zip(highlighted, styles)}
    for row in accuracy.rows:
        points = [(n, max(e, ZERO_DRAWN_AT)) for n, e in zip(accuracy.sizes, row["errors"]) if e is not None]
        if not points:
            continue
        xs, ys = zip(*points)
        if row["kind"] == "floor":
            axis.plot(xs, ys, color="black", linestyle="--", linewidth=1.2, label=_label(row["label"]))
        elif row["kind"] == "serial":
            axis.plot(xs, ys, color="#c0392b", linewidth=2.2, marker="o", label=_label(row["label"]))
        elif id(row) in style_of:
            axis.plot(xs, ys, linewidth=1.6, markersize=5, label=_label(row["label"]), **style_of[id(row)])
        else:  # the seeds' kernels: context, not the point
            axis.plot(xs, ys, color="#bbbbbb", linewidth=0.8, label=None)
    axis.set_xscale("log", base=2)
    axis.set_yscale("log")
    axis.axhline(ZERO_DRAWN_AT, color="#888", linewidth=0.6, linestyle=":")
    axis.annotate("exactly 0", (0.99, ZERO_DRAWN_AT), xycoords=("axes fraction", "data"), ha="right", va="bottom", fontsize=8, color="#666")
    axis.set_xlabel("n (elements, log2)")
    axis.set_ylabel("|result - exact sum| / |exact sum| (log)")
    return _finish_with_side_legend(figure, axis, title, from_zero=False, grid_which="both")


def history_chart(lines: dict, labels: list[str], title: str) -> str:
    """Median time (us, log) of each variant across runs in time order; a red ring marks a run
    that `compare` found SLOWER than the one before it."""
    figure = _figure(11, 4.8)
    axis = figure.add_subplot()
    variants = list(lines)
    for style, variant in zip(line_styles(len(variants)), variants):
        points = sorted(lines[variant])
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        axis.plot(xs, ys, label=_label(variant), markersize=4, linewidth=1.2, **style)
        slow = [(p[0], p[1]) for p in points if p[2]]
        if slow:
            axis.scatter([x for x, _ in slow], [y for _, y in slow], s=140, facecolors="none", edgecolors="#c0392b",
                         linewidths=2, zorder=5)
    axis.set_yscale("log")
    axis.set_xticks(range(len(labels)), [_label(label) for label in labels], rotation=30, ha="right", fontsize=7)
    axis.set_xlim(-0.5, max(len(labels) - 0.5, 0.5))
    axis.set_ylabel("median time, us (log)")
    return _finish_with_side_legend(figure, axis, title, from_zero=False, grid_which="both")
