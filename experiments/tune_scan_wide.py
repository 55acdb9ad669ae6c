"""Time the async-copy scan with a wide look-back window (experiments/scan_async_wide.cu,
experiments/scan_forms.py async_wide_plan; not registered) at a few (window, form, buffers)
settings, beside the registered narrow-window async kernel and `decoupled_lookback_status_prefetch`,
at 2^28: whether a window covering a whole round of the persistent grid shortens the look-back.

An experiment, not part of a run. Each form is run once and checked exactly against the op's exact
input (int32 wraps, float32 holds integers), then timed cold the harness's way (tools/common.py);
one line per form: median us, GB/s for 2n x 4 bytes, % of the NVML peak and % of a copy measured
just before.
  python -m experiments.tune_scan_wide [--dtypes int32 float32] [--log-n 28] [--json out.json]
  python -m experiments.tune_scan_wide --ptxas      # no GPU needed: registers and spills per setting
docs/perf-notes.md ("A look-back window of a whole round") records what it found.
"""

import argparse
import sys

from experiments import scan_forms
from tools.common import Tuner, exact_case, gbps_of, print_ptxas

EARLY_REFILL = 4  # ASYNC_FORM_EARLY_REFILL in kernels/scan_async.cu
# (look-back window in status words per lane, form, buffers): 8 x 32 = 256 tiles covers a round
# of the 132-block persistent grid; 4 x 32 = 128 nearly does.
# (16 words per lane spills 84-180 bytes at the 64-register cap: not tried.)
SETTINGS = ((8, 0, 3), (4, 0, 3), (8, EARLY_REFILL, 3), (8, EARLY_REFILL, 2), (8, 0, 2))


def wide_names(dtypes, settings=SETTINGS) -> tuple:
    import primbench.kernels.scan as scan

    return tuple(scan_forms._wide_name(scan.CTYPE[d], scan.ASYNC_VECS, stages, window, form)
                 for d in dtypes for window, form, stages in settings)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtypes", nargs="+", default=["int32", "float32"], choices=["int32", "float32"])
    parser.add_argument("--log-n", type=int, default=28)
    parser.add_argument("--ptxas", action="store_true", help="print registers and spills (NVRTC, no GPU) and stop")
    parser.add_argument("--json")
    args = parser.parse_args()

    import primbench.kernels.scan as scan
    from primbench.build import load_module

    if args.ptxas:
        print_ptxas(scan_forms.WIDE_SOURCE, wide_names(scan.DTYPES))
        return 0
    tuner = Tuner()
    n = 2**args.log_n
    narrow_names = tuple(scan._async_name(scan.CTYPE[d], scan.ASYNC_VECS, s) for d in args.dtypes for s in scan.ASYNC_STAGES)
    fast = load_module(scan.SOURCE, scan._fast_names())
    narrow = load_module(scan.ASYNC_SOURCE, narrow_names)
    wide = load_module(scan_forms.WIDE_SOURCE, wide_names(args.dtypes))
    for dtype in args.dtypes:
        tune_dtype(tuner, (fast, narrow, wide), dtype, n)
    tuner.write_json(args.json)
    return 0


def tune_dtype(tuner, modules, dtype: str, n: int) -> None:
    """The copy, the register look-back scan, the registered async kernel, then each wide setting."""
    import cupy

    import primbench.kernels.scan as scan
    from primbench.api import LaunchContext

    fast, narrow, wide = modules
    device = tuner.device
    x, wanted = exact_case(dtype, n)  # exact in the dtype (int32 wrapped, float32 integers)
    dst = cupy.empty_like(x)
    copy_gbps = gbps_of(2 * n * 4, tuner.cold_median_us(lambda: cupy.copyto(dst, x)))
    print(f"copy {dtype} n=2^{n.bit_length() - 1}: {copy_gbps:.0f} GB/s", flush=True)

    def measure(label, plan):
        launch = plan.launches[0]
        tuner.measure(f"{dtype} {label}", plan.run, lambda: bool((plan.result() == wanted).all()), n, 2 * n * 4,
                      copy_gbps=copy_gbps, grid=launch.get("grid"), stages=launch.get("stages"))

    def context(module):
        return LaunchContext(module, x, n, 1024, device.sm_count, dtype=dtype, **device.sm_limits)

    measure("decoupled_lookback_status_prefetch 1024x8", scan.lookback_plan(prefetch_status=True)(context(fast)))
    measure("async copy, window 32 tiles (registered)", scan.async_copy_plan()(context(narrow)))
    for window, form, stages in SETTINGS:
        plan = scan_forms.async_wide_plan(window, form, stages=(stages,))(context(wide))
        measure(f"async wide: window {32 * window} tiles, form {form}, {stages} buffers", plan)


if __name__ == "__main__":
    sys.exit(main())
