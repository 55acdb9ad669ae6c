"""NVBench's JSON (file version 1.0.0) of a run, which nvbench's own scripts read: one benchmark per
op/variant, its axes the case's dtype, elements, block size, distribution and parameters, and per
state the summaries NVBench writes. Every figure comes from the run file's raw samples; no CuPy."""

from __future__ import annotations

import json
import math

import numpy as np

from primbench import __version__
from primbench.runfile.io import Run
from primbench.runfile.records import CaseRecord


def _value(kind: str, value) -> dict:
    return {"name": "value", "type": kind, "value": str(value)}


def _summary(tag: str, name: str, hint: str, kind: str, value) -> dict:
    return {"tag": tag, "name": name, "hint": hint, "description": name, "data": [_value(kind, value)]}


def _state(record: CaseRecord, axis_values: list[dict], peak_bytes_per_s: float) -> dict:
    state = {"name": "Device=0 " + " ".join(f"{a['name']}={a['value']}" for a in axis_values), "device": 0,
             "type_config_index": 0, "axis_values": axis_values, "summaries": [], "is_skipped": not (record.ok and record.cold_ms)}
    if state["is_skipped"]:
        state["skip_reason"] = f"{record.status}: {record.reason or 'no samples'}"
        return state
    times_s = np.asarray(record.cold_ms) * 1e-3
    mean = float(times_s.mean())
    relative_stdev = float(times_s.std(ddof=1) / mean) if times_s.size > 1 else math.inf
    rate = (record.bytes or 0) / mean
    state["summaries"] = [
        _summary("nv/cold/sample_size", "Samples", "sample_size", "int64", times_s.size),
        _summary("nv/cold/time/gpu/mean", "GPU Time", "duration", "float64", mean),
        _summary("nv/cold/time/gpu/stdev/relative", "Noise", "percentage", "float64", relative_stdev),
        _summary("nv/cold/bw/global/bytes_per_second", "GlobalMem BW", "byte_rate", "float64", rate),
    ]
    if peak_bytes_per_s:
        state["summaries"].append(_summary("nv/cold/bw/global/utilization", "BWUtil", "percentage", "float64",
                                           rate / peak_bytes_per_s))
    return state


def _axis_values(case) -> list[dict]:
    """The case as NVBench axes; a variant's own parameters (a stencil's radius) are int64 axes."""
    values = [{"name": "T", "type": "string", "value": case.dtype},
              {"name": "Elements", "type": "int64", "value": str(case.n)},
              {"name": "Block", "type": "string", "value": "library" if case.block is None else str(case.block)},
              {"name": "Distribution", "type": "string", "value": case.distribution or ""}]
    return values + [{"name": name, "type": "int64", "value": str(value)} for name, value in case.params.items_sorted()]


def to_nvbench_json(run: Run) -> str:
    """NVBench's JSON: one benchmark per op/variant, one state per case."""
    device = run.device
    peak = (device.get("peak_gbps") or 0) * 1e9
    by_variant: dict[str, list[CaseRecord]] = {}
    for record in run.cases:
        by_variant.setdefault(f"{record.case.op}/{record.case.variant}", []).append(record)
    benchmarks = []
    for index, (name, records) in enumerate(by_variant.items()):
        states = [_state(r, _axis_values(r.case), peak) for r in records]
        axes = {}
        for state in states:
            for value in state["axis_values"]:
                axis = axes.setdefault(value["name"], {"name": value["name"], "type": value["type"], "flags": "", "values": []})
                if value["value"] not in [v["input_string"] for v in axis["values"]]:
                    typed = int(value["value"]) if value["type"] == "int64" else value["value"]
                    axis["values"].append({"input_string": value["value"], "description": "", "value": typed})
        benchmarks.append({"name": name, "index": index, "devices": [0], "axes": list(axes.values()), "states": states})
    cc = str(device.get("compute_capability") or "0.0").replace(".", "")
    devices = [{"id": 0, "name": device.get("name") or "unknown GPU", "sm_version": int(cc) * 10 if cc.isdigit() else 0,
                "number_of_sms": device.get("sm_count"), "global_memory_size": device.get("memory_bytes"),
                "l2_cache_size": device.get("l2_bytes"), "global_memory_bus_bandwidth": peak}]
    meta = {"argv": ["primbench", "export", str(run.path), "--format", "nvbench-json"],
            "version": {"json": {"major": 1, "minor": 0, "patch": 0, "string": "1.0.0"},
                        "primbench": {"string": __version__, "run_id": run.header.run_id, "git_sha": run.git.get("sha")}}}
    return json.dumps({"meta": meta, "devices": devices, "benchmarks": benchmarks}, indent=2) + "\n"
