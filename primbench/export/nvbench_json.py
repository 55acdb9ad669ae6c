"""NVBench's JSON (file version 1.0.0) of a run, which NVIDIA's current readers (pip package
cuda-bench: nvbench-compare-robust, nvbench-json-summary, nvbench-walltime, nvbench-histogram)
read as nvbench's own: one benchmark per op/variant, its axes the case's dtype, elements, block
size, distribution and parameters, and per state the summaries NVBench writes
(export/nvbench_summaries.py). Every figure comes from the run file's raw samples; no CuPy.

A failed or skipped case is a state with `is_skipped` and `skip_reason`, as NVBench records a
state it could not run, and its own wall time (case_wall_s), as every state has one: nvbench-compare-robust calls such a pair UNKNOWN ("state skipped"), and
nvbench-json-summary leaves it out of its table. Leaving the state out instead would make the
two runs' states differ wherever a case failed in one of them, and nvbench-compare-robust refuses
such a pair of files outright ("mismatched state occurrences").

With `jsonbin`, the cold samples of each measured case are also written as NVBench's `--jsonbin`
sample files, `<jsonbin>/<index>.bin`, little-endian float32 seconds, referenced from the state by
a path relative to the JSON file's folder, as json_printer.cu does.

A case that measured energy also gets primbench's energy summaries ("primbench/energy/mj_per_op"
and the rest: nvbench_summaries.ENERGY_SUMMARIES) after NVBench's own; a case without has none."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import numpy as np

from primbench.compare import energy
from primbench.errors import UserError
from primbench.export.nvbench_summaries import (
    batch_summaries,
    cold_summaries,
    energy_summaries,
    sample_times_summary,
    walltime_summary,
)
from primbench.export.records import ExportFormat, Option
from primbench.outputs import write_atomically
from primbench.pathnames import shown
from primbench.runfile.io import Run
from primbench.runfile.records import CaseRecord
from primbench.text_safety import without_surrogates
from primbench.version import __version__

JSON_VERSION = {"major": 1, "minor": 0, "patch": 0, "string": "1.0.0"}
SAMPLE_FILE = re.compile(r"\d+\.bin")  # how _Document names each state's sample file: <index>.bin


def _is_power_of_two(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0 and value & (value - 1) == 0


def _case_axes(case) -> dict:
    """{axis name: value} of a case; a variant's own parameters (a stencil's radius) are axes too,
    one named as a case's own axis ('Block') with '_param' added: else it would overwrite that axis,
    and the cases of different sizes or blocks would share one state's name."""
    axes = {"T": case.dtype, "Elements": case.n, "Block": "library" if case.block is None else str(case.block),
            "Distribution": case.distribution or ""}
    for name, value in case.params.items_sorted():
        while name in axes:
            name += "_param"
        axes[name] = value
    return axes


def _axis_type(values: list, every_state: bool) -> str:
    """int64 or float64 where every state has a number on the axis, else string (NVBench gives every
    state a value on every axis: one that some cases lack is a string, empty where they lack it)."""
    if every_state and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "int64"
    if every_state and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "float64"
    return "string"


class _Axis:
    """One NVBench axis of a benchmark: its type, its flags ("pow2" where every value of an int64
    axis is a power of two) and how a state writes its value."""

    def __init__(self, name: str, values: list, every_state: bool):
        self.name, self.type = name, _axis_type(values, every_state)
        self.values = list(dict.fromkeys(values + ([] if every_state else [None])))
        self.pow2 = self.type == "int64" and all(_is_power_of_two(v) for v in self.values)

    def text(self, value) -> str:
        return "" if value is None else str(value) if self.type != "float64" else repr(float(value))

    def in_state_name(self, value) -> str:
        """state.cxx's get_axis_values_as_string: 2^k on a pow2 axis, %.5g for a float64."""
        if self.pow2:
            return f"2^{value.bit_length() - 1}"
        return f"{float(value):.5g}" if self.type == "float64" else self.text(value)

    def as_json(self) -> dict:
        """int64_axis.cxx: a pow2 axis's input_string is the exponent, its value 2^exponent and its
        description "2^k = v"."""
        entries = []
        for value in self.values:
            if self.pow2:
                exponent = value.bit_length() - 1
                entries.append({"input_string": str(exponent), "description": f"2^{exponent} = {value}", "value": value})
            else:
                typed = value if self.type != "string" else self.text(value)
                entries.append({"input_string": self.text(value), "description": "", "value": typed})
        return {"name": self.name, "type": self.type, "flags": "pow2" if self.pow2 else "", "values": entries}


def _benchmark_axes(records: list[CaseRecord]) -> list[_Axis]:
    cases = [_case_axes(r.case) for r in records]
    names = list(dict.fromkeys(name for case in cases for name in case))
    return [_Axis(name, [case.get(name) for case in cases if name in case], all(name in case for case in cases))
            for name in names]


def _sm_clock_hz(record: CaseRecord, device: dict) -> float | None:
    """The mean SM clock of the case's cold samples, each read on the GPU around its hold, as
    NVBench reads its clock around every sample. A run recorded before those were kept has the
    mean of NVML's two readings just before and after the samples instead; a case with neither
    (NVML could not read them) gets the run header's device clock, the GPU's maximum SM clock: not
    a reading of that case, but the only clock the run holds for it."""
    if record.samples.cold_clock_mhz:
        return sum(record.samples.cold_clock_mhz) / len(record.samples.cold_clock_mhz) * 1e6
    readings = [state.get("sm_clock_mhz") for state in (record.nvml.get("before") or {}, record.nvml)]
    readings = [r for r in readings if isinstance(r, (int, float)) and r > 0]
    mhz = sum(readings) / len(readings) if readings else device.get("max_sm_clock_mhz")
    return mhz * 1e6 if mhz else None


class _Document:
    """The JSON's benchmarks of one run, and the sample files written beside it."""

    def __init__(self, run: Run, jsonbin: Path | None, json_folder: Path | None):
        self.run, self.jsonbin, self.json_folder = run, jsonbin, json_folder
        self.peak_bytes_per_s = (run.device.get("peak_gbps") or 0) * 1e9
        self.default_clock_hz = (run.device.get("max_sm_clock_mhz") or 0) * 1e6
        self.sample_files = 0

    def benchmarks(self) -> list[dict]:
        by_variant: dict[str, list[CaseRecord]] = {}
        for record in self.run.cases:
            by_variant.setdefault(f"{record.case.op}/{record.case.variant}", []).append(record)
        out = []
        for index, (name, records) in enumerate(by_variant.items()):
            axes = _benchmark_axes(records)
            out.append({"name": name, "index": index, "devices": [0], "axes": [a.as_json() for a in axes],
                        "states": [self._state(r, axes) for r in records]})
        return out

    def _state(self, record: CaseRecord, axes: list[_Axis]) -> dict:
        values = _case_axes(record.case)
        axis_values = [{"name": a.name, "type": a.type, "value": a.text(values.get(a.name))} for a in axes]
        name = " ".join(["Device=0"] + [f"{a.name}={a.in_state_name(values.get(a.name))}" for a in axes])
        state = {"name": name, "device": 0, "type_config_index": 0, "axis_values": axis_values, "summaries": []}
        if not (record.ok and record.cold_ms):
            reason = record.reason or "no samples"
            return {**state, "summaries": [walltime_summary(case_wall_s(record))], "is_skipped": True,
                    "skip_reason": reason if record.ok else f"{record.status}: {reason}"}
        times_s = np.asarray(record.cold_ms, dtype=np.float64) / 1e3
        state["summaries"] = cold_summaries(
            times_s, wall_s=case_wall_s(record), bytes_moved=record.bytes or 0,
            peak_bytes_per_s=self.peak_bytes_per_s, sm_clock_hz=_sm_clock_hz(record, self.run.device),
            default_clock_hz=self.default_clock_hz)
        if self.jsonbin is not None:
            state["summaries"].append(self._write_sample_file(times_s))
        state["summaries"] += batch_summaries(record.samples.batch_ms, record.samples.batch_size)
        state["summaries"] += energy_summaries(energy.case_figures(record))
        return {**state, "is_skipped": False}

    def _write_sample_file(self, times_s: np.ndarray) -> dict:
        """One state's cold samples as NVBench's sample file. No sample-frequency file (NVBench's
        `-freqs-bin`): the run file holds SM clocks read around the case, not one per sample."""
        path = self.jsonbin / f"{self.sample_files}.bin"
        self.sample_files += 1
        _write_file(path, times_s.astype("<f4").tobytes())
        return sample_times_summary(Path(os.path.relpath(path, self.json_folder)).as_posix(), times_s.size)


def _seconds(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def case_wall_s(record: CaseRecord) -> float:
    """The wall time written as a state's `nv/cold/walltime`, which every state carries: once one
    state has it, nvbench-walltime looks it up in all (a state without is its KeyError 'cold').
    A measured case's timing wall time (warm-up, cold and batch samples), all of it as the cold
    walltime so that nvbench-walltime counts it once; a failed or skipped case's own wall time
    (record.elapsed_s: building and verifying it), where the runner kept one; else the GPU time of
    its samples (each batch sample one launch's mean over batch_size launches), 0 where it has none."""
    timing = record.timing.get("wall_s") if record.ok and record.cold_ms else None
    for value in (timing, record.elapsed_s):
        if _seconds(value):
            return float(value)
    samples = record.samples
    return (sum(samples.cold_ms) + sum(samples.batch_ms) * (samples.batch_size or 1)) / 1e3


def _write_file(path: Path, payload: bytes) -> None:
    """A regular file through a temporary file renamed into place; a special file (a FIFO, a device)
    written in place, never replaced; a FIFO nobody reads is one line after a short wait, not a hang
    (write_atomically does all three)."""
    write_atomically(path, payload)


def _devices(device: dict, peak_bytes_per_s: float) -> list[dict]:
    """The run's GPU as NVBench's device entry, from what primbench read of it (CUDA and NVML)."""
    cc = str(device.get("compute_capability") or "0.0").replace(".", "")
    return [{"id": 0, "name": device.get("name") or "unknown GPU", "sm_version": int(cc) * 10 if cc.isdigit() else 0,
             # NVBench's default SM clock is CUDA's clock-rate attribute; the run holds NVML's maximum SM clock (Hz).
             "sm_default_clock_rate": int((device.get("max_sm_clock_mhz") or 0) * 1e6),
             "number_of_sms": device.get("sm_count"), "max_blocks_per_sm": device.get("max_blocks_per_sm"),
             "max_threads_per_sm": device.get("max_threads_per_sm"), "global_memory_size": device.get("memory_bytes"),
             "global_memory_bus_width": device.get("bus_width_bits"), "global_memory_bus_bandwidth": int(peak_bytes_per_s),
             "l2_cache_size": device.get("l2_bytes")}]


def to_nvbench_json(run: Run, jsonbin=None, *, json_path=None) -> str:
    """NVBench's JSON: one benchmark per op/variant, one state per case. With `jsonbin` (a folder),
    each measured case's cold samples are also written there as NVBench's sample files, named in
    the JSON relative to `json_path`'s folder where the JSON will be written, else relative to the
    folder holding `jsonbin` (NVBench's layout: out.json beside out.json-bin/)."""
    jsonbin = Path(jsonbin) if jsonbin is not None else None
    json_folder = Path(json_path).parent if json_path is not None else jsonbin.parent if jsonbin else None
    document = _Document(run, jsonbin, json_folder)
    benchmarks = document.benchmarks()
    argv = ["primbench", "export", str(run.path), "--format", "nvbench-json"]
    meta = {"argv": argv + (["--jsonbin", str(jsonbin)] if jsonbin else []),
            "version": {"json": JSON_VERSION,
                        "primbench": {"string": __version__, "run_id": run.header.run_id, "git_sha": run.git.get("sha")}}}
    devices = _devices(run.device, document.peak_bytes_per_s)
    # Run-file strings may hold lone surrogates, which a JSON reader may refuse: their escapes' text instead.
    return json.dumps(without_surrogates({"meta": meta, "devices": devices, "benchmarks": benchmarks}), indent=2) + "\n"


def _json_beside_samples(jsonbin, json_path: str | None) -> dict:
    """--jsonbin with -o FILE: the sample files are named relative to the JSON's folder; and one
    line before any sample file is written where the JSON would be the samples' folder itself or
    one of the sample files: written last, it would fail, or replace a sample."""
    if json_path is None:  # standard output: the names are relative to the folder holding jsonbin
        return {}
    folder = Path(jsonbin)
    json_real, folder_real = os.path.realpath(json_path), os.path.realpath(folder)
    if json_real == folder_real:
        raise UserError(f"-o {shown(json_path)} and --jsonbin {shown(folder)} are one path: the JSON is a file and "
                        "the samples go into a folder; give each its own")
    if os.path.dirname(json_real) == folder_real and SAMPLE_FILE.fullmatch(os.path.basename(json_real)):
        raise UserError(f"-o {shown(json_path)}: is the name of a sample file in --jsonbin {shown(folder)}; "
                        f"name the JSON otherwise, e.g. -o {shown(folder / 'results.json')}")
    return {"json_path": json_path}


FORMAT = ExportFormat(
    name="nvbench-json", short="NVBench JSON (nvbench-compare-robust)",
    readers="nvbench-compare-robust (pip install 'cuda-bench[compare]')",
    example="primbench export RUN --format nvbench-json --jsonbin samples/ -o run.json", write=to_nvbench_json, listed=30,
    options=(Option("--jsonbin", "also write the raw cold samples into DIR as NVBench's sample files", metavar="DIR",
                    folder_for="the sample files", check=_json_beside_samples),))
