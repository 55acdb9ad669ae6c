"""A GPU's history page and the GPU models page, from the runs' digests (site_digest): per op, the
median time of each headline case run after run, and where step detection finds a slowdown begin."""

from __future__ import annotations

from collections import defaultdict

from primbench.report import step_detect
from primbench.report.formats import size_text


def history(digests: list[dict], gpu: str) -> dict:
    """The history page's context: one chart per op over the runs that measured it (oldest first),
    a panel per size; and the regressions found, each with the run where it began."""
    from primbench.report import plots
    from primbench.report.charts import ChartBatch

    charts = ChartBatch(plots)
    sections, found = [], []
    for op in sorted({p["op"] for d in digests for p in d["points"]}):
        runs = [d for d in digests if any(p["op"] == op for p in d["points"])]
        dates = [f"{(d['started'] or '?')[:10]}" for d in runs]
        if len(set(dates)) < len(dates):  # several runs a day: the day and the time
            dates = [f"{(d['started'] or '?')[5:16].replace('T', ' ')}" for d in runs]
        panels = []
        for n in sorted({p["n"] for d in runs for p in d["points"] if p["op"] == op}):
            lines, order = defaultdict(list), {}
            for index, d in enumerate(runs):
                for p in d["points"]:
                    if p["op"] == op and p["n"] == n and p["median_us"]:
                        lines[p["variant"]].append((index, p["median_us"]))
                        order.setdefault(p["variant"], p["order"])
            lines = {v: lines[v] for v in sorted(lines, key=lambda v: (order[v], v))}
            marks = []
            for variant, points in lines.items():
                for at, rise in step_detect.regressions([us for _, us in points]):
                    index, us = points[at]
                    marks.append((variant, index, us, rise * 100))
                    run = runs[index]
                    found.append({"op": op, "n": n, "variant": variant, "pct": rise * 100, "run": run["id"],
                                  "page": run["page"], "started": run["started"], "git": (run["git"] or "")[:7]})
            panels.append({"n": n, "lines": lines, "regressions": marks})
        sections.append({"op": op, "runs": len(runs), "sizes": [p["n"] for p in panels],
                         "variants": len({v for p in panels for v in p["lines"]}),
                         "regressions": sum(len(p["regressions"]) for p in panels),
                         "chart": charts.history_chart(panels, dates, f"{gpu}: {op}, median time per run")})
    charts.finish()
    labels = [f"{(d['started'] or '?')[:16]} {(d['git'] or '')[:7]}" for d in digests]
    return {"sections": sections, "regressions": found, "size_text": size_text,
            "runs": [{"label": label, "id": d["id"], "page": d["page"]} for label, d in zip(labels, digests)]}


def cross_gpu(newest: list[dict]) -> dict:
    """The newest run of each GPU model, side by side: each variant's % of its own GPU's peak."""
    rows, order = defaultdict(dict), {}
    for d in newest:
        for p in d["points"]:
            order.setdefault((p["op"], p["variant"]), p["order"])
            rows[(p["op"], p["n"], p["variant"])][d["id"]] = {"pct_peak": p["pct_peak"], "time_us": p["best_us"]}
    keys = sorted(rows, key=lambda k: (k[0], k[1], order[(k[0], k[2])], k[2]))
    table = [{"op": op, "n": n, "variant": variant, "cells": [rows[(op, n, variant)].get(d["id"]) for d in newest]}
             for (op, n, variant) in keys]
    return {"gpus": [{"id": d["id"], "gpu": d["gpu"], "page": d["page"]} for d in newest], "rows": table}
