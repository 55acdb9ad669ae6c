"""Measure the knobs of the fast scans in kernels/scan.cu on the GPU in hand, beside CUB, to choose them.

Not part of a run: it times kernel forms the registry does not hold (vectors per thread, block
sizes), checks each int32 result exactly against an int64 cumsum, and prints one line per form.
docs/perf-notes.md records what it found.
Usage: python -m tools.tune.scan [--sizes 28 25] [--json OUT]
"""

import argparse
import itertools
import sys

from tools.common import Tuner, gbps_of

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

    import primbench.kernels.scan as scan
    from primbench.api import LaunchContext
    from primbench.build import load_module

    tuner = Tuner()
    device = tuner.device
    module = load_module(scan.SOURCE, tuple({name for v in VECS for w in WINDOWS for name in scan._fast_names(v, w)}))
    copy_peak = None

    def measure(label, operation, result, n, wanted, extra):
        tuner.measure(label, operation, lambda: (result() == wanted).all(), n, 2 * n * 4, copy_gbps=copy_peak, **extra)

    for log_n in args.sizes:
        n = 2**log_n
        x = cupy.random.default_rng(3).integers(-1000, 1001, n, dtype=cupy.int64).astype(cupy.int32)
        wanted = cupy.cumsum(x, dtype=cupy.int64).astype(cupy.int32)
        dst = cupy.empty_like(x)
        copy_us = tuner.cold_median_us(lambda: cupy.copyto(dst, x))
        copy_peak = gbps_of(2 * n * 4, copy_us)
        print(f"copy n=2^{log_n}: {copy_us:.1f} us {copy_peak:.0f} GB/s", flush=True)
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
    tuner.write_json(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
