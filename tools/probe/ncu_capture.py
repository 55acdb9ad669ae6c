"""Capture real ncu output on the GPU: the cases the report explains, each profiled by
`primbench.profile.capture.capture`, into OUT/<set>/{ncu.csv, profile-manifest.json}, plus ncu's version
and its metric list. The CI tests of counters.py read these files (tests/data/ncu/), so that the
parsing of ncu's output is checked against what ncu really writes, on a machine with no GPU.

Usage: python -m tools.probe.ncu_capture OUT
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from primbench.profile import capture

SETS = {
    "progression": dict(config_path="configs/progression.yaml"),
    "reduce-blocks": dict(config_path="configs/default.yaml", sizes=(2**25,), blocks=(64, 1024),
                          only=("reduce/reduce0_*", "reduce/reduce1_*", "reduce/reduce2_*")),
    "fast-2-28": dict(config_path="configs/default.yaml", sizes=(2**28,), blocks=(256,),
                      only=("reduce/vector_load_sum", "reduce/cub_device_reduce", "reduce_max/vector_max",
                            "scan/decoupled_lookback", "scan/cub_inclusive_scan", "histogram/packed_per_lane",
                            "histogram/warp_aggregated", "histogram/cub_histogram_even",
                            "stencil/blur1d_vector_shared_halo")),
    "topk": dict(config_path="configs/patterns.yaml", only=("topk/two_stage_*",), sizes=(512,)),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder to capture into (made if missing)")
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    ncu = capture.find_ncu()
    (out / "ncu-version.txt").write_text(subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout)
    query = subprocess.run([ncu, "--query-metrics", "--chip", "gh100"], capture_output=True, text=True).stdout
    (out / "query-metrics.txt").write_text(query)
    known = {line.split()[0] for line in query.splitlines() if line.strip() and "__" in line.split()[0]}
    missing = {name: metric for name, metric in capture.METRICS.items()
               if metric.split(".")[0] not in known and not metric.startswith("launch__")}
    print("metrics ncu does not list:", missing or "none", flush=True)
    for name in missing:
        capture.METRICS.pop(name)
    for name, request in SETS.items():
        start = time.perf_counter()
        try:
            capture.capture(folder=out / name, **request)
        except Exception as exc:  # noqa: BLE001 (a probe: report and go on to the next set)
            print(f"{name}: {type(exc).__name__}: {exc}", flush=True)
        print(f"== {name}: {time.perf_counter() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
