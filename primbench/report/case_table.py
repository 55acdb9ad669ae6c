"""Each op's table of every case it ran, one row per case with the anchor its chart points link to,
and the bar charts drawn beside the report's lists of timings."""

from __future__ import annotations

from primbench.report.energy import ENERGY_COLUMNS, case_energy
from primbench.report.formats import format_block
from primbench.runfile.frame import block_or_none, is_number

COLUMNS = ("anchor", "key", "variant", "variant_name", "dtype", "distribution", "params", "n", "block", "status", "reason",
           "median_ms", "noise", "gbps", "pct_peak", "pct_copy", "pct_sol", "pct_peak_read", "l2_resident", "order",
           "sm_clock_mhz", "far_from_light", "under_floor", *ENERGY_COLUMNS)


def case_rows(frame) -> list[dict]:
    """Every case of one op's frame, in declared order, then size and block: what the row shows."""
    columns = [c for c in COLUMNS if c in frame]
    cases = frame[columns].sort_values(["order", "variant", "dtype", "distribution", "n", "block"], na_position="last")
    rows = []
    for case in cases.to_dict("records"):
        valid = case["status"] == "ok" and is_number(case.get("median_ms"))
        rows.append({
            "anchor": case["anchor"], "key": case["key"], "variant": case["variant"],
            # The name without its parameters, which have a column of their own: the table fits 1280 px.
            "name": case.get("variant_name") or case["variant"], "dtype": case["dtype"],
            "distribution": case["distribution"], "params": case.get("params") or "", "n": int(case["n"]),
            "block": block_or_none(case["block"]), "status": case["status"], "reason": case.get("reason"),
            "time_us": case["median_ms"] * 1e3 if valid else None,
            "noise_pct": case["noise"] * 100 if valid and is_number(case.get("noise")) else None,
            "gbps": case["gbps"] if valid else None, "pct_peak": case["pct_peak"] if valid else None,
            # Each figure under its own heading (the page's light_column picks which it shows).
            **{name: _number(case, name) if valid else None for name in ("pct_sol", "pct_peak_read", "pct_copy")},
            "l2_resident": bool(case.get("l2_resident")),
            "far_from_light": bool(case.get("far_from_light")),  # a library case far below its light
            "under_floor": bool(case.get("under_floor")),  # under the light floor the run's config sets
            "sm_clock_mhz": case["sm_clock_mhz"] if is_number(case.get("sm_clock_mhz")) else None,
            "energy": case_energy(case),  # None where the case never asked for energy
        })
    return rows


def _number(case, name) -> float | None:
    return float(case[name]) if is_number(case.get(name)) else None


def progression_bars(charts, rows: list[dict], title: str):
    """A mark per progression row with a time (its variant and block), coloured by its series and
    linked to its case. The block as an integer: a table's block column may come as floats (256.0)
    where a merge left it so."""
    bars = [{"label": f"{r['variant']} ({format_block(r.get('block'))})", "series": r.get("series"),
             "time_us": r.get("time_us"), "anchor": r.get("anchor")} for r in rows]
    return charts.timing_bars(bars, title=title)

