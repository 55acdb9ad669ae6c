"""The compare page's charts: every case's ratio with its 95 % interval, per op, sorted and coloured
by verdict; and, across GPU models, each case's % of its own GPU's peak on both sides."""

from __future__ import annotations

import math

from primbench.report.plot_base import data_uri as _data_uri
from primbench.report.plot_base import figure
from primbench.report.plot_base import label as _label

VERDICT_COLOURS = {"SLOWER": "#c0392b", "FAILED": "#8a1c12", "FASTER": "#1e8449", "UNSURE": "#b7950b",
                   "SAME": "#95a5a6", "MISSING": "#bdc3c7", "OTHER_GPU": "#2e86c1", "PUBLISHED": "#2e86c1"}


def ratio_chart(pairs_by_op: dict, metric: str) -> str | None:
    """One row per op: its cases sorted by ratio (new/base), each a point with its interval, coloured
    by verdict; a line at 1. None when no pair has a ratio."""
    rows = {op: sorted((p for p in pairs if math.isfinite(p["ratio"])), key=lambda p: p["ratio"])
            for op, pairs in pairs_by_op.items()}
    rows = {op: pairs for op, pairs in rows.items() if pairs}
    if not rows:
        return None
    fig, axes = figure(12.0, 1.6 * len(rows) + 0.6, left=0.9, right=0.3, top=0.4, bottom=0.2, rows=len(rows),
                       hspace=0.15)
    for axis, (op, pairs) in zip(axes, rows.items()):
        for index, p in enumerate(pairs):
            colour = VERDICT_COLOURS.get(p["verdict"], "#7f8c8d")
            low, high = p["ci_low"], p["ci_high"]
            if metric == "time" and math.isfinite(low) and math.isfinite(high):
                axis.plot([index, index], [low, high], color=colour, linewidth=1.2, alpha=0.6)
            axis.plot([index], [p["ratio"]], "o", color=colour, markersize=3)
        axis.axhline(1.0, color="#555", linewidth=0.8)
        axis.set_xlim(-1, len(pairs))
        axis.set_xticks([])
        axis.set_ylabel(_label(op), fontsize=8)
        axis.tick_params(labelsize=7)
    axes[0].set_title(("new ÷ baseline median time (below 1: faster)" if metric == "time" else
                       "new ÷ baseline % of each GPU's peak (above 1: closer to its peak)")
                      + ", cases sorted by ratio; colour: verdict", fontsize=9)
    return _data_uri(fig)


def peak_chart(pairs: list[dict], base_name: str, new_name: str) -> str | None:
    """Across GPU models: each case's % of peak on the baseline's GPU (x) and the new run's (y)."""
    points = [p for p in pairs if math.isfinite(p["base_pct_peak"]) and math.isfinite(p["new_pct_peak"])]
    if not points:
        return None
    fig, (axis,) = figure(6.0, 5.0, left=0.8, right=0.3, top=0.3, bottom=0.7)
    ops = sorted({p["op"] for p in points})
    for index, op in enumerate(ops):
        mine = [p for p in points if p["op"] == op]
        axis.scatter([p["base_pct_peak"] for p in mine], [p["new_pct_peak"] for p in mine], s=10, label=_label(op),
                     color=f"C{index}")
    top = max(max(p["base_pct_peak"], p["new_pct_peak"]) for p in points) * 1.05
    axis.plot([0, top], [0, top], color="#555", linewidth=0.8)
    axis.set_xlim(0, top)
    axis.set_ylim(0, top)
    axis.set_xlabel(_label(f"% of peak on {base_name[:40]}"), fontsize=8)
    axis.set_ylabel(_label(f"% of peak on {new_name[:40]}"), fontsize=8)
    axis.legend(fontsize=7)
    axis.tick_params(labelsize=7)
    return _data_uri(fig)
