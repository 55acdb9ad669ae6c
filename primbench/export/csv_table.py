"""A run as tidy CSV for pandas, R or a spreadsheet: one row per case (its identity, status, summary
figures and the run it comes from), or with `long`, one row per raw sample.

Every column keeps one type down the file whatever the run holds: `block` is text ("lib" for a
library variant, which picks its own block size), a text cell with nothing to say is empty (`reason`
"" when there is none), and a figure a case lacks (a failed case's median) is NaN. An empty text
cell and a missing number are then told apart by their spelling, so these read every column with
one type, text never NaN:

    pandas.read_csv(path, keep_default_na=False, na_values=["NaN"], dtype={"block": str})
    readr::read_csv(path, na = "NaN", col_types = readr::cols(block = "c"))

Text cells are run-file text, which can hold anything: each is one line with no control character
or lone surrogate (text_safety.printable), and one that a spreadsheet would run as a formula
(starting with =, +, -, @, or a tab or carriage return) starts with a single quote, as OWASP's CSV
injection advice has it. Numbers are written as numbers: -1.5 in a numeric column stays -1.5.

A run where some case measured energy gets ENERGY_COLUMNS after every other column (so that a
reader that finds columns by position reads the rest where it always did): `energy_mj` (mJ per
operation), `energy_w` (mean draw), `energy_peak_w`, `gb_per_j`, as runfile/frame.py defines them,
NaN for a case without. A run without energy has none of them, its file as before.
"""

from __future__ import annotations

import csv
import io
import math

from primbench.compare import energy
from primbench.export.records import ExportFormat, Option
from primbench.runfile import stats
from primbench.runfile.io import Run
from primbench.runfile.records import CaseRecord
from primbench.text_safety import printable

IDENTITY_COLUMNS = ("key", "op", "variant", "params", "dtype", "n", "block", "distribution")
RUN_COLUMNS = ("run_id", "gpu", "gpu_uuid", "commit", "started")
CSV_COLUMNS = (*IDENTITY_COLUMNS, "status", "reason", "bytes", "samples", "median_us", "p05_us", "p95_us", "noise",
               "batch_median_us", "gbps", "pct_peak", "variant_hash", *RUN_COLUMNS)
LONG_COLUMNS = (*IDENTITY_COLUMNS, *RUN_COLUMNS, "kind", "sample_index", "time_us")
ENERGY_COLUMNS = ("energy_mj", "energy_w", "energy_peak_w", "gb_per_j")


MISSING = "NaN"  # a figure a case lacks; never an empty cell, which is empty text
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(value):
    """A row's value as written: a number as it is, text made safe (see the module's docstring)."""
    if not isinstance(value, str):
        return value
    text = printable(value)
    return "'" + text if value.startswith(FORMULA_STARTS) or text.lstrip().startswith(FORMULA_STARTS) else text


def _us(ms: float | None):
    return round(ms * 1e3, 6) if ms is not None and math.isfinite(ms) else MISSING


def _identity(record: CaseRecord) -> dict:
    case = record.case
    return {"key": case.key, "op": case.op, "variant": case.variant, "params": case.params.text, "dtype": case.dtype,
            "n": case.n, "block": "lib" if case.block is None else str(case.block), "distribution": case.distribution or ""}


def _run_columns(run: Run, record: CaseRecord) -> dict:
    """The run a row comes from; in a run over several GPUs, the GPU that measured the case."""
    header = run.header
    return {"run_id": header.run_id, "gpu": header.device_name,
            "gpu_uuid": record.device_uuid or header.device.get("uuid") or "", "commit": header.git.get("sha") or "",
            "started": header.started or ""}


def _figures(record: CaseRecord, peak_gbps: float | None) -> dict:
    cold, batch = stats.summarize(record.cold_ms), stats.summarize(record.samples.batch_ms)
    gbps = stats.bandwidth_gbps(record.bytes or 0, cold.median) if cold else math.nan
    return {"status": record.status, "reason": record.reason or "", "bytes": MISSING if record.bytes is None else record.bytes,
            "samples": cold.count if cold else 0, "median_us": _us(cold.median) if cold else MISSING,
            "p05_us": _us(cold.p05) if cold else MISSING, "p95_us": _us(cold.p95) if cold else MISSING,
            "noise": round(cold.noise, 6) if cold and math.isfinite(cold.noise) else MISSING,
            "batch_median_us": _us(batch.median) if batch else MISSING,
            "gbps": round(gbps, 3) if math.isfinite(gbps) else MISSING,
            "pct_peak": round(100 * gbps / peak_gbps, 3) if peak_gbps and math.isfinite(gbps) else MISSING,
            "variant_hash": record.variant_hash or ""}


def _energy(record: CaseRecord) -> dict:
    figures = energy.case_figures(record) or {}
    values = (figures.get(name) for name in ("mj_per_op", "avg_w", "peak_w", "gb_per_j"))
    # Six significant digits, not decimals: GB/J of a small case is a few thousandths.
    return {column: MISSING if value is None else float(f"{value:.6g}") for column, value in zip(ENERGY_COLUMNS, values)}


def to_csv(run: Run, long: bool = False) -> str:
    """One row per case (CSV_COLUMNS), or with `long` one per raw sample (LONG_COLUMNS): `kind` cold
    (one launch, L2 flushed) or batch (one batch's mean per launch), `sample_index` its place in the
    case's samples of that kind, `time_us` its time."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    with_energy = not long and energy.run_has_energy(run)  # the long form's rows are raw times only
    columns = LONG_COLUMNS if long else CSV_COLUMNS + (ENERGY_COLUMNS if with_energy else ())
    writer.writerow(columns)  # the header is ours
    peak = run.device.get("peak_gbps")
    for record in run.cases:
        shared = {**_identity(record), **_run_columns(run, record)}
        if not long:
            row = {**shared, **_figures(record, peak), **(_energy(record) if with_energy else {})}
            writer.writerow([_cell(row[column]) for column in columns])
            continue
        lead = [_cell(shared[column]) for column in LONG_COLUMNS[:-3]]
        for kind, samples in (("cold", record.cold_ms), ("batch", record.samples.batch_ms)):
            writer.writerows([*lead, kind, index, _us(ms)] for index, ms in enumerate(samples))
    return out.getvalue()


FORMAT = ExportFormat(
    name="csv", short="CSV", readers="pandas, R or a spreadsheet (--long: one row per raw sample)",
    example="primbench export RUN -o run.csv", write=to_csv, listed=10,
    options=(Option("--long", "one row per raw sample (cold and batch), for seaborn or R"),))
