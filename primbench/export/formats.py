"""`primbench export RUN --format csv|gbench-json|nvbench-json|github-action`: a run in the formats
other tools read.

- csv (csv_table.py): one tidy row per case, or with `long` one per raw sample, for pandas, R or a
  spreadsheet.
- gbench-json (gbench_json.py): Google Benchmark's JSON, which its tools/compare.py,
  github-action-benchmark (tool: googlecpp) and Bencher (adapter cpp_google) read; with
  `repetitions` N, N repetitions per case and their aggregates, so that compare.py runs its U test.
- nvbench-json (nvbench_json.py): NVBench's JSON (file version 1.0.0), which nvbench's comparer
  reads; with `jsonbin`, the raw cold samples as NVBench's sample files in that folder.
- github-action (github_action.py): github-action-benchmark's customSmallerIsBetter JSON, one
  entry per measured case: the median of the figure the verdict rule judges it on, with its 95 %
  interval; `notice` says on standard error how many cases it left out.

Every figure is derived from the run file's raw samples; nothing here imports CuPy.
"""

from __future__ import annotations

from primbench.export.csv_table import CSV_COLUMNS, LONG_COLUMNS, to_csv
from primbench.export.gbench_json import to_gbench_json
from primbench.export.github_action import left_out_line, to_github_action_json
from primbench.export.nvbench_json import to_nvbench_json
from primbench.runfile.io import Run

FORMATS = ("csv", "gbench-json", "nvbench-json", "github-action")


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
    if fmt == "github-action":
        return to_github_action_json(run)
    raise ValueError(f"unknown export format {fmt!r}; one of {', '.join(FORMATS)}")


def notice(run: Run, fmt: str) -> str | None:
    """A line for standard error about what the export of `run` in `fmt` leaves out, if anything."""
    return left_out_line(run) if fmt == "github-action" else None


__all__ = ["CSV_COLUMNS", "FORMATS", "LONG_COLUMNS", "export", "notice", "to_csv", "to_gbench_json", "to_github_action_json",
           "to_nvbench_json"]
