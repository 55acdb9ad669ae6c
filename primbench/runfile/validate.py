"""What the run-file reader hands every command, checked in the pass that reads it: each record's
fields (nested ones included) against what report, compare, check, export, profile and --resume
read of them, and the records against each other (one end record, closing the cases it counts;
each case measured on one of the header's GPUs).

A record that breaks a rule is refused with one line naming the first bad field (as a dotted path:
'determinism.across_grids[0].grids') and the line it is on: nothing downstream meets a value of a
type it does not expect, or a number that would divide by zero or print Infinity. Fields this
primbench does not read are let through, so a later primbench may add its own.
`schema.py` turns the same tables into the published JSON Schema.
"""

from __future__ import annotations

import math
import sys

from primbench.runfile.case_id import CaseId
from primbench.runfile.json_spec import (
    F,
    Field,
    above_zero_to,
    between,
    compiled,
    numbers_between,
    object_problem,
    one_of,
    two_texts,
    zero_or_between,
)
from primbench.runfile.records import CaseRecord, RunEnd, RunHeader, RunResume, Telemetry, json_fields

STATUSES = ("ok", "failed", "skipped")
SAMPLE_LISTS = ("cold_ms", "batch_ms")
MAX_N = 2**40  # far past any GPU's memory; a larger n is damage, not a measurement
TRAFFIC = ("read", "read_write")  # Variant.traffic
# A time under 1 ns is no measurement (CUDA events resolve about 0.5 us) and one over a day is no
# sample; between the two every derived figure (GB/s, ns, ratios) stays a finite float.
TIME_FLOOR_MS = 1e-6
TIME_CEILING_MS = 86_400_000.0
# Above any operation's traffic (16 EiB); with the time floor, GB/s stays finite.
BYTES_CEILING = 2**64
RATE_FLOOR_GBPS = 1.0  # a peak is divided by: a nonzero one under 1 GB/s is damage
CLOCK_FLOOR_MHZ = 1.0  # likewise a clock: nvbench's clock scaling divides by the GPU's maximum
CLOCK_CEILING_MHZ = 100_000.0


def _times(value, path):
    return numbers_between(value, path, TIME_FLOOR_MS, TIME_CEILING_MS, "ms")


def _time_or_none(value, path):
    if value is None:
        return None
    return None if TIME_FLOOR_MS <= value <= TIME_CEILING_MS else f"'{path}' must be from {TIME_FLOOR_MS:g} to {TIME_CEILING_MS:g} ms, not {value!r:.40}"


def _clocks(value, path):
    return numbers_between(value, path, CLOCK_FLOOR_MHZ, CLOCK_CEILING_MHZ, "MHz")


_COUNT = between(0, 2**63, "a count, 0 or more")
_BYTES = between(0, BYTES_CEILING, "a number of bytes from 0 to 2^64")
_PROBE_BYTES = above_zero_to(BYTES_CEILING, "a number of bytes above 0 (and at most 2^64)")
_RATE = zero_or_between(RATE_FLOOR_GBPS, math.inf, "GB/s")
_CLOCK = zero_or_between(CLOCK_FLOOR_MHZ, CLOCK_CEILING_MHZ, "MHz")
_FRACTION = above_zero_to(1 - 1e-15, "a relative change between 0 and 1 (0.05 is 5 %)")
_MICROSECONDS = between(0, 1e12, "0 or more microseconds")
_SECONDS = between(0, 1e9, "0 or more seconds")

# Energy (measuring/energy.py): GB/J divides by the millijoules, ratios by both; a GPU past a
# megawatt, or an operation past a gigajoule, is damage.
_WATTS = above_zero_to(1e6, "watts above 0 (and at most 1,000,000)")
_MILLIJOULES = above_zero_to(1e12, "millijoules above 0 (and at most 10^12)")
_OP_MS = above_zero_to(TIME_CEILING_MS, "milliseconds above 0")
# What readers derive, bounded as well as what is recorded: mJ per operation from 1 nJ (a 2 us
# kernel at 100 W is 0.2 mJ), so that GB/J and ratios of it stay finite; a GPU's draw from 1 W.
_MJ_PER_OP = between(1e-6, 1e12, "millijoules per operation from 1e-06 to 1e+12")
_DRAW_W = between(1, 1e6, "watts from 1 to 1e+06")


def _positive_number(value) -> bool:
    # at most the largest float: an int of 400 digits overflows when divided (the field says so)
    return type(value) in (int, float) and 0 < value <= sys.float_info.max


def _window_figures(window: dict, path: str) -> str | None:
    """A window's mJ per operation, draw and time per operation, as every reader divides them out
    (runfile/stats.energy_figures), each within what a GPU can do: each of the three counts may be
    in range while their quotients are not (1e-321 mJ over 1 operation). Checked before the fields
    themselves, so only counts that are positive numbers are divided here; the fields say the rest."""
    mj, ops, seconds = window.get("mj"), window.get("ops"), window.get("seconds")
    if not (_positive_number(mj) and _positive_number(ops) and _positive_number(seconds)):
        return None
    for value, low, high, what, words in (
            (mj / ops, 1e-6, 1e12, "mJ per operation", f"{mj:g} mJ over {ops:g} operations"),
            (mj / seconds / 1000.0, 1.0, 1e6, "W", f"{mj:g} mJ in {seconds:g} s"),
            (seconds * 1e3 / ops, 0.0, TIME_CEILING_MS, "ms per operation", f"{seconds:g} s for {ops:g} operations")):
        inside = (value > low if low == 0 else value >= low) and value <= high
        if not inside:
            return f"'{path}' gives {value:.3g} {what} ({words}); it must be {low:g} to {high:g} {what}"
    return None


# -- the nested fields commands read ----------------------------------------------------------------
NUMBER_OR_NULL = ("number", "null")
TEXT_OR_NULL = ("string", "null")
DEVICE = {"name": F("string"), "uuid": F(TEXT_OR_NULL), "pci_bus_id": F(TEXT_OR_NULL),
          "compute_capability": F(TEXT_OR_NULL), "sm_count": F(("integer", "null"), rule=_COUNT),
          "max_threads_per_sm": F(("integer", "null"), rule=_COUNT), "max_blocks_per_sm": F(("integer", "null"), rule=_COUNT),
          "shared_per_block_optin_bytes": F(("integer", "null"), rule=_COUNT), "l2_bytes": F(("integer", "null"), rule=_COUNT),
          "memory_bytes": F(("integer", "null"), rule=_COUNT), "max_sm_clock_mhz": F(NUMBER_OR_NULL, rule=_CLOCK),
          "default_sm_clock_mhz": F(NUMBER_OR_NULL, rule=_CLOCK), "max_mem_clock_mhz": F(NUMBER_OR_NULL, rule=_CLOCK),
          "bus_width_bits": F(("integer", "null"), rule=_COUNT), "peak_gbps": F(NUMBER_OR_NULL, rule=_RATE),
          "driver": F(TEXT_OR_NULL), "cuda_driver": F(TEXT_OR_NULL), "cuda_runtime": F(TEXT_OR_NULL),
          "power_limit_w": F(NUMBER_OR_NULL)}
PROBE = {"bytes": F("number", rule=_PROBE_BYTES), "samples_ms": F("array", rule=_times), "n": F("integer"),
         "method": F(TEXT_OR_NULL), "grid": F(("integer", "null")), "block": F(("integer", "null")),
         "alternatives": F("object", values=F("array", rule=_times))}
VARIANT_INFO = {"op": F("string"), "name": F("string"), "hash": F("string"), "origin": F("string"), "series": F("string"),
                "order": F("integer"), "notes": F("string"), "hazard": F(TEXT_OR_NULL),
                "deterministic_expected": F(("boolean", "null")), "grid_independent": F("boolean"),
                "work_span": F(("array", "null"), rule=two_texts("work, span")), "block_sizes": F("array"), "params": F("object"),
                "traffic": F(TEXT_OR_NULL, rule=one_of(TRAFFIC)), "bytes_model": F(TEXT_OR_NULL),
                "tolerance_model": F(TEXT_OR_NULL),
                # A library variant's package and version (null where it was not installed): primbench/libraries.py
                "library": F(("object", "null"), fields={"package": F("string", required=True), "version": F(TEXT_OR_NULL)})}
COMPARE_BLOCK = {"threshold": F("number", rule=_FRACTION), "batch_threshold": F("number", rule=_FRACTION),
                 "thresholds": F("object", values=F("number", rule=_FRACTION)),
                 "abs_floor_us": F("number", rule=_MICROSECONDS), "batch_below_us": F("number", rule=_MICROSECONDS),
                 "batch_abs_floor_us": F("number", rule=_MICROSECONDS), "exempt": F("object", values=F("string")),
                 "require_baseline": F("boolean"), "energy_threshold": F("number", rule=_FRACTION)}
CONFIG = {"name": F(TEXT_OR_NULL), "compare": F("object", fields=COMPARE_BLOCK), "timing": F("object"),
          "verify": F("object"), "plugins": F("array", items=F("string"), holds="paths"),
          "sweeps": F("array", items=F("object", fields={"explicit": F("array")}), holds="objects")}
HEADER_ENERGY = {"available": F("boolean"), "reason": F(TEXT_OR_NULL), "idle_w": F(NUMBER_OR_NULL, rule=_WATTS),
                 "counter_step_s": F(NUMBER_OR_NULL, rule=_SECONDS), "method": F(TEXT_OR_NULL), "policy": F("object")}
GPUS = {"mode": F("string", rule=one_of(("shard", "replicate"))), "group": F("string"),
        "replicas": F("array", items=F("string"), holds="run ids"),
        "devices": F("array", holds="objects", items=F("object", fields={
            "index": F("integer", rule=_COUNT), "visible": F(("string", "integer")), "device": F("object", fields=DEVICE),
            "copy": F("object", fields=PROBE), "read": F("object", fields=PROBE),
            "energy": F("object", fields=HEADER_ENERGY), "error": F("string")}))}
# A window's three counts are required (every reader divides by them); at least 1e-6 operations, so
# that a window's mJ per operation (at most 10^12 / 10^-6) stays finite.
ENERGY_WINDOW = {"seconds": F("number", required=True, rule=above_zero_to(1e9, "seconds above 0")),
                 "mj": F("number", required=True, rule=_MILLIJOULES),
                 "ops": F("number", required=True, rule=between(1e-6, 1e18, "a count of operations from 10^-6 to 10^18")),
                 "op_ms": F("number", rule=_OP_MS), "avg_w": F("number", rule=_DRAW_W)}
ENERGY = {"mj_per_op": F("number", rule=_MJ_PER_OP), "avg_w": F("number", rule=_DRAW_W),
          "peak_w": F(NUMBER_OR_NULL, rule=_WATTS), "op_ms": F("number", rule=_OP_MS),
          "windows": F("array", holds="objects", items=F("object", fields=ENERGY_WINDOW, rule=_window_figures)),
          "ramp_s": F("number", rule=_SECONDS), "settled": F("boolean"), "window_s": F("number", rule=_SECONDS),
          "counter_step_s": F(NUMBER_OR_NULL, rule=_SECONDS), "counter_step_mj": F(NUMBER_OR_NULL),
          "ops_per_launch": F("integer", rule=between(1, 2**63, "a count of operations above 0")),
          "method": F(TEXT_OR_NULL), "reason": F(TEXT_OR_NULL), "discarded_windows": F("integer", rule=_COUNT)}
HEADER_NESTED = {
    "tool": {"name": F("string"), "version": F(TEXT_OR_NULL)},
    "git": {"sha": F(TEXT_OR_NULL), "dirty": F(("boolean", "null")), "source": F(TEXT_OR_NULL)},
    "config": CONFIG, "host": {"hostname": F(TEXT_OR_NULL)}, "device": DEVICE, "copy": PROBE, "read": PROBE,
    "timing": {"min_clock_fraction": F(NUMBER_OR_NULL, rule=between(0, 1, "a fraction from 0 to 1"))},
    "gpus": GPUS, "ceilings": {"read_method": F(TEXT_OR_NULL), "copy_method": F(TEXT_OR_NULL),
                               "read": F("array", items=F("object", fields=PROBE), holds="objects"),
                               "copy": F("array", items=F("object", fields=PROBE), holds="objects")},
    "energy": HEADER_ENERGY,
    # runfile/protocol.py reads each part's revision; a baseline's runs are named in compare's lines.
    "protocol": {"format": F("integer"), "parts": F("object", values=F("object", fields={
        "revision": F("integer", required=True, rule=_COUNT), "what": F(TEXT_OR_NULL)}))},
    "baseline": {"runs": F("array", holds="objects", items=F("object", fields={
        "run_id": F("string", required=True), "started": F(TEXT_OR_NULL), "sha": F(TEXT_OR_NULL),
        "device_uuid": F(TEXT_OR_NULL)})), "spread_multiple": F("number", rule=between(1, 1e3, "a multiple from 1 to 1,000"))},
}
CHECK = {"ok": F(("boolean", "null")), "got": F(NUMBER_OR_NULL), "expected": F(NUMBER_OR_NULL),
         "error": F(NUMBER_OR_NULL), "tolerance": F(NUMBER_OR_NULL), "depth": F(("integer", "null")),
         "reference": F(TEXT_OR_NULL), "abs_sum": F(NUMBER_OR_NULL), "serial_float32": F(NUMBER_OR_NULL),
         "elements": F("integer"), "mismatches": F("integer"), "worst_index": F(("integer", "null")),
         "first_mismatch": F("object", fields={"index": F("integer"), "got": F(NUMBER_OR_NULL), "expected": F(NUMBER_OR_NULL)})}
# NVML's readings around a case: the clocks feed nvbench's clock scaling where no per-sample clock
# was kept, so they are bounded as the device's clocks are.
NVML_STATE = {"sm_clock_mhz": F(NUMBER_OR_NULL, rule=_CLOCK), "mem_clock_mhz": F(NUMBER_OR_NULL, rule=_CLOCK),
              "temperature_c": F(NUMBER_OR_NULL, rule=between(-273.15, 1000, "degrees C from -273.15 to 1,000")),
              "power_w": F(NUMBER_OR_NULL, rule=between(0, 1e6, "watts from 0 to 1,000,000")), "reasons_mask": F(("integer", "null")), "error": F(TEXT_OR_NULL),
              "reasons": F("array", items=F("string"), holds="names")}
CASE_NESTED = {
    "params": F("object", values=F("integer")),
    "bytes": F("number", rule=_BYTES),
    "elapsed_s": F("number", rule=_SECONDS),
    "launches": F("array", holds="objects", items=F("object", fields={
        "kernel": F("string"), "grid": F(("integer", "array", "null")), "block": F(("integer", "null")),
        "group": F(("integer", "null"))})),
    "samples": F("object", fields={name: F("array", rule=_times) for name in SAMPLE_LISTS} | {
        "batch_size": F(("integer", "null"), rule=between(1, 2**63, "a count of launches above 0")),
        "cold_clock_mhz": F("array", rule=_clocks)}),
    "verify": F("object", fields={"exact": F("object", fields=CHECK), "random": F("object", fields=CHECK),
                                  "written": F(("boolean", "null"))}),
    "determinism": F("object", fields={"runs": F("integer"), "bitwise_equal": F(("boolean", "null")),
                                       "result_hex": F(TEXT_OR_NULL), "across_grids": F("array", holds="objects", items=F(
                                           "object", fields={"grid_scale": F("number"), "bitwise_equal": F(("boolean", "null")),
                                                             "grids": F("array", items=F(("integer", "null")), holds="grids")}))}),
    "timing": F("object", fields={"stop": F(TEXT_OR_NULL), "batch_stop": F(TEXT_OR_NULL), "spin_us": F(NUMBER_OR_NULL),
                                  "host_enqueue_us": F(NUMBER_OR_NULL), "wall_s": F(NUMBER_OR_NULL),
                                  "throttled_discarded": F(("integer", "null"), rule=_COUNT),
                                  "batch_method": F(TEXT_OR_NULL)}),
    "nvml": F("object", fields={**NVML_STATE, "before": F("object", fields=NVML_STATE)}),
    "energy": F("object", fields=ENERGY),
    "flags": F("array", items=F("string"), holds="names"),
    # A baseline of several runs (runfile/baselines.py): each run's median of each figure; the
    # verdict engine divides the largest by the smallest, so each is a time or null.
    "between_runs": F("object", fields={"runs": F("array", items=F("string"), holds="run ids"),
                                        "cold_median_ms": F("array", items=F(NUMBER_OR_NULL, rule=_time_or_none), holds="times"),
                                        "batch_median_ms": F("array", items=F(NUMBER_OR_NULL, rule=_time_or_none), holds="times")}),
}


def _record_fields(record_type, nested: dict) -> dict[str, Field]:
    """A record's fields: its own declarations (types, required), with what is read inside them."""
    fields = {}
    for name, (kinds, required) in json_fields(record_type).items():
        inner = nested.get(name)
        if isinstance(inner, dict):  # an object's fields
            inner = Field(kinds, fields=inner)
        fields[name] = Field(kinds, required=required, fields=inner.fields, items=inner.items, values=inner.values,
                             rule=inner.rule, holds=inner.holds) if inner is not None else Field(kinds, required=required)
    return fields


HEADER_FIELDS = _record_fields(RunHeader, {**HEADER_NESTED, "variants": F("object", values=F("object", fields=VARIANT_INFO))})
CASE_FIELDS = _record_fields(CaseRecord, CASE_NESTED)
END_FIELDS = _record_fields(RunEnd, {name: F("integer", rule=_COUNT) for name in STATUSES})
RESUME_FIELDS = _record_fields(RunResume, {"done_before": F("integer", rule=_COUNT)})
TELEMETRY_FIELDS = _record_fields(Telemetry, {"reasons": F("array", items=F("string"), holds="names")})

_COMPILED = {kind: compiled(fields) for kind, fields in (
    ("header", HEADER_FIELDS), ("case", CASE_FIELDS), ("end", END_FIELDS), ("resume", RESUME_FIELDS),
    ("telemetry", TELEMETRY_FIELDS))}


def record_problem(record: dict) -> str | None:
    """What is wrong with one record (already migrated to the current schema), or None."""
    spec = _COMPILED.get(record.get("kind"))
    if spec is None:
        return f"kind {str(record.get('kind'))[:40]!r} is not one of {', '.join(_COMPILED)}"
    problem = object_problem(record, spec)
    if problem is None and record["kind"] == "case":
        return _case_problem(record)
    return problem


def _case_problem(case: dict) -> str | None:
    """What a case's fields must meet together, or alone beyond their type."""
    if case["status"] not in STATUSES:
        return f"'status' must be one of {', '.join(STATUSES)}, not {case['status'][:40]!r}"
    if not 1 <= case["n"] <= MAX_N:
        return f"'n' {case['n']} is outside 1..2^40"
    if case.get("block") is not None and not 1 <= case["block"] <= 1 << 20:
        return f"'block' {case['block']} is not a block size"
    if CaseId.from_record(case).key != case["key"]:  # the pairing key must say what the fields say
        return f"'key' {case['key'][:120]!r} does not match its op, variant, dtype, n, block, distribution and params"
    samples = case.get("samples") or {}
    clocks = samples.get("cold_clock_mhz")
    if clocks is not None and len(clocks) != len(samples.get("cold_ms") or []):
        return "'samples.cold_clock_mhz' must hold one SM clock in MHz per cold sample"
    if case["status"] == "ok" and not samples.get("cold_ms"):
        return "an 'ok' case with no cold samples"
    return None


class RunChecks:
    """The rules between a run's records, fed each record in file order after its own check: no
    second header, no case twice, nothing after the end record but a resume record (which reopens
    the run), end counts that are those of every case before them, and every case (and GPU
    reading) from one of the header's GPUs. A file without an end record is an interrupted run,
    and reads."""

    def __init__(self, header: dict):
        self.keys: dict[str, int] = {}
        self.counts = dict.fromkeys(STATUSES, 0)
        self.end_line: int | None = None
        self.uuids = header_gpus(header)

    def problem(self, record: dict, number: int) -> str | None:
        kind = record["kind"]
        if kind == "header":
            return "a second header; two runs were written into one file"
        if kind == "resume":
            self.end_line = None
            return None
        if self.end_line is not None:
            return (f"a {kind} record after the end record (line {self.end_line}); a finished run ends with it: "
                    "the file was edited or two runs were joined")
        if kind == "case":
            return self._case(record, number)
        if kind == "end":
            self.end_line = number
            return self._end(record)
        if kind == "telemetry" and record["device_uuid"] and self.uuids and record["device_uuid"] not in self.uuids:
            return f"telemetry of GPU {record['device_uuid'][:80]!r}, not one of the header's ({self._gpus()})"
        return None

    def _case(self, case: dict, number: int) -> str | None:
        key = case["key"]
        if key in self.keys:
            return (f"case {key[:120]!r} again (first on line {self.keys[key]}); "
                    "a run measures each case once: the file is damaged or two runs were joined")
        uuid = case.get("device_uuid")
        if uuid is not None and self.uuids and uuid not in self.uuids:
            return (f"case {key[:120]!r} names GPU {uuid[:80]!r} ('device_uuid'), not one of the header's "
                    f"({self._gpus()}); it was measured in another run: the file was edited or two runs were joined")
        self.keys[key] = number
        self.counts[case["status"]] += 1
        return None

    def _end(self, end: dict) -> str | None:
        recorded = {status: end.get(status, 0) for status in STATUSES}
        if recorded == self.counts:
            return None
        before = ("no cases come before it" if not any(self.counts.values()) else
                  "the cases before it are " + ", ".join(f"{count} {status}" for status, count in self.counts.items()))
        return (f"the end record counts {', '.join(f'{count} {status}' for status, count in recorded.items())}, and "
                f"{before}; the file was edited (the end record is written from the cases it closes)")

    def _gpus(self) -> str:
        return ", ".join(sorted(self.uuids))[:200]


def header_gpus(header: dict) -> set[str]:
    """The GPUs a run's header names: its device's UUID and each of its `gpus.devices` (a GPU whose
    NVML gave no UUID is named as the scheduler names it, gpu<index>). Empty where it names none."""
    uuids = {header.get("device", {}).get("uuid")}
    for entry in (header.get("gpus") or {}).get("devices") or []:
        device = entry.get("device") or {}
        uuids.add(device.get("uuid") or (f"gpu{entry['index']}" if "index" in entry and "device" in entry else None))
    uuids.discard(None)
    uuids.discard("")
    return uuids
