"""The run's quality: verification, determinism and reproducibility per case, failures, and how
sampling ended (timing quality, and the page's section of it).

Everything here works on the annotated case frame (selection.annotate), so it can be unit-tested
on hand-made frames. Failed and skipped cases never count as valid times.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from primbench.report.formats import as_records
from primbench.runfile.frame import is_number


def determinism_verdict(bitwise_values) -> str:
    """'yes' if every measured case was bitwise equal across runs, 'no' if none, 'mixed', or '' if unmeasured."""
    values = [bool(v) for v in bitwise_values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not values:
        return ""
    if all(values):
        return "yes"
    if not any(values):
        return "no"
    return "mixed"


def _check_verdict(values) -> str:
    values = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not values:
        return ""
    failed = sum(1 for v in values if not v)
    return "all passed" if not failed else f"{failed} of {len(values)} failed"


def verification_table(frame, op: str):
    """Per variant of `op`: case counts by status, exact and random-input checks, determinism vs declared."""
    import pandas as pd

    # Only the columns read below: each selection copies every column it carries.
    columns = [c for c in ("variant", "order", "status", "error", "tolerance", "bitwise_equal", "deterministic_expected",
                           "exact_ok", "random_ok", "hazard", "notes") if c in frame]
    cases = frame.loc[frame["op"] == op, columns]
    rows = []
    for variant, mine in cases.groupby("variant", sort=False):
        statuses = Counter(mine["status"])
        ratios = [
            float(e) / float(t)
            for e, t in zip(mine["error"], mine["tolerance"])
            if is_number(e) and is_number(t) and float(t) > 0
        ]
        observed = determinism_verdict(mine.loc[mine["status"] == "ok", "bitwise_equal"])
        expected = mine["deterministic_expected"].iloc[0]
        # A variant promising determinism that was not bitwise equal is a finding; one that makes no
        # promise (atomics) but happened to be equal is not.
        mismatch = bool(expected) and observed in ("no", "mixed")
        rows.append(
            {
                "variant": variant,
                "order": mine["order"].iloc[0],
                "ok": statuses.get("ok", 0),
                "failed": statuses.get("failed", 0),
                "skipped": statuses.get("skipped", 0),
                "exact": _check_verdict(mine["exact_ok"]),
                "random": _check_verdict(mine["random_ok"]),
                "max_error_ratio": max(ratios) if ratios else math.nan,
                "deterministic": observed,
                "deterministic_expected": expected,
                "determinism_mismatch": mismatch,
                "hazard": mine["hazard"].iloc[0],
                "notes": mine["notes"].iloc[0],
            }
        )
    table = pd.DataFrame(rows)
    return table.sort_values(["order", "variant"]).reset_index(drop=True) if not table.empty else table


def failures_table(frame, op: str | None = None):
    """Failed and skipped cases (of one op, or all) with their reasons, in run order."""
    cases = frame[frame["status"] != "ok"]
    if op is not None:
        cases = cases[cases["op"] == op]
    return cases.reset_index(drop=True)


@dataclass
class TimingQuality:
    """How trustworthy the times are: stopping rules hit, flags raised, L2-resident and >100 % cases."""

    measured: int
    stops: dict
    flags: dict
    flagged: object  # DataFrame of valid cases with any flag
    l2_resident: object  # DataFrame of valid cases whose working set fits in L2
    over_peak: object  # DataFrame of valid cases over 100 % of the NVML peak


def timing_quality(frame) -> TimingQuality:
    """Timing quality over the valid cases of a run."""
    valid = frame[frame["valid"]] if not frame.empty else frame
    stops = Counter(s if isinstance(s, str) and s else "unknown" for s in valid["stop"]) if not valid.empty else Counter()
    flags = Counter(f for text in valid.get("flags", []) for f in (text or "").split(",") if f)
    return TimingQuality(
        measured=len(valid),
        stops=dict(stops.most_common()),
        flags=dict(flags.most_common()),
        flagged=valid[valid["flags"].fillna("") != ""] if not valid.empty else valid,
        l2_resident=valid[valid["l2_resident"]] if not valid.empty else valid,
        over_peak=valid[valid["pct_peak"] > 100] if not valid.empty else valid,
    )


def timing_section(frame) -> dict:
    """The page's timing quality: how sampling ended, what was flagged, which cases sat in L2 or
    read above the peak (as records), and the spread of the SM clocks."""
    clock = clock_summary(frame)
    timing = timing_quality(frame)
    return {
        "measured": timing.measured,
        "stops": timing.stops,
        "flags": timing.flags,
        "flagged": as_records(timing.flagged),
        "l2_resident": as_records(timing.l2_resident),
        "l2_resident_by_size": sorted(Counter(int(n) for n in timing.l2_resident["n"]).items())
        if len(timing.l2_resident)
        else [],
        "over_peak": as_records(timing.over_peak),
        "clock": clock,
    }


def clock_summary(frame) -> dict | None:
    """The spread of the cases' median SM clocks (read on the GPU before each sample), or None
    for a run that did not record them."""
    import numpy as np

    clocks = frame["sm_clock_mhz"].dropna() if "sm_clock_mhz" in frame else []
    if not len(clocks):
        return None
    low, median, high = np.percentile(clocks, [5, 50, 95])
    return {"cases": len(clocks), "p05": float(low), "median": float(median), "p95": float(high)}


def reproducibility_table(frame, op: str):
    """Per variant of `op`: the same bits across repeated runs, across block sizes (one input, every
    block measured at that size) and across grids (the runner's probe), as yes / no / mixed / ''."""
    import pandas as pd

    # Only the columns read below: each selection copies every column it carries.
    columns = [c for c in ("variant", "order", "n", "dtype", "distribution", "block", "result_hex", "bitwise_equal",
                           "grids_probed", "grids_bitwise_equal", "deterministic_expected") if c in frame]
    cases = frame.loc[(frame["op"] == op) & (frame["status"] == "ok"), columns]
    # For each input (variant, size, dtype, distribution) measured at more than one block size:
    # whether every block gave the same bits. One grouping for the op, not one per variant.
    across = {}
    hashed = cases[cases["result_hex"].notna()]
    spread = hashed.groupby(["variant", "n", "dtype", "distribution"])[["block", "result_hex"]].nunique()
    for (variant, *_input), blocks, results in zip(spread.index, spread["block"], spread["result_hex"]):
        if blocks > 1:
            across.setdefault(variant, []).append(bool(results == 1))
    rows = []
    for variant, mine in cases.groupby("variant", sort=False):
        across_blocks = across.get(variant, [])
        recorded = mine["result_hex"].notna().any() if "result_hex" in mine else False
        probed = bool(mine["grids_probed"].any()) if "grids_probed" in mine else False
        rows.append({
            "variant": variant,
            "order": mine["order"].iloc[0],
            "across_runs": determinism_verdict(mine["bitwise_equal"]),
            # Runs made before results were kept (and inputs shared across variants) cannot say.
            "across_blocks": determinism_verdict(across_blocks) or ("not tried" if recorded else "not recorded"),
            "inputs_compared": len(across_blocks),
            "across_grids": determinism_verdict(mine["grids_bitwise_equal"]) or ("not tried" if probed else "not recorded"),
            "deterministic_expected": mine["deterministic_expected"].iloc[0],
        })
    table = pd.DataFrame(rows)
    return table.sort_values(["order", "variant"]).reset_index(drop=True) if not table.empty else table
