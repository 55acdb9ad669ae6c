"""The series a variant belongs to (`Variant.series`), as a run file records them and the report
groups them: the seeds' ("seed000"), Harris's steps, primbench's own past them, and the libraries;
and the names a series had before, which older run files and plugins still say."""

from __future__ import annotations

# The series the report gives a story of its own (Variant.series); others are the seeds' ("seed000").
HARRIS_SERIES = "harris"  # Harris's "Optimizing Parallel Reduction in CUDA" steps
BEYOND_SERIES = "beyond"  # primbench's kernels past the seeds: the story's last steps before the library
# The libraries every op is measured against (CUB through CuPy, cuda.compute, torch, ...): at each
# size the fastest of them is the op's "best library", which every ratio of the report is against.
LIBRARY_SERIES = "library"
# The series' former names: run files and plugins written before the rename say "baseline", and are
# read as the library (variant.py's Variant, runfile/records.py `migrate`), so old runs keep their library.
FORMER_SERIES = {"baseline": LIBRARY_SERIES}
LIBRARY_SERIES_NAMES = (LIBRARY_SERIES, *FORMER_SERIES)
BASELINE_SERIES = LIBRARY_SERIES  # the constant's former name, for code written against it


def series_name(series):
    """A series as this version names it: a former name (FORMER_SERIES) read as the current one."""
    return FORMER_SERIES.get(series, series)
