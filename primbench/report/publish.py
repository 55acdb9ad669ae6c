"""`bench.py publish results/ -o site/`: a static site that needs no server.

index.html lists every run found under the folder (baselines and other copies of one run counted
once), grouped by GPU model, with its date, commit and headline numbers; runs/<run>.html is each
run's full report; history-<gpu>.html draws, for that GPU, the median time of the headline cases
of every variant across the runs in time order, marking each step that `compare` calls SLOWER;
gpus.html sets the newest run of each GPU model side by side in % of its own peak. Every page is
self-contained (inline CSS, plots as data URIs, no script, no network). No CuPy.
"""

from __future__ import annotations

import re

from collections import defaultdict
from pathlib import Path

from primbench import compare
from primbench.errors import UserError
from primbench.locations import is_kept_copy
from primbench.model import CaseId
from primbench.report import selection
from primbench.report.page_cache import PageCache, page_key
from primbench.results import RunFileError, gpu_slug, load_run, run_stem

# The cases whose history is drawn: the seed's size and the largest, float32, the primary input.
HISTORY_SIZES = (2**25, 2**28)


def find_runs(paths) -> tuple[list, list[str]]:
    """Every readable run of the run files `paths` (locations.runs_of expands folders and globs),
    each run once (by run id), oldest first; and the one-line reasons of the files that could not
    be read."""
    files = [Path(p) for p in paths]
    runs, skipped = {}, []
    for path in files:
        try:
            run = load_run(path)
        except RunFileError as exc:
            skipped.append(str(exc))
            continue
        run_id = run.header.run_id or run_stem(path)
        if run_id not in runs or is_kept_copy(runs[run_id].path):  # keep the copy that is not a baseline or reference
            runs[run_id] = run
    if not runs:
        where = ", ".join(map(str, files))[:200]
        raise UserError(f"{where}: no readable run files (*.jsonl, *.jsonl.gz)" + (f"; unreadable: {skipped[0]}" if skipped else ""))
    return sorted(runs.values(), key=lambda r: str(r.header.started or "")), skipped


def publish(paths, out_dir) -> Path:
    """Write the site for every run of `paths` (run files, or folders of them) into `out_dir`; return
    the index page's path."""
    from primbench.report.render import annotated_frame, story_references, write_page, write_report

    runs, skipped = find_runs(paths)
    out_dir = Path(out_dir)
    references = story_references()
    frames = {id(run): annotated_frame(run) for run in runs}  # each run's case frame, derived once
    by_gpu = defaultdict(list)
    cache, pages = PageCache(out_dir), []
    for run in runs:
        page = Path("runs") / f"{safe_name(run.header.run_id or run_stem(run.path))}.html"
        key = page_key(run.path)
        if not cache.fresh(out_dir / page, key):  # a page is rendered again only when its run or the code changed
            write_report(run, out_dir / page, references, frames[id(run)])
            cache.record(out_dir / page, key)
        pages.append(out_dir / page)
        entry = _describe(run, frames[id(run)], page)
        by_gpu[entry["gpu"]].append((run, entry))
    for gpu, items in by_gpu.items():
        write_page("history.html.j2", out_dir / _history_page(gpu), gpu=gpu,
                   **_history([run for run, _ in items], frames, gpu))
    # Each GPU's newest run that finished with cases (an interrupted one would misrepresent it).
    newest = [next((item for item in reversed(items) if item[0].finished and item[0].cases), items[-1])
              for items in by_gpu.values()]
    write_page("gpus.html.j2", out_dir / "gpus.html", **_cross_gpu(newest, frames))
    groups = [{"gpu": gpu, "history": _history_page(gpu), "runs": [entry for _, entry in reversed(items)]}
              for gpu, items in sorted(by_gpu.items())]
    cache.save(pages)
    return write_page("index.html.j2", out_dir / "index.html", groups=groups, skipped=skipped, total=len(runs))


def _history_page(gpu: str) -> str:
    return f"history-{gpu_slug(gpu)}.html"


def safe_name(text: str) -> str:
    """A run id as a file name that stays inside the site: letters, digits, '.', '_' and '-' only,
    never starting with a dot (a run file's header is data, and could say '../../x')."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", str(text)).lstrip(".")
    return name or "run"


def _headline_cases(frame):
    """(op, dtype, distribution, n, variant, that variant's valid cases) at the history sizes, in
    each op's primary slice: what the history and the GPU page draw."""
    if frame.empty:
        return
    for op in selection.ops_in(frame):
        dtype, distribution = selection.primary_slice(frame, op)
        cases = selection.slice_of(frame, op, dtype, distribution)
        for n in HISTORY_SIZES:
            at_n = cases[(cases["n"] == n) & cases["valid"]]
            for variant, mine in at_n.groupby("variant"):
                yield op, dtype, distribution, n, variant, mine


def _describe(run, frame, page: Path) -> dict:
    """One line of the index: when, which commit, and the headline numbers."""
    device = run.device
    headline = []
    op = selection.story_op(frame)
    if not frame.empty and op in set(frame["op"]):
        dtype, distribution = selection.primary_slice(frame, op)
        for n in HISTORY_SIZES:
            best = selection.best_case(frame, op, n, dtype=dtype, distribution=distribution)
            if best is None:
                continue
            cub = selection.baseline_time_ms(frame, op, n, dtype, distribution)
            headline.append({"n": n, "variant": best["variant"], "time_us": best["median_ms"] * 1e3,
                             "pct_peak": best["pct_peak"], "ratio_to_cub": best["median_ms"] / cub if selection.is_number(cub) else None})
    statuses = dict(frame["status"].value_counts()) if not frame.empty else {}
    git = run.git
    return {"id": run.header.run_id or run_stem(run.path), "page": page.as_posix(), "gpu": device.get("name") or "unknown GPU",
            "started": run.header.started, "git": git.get("sha"), "dirty": git.get("dirty"),
            "config": run.header.config.get("name"), "cases": len(run.cases), "statuses": statuses,
            "finished": run.finished, "headline": headline, "source": str(run.path)}


def _history(runs, frames: dict, gpu: str) -> dict:
    """Per headline case, the median across runs in time order, and where compare says SLOWER."""
    from primbench.report import plots
    from primbench.report.render import size_text

    series = defaultdict(list)  # (op, variant, n) -> [[run index, median us, slower?, identity of the case drawn]]
    for index, run in enumerate(runs):
        for op, dtype, distribution, n, variant, mine in _headline_cases(frames[id(run)]):
            block = selection.choose_block(mine, n)
            chosen = mine if block is None else mine[mine["block"] == block]
            if not chosen.empty:
                first = chosen.iloc[0]  # `variant` is the label; compare pairs by name and parameters
                identity = CaseId(op, first["variant_name"], dtype, n, block, distribution, first["param_items"])
                series[(op, variant, n)].append([index, float(chosen["median_ms"].iloc[0]) * 1e3, False, identity])
    # Mark the steps compare calls SLOWER, from the raw samples of consecutive runs.
    for later_index in range(1, len(runs)):
        drawn = {point[3] for points in series.values() for point in points if point[0] == later_index}
        pairs = compare.compare_runs(runs[later_index - 1], runs[later_index], identities=drawn)
        slower = {p.case for p in pairs if p.verdict == compare.SLOWER}
        for points in series.values():
            for point in points:
                if point[0] == later_index and point[3] in slower:
                    point[2] = True
    labels = [f"{(r.header.started or '?')[:16]} {(r.git.get('sha') or '')[:7]}" for r in runs]
    charts = []
    for op in sorted({key[0] for key in series}):
        for n in HISTORY_SIZES:
            lines = {variant: points for (o, variant, size), points in series.items() if o == op and size == n}
            if lines:
                charts.append({"op": op, "n": n, "variants": len(lines),
                               "regressions": sum(1 for points in lines.values() for p in points if p[2]),
                               "chart": plots.history_chart(lines, labels, f"{gpu}: {op} at n = {size_text(n)}")})
    return {"charts": charts, "runs": [{"label": label, "source": str(run.path)} for label, run in zip(labels, runs)]}


def _cross_gpu(newest, frames: dict) -> dict:
    """The newest run of each GPU model, side by side: each variant's % of its own GPU's peak."""
    gpus = [entry for _, entry in newest]
    rows, order = defaultdict(dict), {}
    for run, entry in newest:
        for op, _dtype, _distribution, n, variant, mine in _headline_cases(frames[id(run)]):
            best = mine.sort_values("median_ms").iloc[0]
            order.setdefault((op, variant), int(best["order"]))
            rows[(op, n, variant)][entry["id"]] = {"pct_peak": best["pct_peak"], "time_us": best["median_ms"] * 1e3}
    keys = sorted(rows, key=lambda k: (k[0], k[1], order[(k[0], k[2])], k[2]))
    table = [{"op": op, "n": n, "variant": variant, "cells": [rows[(op, n, variant)].get(g["id"]) for g in gpus]}
             for (op, n, variant) in keys]
    peaks = [{"id": g["id"], "gpu": g["gpu"], "page": g["page"]} for g in gpus]
    return {"gpus": peaks, "rows": table}
