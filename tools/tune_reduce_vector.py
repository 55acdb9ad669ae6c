#!/usr/bin/env python3
"""Measure the knobs of kernels/reduce_vector.cu on the GPU in hand, beside CUB, to choose them.

Not part of a run: it times kernel forms the registry does not hold (unroll factors, block sizes,
the load instruction), checks each result against the float64 sum (within 1e-5 of sum|x|: a
sanity check, not the harness's verification) and prints one line per form. docs/perf-notes.md
records what it found.
Usage: python tools/tune_reduce_vector.py [--json OUT]
"""

import argparse
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

LOADS = {0: "ld.global.nc", 1: "ld.global.nc.L1::no_allocate"}
SIZES = (2**28, 2**27, 2**26, 2**25, 2**22, 2**20)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    args = parser.parse_args()

    import cupy
    from cupy.cuda import cub

    import kernels.reduce_vector as rv
    from kernels import KERNEL_DIR, LaunchContext
    from primbench import inputs, stats
    from primbench.build import BASE_OPTIONS
    from primbench.config import TimingPolicy
    from primbench.device import Device
    from primbench.timing import Timer

    device = Device()
    timer = Timer(device.l2_bytes)
    policy = TimingPolicy(min_samples=20, max_noise=0.005, min_time_s=0.005, max_time_s=0.3, max_samples=400)
    unrolls = (4, 8)
    code = (KERNEL_DIR / rv.SOURCE).read_text()
    names = [rv.kernel_name(t, "float32", "SumFloat", u, load) for t in ("vector_reduce", "fixed_tree_reduce") for u in unrolls
             for load in LOADS]
    module = cupy.RawModule(code=code, name_expressions=names, options=BASE_OPTIONS)
    rows = []

    def measure(label, operation, result, n, reference, extra):
        operation()
        got = float(result().get().reshape(-1)[0])
        ok = abs(got - reference[0]) <= 1e-5 * reference[1]
        median = stats.summarize(timer.measure(operation, policy).cold_ms).median
        gbps = n * 4 / (median * 1e-3) / 1e9
        row = dict(label=label, n=n, us=round(median * 1e3, 2), gbps=round(gbps), pct_peak=round(100 * gbps / device.info["peak_gbps"], 1), ok=ok, **extra)
        rows.append(row)
        print(f"{label:62} n=2^{n.bit_length() - 1:<3} {row['us']:9.2f} us {row['gbps']:5d} GB/s {row['pct_peak']:5.1f}% {'ok' if ok else 'WRONG'} {extra}", flush=True)

    for n in SIZES:
        x = inputs.random_input(n, "float32", "uniform", seed=11)
        x64 = x.astype(cupy.float64)
        reference = (float(x64.sum()), float(cupy.abs(x64).sum()))
        del x64
        state = {}

        def cub_sum():
            state["out"] = cub.cub_reduction(x, cub.CUPY_CUB_SUM)

        measure("cub", cub_sum, lambda: state["out"], n, reference, {})
        for template, load, unroll, block in itertools.product(("vector", "fixed"), LOADS, unrolls, (512, 1024)):
            ctx = LaunchContext(module, x, n, block, device.sm_count, dtype="float32", **device.sm_limits)
            make = rv.vector_plan if template == "vector" else rv.fixed_tree_plan
            plan = make({"float32": "SumFloat"}, unroll, l1_mode=load)(ctx)
            measure(f"{template} load={LOADS[load]} U={unroll} block={block}", plan.run, plan.result, n, reference,
                    {"grid": plan.launches[0]["grid"]})
        del x
    if args.json:
        Path(args.json).write_text(json.dumps({"device": device.info["name"], "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
