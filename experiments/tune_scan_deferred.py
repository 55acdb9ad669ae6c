"""Verify and time the async-copy scan with its look-back off the per-tile path
(experiments/scan_async_deferred.cu, experiments/scan_forms.py async_deferred_plan; not registered),
beside the registered async kernel and `decoupled_lookback_status_prefetch`: whether taking the
look-back's wait off each tile makes the async pipeline as fast as its streaming alone.

An experiment, not part of a run. First a small-n sweep: each setting at n = 1, 31, 1000,
2^20 + 7, 2^22 + 5, blocks 128 and 1024, the occupancy grid and one block, three calls in a row on
one plan, each output checked exactly against the op's exact input (int32 wraps, float32 holds
integers). Then at 2^28 each form is run once, checked exactly, timed cold the harness's way
(tools/common.py) and checked again after its timed calls; one line per form: median us, GB/s for
2n x 4 bytes, % of the NVML peak and % of a copy measured just before. Exit status 1 if any output
was wrong.
  python -m experiments.tune_scan_deferred [--dtypes int32 float32] [--log-n 28] [--json out.json]
  python -m experiments.tune_scan_deferred --ptxas      # no GPU needed: registers and spills per setting
docs/perf-notes.md ("The look-back off the per-tile path") records what it found.
"""

import argparse
import sys

from experiments import scan_forms
from tools.common import Tuner, check_calls, exact_case, first_wrong, gbps_of, print_ptxas

# (kVecs, kStages, kLag, kWindow) at block 1024 (a tile is 1024 x kVecs x 4 elements):
#   lag 1: the first warp looks back for tile k while the others store tile k - 1 and scan k + 1;
#          4 x 3: 64 KB tiles, 192 KB, one tile in flight while one is scanned and one waits;
#   lag 2: the first warp looks back for tile k - 1 (its round published a whole iteration ago)
#          while the others store tile k - 2; 2 x 6: 32 KB tiles, 192 KB, three in flight;
#   window: status words per lane of the look-back (x 32 tiles); 8 covers a 132-block round.
# ptxas (NVRTC, --ptxas): no spills in any of these on sm_90 and sm_80 (1024x2x6 at lag 1 spills 8
# bytes on sm_90: not used).
SETTINGS = ((4, 3, 1, 1), (4, 3, 1, 8), (2, 6, 2, 1), (2, 6, 2, 8), (2, 4, 2, 1))
SMALL_SIZES = (1, 31, 1000, 2**20 + 7, 2**22 + 5)
SMALL_BLOCKS = (128, 1024)


def setting_label(setting) -> str:
    vecs, stages, lag, window = setting
    return f"deferred 1024x{vecs}x{stages} lag {lag} window {32 * window}"


def deferred_names(dtypes, settings=SETTINGS) -> tuple:
    import primbench.kernels.scan as scan

    return tuple(scan_forms._deferred_name(scan.CTYPE[d], vecs, stages, lag, window) for d in dtypes for vecs, stages, lag, window in settings)


def ptxas_report(settings=SETTINGS) -> None:
    """Registers, stack and spills of each instantiation, from ptxas through NVRTC (no GPU)."""
    import primbench.kernels.scan as scan

    print_ptxas(scan_forms.DEFERRED_SOURCE, deferred_names(scan.DTYPES, settings))


def small_sweep(tuner, module, dtypes, settings=SETTINGS) -> int:
    """Every setting at the small sizes, both block sizes, the occupancy grid and one block, three
    calls in a row on one plan; prints one line per failure and a summary. Returns the failures."""
    from primbench.api import CaseUnsupported, LaunchContext

    device = tuner.device
    failures = checked = 0
    for dtype in dtypes:
        for n in SMALL_SIZES:
            x, wanted = exact_case(dtype, n)
            for block in SMALL_BLOCKS:
                ctx = LaunchContext(module, x, n, block, device.sm_count, dtype=dtype, **device.sm_limits)
                for setting in settings:
                    vecs, stages, lag, window = setting
                    for grid in (None, 1):
                        try:
                            plan = scan_forms.async_deferred_plan(lag, window, vecs, (stages,), grid=grid)(ctx)
                        except CaseUnsupported as exc:
                            print(f"small {dtype} n={n} block {block} {setting_label(setting)}: skipped, {exc}", flush=True)
                            continue
                        calls, wrong = check_calls(plan, wanted, f"{dtype} n={n} block {block} {setting_label(setting)}")
                        checked, failures = checked + calls, failures + wrong
    print(f"small-n sweep: {checked} outputs checked, {failures} wrong", flush=True)
    return failures


def time_dtype(tuner, modules, dtype: str, n: int, settings=SETTINGS) -> int:
    """The copy, the register look-back scan, the registered async kernel, then each deferred
    setting, each checked exactly before and after its timed calls. Returns the wrong outputs."""
    import cupy

    import primbench.kernels.scan as scan
    from primbench.api import CaseUnsupported, LaunchContext

    fast, narrow, deferred = modules
    device = tuner.device
    x, wanted = exact_case(dtype, n)
    dst = cupy.empty_like(x)
    copy_us = tuner.cold_median_us(lambda: cupy.copyto(dst, x))
    copy_gbps = gbps_of(2 * n * 4, copy_us)
    print(f"copy {dtype} n=2^{n.bit_length() - 1}: {copy_us:.1f} us {copy_gbps:.0f} GB/s", flush=True)
    wrong = 0

    def measure(label, plan):
        nonlocal wrong
        launch = plan.launches[0]
        row = tuner.measure(f"{dtype} {label}", plan.run, lambda: not first_wrong(plan.result(), wanted), n, 2 * n * 4,
                            copy_gbps=copy_gbps, grid=launch.get("grid"), tiles=launch.get("tiles"), stages=launch.get("stages"))
        after = first_wrong(plan.result(), wanted)  # the last timed call's output
        if not row["ok"] or after:
            wrong += 1
            print(f"{dtype} {label}: WRONG {'after the timed calls: ' + after if after else 'on the first call'}", flush=True)

    def context(module):
        return LaunchContext(module, x, n, 1024, device.sm_count, dtype=dtype, **device.sm_limits)

    measure("decoupled_lookback_status_prefetch 1024x8", scan.lookback_plan(prefetch_status=True)(context(fast)))
    measure("async copy 1024x4x3 (registered)", scan.async_copy_plan()(context(narrow)))
    for setting in settings:
        vecs, stages, lag, window = setting
        try:
            plan = scan_forms.async_deferred_plan(lag, window, vecs, (stages,))(context(deferred))
        except CaseUnsupported as exc:
            print(f"{dtype} {setting_label(setting)}: skipped, {exc}", flush=True)
            continue
        measure(setting_label(setting), plan)
    return wrong


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtypes", nargs="+", default=["int32", "float32"], choices=["int32", "float32"])
    parser.add_argument("--log-n", type=int, default=28)
    parser.add_argument("--ptxas", action="store_true", help="print registers and spills (NVRTC, no GPU) and stop")
    parser.add_argument("--no-small", action="store_true", help="skip the small-n sweep")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.ptxas:
        ptxas_report()
        return 0

    import primbench.kernels.scan as scan
    from primbench.build import load_module

    tuner = Tuner()
    narrow_names = tuple(scan._async_name(scan.CTYPE[d], scan.ASYNC_VECS, s) for d in args.dtypes for s in scan.ASYNC_STAGES)
    deferred = load_module(scan_forms.DEFERRED_SOURCE, deferred_names(args.dtypes))
    failures = 0 if args.no_small else small_sweep(tuner, deferred, args.dtypes)
    modules = (load_module(scan.SOURCE, scan._fast_names()), load_module(scan.ASYNC_SOURCE, narrow_names), deferred)
    for dtype in args.dtypes:
        failures += time_dtype(tuner, modules, dtype, 2**args.log_n)
    tuner.write_json(args.json)
    if failures:
        print(f"{failures} WRONG outputs (above)", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
