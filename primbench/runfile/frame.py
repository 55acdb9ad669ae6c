"""A run's cases as one pandas DataFrame: a row per CaseRecord, with the statistics derived from
its raw samples, built once per run (`Run.frame`) with typed columns.

The columns are what the report, publish and the op sections read; nothing here parses a key.
"""

from __future__ import annotations

import math

import numpy as np

from primbench.runfile import stats
from primbench.runfile.case_id import Params
from primbench.runfile.records import CaseRecord


def is_number(value) -> bool:
    """True for a finite number; False for None, NaN, pd.NA or text (a frame's missing values)."""
    try:
        return value is not None and math.isfinite(float(value))
    except (TypeError, ValueError):  # None, pd.NA, text
        return False


def block_or_none(value):
    """A block size as int, or None for the library's choice (stored as null, NaN or pd.NA)."""
    return int(value) if is_number(value) else None


# Column -> pandas dtype. Nullable integers where a value may be absent: a library variant has no
# block size (None, shown as "library"); a skipped case has no samples.
COLUMN_TYPES = {
    "key": "object", "op": "object", "variant": "object", "variant_name": "object", "params": "object",
    "param_items": "object", "variant_hash": "object", "series": "object", "order": "int64", "dtype": "object",
    "n": "int64", "block": "Int64", "distribution": "object", "bytes": "float64", "status": "object", "reason": "object",
    "median_ms": "float64", "noise": "float64", "samples": "int64", "p05_ms": "float64", "p95_ms": "float64",
    "batch_median_ms": "float64", "batch_size": "Int64", "gbps": "float64", "pct_peak": "float64",
    "pct_copy": "float64", "sol_us": "float64", "pct_sol": "float64", "pct_peak_read": "float64", "l2_resident": "bool", "stop": "object",
    "sm_clock_mhz": "float64",
    "energy_mj": "float64", "energy_lo_mj": "float64", "energy_hi_mj": "float64", "energy_w": "float64",
    "energy_peak_w": "float64", "gb_per_j": "float64", "energy_above_idle_mj": "float64", "energy_reason": "object",
}


def variant_label(name: str, params: Params) -> str:
    """How tables and plots name a variant at some parameter values: 'blur1d_shared_halo[radius=4]'."""
    return f"{name}[{params.text}]" if params else name


def _identity_columns(record: CaseRecord, info: dict) -> dict:
    """What a case is: its key, op, variant (and its label at its parameters), size, status."""
    case = record.case
    return {
        "key": case.key,
        "op": case.op,
        # A variant run at several values of its own parameters is one line per value.
        "variant": variant_label(case.variant, case.params),
        "variant_name": case.variant,
        "params": case.params.text,
        "param_items": case.params.items_sorted(),
        "variant_hash": record.variant_hash,
        "series": info.get("series", ""),
        "order": info.get("order", 0),
        "dtype": case.dtype,
        "n": case.n,
        "block": case.block,
        "distribution": case.distribution,
        "bytes": record.bytes,
        "status": record.status,
        "reason": record.reason,
    }


def _timing_columns(record: CaseRecord, scale: dict) -> dict:
    """How long it took, from the raw samples: median, spread, GB/s and % of both peaks."""
    cold = stats.summarize(record.samples.cold_ms)
    batch = stats.summarize(record.samples.batch_ms)
    median = cold.median if cold else math.nan
    gbps = stats.bandwidth_gbps(record.bytes or 0, median) if cold else math.nan
    peak, copy_gbps, l2_bytes = scale["peak"], scale["copy"], scale["l2_bytes"]
    return {
        "median_ms": median,
        "noise": cold.noise if cold else math.nan,
        "samples": cold.count if cold else 0,
        "p05_ms": cold.p05 if cold else math.nan,
        "p95_ms": cold.p95 if cold else math.nan,
        "batch_median_ms": batch.median if batch else math.nan,
        "batch_size": record.samples.batch_size,
        "gbps": gbps,
        "pct_peak": 100.0 * gbps / peak if peak else math.nan,
        "pct_copy": 100.0 * gbps / copy_gbps if copy_gbps else math.nan,
        **_speed_of_light(record, median, scale),
        "l2_resident": bool(l2_bytes and (record.bytes or 0) <= l2_bytes),
        "stop": record.timing.get("stop"),
        # The median of the cold samples' SM clocks (their holds'), NaN where none were measured.
        "sm_clock_mhz": float(np.median(record.samples.cold_clock_mhz)) if record.samples.cold_clock_mhz else math.nan,
    }


def _speed_of_light(record: CaseRecord, median_ms: float, scale: dict) -> dict:
    """The case against the ceiling of its kind of traffic (a pure read, or a copy for a variant
    that writes as much as it reads): `sol_us`, the time its minimal bytes take at the probe's rate
    measured at this very byte count, and `pct_sol`, its % of that speed (100: as fast as the
    probe); `pct_peak_read`, its % of the same ceiling measured at 1 GiB (the run's peak read).
    NaN where the run measured no such ceiling (before schema 4, or sized probes)."""
    nothing = {"sol_us": math.nan, "pct_sol": math.nan, "pct_peak_read": math.nan}
    traffic = scale["traffic"].get(f"{record.case.op}/{record.case.variant}")
    if traffic is None or not record.bytes or not (median_ms and math.isfinite(median_ms)):
        return nothing
    peak = scale["copy"] if traffic == "read_write" else scale["read"]
    sized = scale["sized"].get(traffic, {}).get(int(record.bytes))
    figures = dict(nothing)
    if peak and math.isfinite(peak):
        figures["pct_peak_read"] = 100.0 * record.bytes / (peak * 1e9) / (median_ms * 1e-3)
    if sized and math.isfinite(sized):
        figures["sol_us"] = record.bytes / (sized * 1e9) * 1e6
        figures["pct_sol"] = 100.0 * figures["sol_us"] / (median_ms * 1e3)
    return figures


def _energy_columns(record: CaseRecord, idle_w: float) -> dict:
    """Energy per operation (measuring/energy.py), NaN where none was measured: `energy_mj` the
    windows' millijoules over their operations, `energy_lo_mj`/`energy_hi_mj` the fewest and most,
    `energy_w` the mean draw over the windows, `energy_peak_w` the highest instant reading,
    `gb_per_j` the minimal bytes per joule, `energy_above_idle_mj` what the operation cost above
    the GPU's idle draw (measured at run start) over its own time (NaN where the draw is not above
    it); `energy_reason` why none was
    measured for a case that asked."""
    energy = record.energy
    per_window = [w["mj"] / w["ops"] for w in stats.energy_windows(energy)]
    figures = stats.energy_figures(energy)
    if figures is None:
        return {"energy_mj": math.nan, "energy_lo_mj": math.nan, "energy_hi_mj": math.nan, "energy_w": math.nan,
                "energy_peak_w": math.nan, "gb_per_j": math.nan, "energy_above_idle_mj": math.nan,
                "energy_reason": energy.get("reason")}
    mj, watts, op_ms = figures["mj_per_op"], figures["avg_w"], figures["op_ms"]
    above = (watts - idle_w) * op_ms if is_number(watts) and is_number(idle_w) and is_number(op_ms) else math.nan
    if not above > 0:  # a draw at or under the idle one measured at start says that measure was off: none
        above = math.nan
    return {
        "energy_mj": float(mj),
        "energy_lo_mj": min(per_window) if per_window else float(mj),
        "energy_hi_mj": max(per_window) if per_window else float(mj),
        "energy_w": float(watts) if is_number(watts) else math.nan,
        "energy_peak_w": float(energy["peak_w"]) if is_number(energy.get("peak_w")) else math.nan,
        "gb_per_j": (record.bytes or 0) / 1e9 / (mj / 1e3) if record.bytes else math.nan,
        "energy_above_idle_mj": above,
        "energy_reason": None,
    }


def _all_or_none(values):
    values = list(values)
    return all(values) if values else None


def _check_columns(record: CaseRecord) -> dict:
    """What verification found: the exact and random checks, determinism across runs and grids, launches."""
    random_check = record.verify.get("random") or {}
    exact_check = record.verify.get("exact") or {}
    determinism = record.determinism
    return {
        "exact_ok": exact_check.get("ok"),
        "random_ok": random_check.get("ok"),
        "error": random_check.get("error"),
        "tolerance": random_check.get("tolerance"),
        "bitwise_equal": determinism.get("bitwise_equal"),
        "result_hex": determinism.get("result_hex"),
        # The reproducibility probe: True if every scaled grid gave the same bits, None if not tried.
        "grids_bitwise_equal": _all_or_none(probe.get("bitwise_equal") for probe in determinism.get("across_grids") or []),
        "grids_probed": "across_grids" in determinism,  # False in runs made before the probe existed
        "got": random_check.get("got"),
        "expected": random_check.get("expected"),
        "reference_kind": random_check.get("reference"),
        "abs_sum": random_check.get("abs_sum"),
        "serial_float32": random_check.get("serial_float32"),
        "flags": ",".join(record.flags),
        # The first launch with a grid: atomic variants start with the memset of their target.
        "grid": next((launch["grid"] for launch in record.launches if launch.get("grid")), None),
        "launches": len(record.launches),
        "launch_list": list(record.launches),  # what each launch declared (grid, and e.g. top-k's group)
    }


def to_frame(run):
    """One row per case of a results.Run, with median, noise, GB/s and % of both peaks derived
    from raw samples."""
    import pandas as pd

    device = run.device
    variants = run.header.variants
    scale = {"peak": device.get("peak_gbps") or math.nan, "copy": run.copy_gbps, "read": run.read_gbps,
             "sized": run.sized_ceilings_gbps,
             "l2_bytes": device.get("l2_bytes") or 0,
             # "op/name" -> "read" or "read_write"; a run made before Variant.traffic has none, and no
             # read probe either, so its speed of light stays unknown (NaN).
             "traffic": {name: info.get("traffic") for name, info in variants.items()}}
    rows = [{**_identity_columns(record, variants.get(f"{record.case.op}/{record.case.variant}", {})),
             **_timing_columns(record, scale), **_check_columns(record),
             **_energy_columns(record, run.idle_w(record.device_uuid))}
            for record in run.cases]
    frame = pd.DataFrame(rows, columns=None if rows else list(COLUMN_TYPES))
    return frame.astype({name: kind for name, kind in COLUMN_TYPES.items() if name in frame.columns})
