"""Probe: what cuda.compute's first use costs (it JIT-compiles each operator for its dtypes), and
what a second process gets back from a cache.

Every specialisation the library baselines build (kernels/cccl.py: reduce_into at three
Determinism levels and for max, inclusive_scan, histogram_even; each dtype and bin count the
default sweep uses) is prepared as the runner prepares it, in three child processes in turn:
  cold     an empty PRIMBENCH_CACHE_DIR: the library builds each one (the first-use cost);
  warm     a second process on the same folder: primbench's cache of serialized builds
           (primbench/library_cache.py) loads each one instead;
  nocache  a third process with PRIMBENCH_LIBRARY_CACHE=0: built again, so that what the
           library keeps on disk by itself (none on its default backend; the CUDA driver's own
           JIT cache, if the build leaves PTX to it) shows against `cold`.
Each line: the variant and specialisation, the seconds `prepare` took (the build or load, and
the query of temporary storage), where the build came from, and the first and second run's
wall time (the first may load the module lazily). The import of cuda.compute is timed apart.
Nothing is invented: with no GPU or no cuda-cccl, it says so and stops.

    python -m tools.probe.library_jit [--json OUT] [--n 2^20]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

# (op, variant, dtype, params): what configs/default.yaml makes the cuda.compute variants build.
SPECIALISATIONS = [
    *[("reduce", name, dtype, {}) for name in ("cccl_reduce", "cccl_reduce_run_to_run") for dtype in ("float32", "float16", "int32")],
    *[("reduce_max", "cccl_reduce_max", dtype, {}) for dtype in ("float32", "float16", "int32")],
    *[("scan", "cccl_inclusive_scan", dtype, {}) for dtype in ("int32", "float32")],
    ("histogram", "cccl_histogram_even", "uint8", {"bins": 256}),
    *[("histogram", "cccl_histogram_even", "int32", {"bins": bins}) for bins in (32, 256, 1024)],
]
PHASES = ("cold", "warm", "nocache")


def child(n: int) -> int:
    """One process: import, then prepare and run every specialisation; one JSON line each on stdout."""
    started = time.perf_counter()
    from primbench.libraries import CUDA_CCCL

    reason = CUDA_CCCL.unavailable()
    print(json.dumps({"import_s": time.perf_counter() - started, "unavailable": reason, "version": CUDA_CCCL.version()}),
          flush=True)
    if reason:
        return 0
    import cupy

    from primbench import library_cache, ops, registry
    from primbench.measuring.device import Device
    from primbench.runfile.case_id import CaseId
    from primbench.variant import LaunchContext

    device = Device()
    for op, name, dtype, params in SPECIALISATIONS:
        case = CaseId(op, name, dtype, n, None, "uniform", params)
        x = ops.checks(op).random_input(case, 1)
        context = LaunchContext(None, x, n, None, device.sm_count, dtype=dtype, params=dict(params), **device.sm_limits)
        cupy.cuda.runtime.deviceSynchronize()
        before = time.perf_counter()
        plan = registry.get(op, name).prepare(context)
        prepare_s = time.perf_counter() - before
        runs = []
        for _ in range(2):
            before = time.perf_counter()
            plan.run()
            cupy.cuda.runtime.deviceSynchronize()
            runs.append(time.perf_counter() - before)
        last = library_cache.HISTORY[-1] if library_cache.HISTORY else {}
        print(json.dumps({"variant": f"{op}/{name}", "dtype": dtype, "params": params, "prepare_s": prepare_s,
                          "source": last.get("source"), "build_s": last.get("seconds"), "first_run_s": runs[0],
                          "second_run_s": runs[1]}), flush=True)
    return 0


def run_phase(phase: str, folder: str, n: int) -> list[dict]:
    environment = dict(os.environ, PRIMBENCH_CACHE_DIR=folder)
    if phase == "nocache":
        environment["PRIMBENCH_LIBRARY_CACHE"] = "0"
    done = subprocess.run([sys.executable, "-m", "tools.probe.library_jit", "--child", "--n", str(n)], env=environment,
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"library_jit: the {phase} process failed:\n{done.stderr[-3000:]}")
    return [dict(json.loads(line), phase=phase) for line in done.stdout.splitlines() if line.startswith("{")]


def print_lines(rows: list[dict]) -> None:
    for row in rows:
        if "import_s" in row:
            print(f"{row['phase']:8} import cuda.compute {row['import_s']:8.3f} s  (cuda-cccl {row['version']})")
            continue
        what = f"{row['variant']} {row['dtype']} {' '.join(f'{k}={v}' for k, v in row['params'].items())}"
        print(f"{row['phase']:8} {what:52} prepare {row['prepare_s']:8.3f} s  build {row['build_s'] or 0:8.3f} s "
              f"({row['source']})  first run {1e3 * row['first_run_s']:8.2f} ms  second {1e3 * row['second_run_s']:7.2f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--n", default="2^20", help="elements per case (default 2^20)")
    parser.add_argument("--json", help="write every line here")
    args = parser.parse_args()
    base, _, power = args.n.partition("^")
    n = int(base) ** int(power) if power else int(base)
    if args.child:
        return child(n)
    from primbench.errors import NoGPUError
    from primbench.measuring.device import require_gpu

    try:
        require_gpu()
    except NoGPUError as exc:
        print(f"library_jit: {exc}", file=sys.stderr)
        return 3
    rows = []
    with tempfile.TemporaryDirectory(prefix="primbench-library-jit-") as folder:
        for phase in PHASES:
            found = run_phase(phase, folder, n)
            rows += found
            if found and found[0].get("unavailable"):
                print(f"library_jit: {found[0]['unavailable']}")
                return 1
    print_lines(rows)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(rows, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
