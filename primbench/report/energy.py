"""Energy per operation in the report: each case's figures (the run frame's energy columns) for the
tables and hover titles, the story's energy per step, an op's variants at its largest size with
energy (the GB/J scatter and the headline's least-energy variant), and why energy is missing where
it was asked for. Every function returns None or nothing where the run has no energy, so a run
without it renders as it always did."""

from __future__ import annotations

import math
import statistics

from primbench.report import formats
from primbench.report.selection import matches
from primbench.runfile.frame import block_or_none, is_number

ENERGY_COLUMNS = ("energy_mj", "energy_lo_mj", "energy_hi_mj", "energy_w", "energy_peak_w", "gb_per_j",
                  "energy_above_idle_mj", "energy_reason")
REASON_CHARACTERS = 200  # of a reason from the run file, in a hover text (the page bounds what it quotes)
REASON_CASES_SHOWN = 5  # a reason shared by hundreds of cases names a few: the every-case table has the rest


def _number(row, name) -> float | None:
    value = row.get(name)
    return float(value) if is_number(value) else None


def _reason(row) -> str | None:
    reason = row.get("energy_reason")
    return reason if isinstance(reason, str) and reason.strip() else None


def case_energy(row) -> dict | None:
    """A case's energy as a table cell and a title read it: the figures where it was measured, only
    `reason` where it was asked for and not measured, None where it was never asked for."""
    mj = _number(row, "energy_mj")
    if mj is None:
        reason = _reason(row)
        return {"reason": reason} if reason else None
    return {"mj": mj, "lo_mj": _number(row, "energy_lo_mj"), "hi_mj": _number(row, "energy_hi_mj"),
            "w": _number(row, "energy_w"), "peak_w": _number(row, "energy_peak_w"),
            "gb_per_j": _number(row, "gb_per_j"), "above_idle_mj": _number(row, "energy_above_idle_mj"), "reason": None}


def energy_title(facts) -> str:
    """The hover text of a case's energy: '15.6 mJ per operation · 380 W · 8.60 GB/J · windows
    15.5–15.7 mJ · 12.5 mJ above idle', or why it was not measured; blank for no energy."""
    if not facts:
        return ""
    if facts.get("mj") is None:
        reason = facts.get("reason") or "no reason recorded"
        return f"energy was asked for but not measured: {reason[:REASON_CHARACTERS]}{'…' if len(reason) > REASON_CHARACTERS else ''}"
    words = [f"{formats.format_mj(facts['mj'])} mJ per operation"]
    if facts.get("w") is not None:
        words.append(f"{formats.format_watts(facts['w'])} W")
    if facts.get("gb_per_j") is not None:
        words.append(f"{formats.format_gb_per_j(facts['gb_per_j'])} GB/J")
    low, high = facts.get("lo_mj"), facts.get("hi_mj")
    if low is not None and high is not None:
        words.append(f"windows {formats.format_mj(low)}\u2013{formats.format_mj(high)} mJ")
    if facts.get("above_idle_mj") is not None:
        words.append(f"{formats.format_mj(facts['above_idle_mj'])} mJ above idle")
    return " \u00b7 ".join(words)


def energy_by_key(frame) -> dict:
    """{case key: case_energy} for the cases with energy or a reason; {} for a run without energy."""
    if "energy_mj" not in frame or frame.empty:
        return {}
    asked = frame["energy_mj"].notna()
    if "energy_reason" in frame:
        asked |= frame["energy_reason"].notna()
    if not asked.any():
        return {}
    columns = ["key", *[c for c in ENERGY_COLUMNS if c in frame]]
    records = frame.loc[asked, columns].to_dict("records")
    return {r["key"]: facts for r in records if (facts := case_energy(r))}


def with_case_energy(rows: list[dict], by_key: dict) -> bool:
    """Each row (a progression's, the every-case table's) gains `energy` from its case; True when
    any row has some, so a table adds its energy column only then."""
    for row in rows:
        row["energy"] = by_key.get(row.get("key"))
    return any(row["energy"] for row in rows)


def story_energy(rows: list[dict], steps: list[dict], frame) -> bool:
    """The story's rows and its chart's steps gain each case's energy (the very case the row
    times); True when some step has energy or a reason."""
    by_key = energy_by_key(frame)
    if not with_case_energy(rows, by_key):
        return False
    by_variant = {row["variant"]: row["energy"] for row in rows}
    for step in steps:
        step["energy"] = by_variant.get(step["variant"])
    return True


def _cheapest_per_variant(at_n) -> list[dict]:
    """Each variant's case with the least energy per operation (on a tie, the faster)."""
    ordered = at_n.sort_values(["energy_mj", "median_ms", "variant"])
    return ordered.drop_duplicates("variant").sort_values(["order", "variant"]).to_dict("records")


def _point(case: dict) -> dict:
    """One variant's point: its case's figures, and the GB/s while its energy was measured."""
    facts = case_energy(case)
    # The scatter's x is the rate over the energy windows themselves (minimal bytes over the time
    # per operation there: mJ / W), not the cold-sample GB/s of the tables: only then is GB/J
    # exactly GB/s / W, so a line through the origin is one draw. The two differ where the plan,
    # run back to back with L2 warm, is faster than a cold sample (inputs that fit in L2).
    window_gbps = facts["gb_per_j"] * facts["w"] if facts["gb_per_j"] is not None and facts["w"] else None
    median_ms = case.get("median_ms")
    return {"variant": case["variant"], "key": case["key"], "anchor": case.get("anchor"), "n": int(case["n"]),
            "block": block_or_none(case["block"]), "dtype": case.get("dtype"), "distribution": case.get("distribution"),
            "time_us": float(median_ms) * 1e3 if is_number(median_ms) else None,
            "gbps": _number(case, "gbps"), "window_gbps": window_gbps, "energy": facts, **facts}


def reason_notes(frame) -> list[dict]:
    """Why energy is missing where it was asked for: one note per reason, the cases it covers (the
    first few named, in table order) and their count."""
    if "energy_reason" not in frame or frame.empty:
        return []
    missing = frame[frame["energy_reason"].notna() & frame["energy_mj"].isna()]
    notes: dict[str, dict] = {}
    for case in missing.sort_values(["order", "variant", "n"]).to_dict("records"):
        reason = _reason(case)
        if reason is None:
            continue
        note = notes.setdefault(reason, {"reason": reason, "cases": [], "count": 0})
        note["count"] += 1
        if len(note["cases"]) < REASON_CASES_SHOWN:
            note["cases"].append({"variant": case["variant"], "n": int(case["n"]), "anchor": case.get("anchor")})
    return list(notes.values())


def _slice_with_energy(view) -> tuple:
    """The op's charted slice where it has energy; else the slice (dtype, input distribution) with
    the most cases measured for energy: a config may measure energy on one input (top-k on normal
    logits) while the op's charts show another (its ties), and the section names the slice it shows."""
    dtype, distribution = view.dtype, view.distribution
    compared = view.compared
    mine = compared[compared["valid"] & compared["energy_mj"].notna()]
    charted = view.compared_primary
    if mine.empty or (charted["valid"] & charted["energy_mj"].notna()).any():
        return dtype, distribution
    counts = mine.groupby(["dtype", "distribution"], dropna=False).size()
    return max(counts.items(), key=lambda item: (item[1], item[0][0] == dtype, str(item[0])))[0]


def op_energy(view) -> dict | None:
    """An op's energy: at the largest size where its variants (in the slice and parameters its other
    charts compare) have energy, one point per variant, the median draw across them, the variant
    with the least energy; and the reasons where energy was asked for and not measured. None where
    the op has neither. The largest size *with energy*, so that a config measuring energy only at
    some sizes still gets its chart (the section names the size). The reasons are listed for
    every slice of the op (report/op_view.py), the chart at the parameters its other charts compare."""
    if "energy_mj" not in view.cases:
        return None
    reasons = reason_notes(view.cases)
    charted = (view.dtype, view.distribution)
    dtype, distribution = _slice_with_energy(view)
    compared = view.compared
    cases = view.compared_primary if (dtype, distribution) == charted else compared[
        matches(compared["dtype"], dtype) & matches(compared["distribution"], distribution)]
    measured = cases[cases["valid"] & cases["energy_mj"].notna()]
    if measured.empty:
        return {"n": None, "largest": False, "points": [], "reasons": reasons, "median_w": None, "best": None} if reasons else None
    n = int(measured["n"].max())
    points = [_point(case) for case in _cheapest_per_variant(measured[measured["n"] == n])]
    watts = [p["w"] for p in points if p["w"] is not None]
    best = min(points, key=lambda p: (p["mj"], p["time_us"] if p["time_us"] is not None else math.inf))
    return {"n": n, "largest": n == int(cases.loc[cases["valid"], "n"].max()), "dtype": dtype, "distribution": distribution,
            "charted_slice": (dtype, distribution) == charted,
            "points": points, "reasons": reasons, "median_w": statistics.median(watts) if watts else None, "best": best}


def headline_energy(section: dict | None) -> dict | None:
    """The headline's clause: the variant with the least energy per operation at the section's size."""
    best = (section or {}).get("best")
    if not best:
        return None
    return {"variant": best["variant"], "anchor": best.get("anchor"), "n": section["n"], "block": best["block"],
            "mj": best["mj"], "gb_per_j": best["gb_per_j"], "w": best["w"],
            "slice": None if section.get("charted_slice", True) else f"{section['dtype']}, {section['distribution']}"}


def run_energy(run, frame) -> dict | None:
    """The run's energy facts for the page: the idle draw (the lowest and highest, over several GPUs), and the header's reason where the GPU could
    not measure energy at all; None for a run that never asked for energy."""
    header = run.header.energy or {}
    measured = int(frame["energy_mj"].notna().sum()) if "energy_mj" in frame and not frame.empty else 0
    if not header and not measured:
        return None
    reason = header.get("reason") if not header.get("available", True) else None
    draws = sorted(set(run.idle_draws_w.values()))  # a run over several GPUs: each GPU's own
    return {"idle_w": draws[0] if draws else None, "idle_hi_w": draws[-1] if len(draws) > 1 else None,
            "reason": reason if isinstance(reason, str) and reason.strip() else None, "measured": measured}
