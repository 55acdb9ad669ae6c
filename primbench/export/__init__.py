"""After the run file: a run in the formats other tools read (CSV, Google Benchmark, NVBench and
github-action-benchmark JSON), and which of its cases an export holds (case_selection). It compares
nothing: compare/ judges runs, this writes one run for someone else's reader.
No CuPy, no run/, no measuring/.
"""
