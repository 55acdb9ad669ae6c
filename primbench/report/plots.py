"""The report's figures (matplotlib), each returned as an SVG data URI so the page needs no files.
charts.ChartBatch draws them in worker processes; plot_base holds what they share."""

from __future__ import annotations

import math

from primbench.report.formats import size_text
from primbench.report.plot_base import (
    data_uri,
    figure,
    finish,
    label,
    legend_width,
    line_styles,
    log2_axis,
    side_legend,
    styles_by_variant,  # noqa: F401 (part of this module's interface: context asks plots for styles)
    styles_for,
)
from primbench.report.story_plot import history_chart, story_chart  # noqa: F401 (drawn through this module)

WIDTH = 12.0  # inches: the content column


def bandwidth_vs_size(lines, *, peak_gbps, copy_gbps, l2_bytes, itemsize: int, title: str, styles=None) -> str:
    """GB/s against n (log2) per variant, with both peaks and the L2-resident sizes shaded."""
    variants = list(dict.fromkeys(lines["variant"]))
    labels = []
    for variant in variants:
        block = lines.loc[lines["variant"] == variant, "chosen_block"].iloc[0]
        missing = block is None or (isinstance(block, float) and math.isnan(block))
        labels.append(f"{variant} ({'library block' if missing else int(block)})")
    right = legend_width(labels)
    fig, (axis,) = figure(WIDTH, 5.2, right=right)
    for style, variant, text in zip(styles_for(variants, styles), variants, labels):
        mine = lines[lines["variant"] == variant]
        axis.plot(mine["n"], mine["gbps"], label=label(text), markersize=4, linewidth=1.4, **style)
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
    log2_axis(axis, sizes, as_powers=True, width_in=WIDTH - right - 0.8)
    axis.set_xlabel("n (elements, log2)")
    axis.set_ylabel("GB/s (minimal bytes / median cold time)")
    return finish(fig, axis, title)


def block_sweep_multiples(sweeps: dict, *, title: str, styles=None) -> str:
    """Small multiples: one panel per size n, GB/s against block size (log2), a line per variant
    measured at more than one block; one legend for all panels."""
    sizes = sorted(sweeps)
    variants = list(dict.fromkeys(v for n in sizes for v in sweeps[n]["variant"]))
    style_of = dict(zip(variants, styles_for(variants, styles)))
    columns = min(3, len(sizes))
    rows = math.ceil(len(sizes) / columns)
    right = legend_width(variants)
    panel_width = (WIDTH - right - 0.7) / columns
    fig, axes = figure(WIDTH, 0.7 + 2.3 * rows, right=right, top=0.5, bottom=0.55, rows=rows, columns=columns,
                       hspace=0.45, wspace=0.22)
    for axis, n in zip(axes, sizes):
        sweep = sweeps[n]
        for variant, mine in sweep.groupby("variant", sort=False):
            mine = mine.sort_values("block")
            axis.plot([int(b) for b in mine["block"]], mine["gbps"], markersize=4, linewidth=1.3, **style_of[variant])
        log2_axis(axis, [int(b) for b in sweep["block"]], as_powers=False, width_in=panel_width)
        axis.set_ylim(bottom=0)
        axis.set_title(f"n = {size_text(n)}", fontsize=9, loc="left")
        axis.tick_params(labelsize=8)
        axis.grid(alpha=0.3)
    for axis in axes[len(sizes):]:
        axis.set_visible(False)
    for axis in axes[::columns]:
        axis.set_ylabel("GB/s", fontsize=8)
    for axis in axes[max(0, len(sizes) - columns):len(sizes)]:
        axis.set_xlabel("block size (threads)", fontsize=8)
    handles = [axes[0].plot([], [], label=label(v), **style_of[v])[0] for v in variants]
    fig.legend(handles=handles, fontsize=7.5, loc="upper left", bbox_to_anchor=(1 - (right - 0.1) / WIDTH, 1 - 0.5 / fig.get_figheight()))
    fig.suptitle(label(title), x=0.7 / WIDTH, ha="left", fontsize=10)
    return data_uri(fig)


def distribution_bars_chart(bars, *, title: str, styles=None) -> str:
    """Grouped bars: one group per input distribution, one bar per variant (GB/s, log scale: the
    contended variants are 100x slower than the fast ones)."""
    distributions = list(dict.fromkeys(bars["distribution"]))
    variants = list(dict.fromkeys(bars["variant"]))
    fig, (axis,) = figure(WIDTH, 4.3, right=legend_width(variants))
    width = 0.8 / max(1, len(variants))
    for i, (style, variant) in enumerate(zip(styles_for(variants, styles), variants)):
        mine = bars[bars["variant"] == variant].set_index("distribution")["gbps"]
        positions = [d + (i - (len(variants) - 1) / 2) * width for d in range(len(distributions))]
        axis.bar(positions, [mine.get(d, float("nan")) for d in distributions], width=width * 0.95,
                 color=style["color"], label=label(variant))
    axis.set_yscale("log")
    axis.set_xticks(range(len(distributions)), [label(d) for d in distributions])
    axis.set_xlabel("input distribution")
    axis.set_ylabel("GB/s (log)")
    return finish(fig, axis, title, from_zero=False, grid_axis="y")


def param_sweep_chart(sweep: dict, *, title: str) -> str:
    """GB/s against one parameter's value (log2), a line per variant and block size."""
    labels = list(sweep["lines"])
    right = legend_width(labels)
    fig, (axis,) = figure(WIDTH, 4.3, right=right)
    values = []
    for style, text in zip(line_styles(len(labels)), labels):
        points = sweep["lines"][text]
        values += [v for v, _ in points]
        axis.plot([v for v, _ in points], [g for _, g in points], label=label(text), markersize=5, linewidth=1.3, **style)
    log2_axis(axis, values, as_powers=False, width_in=WIDTH - right - 0.8)
    axis.set_xlabel(f"{sweep['param']} (log2)")
    axis.set_ylabel("GB/s")
    return finish(fig, axis, title)


SEED_SERIES = ("harris", "seed000", "seed004")  # drawn grey in the accuracy chart: context, not the point
ZERO_DRAWN_AT = 1e-17  # where an error of exactly 0 is drawn on the log axis


def accuracy_chart(accuracy, title: str) -> str:
    """Relative error against n (both log) per variant: the serial loop, the trees, the floor."""
    highlighted = [r for r in accuracy.rows if r["kind"] not in SEED_SERIES]
    fig, (axis,) = figure(WIDTH, 5.2, right=legend_width([r["label"] for r in highlighted]))
    style_of = {id(r): s for r, s in zip(highlighted, line_styles(len(highlighted)))}
    for row in accuracy.rows:
        points = [(n, max(e, ZERO_DRAWN_AT)) for n, e in zip(accuracy.sizes, row["errors"]) if e is not None]
        if not points:
            continue
        xs, ys = zip(*points)
        if row["kind"] == "floor":
            axis.plot(xs, ys, color="black", linestyle="--", linewidth=1.2, label=label(row["label"]))
        elif row["kind"] == "serial":
            axis.plot(xs, ys, color="#c0392b", linewidth=2.2, marker="o", label=label(row["label"]))
        elif id(row) in style_of:
            axis.plot(xs, ys, linewidth=1.6, markersize=5, label=label(row["label"]), **style_of[id(row)])
        else:  # the seeds' kernels: context, not the point
            axis.plot(xs, ys, color="#bbbbbb", linewidth=0.8, label=None)
    log2_axis(axis, accuracy.sizes, as_powers=True, width_in=8)
    axis.set_yscale("log")
    axis.axhline(ZERO_DRAWN_AT, color="#888", linewidth=0.6, linestyle=":")
    axis.annotate("exactly 0", (0.99, ZERO_DRAWN_AT), xycoords=("axes fraction", "data"), ha="right", va="bottom", fontsize=8, color="#666")
    axis.set_xlabel("n (elements, log2)")
    axis.set_ylabel("|result - exact sum| / |exact sum| (log)")
    return finish(fig, axis, title, from_zero=False, grid_which="both")


__all__ = ["accuracy_chart", "bandwidth_vs_size", "block_sweep_multiples", "distribution_bars_chart", "history_chart",
           "param_sweep_chart", "side_legend", "story_chart"]
