"""A GPU's history page and the GPU models page, from the runs' digests (digest.py): per op and
history size, the median time of each variant run after run, and where step detection finds a
slowdown begin; and each GPU model side by side in % of its own peak, per op from its newest run
that covers the op's largest size."""

from __future__ import annotations

from collections import defaultdict

from primbench.report.charts.history import (
    MAX_LINES,
    history_chart,
    log_scale,
    op_styles,
    panel_groups,
    peak_bars,
    size_label,
)
from primbench.report.formats import size_text, slug
from primbench.report.site import slowdowns
from primbench.report.site.digest import HEADLINE_SIZES
from primbench.report.site.slowdowns import StepJudge


def history(digests: list[dict], gpu: str, judge: StepJudge | None = None) -> dict:
    """The history page's context: per op (over the runs that measured it, oldest first) a chart
    per size with its caption; and the slowdowns found, each with the run where it began: the steps
    the verdict engine calls SLOWER (slowdowns.py), reading the runs' files through `judge`."""
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
    marks = [mark for variant in lines for mark in slowdowns.slowdowns(variant, judged[variant], runs, judge)]
    return {"n": n, "lines": lines, "regressions": marks}


def _regression(op: str, n: int, variant: str, run: dict, pct: float) -> dict:
    return {"op": op, "n": n, "variant": variant, "pct": pct, "run": run["id"], "page": run["page"],
            "started": run["started"], "git": (run["git"] or "")[:7]}


def _section(op: str, runs: list[dict], series: list[dict], gpu: str) -> dict:
    order, family = {}, {}
    for d in runs:
        for p in d["points"]:
            if p["op"] == op:
                order.setdefault(p["variant"], p["order"])
                family.setdefault(p["variant"], p.get("series"))
    styles = op_styles([(v, family[v]) for v in sorted(order, key=lambda v: (order[v], v))])
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


def cross_gpu(by_gpu: dict) -> dict:
    """Each GPU model side by side (`by_gpu`: {model: its runs' digests, oldest first}): for each
    op, the model's newest finished run that measured the op at the largest size any of its runs
    did (a nightly subset must not stand for the model where a full run measured more); each
    variant's % of its own GPU's peak at each op's largest size (and the headline sizes), where %
    of peak means most; as a table and as bars. Each figure names the run it comes from."""
    chosen = {gpu: _newest_covering(runs) for gpu, runs in by_gpu.items()}
    shown = _peak_sizes([(op, d) for mine in chosen.values() for op, d in mine.items()])
    rows, order = defaultdict(dict), {}
    for gpu, mine in chosen.items():
        for op, d in mine.items():
            for p in d["points"]:
                if p["op"] == op and p["n"] in shown.get(op, ()):
                    order.setdefault((op, p["variant"]), p["order"])
                    rows[(op, p["n"], p["variant"])][gpu] = {"pct_peak": p["pct_peak"], "time_us": p["best_us"],
                                                             "run": d["id"], "page": d["page"]}
    keys = sorted(rows, key=lambda k: (k[0], k[1], order[(k[0], k[2])], k[2]))
    table = [{"op": op, "n": n, "variant": variant, "anchor": "gpus-" + slug(f"{op}-{n}-{variant}"),
              "cells": [rows[(op, n, variant)].get(gpu) for gpu in chosen]} for (op, n, variant) in keys]
    gpus = [{"gpu": gpu} for gpu in chosen]
    sources = [{"op": op, "runs": [chosen[gpu].get(op) for gpu in chosen]} for op in sorted(shown)]
    ops = len({row["op"] for row in table})
    caption = (f"{len(table)} case(s) of {ops} op(s) on {len(gpus)} GPU model(s): each bar is a variant's "
               "bandwidth in % of its own GPU's peak (the dashed rule is 100 %); a bar links to its row below.")
    return {"gpus": gpus, "rows": table, "chart": peak_bars(table, gpus), "caption": caption, "sources": sources}


def _newest_covering(runs: list[dict]) -> dict:
    """{op: the newest run of `runs` (oldest first) that measured the op at its largest size among
    them}, over the runs that finished with cases (an interrupted one would misrepresent the GPU),
    or all of them where none did."""
    usable = [d for d in runs if d["finished"] and d["cases"]] or runs
    largest = defaultdict(int)
    for d in usable:
        for p in d["points"]:
            largest[p["op"]] = max(largest[p["op"]], p["n"])
    return {op: next(d for d in reversed(usable) if any(p["op"] == op and p["n"] == n for p in d["points"]))
            for op, n in sorted(largest.items())}


def _peak_sizes(chosen: list) -> dict:
    """{op: sizes}: each chosen (op, run)'s largest size of the op, and any headline size it measured."""
    sizes = defaultdict(set)
    for op, d in chosen:
        measured = {p["n"] for p in d["points"] if p["op"] == op}
        sizes[op] |= {max(measured), *(n for n in HEADLINE_SIZES if n in measured)}
    return sizes
