"""`primbench export RUN --format csv|gbench-json|nvbench-json`: a run in the formats other tools read.

- csv (export_csv.py): one tidy row per case, or with `long` one per raw sample, for pandas, R or a
  spreadsheet.
- gbench-json (export_gbench.py): Google Benchmark's JSON, which its tools/compare.py,
  github-action-benchmark (tool: googlecpp) and Bencher (adapter cpp_google) read; with
  `repetitions` N, N repetitions per case and their aggregates, so that compare.py runs its U test.
- nvbench-json (export_nvbench.py): NVBench's JSON (file version 1.0.0), which nvbench's comparer
  reads; with `jsonbin`, the raw cold samples as NVBench's sample files in that folder.

Every figure is derived from the run file's raw samples; nothing here imports CuPy.
"""

from __future__ import annotations

from primbench.compare.export_csv import CSV_COLUMNS, LONG_COLUMNS, to_csv
from primbench.compare.export_gbench import to_gbench_json
from primbench.compare.export_nvbench import to_nvbench_json
from primbench.runfile.io import Run

FORMATS = ("csv", "gbench-json", "nvbench-json")


def export(run: Run, fmt: str, *, repetitions: int = 1, long: bool = False, jsonbin=None, json_path=None) -> str:
    """The run in format `fmt`. `repetitions` is gbench-json's; `long` csv's; `jsonbin` (a folder for
    the sample files) and `json_path` (where the JSON will be written, which the sample files'
    names are relative to) nvbench-json's."""
    if fmt == "csv":
        return to_csv(run, long=long)
    if fmt == "gbench-json":
        return to_gbench_json(run, repetitions=repetitions)
    if fmt == "nvbench-json":
        return to_nvbench_json(run, jsonbin=jsonbin, json_path=json_path)
    raise ValueError(f"unknown export format {fmt!r}; one of {', '.join(FORMATS)}")


__all__ = ["CSV_COLUMNS", "FORMATS", "LONG_COLUMNS", "export", "to_csv", "to_gbench_json", "to_nvbench_json"]
