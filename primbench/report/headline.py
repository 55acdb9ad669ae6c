"""The top of the report: the story in one sentence and one chart (absolute time per progression
step, this GPU beside the published ones, each step with its reason), then one line per op (its
best hand-written variant against the best library at that size, and % of peak; where a library
beats it at the op's largest size, and which library cases run far from their light).

The rows read here are records (formats.as_records), where every missing value is already None."""

from __future__ import annotations

from primbench import ops
from primbench.report.charts.svg import pow2_text
from primbench.variant import BEYOND_SERIES, HARRIS_SERIES, LIBRARY_SERIES, LIBRARY_SERIES_NAMES, series_name

GROUPS = {HARRIS_SERIES: "the seeds' steps", BEYOND_SERIES: "past the seeds", LIBRARY_SERIES: "the libraries"}


def _timed(rows, *series):
    return [r for r in rows if r.get("series") in series and r.get("time_us") is not None]


def opening(rows: list[dict], published, n: int, dtype) -> dict | None:
    """The sentence's numbers: the first kernel and the last of the seeds' steps (the shuffle
    version) here and in each published progression, then the fastest kernel past the seeds, then
    the best library (the fastest library row) and our fastest kernel's time against it. Each
    `speedup` and `step` is the earlier time over the later (above 1: faster), as the `faster`
    filter reads them. None when the seeds' steps have fewer than two times."""
    seeds = _timed(rows, HARRIS_SERIES)
    if len(seeds) < 2:
        return None
    first, last = seeds[0], seeds[-1]
    quoted = []
    for source in published:
        start, end = source.time_ms(first["variant"]), source.time_ms(last["variant"])
        if start and end:
            quoted.append({"label": source.label, "device": source.device, "n": source.n,
                              "dtype": source.dtype, "first_ms": start, "last_ms": end, "speedup": start / end,
                              "same_size": source.n == n and source.dtype == dtype})
    beyond = min(_timed(rows, BEYOND_SERIES), key=lambda r: r["time_us"], default=None)
    library = min(_timed(rows, *LIBRARY_SERIES_NAMES), key=lambda r: r["time_us"], default=None)
    ours = beyond if beyond is not None else last
    return {
        "first": {"variant": first["variant"], "us": first["time_us"]},
        "last": {"variant": last["variant"], "us": last["time_us"], "speedup": first["time_us"] / last["time_us"]},
        "published": quoted,
        # Each names its block: the progression's (256 where the kernel takes one), which the
        # one-line summaries below, at each op's fastest block, may not share.
        "beyond": beyond and {"variant": beyond["variant"], "us": beyond["time_us"], "block": beyond.get("block"),
                              "speedup": first["time_us"] / beyond["time_us"], "step": last["time_us"] / beyond["time_us"]},
        "library": library and {"variant": library["variant"], "us": library["time_us"], "text": library.get("library") or "",
                                "far": bool(library.get("far_from_light")), "anchor": library.get("anchor"),
                                # our fastest step against it: its time over ours (above 1: ours is faster)
                                "ours": ours["variant"], "ours_us": ours["time_us"], "speedup": library["time_us"] / ours["time_us"]},
    }


def story_steps(rows: list[dict], published, op: str) -> list[dict]:
    """The chart's rows: every step of the progression with its reason (the op declares them; a
    variant it does not name shows its origin), and its time here and in each reference (µs)."""
    reasons = ops.declared(op, "step_reasons") or {}
    steps = []
    for row in rows:
        times = [row.get("time_us")]
        for source in published:
            quoted = source.time_ms(row["variant"])
            times.append(quoted * 1e3 if quoted else None)
        if any(times):
            steps.append({"variant": row["variant"], "reason": reasons.get(row["variant"]) or row.get("origin") or "",
                          "group": GROUPS.get(series_name(row.get("series")), row.get("series") or ""), "times": times,
                          "series": series_name(row.get("series"))})
    return steps


def device_labels(device_name: str, n_text: str, dtype, published) -> list[str]:
    """The chart's legend: this run, then each published progression with its own size and dtype."""
    labels = [f"{device_name}: {n_text} {dtype} (this run)"]
    labels += [f"{r.label}: {pow2_text(r.n)} {r.dtype} (published)" for r in published]
    return labels


def op_headline(op: str, best_per_size: list[dict], n: int | None, far=None) -> dict | None:
    """One line for an op: at its progression size (else its largest), the fastest hand-written
    variant, its time against the best library's at that size (`ratio`: this time over the
    library's, below 1 faster; the page says it in words through the `time_ratio` filter), with the
    library's name and the version the run records, its % of the NVML peak, and its % of its speed
    of light where the run measured the ceilings (schema 4). `library_wins`: at the op's largest
    size, the best library where it is faster than our fastest kernel; `far`: the op's library
    cases far from their light (far_summary)."""
    if not best_per_size:
        return None
    row = next((r for r in best_per_size if r["n"] == n), best_per_size[-1])
    largest = best_per_size[-1]
    wins = largest.get("ratio_to_library") is not None and largest["ratio_to_library"] > 1
    return {"op": op, "n": row["n"], "variant": row["variant"], "block": row.get("block"), "time_us": row["time_us"],
            "pct_peak": row["pct_peak"], "anchor": row.get("anchor"),
            "pct_sol": row.get("pct_sol"),
            # The best library at this very size (and parameters), not one label chosen over the whole run.
            "library": row.get("library"), "library_text": row.get("library_text") or "",
            "library_us": row.get("library_us"),
            "library_far": bool(row.get("library_far")), "library_anchor": row.get("library_anchor"),
            "ratio": row.get("ratio_to_library"),
            "library_wins": {"n": largest["n"], "library": largest["library"], "library_text": largest.get("library_text") or "",
                             "library_us": largest["library_us"], "variant": largest["variant"], "time_us": largest["time_us"],
                             "speedup": largest["ratio_to_library"]} if wins else None,
            "far": far}


def far_summary(flagged) -> dict | None:
    """The op's library cases far from their light (runfile/libraries.py far_cases: furthest
    first), as the op's line names them: how many, and the furthest with its slice and % of light."""
    if flagged is None or len(flagged) == 0:
        return None
    worst = flagged.iloc[0]
    return {"count": len(flagged), "variants": sorted(set(flagged["variant"])), "variant": worst["variant"],
            "n": int(worst["n"]), "dtype": worst["dtype"], "distribution": worst["distribution"],
            "pct_sol": float(worst["pct_sol"]), "anchor": worst.get("anchor")}
