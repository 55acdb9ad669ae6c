"""`primbench export RUN --format csv|gbench-json|nvbench-json`: a run in the formats other tools read.

- csv: one row per case, for a spreadsheet or pandas.
- gbench-json: Google Benchmark's JSON (`--benchmark_format=json`), which github-action-benchmark
  (tool: googlecpp) and Bencher (adapter cpp_google) read: one benchmark per measured case, its
  `real_time` the median of the cold samples in microseconds.
- nvbench-json: NVBench's JSON (file version 1.0.0), which nvbench's scripts/nvbench_compare.py
  reads: one benchmark per variant, its axes the case's dtype, elements, block size, distribution
  and parameters, and per state the summaries NVBench writes (the mean and relative standard
  deviation of the cold GPU times, in seconds, as NVBench defines them; bandwidth from the declared
  minimal bytes). Failed and skipped cases are states with `is_skipped` and the reason.

Every figure is derived from the run file's raw samples; nothing here imports CuPy.
"""

from __future__ import annotations

import csv
import io
import json
import math

from primbench import __version__
from primbench.compare.export_nvbench import to_nvbench_json
from primbench.runfile import stats
from primbench.runfile.io import Run

FORMATS = ("csv", "gbench-json", "nvbench-json")
CSV_COLUMNS = ("key", "op", "variant", "params", "dtype", "n", "block", "distribution", "status", "reason", "bytes",
               "samples", "median_us", "p05_us", "p95_us", "noise", "batch_median_us", "gbps", "pct_peak", "variant_hash")


def export(run: Run, fmt: str) -> str:
    return {"csv": to_csv, "gbench-json": to_gbench_json, "nvbench-json": to_nvbench_json}[fmt](run)


def _us(ms: float) -> float | None:
    return round(ms * 1e3, 6) if ms is not None and math.isfinite(ms) else None


def to_csv(run: Run) -> str:
    peak = run.device.get("peak_gbps")
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for record in run.cases:
        case, cold, batch = record.case, stats.summarize(record.cold_ms), stats.summarize(record.samples.batch_ms)
        gbps = stats.bandwidth_gbps(record.bytes or 0, cold.median) if cold else math.nan
        writer.writerow({
            "key": case.key, "op": case.op, "variant": case.variant, "params": case.params.text, "dtype": case.dtype,
            "n": case.n, "block": "" if case.block is None else case.block, "distribution": case.distribution or "",
            "status": record.status, "reason": record.reason or "", "bytes": record.bytes,
            "samples": cold.count if cold else 0, "median_us": _us(cold.median) if cold else "",
            "p05_us": _us(cold.p05) if cold else "", "p95_us": _us(cold.p95) if cold else "",
            "noise": round(cold.noise, 6) if cold and math.isfinite(cold.noise) else "",
            "batch_median_us": _us(batch.median) if batch else "", "gbps": round(gbps, 3) if math.isfinite(gbps) else "",
            "pct_peak": round(100 * gbps / peak, 3) if peak and math.isfinite(gbps) else "",
            "variant_hash": record.variant_hash or "",
        })
    return out.getvalue()


def to_gbench_json(run: Run) -> str:
    """Google Benchmark's JSON: measured cases only (a failed case has no time to show)."""
    header = run.header
    benchmarks = []
    for index, record in enumerate(r for r in run.cases if r.ok and r.cold_ms):
        cold = stats.summarize(record.cold_ms)
        median_us = cold.median * 1e3
        benchmarks.append({
            "name": record.key, "family_index": index, "per_family_instance_index": 0, "run_name": record.key,
            "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1,
            "iterations": cold.count, "real_time": median_us, "cpu_time": median_us, "time_unit": "us",
            "bytes_per_second": (record.bytes or 0) / (cold.median * 1e-3),
            "label": f"median of {cold.count} cold samples, L2 flushed; {header.device_name}",
        })
    context = {"date": header.started, "host_name": header.host.get("hostname", ""), "executable": "primbench",
               "num_cpus": 0, "mhz_per_cpu": 0, "cpu_scaling_enabled": False, "caches": [], "load_avg": [],
               "library_build_type": "release", "primbench_version": __version__, "run_id": header.run_id,
               "gpu": header.device_name, "git_sha": header.git.get("sha")}
    return json.dumps({"context": context, "benchmarks": benchmarks}, indent=2) + "\n"
