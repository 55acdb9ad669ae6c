"""The summaries of one measured case as NVBench writes them in a state: the same tags, names,
hints, descriptions, `hide` strings and value types as nvbench/detail/measure_cold.cu,
measure_hot.cu and json_printer.cu (NVIDIA/nvbench, JSON file version 1.0.0), so that
`nvbench-compare-robust`, `nvbench-json-summary`, `nvbench-walltime` and `nvbench-histogram`
(pip package cuda-bench) read them as nvbench's own. Statistics follow nvbench/detail/statistics.cuh:
Bessel-corrected standard deviation, quartiles at the rounded rank round(p * (n - 1)), and no
noise figure from fewer than 5 samples.

NVBench's host-side timings (`nv/cold/time/cpu/*`) are not written: primbench times each sample
with CUDA events only, and the run file holds no host time per sample."""

from __future__ import annotations

import math

import numpy as np

HIDDEN = "Hidden by default."
MIN_SAMPLES_FOR_NOISE = 5  # statistics.cuh: min_samples_for_noise_estimate
SAMPLE_TIMES_TAG = "nv/json/bin:nv/cold/sample_times"


def _named_value(name: str, kind: str, value) -> dict:
    """One entry of a summary's `data`: int64 and float64 written as strings, as NVBench does (a
    JSON number would lose an int64's low bits); a float in its shortest round-trip form, as fmt."""
    text = str(int(value)) if kind == "int64" else repr(float(value)) if kind == "float64" else str(value)
    return {"name": name, "type": kind, "value": text}


def summary(tag: str, name: str, hint: str, description: str, value, *, kind: str = "float64",
            hide: str | None = HIDDEN) -> dict:
    """A summary with its keys in json_printer.cu's order: tag, name, description, hint, hide, data."""
    out = {"tag": tag, "name": name, "description": description, "hint": hint}
    if hide:
        out["hide"] = hide
    out["data"] = [_named_value("value", kind, value)]
    return out


def _percentile_rank(percentile: int, count: int) -> int:
    """statistics.cuh's percentile_rank, std::round(p / 100 * (count - 1)), in integers (round half
    up, as nvbench-compare-robust computes it)."""
    return (percentile * (count - 1) + 50) // 100


def _gpu_time_summaries(times_s: np.ndarray) -> list[dict]:
    """min, max, mean, standard deviation, quartiles and interquartile range of the cold samples."""
    count = times_s.size
    mean = float(times_s.mean())
    enough = count >= MIN_SAMPLES_FOR_NOISE
    stdev = float(times_s.std(ddof=1)) if enough else math.inf
    relative_stdev = stdev / mean if enough and mean > 0 else math.inf
    ordered = np.sort(times_s)
    q1, median, q3 = (float(ordered[_percentile_rank(p, count)]) for p in (25, 50, 75))
    events = "(measured with CUDA events)"
    out = [
        summary("nv/cold/time/gpu/min", "Min GPU Time", "duration", f"Fastest isolated kernel execution time {events}",
                ordered[0]),
        summary("nv/cold/time/gpu/max", "Max GPU Time", "duration", f"Slowest isolated kernel execution time {events}",
                ordered[-1]),
        summary("nv/cold/time/gpu/mean", "GPU Time", "duration", f"Mean isolated kernel execution time {events}", mean,
                hide=None),
        summary("nv/cold/time/gpu/stdev/absolute", "Noise", "duration",
                "Standard deviation of isolated kernel execution GPU times", stdev),
        summary("nv/cold/time/gpu/stdev/relative", "Noise", "percentage",
                "Relative standard deviation of isolated kernel execution GPU times", relative_stdev, hide=None),
        summary("nv/cold/time/gpu/q1", "Q1 GPU Time", "duration", "First quartile of isolated kernel execution GPU times", q1),
        summary("nv/cold/time/gpu/median", "Median GPU Time", "duration", "Median of isolated kernel execution GPU times",
                median),
        summary("nv/cold/time/gpu/q3", "Q3 GPU Time", "duration", "Third quartile of isolated kernel execution GPU times", q3),
        summary("nv/cold/time/gpu/iqr/absolute", "IQR", "duration",
                "Interquartile range of isolated kernel execution GPU times", q3 - q1),
    ]
    if enough and median > 0:  # statistics.cuh's compute_robust_noise: none below 5 samples
        out.append(summary("nv/cold/time/gpu/iqr/relative", "Rel IQR", "percentage",
                           "Relative interquartile range of isolated kernel execution GPU times", (q3 - q1) / median))
    return out


def _bandwidth_summaries(bytes_moved: float, mean_s: float, peak_bytes_per_s: float) -> list[dict]:
    """Bytes per second from the case's declared minimal bytes, and that as a fraction of the GPU's
    theoretical peak; none where the case declares no bytes (NVBench: no global memory rw bytes)."""
    if not bytes_moved:
        return []
    rate = bytes_moved / mean_s
    out = [summary("nv/cold/bw/global/bytes_per_second", "GlobalMem BW", "byte_rate",
                   "Number of bytes read/written per second to the CUDA device's global memory", rate, hide=None)]
    if peak_bytes_per_s:
        out.append(summary("nv/cold/bw/global/utilization", "BWUtil", "percentage",
                           "Global device memory utilization as a percentage of the device's peak bandwidth",
                           rate / peak_bytes_per_s, hide=None))
    return out


def _clock_summaries(sm_clock_hz: float | None, default_clock_hz: float | None) -> list[dict]:
    """The mean SM clock while the case ran (Hz): nvbench-compare-robust confirms a clear timing
    gap, and a SAME verdict, in SM cycles (time x clock), so without it every change is AMBG."""
    if not sm_clock_hz:
        return []
    out = [summary("nv/cold/sm_clock_rate/mean", "Clock Rate", "frequency", "Mean SM clock rate", sm_clock_hz)]
    if default_clock_hz:
        out.append(summary("nv/cold/sm_clock_rate/scaling/percent", "Clock Scaling", "percentage",
                           "Mean SM clock rate as a percentage of default clock rate.", sm_clock_hz / default_clock_hz))
    return out


def walltime_summary(wall_s: float) -> dict:
    """measure_cold.cu's wall time of a state's measurement, in seconds."""
    return summary("nv/cold/walltime", "Walltime", "duration", "Walltime used for isolated measurements", wall_s)


def cold_summaries(times_s: np.ndarray, *, wall_s: float, bytes_moved: float, peak_bytes_per_s: float,
                   sm_clock_hz: float | None, default_clock_hz: float | None) -> list[dict]:
    """measure_cold.cu's summaries, in its order, from a case's cold samples in seconds."""
    out = [summary("nv/cold/sample_size", "Samples", "sample_size", "Number of isolated kernel executions", times_s.size,
                   kind="int64", hide=None), walltime_summary(wall_s)]
    out += _gpu_time_summaries(times_s)
    out += _bandwidth_summaries(bytes_moved, float(times_s.mean()), peak_bytes_per_s)
    return out + _clock_summaries(sm_clock_hz, default_clock_hz)


def batch_summaries(batch_ms, batch_size: int | None) -> list[dict]:
    """measure_hot.cu's summaries: every launch of every batch counts as a sample, and each of
    primbench's batch samples is already one batch's mean time per launch."""
    if not batch_ms or not batch_size:
        return []
    return [summary("nv/batch/sample_size", "Samples", "sample_size", "Number of batch kernel executions",
                    len(batch_ms) * batch_size, kind="int64", hide=None),
            summary("nv/batch/time/gpu/mean", "Batch GPU", "duration",
                    "Mean batch kernel execution time (measured by CUDA events)", float(np.mean(batch_ms)) / 1e3, hide=None)]


def sample_times_summary(filename: str, count: int) -> dict:
    """json_printer.cu's reference to a state's sample file (`--jsonbin`): its path relative to the
    JSON file's folder and its number of float32 values."""
    return {"tag": SAMPLE_TIMES_TAG, "name": "Sample Times File",
            "description": "Binary file containing sample times as little-endian float32.", "hint": "file/sample_times",
            "hide": "Not needed in table.",
            "data": [_named_value("filename", "string", filename), _named_value("size", "int64", count)]}


# NVBench has no energy summaries: these are primbench's, under its own tag prefix, written as
# NVBench writes a summary (tag, name, description, hint, hide, data). Their hints are none of
# NVBench's, so its readers print them as plain numbers (nvbench-json-summary's format_default):
# the unit is in the name. (figure, tag, name, hint, description, hidden)
ENERGY_SUMMARIES = (
    ("mj_per_op", "primbench/energy/mj_per_op", "Energy (mJ)", "energy",
     "Energy per operation in millijoules, from NVML's total-energy counter over repeated runs", False),
    ("avg_w", "primbench/energy/avg_w", "Power (W)", "power", "Mean board power in watts while the operation ran back to back",
     False),
    ("peak_w", "primbench/energy/peak_w", "Peak Power (W)", "power", "Highest instant board power reading in watts", True),
    ("gb_per_j", "primbench/energy/gb_per_j", "GB/J", "energy_efficiency",
     "Minimal bytes moved per joule, in gigabytes", False),
)


def energy_summaries(figures: dict | None) -> list[dict]:
    """A case's energy figures (compare/energy.py's case_figures) as summaries; none without energy,
    and none for a figure the case lacks (a peak the GPU cannot read, a case declaring no bytes)."""
    if not figures:
        return []
    return [summary(tag, name, hint, description, figures[figure], hide=HIDDEN if hidden else None)
            for figure, tag, name, hint, description, hidden in ENERGY_SUMMARIES if figures.get(figure) is not None]
