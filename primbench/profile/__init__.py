"""Hardware counters: a run's cases replayed under Nsight Compute in a child process (capture,
child), and ncu's CSV read back into the counters file beside the run (counters).
"""
