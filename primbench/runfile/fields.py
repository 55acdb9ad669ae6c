"""The fields inside a run file's records, and what their values must meet: the blocks a record's
objects hold (the header's device, probes, config, GPUs, energy, protocol and baseline; a case's
samples, checks, determinism, timing, NVML state, energy and between-runs figures; a header's
variant descriptions), as json_spec.Field trees, and the rules they name.

runfile/records.py declares each record's own fields and names the block each object holds, so a
field is described once, here or there; runfile/validate.py compiles the reader's check from those
declarations and runfile/schema.py writes the published JSON Schema from them. A bound is stated
through a json_spec rule helper (between, above_zero_to, ...) so that the schema states it too.
"""

from __future__ import annotations

import sys

from primbench.runfile.json_spec import F, above_zero_to, between, bounded, numbers_from, one_of, two_texts, zero_or_between

STATUSES = ("ok", "failed", "skipped")
SAMPLE_LISTS = ("cold_ms", "batch_ms")
MAX_N = 2**40  # far past any GPU's memory; a larger n is damage, not a measurement
MAX_BLOCK = 1 << 20
TRAFFIC = ("read", "read_write")  # Variant.traffic
# A time under 1 ns is no measurement (CUDA events resolve about 0.5 us) and one over a day is no
# sample; between the two every derived figure (GB/s, ns, ratios) stays a finite float.
TIME_FLOOR_MS = 1e-6
TIME_CEILING_MS = 86_400_000.0
# Above any operation's traffic (16 EiB); with the time floor, GB/s stays finite.
BYTES_CEILING = 2**64
RATE_FLOOR_GBPS = 1.0  # a peak is divided by: a nonzero one under 1 GB/s is damage
RATE_CEILING_GBPS = 1e9  # an exabyte a second: past it, a peak is damage (charts take its logarithm)
CLOCK_FLOOR_MHZ = 1.0  # likewise a clock: nvbench's clock scaling divides by the GPU's maximum
CLOCK_CEILING_MHZ = 100_000.0

# -- rules ------------------------------------------------------------------------------------------
TIMES = numbers_from(TIME_FLOOR_MS, TIME_CEILING_MS, "ms")
CLOCKS = numbers_from(CLOCK_FLOOR_MHZ, CLOCK_CEILING_MHZ, "MHz")
TIME = between(TIME_FLOOR_MS, TIME_CEILING_MS, f"from {TIME_FLOOR_MS:g} to {TIME_CEILING_MS:g} ms")
INT64_MAX = 2**63 - 1  # readers hold counts in int64 columns (pandas, nvbench's JSON)
COUNT = between(0, INT64_MAX, "a count, 0 or more")
INTEGER = between(-INT64_MAX - 1, INT64_MAX, "an integer within int64")
ORDER_LOW, ORDER_HIGH = -2**31, 2**31 - 1  # a variant's place in its progression (declarations.py checks a variant's)
BYTES = between(0, BYTES_CEILING, "a number of bytes from 0 to 2^64")
_PROBE_BYTES = above_zero_to(BYTES_CEILING, "a number of bytes above 0 (and at most 2^64)")
_RATE = zero_or_between(RATE_FLOOR_GBPS, RATE_CEILING_GBPS, "GB/s")
_CLOCK = zero_or_between(CLOCK_FLOOR_MHZ, CLOCK_CEILING_MHZ, "MHz")
_FRACTION = above_zero_to(1 - 1e-15, "a relative change between 0 and 1 (0.05 is 5 %)")
_MICROSECONDS = between(0, 1e12, "0 or more microseconds")
SECONDS = between(0, 1e9, "0 or more seconds")
STATUS = one_of(STATUSES)


def _case_n(value, path):
    return None if 1 <= value <= MAX_N else f"'{path}' {value} is outside 1..2^40"


def _block(value, path):
    return None if 1 <= value <= MAX_BLOCK else f"'{path}' {value} is not a block size"


CASE_N = bounded(_case_n, 1, MAX_N)
BLOCK = bounded(_block, 1, MAX_BLOCK)

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
    themselves, so only counts that are positive numbers are divided here; the fields say the rest.
    (A rule between fields: the JSON Schema cannot state it.)"""
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


# -- the header's blocks ----------------------------------------------------------------------------
NUMBER_OR_NULL = ("number", "null")
TEXT_OR_NULL = ("string", "null")
TOOL = {"name": F("string"), "version": F(TEXT_OR_NULL)}
GIT = {"sha": F(TEXT_OR_NULL), "dirty": F(("boolean", "null")), "source": F(TEXT_OR_NULL)}
HOST = {"hostname": F(TEXT_OR_NULL)}
DEVICE = {"name": F("string"), "uuid": F(TEXT_OR_NULL), "pci_bus_id": F(TEXT_OR_NULL),
          "compute_capability": F(TEXT_OR_NULL), "sm_count": F(("integer", "null"), rule=COUNT),
          "max_threads_per_sm": F(("integer", "null"), rule=COUNT), "max_blocks_per_sm": F(("integer", "null"), rule=COUNT),
          "shared_per_block_optin_bytes": F(("integer", "null"), rule=COUNT), "l2_bytes": F(("integer", "null"), rule=COUNT),
          "memory_bytes": F(("integer", "null"), rule=COUNT), "max_sm_clock_mhz": F(NUMBER_OR_NULL, rule=_CLOCK),
          "default_sm_clock_mhz": F(NUMBER_OR_NULL, rule=_CLOCK), "max_mem_clock_mhz": F(NUMBER_OR_NULL, rule=_CLOCK),
          "bus_width_bits": F(("integer", "null"), rule=COUNT), "peak_gbps": F(NUMBER_OR_NULL, rule=_RATE),
          "driver": F(TEXT_OR_NULL), "cuda_driver": F(TEXT_OR_NULL), "cuda_runtime": F(TEXT_OR_NULL),
          "power_limit_w": F(NUMBER_OR_NULL)}
PROBE = {"bytes": F("number", rule=_PROBE_BYTES), "samples_ms": F("array", rule=TIMES), "n": F("integer"),
         "method": F(TEXT_OR_NULL), "grid": F(("integer", "null")), "block": F(("integer", "null")),
         "alternatives": F("object", values=F("array", rule=TIMES))}
CEILINGS = {"read_method": F(TEXT_OR_NULL), "copy_method": F(TEXT_OR_NULL),
            "read": F("array", items=F("object", fields=PROBE), holds="objects"),
            "copy": F("array", items=F("object", fields=PROBE), holds="objects")}
VARIANT_INFO = {"op": F("string"), "name": F("string"), "hash": F("string"), "origin": F("string"), "series": F("string"),
                "order": F("integer", rule=between(ORDER_LOW, ORDER_HIGH, "a position from -2^31 to 2^31 - 1")),
                "notes": F("string"), "hazard": F(TEXT_OR_NULL),
                "deterministic_expected": F(("boolean", "null")), "grid_independent": F("boolean"),
                "work_span": F(("array", "null"), rule=two_texts("work, span")), "block_sizes": F("array"), "params": F("object"),
                "traffic": F(TEXT_OR_NULL, rule=one_of(TRAFFIC)), "bytes_model": F(TEXT_OR_NULL),
                "tolerance_model": F(TEXT_OR_NULL),
                # A library variant's package and version (null where it was not installed): primbench/libraries.py
                "library": F(("object", "null"), fields={"package": F("string", required=True), "version": F(TEXT_OR_NULL)}),
                # The hash of its kernels as NVRTC compiled them for the run's GPU, and of its plan
                # (primbench/machine_code.py); absent for a library variant and in runs made before it.
                "machine_code": F("object", fields={"hash": F("string", required=True), "arch": F("string", required=True),
                                                    "nvrtc": F(TEXT_OR_NULL)})}
COMPARE_BLOCK = {"threshold": F("number", rule=_FRACTION), "batch_threshold": F("number", rule=_FRACTION),
                 "thresholds": F("object", values=F("number", rule=_FRACTION)),
                 "abs_floor_us": F("number", rule=_MICROSECONDS), "batch_below_us": F("number", rule=_MICROSECONDS),
                 "batch_abs_floor_us": F("number", rule=_MICROSECONDS), "exempt": F("object", values=F("string")),
                 "require_baseline": F("boolean"), "energy_threshold": F("number", rule=_FRACTION)}
CONFIG = {"name": F(TEXT_OR_NULL), "compare": F("object", fields=COMPARE_BLOCK), "timing": F("object"),
          "verify": F("object"), "plugins": F("array", items=F("string"), holds="paths"),
          "sweeps": F("array", items=F("object", fields={"explicit": F("array")}), holds="objects")}
TIMING_POLICY = {"min_clock_fraction": F(NUMBER_OR_NULL, rule=between(0, 1, "a fraction from 0 to 1"))}
HEADER_ENERGY = {"available": F("boolean"), "reason": F(TEXT_OR_NULL), "idle_w": F(NUMBER_OR_NULL, rule=_WATTS),
                 "counter_step_s": F(NUMBER_OR_NULL, rule=SECONDS), "method": F(TEXT_OR_NULL), "policy": F("object")}
GPUS = {"mode": F("string", rule=one_of(("shard", "replicate"))), "group": F("string"),
        "replicas": F("array", items=F("string"), holds="run ids"),
        "devices": F("array", holds="objects", items=F("object", fields={
            "index": F("integer", rule=COUNT), "visible": F(("string", "integer")), "device": F("object", fields=DEVICE),
            "copy": F("object", fields=PROBE), "read": F("object", fields=PROBE),
            "energy": F("object", fields=HEADER_ENERGY), "error": F("string")}))}
# runfile/protocol.py reads each part's revision; a baseline's runs are named in compare's lines.
PROTOCOL = {"format": F("integer"), "parts": F("object", values=F("object", fields={
    "revision": F("integer", required=True, rule=COUNT), "what": F(TEXT_OR_NULL)}))}
BASELINE = {"runs": F("array", holds="objects", items=F("object", fields={
    "run_id": F("string", required=True), "started": F(TEXT_OR_NULL), "sha": F(TEXT_OR_NULL),
    "device_uuid": F(TEXT_OR_NULL)})), "spread_multiple": F("number", rule=between(1, 1e3, "a multiple from 1 to 1,000"))}

# -- a case's blocks --------------------------------------------------------------------------------
PARAMS = F("object", values=F("integer", rule=INTEGER))
LAUNCH = {"kernel": F("string"), "grid": F(("integer", "array", "null")), "block": F(("integer", "null")),
          "group": F(("integer", "null"))}
SAMPLES = {name: F("array", rule=TIMES) for name in SAMPLE_LISTS} | {
    # at most 2^40 launches a batch: times the samples, nvbench's sample count stays in int64
    "batch_size": F(("integer", "null"), rule=between(1, 2**40, "a count of launches from 1 to 2^40")),
    "cold_clock_mhz": F("array", rule=CLOCKS)}
CHECK = {"ok": F(("boolean", "null")), "got": F(NUMBER_OR_NULL), "expected": F(NUMBER_OR_NULL),
         "error": F(NUMBER_OR_NULL), "tolerance": F(NUMBER_OR_NULL), "depth": F(("integer", "null")),
         "reference": F(TEXT_OR_NULL), "abs_sum": F(NUMBER_OR_NULL), "serial_float32": F(NUMBER_OR_NULL),
         "elements": F("integer"), "mismatches": F("integer"), "worst_index": F(("integer", "null")),
         "first_mismatch": F("object", fields={"index": F("integer"), "got": F(NUMBER_OR_NULL), "expected": F(NUMBER_OR_NULL)})}
VERIFY = {"exact": F("object", fields=CHECK), "random": F("object", fields=CHECK), "written": F(("boolean", "null"))}
DETERMINISM = {"runs": F("integer"), "bitwise_equal": F(("boolean", "null")), "result_hex": F(TEXT_OR_NULL),
               "across_grids": F("array", holds="objects", items=F("object", fields={
                   "grid_scale": F("number"), "bitwise_equal": F(("boolean", "null")),
                   "grids": F("array", items=F(("integer", "null")), holds="grids")}))}
CASE_TIMING = {"stop": F(TEXT_OR_NULL), "batch_stop": F(TEXT_OR_NULL), "spin_us": F(NUMBER_OR_NULL, rule=_MICROSECONDS),
               "host_enqueue_us": F(NUMBER_OR_NULL, rule=_MICROSECONDS), "wall_s": F(NUMBER_OR_NULL, rule=SECONDS),
               "throttled_discarded": F(("integer", "null"), rule=COUNT), "batch_method": F(TEXT_OR_NULL)}
# NVML's readings around a case: the clocks feed nvbench's clock scaling where no per-sample clock
# was kept, so they are bounded as the device's clocks are.
NVML_STATE = {"sm_clock_mhz": F(NUMBER_OR_NULL, rule=_CLOCK), "mem_clock_mhz": F(NUMBER_OR_NULL, rule=_CLOCK),
              "temperature_c": F(NUMBER_OR_NULL, rule=between(-273.15, 1000, "degrees C from -273.15 to 1,000")),
              "power_w": F(NUMBER_OR_NULL, rule=between(0, 1e6, "watts from 0 to 1,000,000")), "reasons_mask": F(("integer", "null")), "error": F(TEXT_OR_NULL),
              "reasons": F("array", items=F("string"), holds="names")}
NVML = {**NVML_STATE, "before": F("object", fields=NVML_STATE)}
# A window's three counts are required (every reader divides by them); at least 1e-6 operations, so
# that a window's mJ per operation (at most 10^12 / 10^-6) stays finite.
ENERGY_WINDOW = {"seconds": F("number", required=True, rule=above_zero_to(1e9, "seconds above 0")),
                 "mj": F("number", required=True, rule=_MILLIJOULES),
                 "ops": F("number", required=True, rule=between(1e-6, 1e18, "a count of operations from 10^-6 to 10^18")),
                 "op_ms": F("number", rule=_OP_MS), "avg_w": F("number", rule=_DRAW_W)}
ENERGY = {"mj_per_op": F("number", rule=_MJ_PER_OP), "avg_w": F("number", rule=_DRAW_W),
          "peak_w": F(NUMBER_OR_NULL, rule=_WATTS), "op_ms": F("number", rule=_OP_MS),
          "windows": F("array", holds="objects", items=F("object", fields=ENERGY_WINDOW, rule=_window_figures)),
          "ramp_s": F("number", rule=SECONDS), "settled": F("boolean"), "window_s": F("number", rule=SECONDS),
          "counter_step_s": F(NUMBER_OR_NULL, rule=SECONDS), "counter_step_mj": F(NUMBER_OR_NULL),
          "ops_per_launch": F("integer", rule=between(1, INT64_MAX, "a count of operations above 0")),
          "method": F(TEXT_OR_NULL), "reason": F(TEXT_OR_NULL), "discarded_windows": F("integer", rule=COUNT)}
# A baseline of several runs (runfile/baselines.py): each run's median of each figure; the verdict
# engine divides the largest by the smallest, so each is a time or null.
BETWEEN_RUNS = {"runs": F("array", items=F("string"), holds="run ids"),
                "cold_median_ms": F("array", items=F(NUMBER_OR_NULL, rule=TIME), holds="times"),
                "batch_median_ms": F("array", items=F(NUMBER_OR_NULL, rule=TIME), holds="times")}
