"""A GPU's history page and the GPU models page, from the runs' digests (site_digest): per op and
history size, the median time of each variant run after run, and where step detection finds a
slowdown begin; and the newest run of each GPU model side by side in % of its own peak."""

from __future__ import annotations

from collections import defaultdict

from primbench.report import site_steps
from primbench.report.formats import size_text, slug
from primbench.report.site_digest import HEADLINE_SIZES
from primbench.report.site_steps import StepJudge
from primbench.report.site_history_chart import (
    MAX_LINES,
    history_chart,
    log_scale,
    op_styles,
    panel_groups,
    peak_bars,
    size_label,
)


def history(digests: list[dict], gpu: str, judge: StepJudge | None = None) -> dict:
    """The history page's context: per op (over the runs that measured it, oldest first) a chart
    per size with its caption; and the slowdowns found, each with the run where it began: the steps
    the verdict engine calls SLOWER (site_steps.py), reading the runs' files through `judge`."""
    judge = judge or StepJudge()
    sections, found = [], []
    for op in sorted({p["op"] for d in digests for p in d["points"]}):
        runs = [d for d in digests if any(p["op"] == op for p in d["points"])]
        sizes = sorted({p["n"] for d in runs for p in d["points"] if p["op"] == op})
        series = [s for s in (_series(op, n, runs, judge) for n in sizes) if s["lines"]]
        for s in series:
            found += [_regression(op, s["n"], variant, runs[index], pct) for variant, index, _, pct in s["regressions"]]
        sections.append(_section(op, runs, series, gpu))
    labels = [f"{(d['started'] or '?')[:16]} {(d['git'] or '')[:7]}" for d in digests]
    return {"sections": sections, "regressions": found, "size_text": size_text,
            "runs": [{"label": label, "id": d["id"], "page": d["page"]} for label, d in zip(labels, digests)]}


def _series(op: str, n: int, runs: list[dict], judge: StepJudge) -> dict:
    """One op at one size: each variant's (run index, median µs), in the op's order, and the
    slowdowns the verdict engine confirms in each, as (variant, run index, µs, %)."""
    lines, judged, order = defaultdict(list), defaultdict(list), {}
    for index, d in enumerate(runs):
        for p in d["points"]:
            if p["op"] == op and p["n"] == n and p["median_us"]:
                lines[p["variant"]].append((index, p["median_us"]))
                judged[p["variant"]].append((index, p["median_us"], p.get("judged_us"), p.get("key")))
                order.setdefault(p["variant"], p["order"])
    lines = {v: lines[v] for v in sorted(lines, key=lambda v: (order[v], v))}
    marks = [mark for variant in lines for mark in site_steps.slowdowns(variant, judged[variant], runs, judge)]
    return {"n": n, "lines": lines, "regressions": marks}


def _regression(op: str, n: int, variant: str, run: dict, pct: float) -> dict:
    return {"op": op, "n": n, "variant": variant, "pct": pct, "run": run["id"], "page": run["page"],
            "started": run["started"], "git": (run["git"] or "")[:7]}


def _section(op: str, runs: list[dict], series: list[dict], gpu: str) -> dict:
    order = {}
    for d in runs:
        for p in d["points"]:
            if p["op"] == op:
                order.setdefault(p["variant"], p["order"])
    styles = op_styles(sorted(order, key=lambda v: (order[v], v)))
    dates = _dates(runs)
    charts = [{"n": s["n"], "svg": history_chart(op, s, runs, dates, styles), "caption": caption(op, s, gpu)}
              for s in series]
    return {"op": op, "runs": len(runs), "sizes": [s["n"] for s in series],
            "variants": len({v for s in series for v in s["lines"]}),
            "regressions": sum(len(s["regressions"]) for s in series), "charts": charts}


def _dates(runs: list[dict]) -> list[str]:
    """Each run's x label: its start day, or day and time where several runs started on one day."""
    dates = [f"{(d['started'] or '?')[:10]}" for d in runs]
    if len(set(dates)) < len(dates):
        dates = [f"{(d['started'] or '?')[5:16].replace('T', ' ')}" for d in runs]
    return dates


def caption(op: str, series: dict, gpu: str) -> str:
    """What a history chart shows, in words: every figure in it is filled."""
    lines = series["lines"]
    runs = len({at for points in lines.values() for at, _ in points})
    panels = len(panel_groups(list(lines)))
    scale = "log" if log_scale(lines) else "linear"
    layout = (f"{panels} panels of at most {MAX_LINES} lines on one {scale} y scale" if panels > 1
              else f"{scale} y scale")
    slowdowns = len(series["regressions"])
    marked = f"{slowdowns} slowdown(s) marked in red" if slowdowns else "no slowdown found"
    return (f"{op} at n = {size_label(series['n'])} on {gpu}: the median time of {len(lines)} variant(s) in "
            f"{runs} run(s), oldest left; {layout}; {marked}. Each point links to its run's report.")


def cross_gpu(newest: list[dict]) -> dict:
    """The newest run of each GPU model, side by side: each variant's % of its own GPU's peak, at
    each op's largest size (and the headline sizes), where % of peak means most; as a table and as
    bars."""
    shown = _peak_sizes(newest)
    rows, order = defaultdict(dict), {}
    for d in newest:
        for p in d["points"]:
            if p["n"] in shown.get(p["op"], ()):
                order.setdefault((p["op"], p["variant"]), p["order"])
                rows[(p["op"], p["n"], p["variant"])][d["id"]] = {"pct_peak": p["pct_peak"], "time_us": p["best_us"]}
    keys = sorted(rows, key=lambda k: (k[0], k[1], order[(k[0], k[2])], k[2]))
    table = [{"op": op, "n": n, "variant": variant, "anchor": "gpus-" + slug(f"{op}-{n}-{variant}"),
              "cells": [rows[(op, n, variant)].get(d["id"]) for d in newest]} for (op, n, variant) in keys]
    gpus = [{"id": d["id"], "gpu": d["gpu"], "page": d["page"]} for d in newest]
    ops = len({row["op"] for row in table})
    caption = (f"{len(table)} case(s) of {ops} op(s) on {len(gpus)} GPU model(s): each bar is a variant's "
               "bandwidth in % of its own GPU's peak (the dashed rule is 100 %); a bar links to its row below.")
    return {"gpus": gpus, "rows": table, "chart": peak_bars(table, gpus), "caption": caption}


def _peak_sizes(newest: list[dict]) -> dict:
    """{op: sizes}: each run's largest size of the op, and any headline size it measured."""
    sizes = defaultdict(set)
    for d in newest:
        mine = defaultdict(set)
        for p in d["points"]:
            mine[p["op"]].add(p["n"])
        for op, measured in mine.items():
            sizes[op] |= {max(measured), *(n for n in HEADLINE_SIZES if n in measured)}
    return sizes
