"""The report's hardware-counter section, from the counters file beside the run (primbench profile):
- the progression with its counters, naming for each step the counter that changed most and
  whether the step's stated reason (Variant.counter_claim) shows in the counters;
- a bytes check: each profiled case's declared minimal bytes against the DRAM bytes ncu counted;
- a roofline of the profiled cases against the GPU's DRAM and compute roofs.
Counters of a case whose kernel changed since (variant hash) are left out. No CuPy here.
"""

from __future__ import annotations

import math

from primbench.errors import UserError
from primbench.report import selection, story
from primbench.runfile import counters
from primbench.runfile.frame import is_number

# Counters that explain a step (ratios read from the plan's longest launch, counts summed).
STEP_COUNTS = ("dram_bytes", "shared_load_bank_conflicts", "shared_store_bank_conflicts", "divergent_branches",
               "idle_lanes", "warp_instructions", "local_load_bytes", "local_store_bytes")
STEP_RATIOS = ("active_threads_per_warp", "achieved_occupancy_pct", "registers_per_thread", "issue_slot_pct")
LABELS = {
    "dram_bytes": "DRAM bytes", "shared_load_bank_conflicts": "shared-load bank conflicts",
    "shared_store_bank_conflicts": "shared-store bank conflicts", "divergent_branches": "divergent branches",
    "idle_lanes": "idle lane slots (lanes inactive or predicated off)",
    "warp_instructions": "warp instructions", "local_load_bytes": "local-memory loads (spills)",
    "local_store_bytes": "local-memory stores (spills)", "active_threads_per_warp": "active threads per warp",
    "achieved_occupancy_pct": "achieved occupancy", "registers_per_thread": "registers per thread",
    "issue_slot_pct": "issue slots used",
}
# A count under 1 % of the step's warp instructions, on both sides, says little about its time: on
# the H200, reduce3's 90,000 -> 41,000 shared-load conflicts (÷2.2) beside 110 M -> 59 M warp
# instructions (÷1.9) would otherwise be named as the step's change.
COUNT_FLOOR_OF_INSTRUCTIONS = 0.01
# The claimed counter "shows" the reason when it falls by a third or more, "shows in part" when it
# falls by 10 % to a third, and does not show otherwise.
CLAIM_SHOWN_BELOW = 2 / 3
CLAIM_PARTLY_BELOW = 0.9
BYTES_OVER = 0.05  # flag a case that moves over 5 % more than declared
BYTES_UNDER = -0.05  # ... or 5 % less (the model overstates, or data stayed in L2)


def counters_of(run):
    """(the counters file's header, {key: CaseCounters} usable for this run, stale count), or None
    when the run has no counters file; a damaged file becomes an error line in the report."""
    path = counters.counters_path_for(run.path)
    try:
        present = path.is_file()
    except OSError:  # beside a run with a 255-byte name, the counters file's name is too long to exist
        present = False
    if not present:
        return None
    about, cases = counters.load(path)
    hashes = {record.key: record.variant_hash for record in run.cases}
    usable = {c.key: c for c in cases if c.profiled and c.key in hashes
              and (c.variant_hash is None or c.variant_hash == hashes[c.key])}
    stale = sum(1 for c in cases if c.key in hashes and c.variant_hash and c.variant_hash != hashes[c.key])
    return about, usable, stale, [c for c in cases if not c.profiled]


def build(run, frame) -> dict | None:
    """The template's `counters` value (None: no counters file beside the run)."""
    try:
        found = counters_of(run)
    except UserError as exc:
        return {"error": str(exc)}
    if found is None:
        return None
    about, usable, stale, unprofiled = found
    times = {row.key: row.median_ms for row in frame.itertuples() if is_number(row.median_ms)}
    return {
        "file": counters.counters_path_for(run.path).name,
        "ncu": (about.get("ncu") or {}).get("version", "unknown"),
        "device": (about.get("device") or {}).get("name", "unknown GPU"),
        "steps": [{**step, "cells": step_cells(step)} for step in progression_steps(frame, usable, times)],
        "columns": [label for label, *_ in COLUMNS],
        "bytes": bytes_rows(usable),
        "roofline": _roofline(usable, times, frame, run.device),
        "stale": stale,
        "unprofiled": [{"key": c.key, "reason": c.reason} for c in unprofiled],
    }


def _roofline(usable: dict, times: dict, frame, device: dict):
    """The roofline (inline SVG), None when there is nothing to draw: no point with a time, or no DRAM roof."""
    from primbench.report.charts.roofline import roofline_chart

    points, limits = roofline_points(usable, times, frame), roofs(device)
    if not points or not limits["dram"]:
        return None
    return roofline_chart(points, limits)


def _rows_by_key(frame, usable: dict) -> dict:
    """The frame's row of each profiled case, by key: one selection, not one per case."""
    wanted = frame[frame["key"].isin(list(usable))]
    return {row["key"]: row for _, row in wanted.iterrows()}


def _value(case: counters.CaseCounters, name: str) -> float | None:
    if name == "dram_bytes":
        return case.dram_bytes()
    if name == "idle_lanes":  # divergence, whether compiled as branches or as predication
        issued, useful = case.total("warp_instructions"), case.total("thread_instructions_pred_on")
        return None if issued is None or useful is None else 32 * issued - useful
    if name in STEP_RATIOS:
        timed = [launch for launch in case.launches if launch.counters.get("duration_ns") is not None]
        longest = max(timed, key=lambda launch: launch.counters["duration_ns"], default=None)
        return None if longest is None else longest.counters.get(name)
    return case.total(name)


def _moved(before: float | None, after: float | None, floor: float) -> float | None:
    """|log2(after / before)|, or None where the counter says nothing (missing, zero, under the floor)."""
    if before is None or after is None or max(before, after) < floor:
        return None
    if before <= 0 or after <= 0:
        return None if before == after else math.inf
    return abs(math.log2(after / before))


def _change_text(before: float, after: float) -> str:
    if before > 0 and after > 0:
        factor = after / before
        return f"x{factor:.2f}" if factor >= 1 else f"÷{1 / factor:.1f}" if factor < 0.5 else f"{factor - 1:+.0%}"
    return f"{before:,.0f} → {after:,.0f}"


def progression_steps(frame, usable: dict, times: dict) -> list[dict]:
    """The story op's progression at the slice with the most profiled steps, each step beside the
    previous: the counter that moved most, and the step's claim checked."""
    op = selection.story_op(frame)
    if not op:
        return []
    order = story.progression_variants(frame, op, story=True)
    slices: dict = {}
    rows = _rows_by_key(frame, usable)
    for key, case in usable.items():
        first = rows.get(key)
        if first is not None and first["op"] == op and first["variant"] in order:
            slices.setdefault((first["dtype"], first["n"], first["block"], first["distribution"]), {})[first["variant"]] = case
    if not slices:
        return []
    chosen = max(slices.values(), key=len)
    steps, previous = [], None
    for variant in (v for v in order if v in chosen):
        case = chosen[variant]
        values = {name: _value(case, name) for name in STEP_COUNTS + STEP_RATIOS}
        step = {"variant": variant, "key": case.key, "time_us": (times[case.key] * 1e3) if case.key in times else None,
                "values": values,
                "declared_bytes": case.minimal_bytes, "most": None, "claim": None}
        if previous is not None:
            # Only the counts (work done) compete: a ratio such as registers per thread is shown, not named.
            floor = COUNT_FLOOR_OF_INSTRUCTIONS * max(values["warp_instructions"] or 0,
                                                      previous["values"]["warp_instructions"] or 0)
            moves = {name: _moved(previous["values"][name], values[name], floor) for name in STEP_COUNTS}
            moves = {name: m for name, m in moves.items() if m is not None}
            if moves:
                name = max(moves, key=moves.get)
                step["most"] = {"counter": LABELS[name],
                                "change": _change_text(previous["values"][name], values[name])}
            step["claim"] = _claim(case, previous["values"], values)
        steps.append(step)
        previous = step
    return steps


def _claim(case, before: dict, after: dict) -> dict | None:
    if not case.counter_claim:
        return None
    reason, name = case.counter_claim
    old, new = before.get(name), after.get(name)
    if old is None or new is None:
        return {"reason": reason, "counter": LABELS.get(name, name), "shown": None, "change": "not measured"}
    shown = ("yes" if new <= CLAIM_SHOWN_BELOW * old else "partly" if new <= CLAIM_PARTLY_BELOW * old else "no") \
        if old > 0 else "no"
    return {"reason": reason, "counter": LABELS.get(name, name), "shown": shown, "change": _change_text(old, new),
            "before": old, "after": new}


COLUMNS = (("DRAM MB", "dram_bytes", 1e-6, "{:,.1f}"), ("ld conflicts", "shared_load_bank_conflicts", 1, "{:,.0f}"),
           ("st conflicts", "shared_store_bank_conflicts", 1, "{:,.0f}"), ("idle lanes M", "idle_lanes", 1e-6, "{:,.0f}"),
           ("warp instr. M", "warp_instructions", 1e-6, "{:,.1f}"), ("occup. %", "achieved_occupancy_pct", 1, "{:.0f}"),
           ("regs", "registers_per_thread", 1, "{:.0f}"), ("spill B", "local_store_bytes", 1, "{:,.0f}"))


def step_cells(step: dict) -> list[str]:
    """The table's cells of one step, formatted ("–" where the counter is missing)."""
    cells = []
    for _, name, scale, spec in COLUMNS:
        value = step["values"].get(name)
        cells.append("–" if value is None else spec.format(value * scale))
    return cells


def bytes_rows(usable: dict) -> list[dict]:
    """Declared minimal bytes against DRAM bytes, every profiled case, flagged past +-5 %."""
    rows = []
    for key in sorted(usable):
        case = usable[key]
        dram, declared = case.dram_bytes(), case.minimal_bytes
        if dram is None or not declared:
            continue
        excess = dram / declared - 1
        flag = ("moves more than declared" if excess > BYTES_OVER else
                "moves less than declared: the model overstates, or data stayed in L2" if excess < BYTES_UNDER else "")
        rows.append({"key": key, "declared_mb": declared / 1e6, "read_mb": case.total("dram_read_bytes") / 1e6,
                     "write_mb": case.total("dram_write_bytes") / 1e6, "excess": excess, "flag": flag,
                     "launches": len(case.launches)})
    return rows


# FP32 lanes per SM (each does one FMA, two FLOPs, per clock), by compute capability.
FP32_LANES_PER_SM = {"8.0": 64, "8.6": 128, "8.7": 128, "8.9": 128, "9.0": 128, "10.0": 128, "12.0": 128}
WARP_ISSUE_PER_SM = 4  # one warp instruction per SM sub-partition (4 per SM) per clock since Volta


def roofs(device: dict) -> dict:
    """The GPU's roofs from its recorded properties: DRAM bytes/s (NVML's peak), FP32 FLOP/s and
    warp instructions/s at the maximum SM clock."""
    clock_hz = (device.get("max_sm_clock_mhz") or 0) * 1e6
    sms = device.get("sm_count") or 0
    lanes = FP32_LANES_PER_SM.get(str(device.get("compute_capability")))
    return {"dram": (device.get("peak_gbps") or 0) * 1e9,
            "flops": sms * lanes * 2 * clock_hz if lanes else None,
            "warp_ips": sms * WARP_ISSUE_PER_SM * clock_hz or None,
            "name": device.get("name", "GPU")}


def roofline_points(usable: dict, times: dict, frame) -> list[dict]:
    """One point per profiled case with a time in the run, at each variant's largest profiled size:
    FLOP/byte and FLOP/s for float work, warp instructions per byte and per second for the rest."""
    largest: dict = {}
    rows = _rows_by_key(frame, usable)
    for key, case in usable.items():
        first = rows.get(key)
        if first is None or key not in times or not case.dram_bytes():
            continue
        label = f"{first['op']}/{first['variant']}"
        if label not in largest or first["n"] > largest[label][0]:
            largest[label] = (first["n"], case, times[key], first)
    points = []
    for label, (n, case, time_ms, first) in sorted(largest.items()):  # each point its own case's row
        flops = sum(case.total(name) or 0 for name in ("fp32_add", "fp32_mul")) + 2 * (case.total("fp32_fma") or 0)
        seconds, dram = time_ms * 1e-3, case.dram_bytes()
        points.append({"label": label, "n": n, "flop_per_byte": flops / dram, "flops": flops / seconds,
                       "inst_per_byte": (case.total("warp_instructions") or 0) / dram,
                       "warp_ips": (case.total("warp_instructions") or 0) / seconds, "float": flops > 0,
                       "anchor": first.get("anchor"), "time_us": time_ms * 1e3, "series": first.get("series")})
    return points
