#!/usr/bin/env python3
"""Measure the knobs of the fast scans in kernels/scan.cu on the GPU in hand, beside CUB, to choose them.

Not part of a run: it times kernel forms the registry does not hold (vectors per thread, block
sizes), checks each int32 result exactly against an int64 cumsum, and prints one line per form.
docs/perf-notes.md records what it found.
Usage: python tools/tune_scan.py [--sizes 28 25] [--json OUT]
"""

import argparse
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

VECS = (4, 8)
BLOCKS = (256, 512, 1024)
WINDOWS = (1, 2)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[28, 25], help="log2 of n")
    parser.add_argument("--json")
    args = parser.parse_args()

    import cupy
    from cupy.cuda import cub

    import kernels.scan as scan
    from kernels import KERNEL_DIR, LaunchContext
    from primbench import stats
    from primbench.build import BASE_OPTIONS
    from primbench.config import TimingPolicy
    from primbench.device import Device
    from primbench.timing import Timer

    device = Device()
    timer = Timer(device.l2_bytes)
    policy = TimingPolicy(min_samples=20, max_noise=0.005, min_time_s=0.005, max_time_s=0.3, max_samples=300)
    code = (KERNEL_DIR / scan.SOURCE).read_text()
    names = sorted({name for v in VECS for w in WINDOWS for name in scan._fast_names(v, w)})
    module = cupy.RawModule(code=code, name_expressions=names, options=BASE_OPTIONS)
    copy_peak = None
    rows = []

    def measure(label, operation, result, n, wanted, extra):
        operation()
        ok = bool((result() == wanted).all())
        median = stats.summarize(timer.measure(operation, policy).cold_ms).median
        gbps = 2 * n * 4 / (median * 1e-3) / 1e9
        row = dict(label=label, n=n, us=round(median * 1e3, 2), gbps=round(gbps), pct_peak=round(100 * gbps / device.info["peak_gbps"], 1),
                   pct_copy=round(100 * gbps / copy_peak, 1) if copy_peak else None, ok=ok, **extra)
        rows.append(row)
        print(f"{label:44} n=2^{n.bit_length() - 1:<3} {row['us']:9.2f} us {row['gbps']:5d} GB/s {row['pct_peak']:5.1f}% peak "
              f"{row['pct_copy']}% copy {'ok' if ok else 'WRONG'} {extra}", flush=True)

    for log_n in args.sizes:
        n = 2**log_n
        x = cupy.random.default_rng(3).integers(-1000, 1001, n, dtype=cupy.int64).astype(cupy.int32)
        wanted = cupy.cumsum(x, dtype=cupy.int64).astype(cupy.int32)
        dst = cupy.empty_like(x)
        copy_ms = stats.summarize(timer.measure(lambda: cupy.copyto(dst, x), policy).cold_ms).median
        copy_peak = 2 * n * 4 / (copy_ms * 1e-3) / 1e9
        print(f"copy n=2^{log_n}: {copy_ms * 1e3:.1f} us {copy_peak:.0f} GB/s", flush=True)
        buffer = x.copy()
        measure("cub in place (output checked on the first call)", lambda: cub.device_scan(buffer, cub.CUPY_CUB_CUMSUM),
                lambda: buffer, n, wanted, {})
        for vecs, block in itertools.product(VECS, BLOCKS):
            ctx = LaunchContext(module, x, n, block, device.sm_count, dtype="int32", **device.sm_limits)
            forms = [(f"lookback window={w}x32{' status prefetch' if prefetch else ''}", scan.lookback_plan(vecs, w, prefetch))
                     for w in WINDOWS for prefetch in (False, True)]
            for label, prepare in forms + [("reduce_then_scan", scan.reduce_then_scan_plan(vecs))]:
                plan = prepare(ctx)
                measure(f"{label} vecs={vecs} block={block}", plan.run, plan.result, n, wanted,
                        {"tiles": plan.launches[0]["grid"]})
            # The third pass of reduce-then-scan alone: the tile scan with its prefix given, no look-back.
            plan = scan.reduce_then_scan_plan(vecs)(ctx)
            plan.run()
            third = module.get_function(plan.launches[2]["kernel"])
            out, sums = plan.scratch
            measure(f"tile scan, prefix given (no look-back) vecs={vecs} block={block}",
                    lambda: third((plan.launches[2]["grid"],), (block,), (x, out, sums, cupy.uint32(n))),
                    lambda: out, n, wanted, {})
        del x, wanted, dst, buffer
    if args.json:
        Path(args.json).write_text(json.dumps({"device": device.info["name"], "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
