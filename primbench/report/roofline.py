"""The roofline figure of the counters section: each profiled variant's achieved rate against its
intensity, under the GPU's DRAM slope and compute roof. Float work on FLOP axes; integer work
(histogram, scan int32, top-k's selection) on warp-instruction axes, its roof the issue rate."""

from __future__ import annotations

from primbench.report.plot_base import FIGURE_DPI as DPI
from primbench.report.plot_base import data_uri


def roofline_chart(points: list[dict], roofs: dict) -> str | None:
    """An SVG data URI of one or two panels (float and integer work), or None with no points."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    panels = [(True, "flop_per_byte", "flops", roofs.get("flops"), "FLOP/byte (fp32 add, mul, 2 x fma)", "FLOP/s"),
              (False, "inst_per_byte", "warp_ips", roofs.get("warp_ips"), "warp instructions per DRAM byte",
               "warp instructions/s")]
    panels = [p for p in panels if any(point["float"] == p[0] for point in points)]
    if not panels or not roofs.get("dram"):
        return None
    # Fixed margins: constrained layout took 0.9 s of this figure's 1.1 s on the reference run.
    figure = Figure(figsize=(5.2 * len(panels), 3.8), dpi=DPI)
    figure.subplots_adjust(left=0.09 if len(panels) > 1 else 0.15, right=0.98, bottom=0.13, top=0.92, wspace=0.28)
    for index, (is_float, x_key, y_key, roof, x_label, y_label) in enumerate(panels, start=1):
        axis = figure.add_subplot(1, len(panels), index)
        chosen = [p for p in points if p["float"] == is_float and p[x_key] > 0 and p[y_key] > 0]
        xs = [p[x_key] for p in chosen]
        low, high = min(xs + [1e-3]) / 4, max(xs + [10.0]) * 4
        grid = [low * (high / low) ** (i / 200) for i in range(201)]
        bound = [min(roofs["dram"] * x, roof) if roof else roofs["dram"] * x for x in grid]
        axis.loglog(grid, bound, color="black", linewidth=1.2)
        axis.annotate(f"DRAM {roofs['dram'] / 1e12:.1f} TB/s", (grid[10], bound[10]), fontsize=7, rotation=0,
                      xytext=(4, 6), textcoords="offset points")
        if roof:
            axis.annotate(f"peak {roof / 1e12:.1f} T{'FLOP' if is_float else 'inst'}/s", (grid[-1], roof), fontsize=7,
                          ha="right", xytext=(0, 4), textcoords="offset points")
        # Labels only for each op's fastest point: a progression's steps share one intensity and
        # their labels would sit on top of each other (the table above names them).
        best = {}
        for point in chosen:
            op = point["label"].split("/")[0]
            if op not in best or point[y_key] > best[op][y_key]:
                best[op] = point
        for point in chosen:
            labelled = best[point["label"].split("/")[0]] is point
            axis.plot(point[x_key], point[y_key], "o", markersize=4 if labelled else 3,
                      color=None if labelled else "0.6", zorder=3 if labelled else 2)
            if labelled:
                axis.annotate(point["label"], (point[x_key], point[y_key]), fontsize=6, xytext=(4, -3),
                              textcoords="offset points")
        axis.set_xlabel(x_label, fontsize=8)
        axis.set_ylabel(y_label, fontsize=8)
        axis.set_title(("float work" if is_float else "integer and selection work") + f" on {roofs.get('name', 'the GPU')}",
                       fontsize=9)
        axis.tick_params(labelsize=7)
        axis.grid(True, which="major", linewidth=0.3)
    return data_uri(figure)
