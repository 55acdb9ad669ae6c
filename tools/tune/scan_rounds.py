"""Verify and time the persistent scan with no look-back chain (kernels/scan_rounds.cu,
kernels/scan_rounds.py) in several settings, beside `decoupled_lookback_status_prefetch`, to choose
the registered settings.

Not part of a run. First a small-n sweep: each setting at n = 1, 31, 1000, 2^20 + 7, 2^22 + 5,
blocks 256 and 1024, the occupancy grid, one block and three blocks, three calls in a row on one
plan, each output checked exactly against the op's exact input (int32 wraps, float32 holds
integers); and float32 on random input, three calls compared bit for bit (the variant declares
itself deterministic). Then at 2^28, int32 and float32: the copy, the look-back scan and each
setting, checked exactly before and after its timed calls and timed cold; then each setting once
more in its diagnostic form, which counts the re-reads of status words not yet published.
Exit status 1 if any output was wrong.
  python -m tools.tune.scan_rounds [--dtypes int32 float32] [--log-n 28] [--json out.json]
  python -m tools.tune.scan_rounds --diagnose   # the diagnostic forms (kernels/scan_rounds.cu) at 2^28
  python -m tools.tune.scan_rounds --ptxas      # no GPU needed: registers and spills per setting
docs/perf-notes.md ("Every block adds up every round") records what it found.
"""

import argparse
import sys

from tools.common import Tuner, check_calls, exact_case, first_wrong, gbps_of, print_ptxas

# (block, kernel, vecs, stages, lag, gather): a tile is block x vecs x 4 elements; "shared": lag + 1
# buffers held, the rest in flight; "held": the waiting tiles in registers, every buffer in flight;
# gather: status words per lane of the gathering warp (grid at most 32 x gather).
SETTINGS = ((1024, "shared", 4, 3, 1, 5), (1024, "shared", 3, 4, 2, 5), (512, "held", 8, 3, 1, 5), (512, "held", 8, 2, 2, 5),
            (512, "held", 8, 3, 2, 5), (512, "held", 6, 4, 2, 5), (512, "held", 6, 3, 2, 5), (512, "held", 4, 4, 2, 9),
            (1024, "shared", 2, 5, 2, 5))  # the last: the registered fallback at block 1024 on an A100 (160 KB)
SMALL_SIZES = (1, 31, 1000, 2**20 + 7, 2**22 + 5)
SMALL_BLOCKS = (256, 512, 1024)
SMALL_GRIDS = (None, 1, 3)
COUNT_SPINS = 1  # kernels/scan_rounds.cu ROUNDS_FORM_COUNT_SPINS
# --diagnose: kernels/scan_rounds.cu's other bits, timed at 2^28 (NO_WAIT gives wrong outputs by
# design: it times what the waits for other blocks cost).
NO_WAIT = 2
DIAGNOSE_SETTINGS = ((1024, "shared", 3, 4, 2, 5), (512, "held", 8, 3, 1, 5), (512, "held", 8, 2, 2, 5))
DIAGNOSE_FORMS = {"form 0": 0, "no wait (wrong)": NO_WAIT}
CORRECT_FORMS = (0,)


def label(setting) -> str:
    block, kind, vecs, stages, lag, gather = setting
    return f"round sums {kind} {block}x{vecs}x{stages} lag {lag} gather {gather}"


def kernel_names(dtypes, settings=SETTINGS, forms=(0, COUNT_SPINS)) -> tuple:
    import primbench.kernels.scan_rounds as rounds

    names = {rounds._name(rounds.CTYPE[d], *setting[1:], f) for d in dtypes for setting in settings for f in forms}
    names |= {rounds._name(rounds.CTYPE[d], *setting[1:], f) for d in dtypes for setting in DIAGNOSE_SETTINGS
              for f in DIAGNOSE_FORMS.values()}
    return tuple(sorted(names))


def diagnose(tuner, module, dtype: str, n: int) -> int:
    """The diagnostic forms at 2^28: time each, check the ones meant to be correct."""
    from primbench.api import LaunchContext

    device = tuner.device
    x, wanted = exact_case(dtype, n)
    wrong = 0
    for setting in DIAGNOSE_SETTINGS:
        ctx = LaunchContext(module, x, n, setting[0], device.sm_count, dtype=dtype, **device.sm_limits)
        for name, form in DIAGNOSE_FORMS.items():
            plan = plan_for(ctx, setting, form)
            checked = form in CORRECT_FORMS
            row = tuner.measure(f"{dtype} {label(setting)} {name}", plan.run,
                                (lambda: not first_wrong(plan.result(), wanted)) if checked else (lambda: True), n, 2 * n * 4)
            if checked and (not row["ok"] or first_wrong(plan.result(), wanted)):
                wrong += 1
                print(f"{dtype} {label(setting)} {name}: WRONG", flush=True)
    return wrong


def plan_for(ctx, setting, form=0, grid=None, spins=None):
    import primbench.kernels.scan_rounds as rounds

    return rounds.round_sums_plan((tuple(setting[1:]),), form, grid, spins)(ctx)


def small_sweep(tuner, module, dtypes) -> int:
    """Every setting (at the sweep's blocks) at the small sizes, three grids, three calls in a row."""
    import cupy

    from primbench.api import CaseUnsupported, LaunchContext

    device = tuner.device
    failures = checked = 0
    settings = sorted({tuple(setting[1:]) for setting in SETTINGS}, key=str)
    for dtype in dtypes:
        for n in SMALL_SIZES:
            x, wanted = exact_case(dtype, n)
            for block in SMALL_BLOCKS:
                ctx = LaunchContext(module, x, n, block, device.sm_count, dtype=dtype, **device.sm_limits)
                for setting in settings:
                    for grid in SMALL_GRIDS:
                        try:
                            plan = plan_for(ctx, (block, *setting), 0, grid)
                        except CaseUnsupported as exc:
                            print(f"small {dtype} n={n} {label((block, *setting))}: skipped, {exc}", flush=True)
                            continue
                        calls, wrong = check_calls(plan, wanted, f"{dtype} n={n} {label((block, *setting))}")
                        checked, failures = checked + calls, failures + wrong
    if "float32" in dtypes:  # bit for bit from call to call on random floats
        n = 2**22 + 5
        x = cupy.random.default_rng(3).standard_normal(n, dtype=cupy.float32)
        for setting in settings:
            ctx = LaunchContext(module, x, n, 1024 if setting[0] == "shared" else 512, device.sm_count, dtype="float32",
                                **device.sm_limits)
            try:
                plan = plan_for(ctx, (1024 if setting[0] == "shared" else 512, *setting))
            except CaseUnsupported:
                continue
            plan.run()
            first = plan.result().copy()
            for _ in range(2):
                plan.run()
                checked += 1
                if not bool((plan.result().view(cupy.uint32) == first.view(cupy.uint32)).all()):
                    failures += 1
                    print(f"small NOT DETERMINISTIC float32 n={n} {label((ctx.block, *setting))}", flush=True)
    print(f"small-n sweep: {checked} outputs checked, {failures} wrong", flush=True)
    return failures


def time_dtype(tuner, modules, dtype: str, n: int) -> int:
    """The copy, the register look-back scan, each setting (checked before and after its timed
    calls), then each setting's re-reads counted in one call. Returns the wrong outputs."""
    import cupy

    import primbench.kernels.scan as scan
    from primbench.api import CaseUnsupported, LaunchContext

    fast, rounds_module = modules
    device = tuner.device
    x, wanted = exact_case(dtype, n)
    dst = cupy.empty_like(x)
    copy_us = tuner.cold_median_us(lambda: cupy.copyto(dst, x))
    copy_gbps = gbps_of(2 * n * 4, copy_us)
    print(f"copy {dtype} n=2^{n.bit_length() - 1}: {copy_us:.1f} us {copy_gbps:.0f} GB/s", flush=True)
    wrong = 0

    def context(module, block=1024):
        return LaunchContext(module, x, n, block, device.sm_count, dtype=dtype, **device.sm_limits)

    def measure(name, plan):
        nonlocal wrong
        launch = plan.launches[0]
        row = tuner.measure(f"{dtype} {name}", plan.run, lambda: not first_wrong(plan.result(), wanted), n, 2 * n * 4,
                            copy_gbps=copy_gbps, grid=launch.get("grid"), tiles=launch.get("tiles"))
        after = first_wrong(plan.result(), wanted)
        if not row["ok"] or after:
            wrong += 1
            print(f"{dtype} {name}: WRONG {'after the timed calls: ' + after if after else 'on the first call'}", flush=True)

    measure("decoupled_lookback_status_prefetch 1024x8", scan.lookback_plan(prefetch_status=True)(context(fast)))
    for setting in SETTINGS:
        try:
            measure(label(setting), plan_for(context(rounds_module, setting[0]), setting))
        except CaseUnsupported as exc:
            print(f"{dtype} {label(setting)}: skipped, {exc}", flush=True)
    for setting in SETTINGS:
        spins = cupy.zeros(1, dtype=cupy.uint64)
        try:
            plan = plan_for(context(rounds_module, setting[0]), setting, COUNT_SPINS, spins=spins)
        except CaseUnsupported:
            continue
        plan.run()
        cupy.cuda.Device().synchronize()
        ok = not first_wrong(plan.result(), wanted)
        wrong += 0 if ok else 1
        launch = plan.launches[0]
        print(f"{dtype} {label(setting)} counting: {int(spins[0].item())} re-reads in one call ({launch['rounds']} rounds x {launch['grid']} "
              f"blocks); {'ok' if ok else 'WRONG'}", flush=True)
    return wrong


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtypes", nargs="+", default=["int32", "float32"], choices=["int32", "float32"])
    parser.add_argument("--log-n", type=int, default=28)
    parser.add_argument("--ptxas", action="store_true", help="print registers and spills (NVRTC, no GPU) and stop")
    parser.add_argument("--no-small", action="store_true", help="skip the small-n sweep")
    parser.add_argument("--diagnose", action="store_true", help="time the diagnostic forms only")
    parser.add_argument("--json")
    args = parser.parse_args()
    import primbench.kernels.scan as scan
    import primbench.kernels.scan_rounds as rounds

    if args.ptxas:
        print_ptxas(rounds.SOURCE, kernel_names(scan.DTYPES))
        return 0
    from primbench.build import load_module

    tuner = Tuner()
    module = load_module(rounds.SOURCE, kernel_names(args.dtypes))
    if args.diagnose:
        failures = sum(diagnose(tuner, module, dtype, 2**args.log_n) for dtype in args.dtypes)
        tuner.write_json(args.json)
        return 1 if failures else 0
    failures = 0 if args.no_small else small_sweep(tuner, module, args.dtypes)
    modules = (load_module(scan.SOURCE, scan._fast_names()), module)
    for dtype in args.dtypes:
        failures += time_dtype(tuner, modules, dtype, 2**args.log_n)
    tuner.write_json(args.json)
    if failures:
        print(f"{failures} WRONG outputs (above)", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
