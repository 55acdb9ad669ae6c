"""Google Benchmark's JSON (`--benchmark_format=json`, json_schema_version 1) of a run, field for
field as benchmark's src/json_reporter.cc writes it, so that its tools/compare.py, github-action-benchmark
(tool: googlecpp) and Bencher (adapter cpp_google) read it as their own.

One benchmark per case, named by its key; times in ns, rounded to 0.1 ns. With N repetitions a case
gets N iteration entries, each the median of one of N interleaved slices of its cold samples (slice
i = samples[i::N], so drift during the case reaches every slice alike), then the aggregates Google
Benchmark writes after repetitions: mean, median, stddev and cv. With the default of one
repetition there are no aggregates, as in Google Benchmark. A case with fewer cold samples than N
gets one repetition per sample, and its label says so.

User counters: `bytes_per_second` (the declared minimal bytes over the repetition's median) and
`batch_ns`, the case's batch median: many back-to-back launches per sample, the figure to track
kernels under about 25 us on (where cold samples, one launch each, differ by microseconds from run
to run). It is the case's figure, the same on every repetition, so its stddev and cv are not written.
A case that measured energy also gets ENERGY_COUNTERS: `mJ_per_op`, `W` (mean draw), `peak_W` and
`GB_per_J` (each where the case has it), case figures like `batch_ns`; a run without energy is
written as before.

A failed case is an entry with `error_occurred` and `error_message`, a skipped case (not run: out of
memory, unsupported) one with `skipped` and `skip_message`, as Google Benchmark writes a benchmark
that called SkipWithError or SkipWithMessage: every repetition present, times 0, no aggregates.
"""

from __future__ import annotations

import json

import numpy as np

from primbench.compare import energy
from primbench.config.numbers import whole_number
from primbench.export.records import ExportFormat, Option
from primbench.runfile import stats
from primbench.runfile.io import Run
from primbench.runfile.records import CaseRecord
from primbench.text_safety import without_surrogates
from primbench.version import __version__

STATISTICS = ("mean", "median", "stddev", "cv")  # Google Benchmark's default aggregates, in its order
BATCH_COUNTER = "batch_ns"
# counter: the case's energy figure it is (compare/energy.py's case_figures)
ENERGY_COUNTERS = {"mJ_per_op": "mj_per_op", "W": "avg_w", "peak_W": "peak_w", "GB_per_J": "gb_per_j"}
CASE_COUNTERS = (BATCH_COUNTER, *ENERGY_COUNTERS)  # one value per case, the same on every repetition


def _energy_counters(record: CaseRecord) -> dict:
    figures = energy.case_figures(record) or {}
    return {counter: figures[name] for counter, name in ENERGY_COUNTERS.items() if figures.get(name) is not None}


def _ns(ms: float) -> float:
    return round(ms * 1e6, 1)


def _statistic(name: str, values: list[float]) -> float:
    """Google Benchmark's statistics.cc: the sample standard deviation, cv = stddev / mean."""
    values = np.asarray(values, dtype=np.float64)
    if name == "mean":
        return float(values.mean())
    if name == "median":
        return float(np.median(values))
    stddev = float(values.std(ddof=1)) if values.size > 1 else 0.0
    if name == "stddev":
        return stddev
    mean = float(values.mean())
    return stddev / mean if mean else 0.0


def _identity(record: CaseRecord, index: int, repetitions: int) -> dict:
    return {"name": record.key, "family_index": index, "per_family_instance_index": 0, "run_name": record.key,
            "run_type": "iteration", "repetitions": repetitions}


def _label(count: int, repetitions: int, asked: int, device: str) -> str:
    fewer = f"{repetitions} repetitions, not {asked}: the case has {count} cold samples; " if repetitions < asked else ""
    if repetitions == 1:
        return f"{fewer}median of {count} cold samples, L2 flushed; {device}"
    return (f"{fewer}repetition i: the median of cold samples i, i+{repetitions}, i+{2 * repetitions}, ... of {count}, "
            f"L2 flushed; {device}")


def _repetitions(record: CaseRecord, index: int, asked: int, device: str) -> list[dict]:
    """The iteration entries of a measured case, then its aggregates."""
    cold = record.cold_ms
    repetitions = min(asked, len(cold))
    batch = stats.summarize(record.samples.batch_ms)
    label = _label(len(cold), repetitions, asked, device)
    energy_counters = _energy_counters(record)
    entries, medians_ms = [], []
    for repetition in range(repetitions):
        part = cold[repetition::repetitions]
        median_ms = float(np.median(part))
        medians_ms.append(median_ms)
        counters = {BATCH_COUNTER: _ns(batch.median)} if batch else {}
        counters["bytes_per_second"] = (record.bytes or 0) / (median_ms * 1e-3)
        counters = dict(sorted({**counters, **energy_counters}.items()))  # json_reporter.cc's std::map order
        entries.append({**_identity(record, index, repetitions), "repetition_index": repetition, "threads": 1,
                        "iterations": len(part), "real_time": _ns(median_ms), "cpu_time": _ns(median_ms),
                        "time_unit": "ns", **counters, "label": label})
    return entries + _aggregates(entries, medians_ms, label) if repetitions > 1 else entries


def _aggregates(entries: list[dict], medians_ms: list[float], label: str) -> list[dict]:
    """What Google Benchmark's ComputeStats adds after the repetitions: each statistic of the times
    (from the unrounded medians) and of the counters over the repetitions; a cv is a fraction, its
    unit "percentage"."""
    first = entries[0]
    counters = sorted(name for name in (BATCH_COUNTER, "bytes_per_second", *ENERGY_COUNTERS) if name in first)
    out = []
    for name in STATISTICS:
        time_statistic = name != "cv"
        value = _statistic(name, medians_ms)
        value = _ns(value) if time_statistic else round(value, 6)
        aggregate = {"name": f"{first['run_name']}_{name}", "family_index": first["family_index"],
                     "per_family_instance_index": 0, "run_name": first["run_name"], "run_type": "aggregate",
                     "repetitions": first["repetitions"], "threads": 1, "aggregate_name": name,
                     "aggregate_unit": "time" if time_statistic else "percentage", "iterations": len(entries),
                     "real_time": value, "cpu_time": value, "time_unit": "ns"}
        for counter in counters:
            if counter in CASE_COUNTERS and name in ("stddev", "cv"):
                continue  # the same value on every repetition: no spread was measured
            aggregate[counter] = _statistic(name, [entry[counter] for entry in entries])
        out.append({**aggregate, "label": label})
    return out


def _not_measured(record: CaseRecord, index: int, repetitions: int) -> list[dict]:
    """A failed or skipped case as Google Benchmark reports a benchmark that skipped itself."""
    reason = f"{record.status}: {record.reason}" if record.reason else f"{record.status}, no cold samples"
    flag = {"skipped": True, "skip_message": reason} if record.status == "skipped" else \
        {"error_occurred": True, "error_message": reason}
    return [{**_identity(record, index, repetitions), "repetition_index": repetition, "threads": 1, **flag,
             "iterations": 0, "real_time": 0.0, "cpu_time": 0.0, "time_unit": "ns"} for repetition in range(repetitions)]


def _context(run: Run) -> dict:
    header = run.header
    # Google Benchmark's context; the user context it adds (AddCustomContext) is strings, sorted by key.
    custom = {"batch_counter": f"{BATCH_COUNTER}: the case's batch median (back-to-back launches)",
              "git_sha": header.git.get("sha") or "", "gpu": header.device_name, "gpu_uuid": header.device.get("uuid") or "",
              "primbench_version": __version__, "run_id": header.run_id}
    if energy.run_has_energy(run):  # only then: a run without energy is written as before
        custom["energy_counters"] = ("mJ_per_op: millijoules per operation, W: mean and peak_W: highest draw while "
                                     "it ran back to back, GB_per_J: minimal bytes per joule (NVML's energy counter)")
    return {"date": header.started or "", "host_name": header.host.get("hostname", ""), "executable": "primbench",
            "num_cpus": 0, "mhz_per_cpu": 0, "caches": [], "load_avg": [],
            "library_version": f"primbench {__version__}", "library_build_type": "release", "json_schema_version": 1,
            **dict(sorted(custom.items()))}


def to_gbench_json(run: Run, repetitions: int = 1) -> str:
    """Google Benchmark's JSON of every case, `repetitions` entries each (see the module's docstring)."""
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
        raise ValueError(f"repetitions must be a whole number of at least 1, not {repetitions!r}")
    benchmarks = []
    for index, record in enumerate(run.cases):
        if record.ok and record.cold_ms:
            benchmarks += _repetitions(record, index, repetitions, run.header.device_name)
        else:
            benchmarks += _not_measured(record, index, repetitions)
    # Run-file strings may hold lone surrogates, which a JSON reader may refuse: their escapes' text instead.
    return json.dumps(without_surrogates({"context": _context(run), "benchmarks": benchmarks}), indent=2) + "\n"


def repetition_count(text: str) -> int:
    """--repetitions: a whole number of at least 1 (config/numbers.py reads the digits)."""
    try:
        value = whole_number(text.strip())
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{text[:40]!r} is not a whole number of at least 1, e.g. --repetitions 9")
    return value


FORMAT = ExportFormat(
    name="gbench-json", short="Google Benchmark JSON (compare.py, Bencher)",
    readers="Google Benchmark's compare.py, github-action-benchmark (googlecpp), Bencher (cpp_google)",
    example="primbench export RUN --format gbench-json --repetitions 9 -o run.json", write=to_gbench_json, listed=20,
    options=(Option("--repetitions", "N repetitions per case, each the median of every Nth cold sample, and their mean, "
                    "median, stddev and cv, so that compare.py runs its U test (9 or more, as it recommends; default 1, "
                    "one entry per case, for a dashboard)", metavar="N", parse=repetition_count),))
