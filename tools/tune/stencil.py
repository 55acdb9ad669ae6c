"""Time kernels/stencil_window.cu's blur1d_window (variant blur1d_core_edge_window) at a few outputs
per thread (K), block sizes, store and division forms, beside blur1d_vector_shared_halo, on the GPU
in hand (cold L2, the harness's timer), to choose the window's settings; the aim: radius 16 at 85 %
or more of the copy rate.

Not part of a run. Each form's output is checked first with the stencil op's own checks (the exact
input of integers 0..7, bit for bit, and the random input against the float64 blur within the op's
tolerance), then timed; one line per form: setting, cold median, GB/s (2n x 4 bytes), % of the NVML
peak, % of the copy rate (measured here as the runner does: the better of cudaMemcpyAsync and
cupy.copyto of 2^28 floats, cold). docs/perf-notes.md records what it found.
Usage: python -m tools.tune.stencil [--log-n 26] [--radii 16 4 1] [--json OUT]
"""

import argparse
import sys

from tools.common import Tuner, gbps_of

# (K outputs per thread, block, staged stores, fast division) per radius; the registered form first.
WINDOW_FORMS = {
    16: ((16, 256, True, True), (16, 128, True, True), (16, 64, True, True), (8, 256, True, True), (32, 256, True, True),
         (16, 256, False, True), (16, 256, True, False)),
    4: ((8, 256, True, True), (8, 64, True, True), (16, 256, True, True), (8, 256, True, False)),
    1: ((8, 256, True, True), (8, 64, True, True), (4, 256, True, True)),
}
BASELINE = "blur1d_vector_shared_halo"
BASELINE_BLOCKS = (256, 64)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log-n", type=int, default=26)
    parser.add_argument("--radii", type=int, nargs="+", default=[16, 4, 1], choices=sorted(WINDOW_FORMS))
    parser.add_argument("--json")
    args = parser.parse_args()

    import cupy

    import primbench.kernels.stencil as stencil
    from primbench import ops, registry
    from primbench.api import LaunchContext
    from primbench.build import load_module
    from primbench.run.runner import COPY_N
    from primbench.runfile.case_id import CaseId as Case
    from primbench.verify import inputs

    tuner = Tuner()
    device = tuner.device
    checks = ops.checks("stencil")
    n = 2**args.log_n

    def copy_us() -> float:
        src = inputs.random_input(COPY_N, "float32", "uniform", rng_seed=1)
        dst = cupy.empty_like(src)
        return min(tuner.cold_median_us(lambda: dst.data.copy_from_device_async(src.data, src.nbytes)),
                   tuner.cold_median_us(lambda: cupy.copyto(dst, src)))

    copy_gbps = gbps_of(2 * COPY_N * 4, copy_us())
    print(f"copy 2^28 float32: {copy_gbps:.0f} GB/s; 2^{args.log_n} at that rate: {2 * n * 4 / copy_gbps / 1e3:.1f} us "
          f"(85 %: {2 * n * 4 / (0.85 * copy_gbps) / 1e3:.1f} us)", flush=True)

    names = tuple({stencil.window_kernel_name(r, k, staged, fast) for r in args.radii for k, _, staged, fast in WINDOW_FORMS[r]})
    window_module = load_module(stencil.WINDOW_SOURCE, names)
    baseline = registry.get("stencil", BASELINE)
    baseline_module = load_module(baseline.source, baseline.kernels)

    for radius in args.radii:
        params = (("radius", radius),)
        case = Case("stencil", BASELINE, "float32", n, 256, "uniform", params)
        x = checks.random_input(case, rng_seed=radius)
        x64 = checks.reference(x, case, rng_seed=radius)
        exact, _ = checks.exact_input(case, rng_seed=radius)
        forms = [(f"R={radius:2d} {BASELINE} block={block}", baseline_module, baseline.prepare, block) for block in BASELINE_BLOCKS]
        forms += [(f"R={radius:2d} window K={k:2d} block={block:4d}{'' if staged else ' direct stores'}{'' if fast else ' IEEE division'}",
                   window_module, stencil.window_plan(k, staged, fast), block) for k, block, staged, fast in WINDOW_FORMS[radius]]
        for label, module, prepare, block in forms:
            def context(array):
                return LaunchContext(module, array, n, block, device.sm_count, dtype="float32", params=dict(params), **device.sm_limits)

            exact_plan = prepare(context(exact))
            exact_plan.run()
            exact_ok = checks.check_exact(exact_plan.result(), None, exact, case)["ok"]
            plan = prepare(context(x))

            def correct(plan=plan, exact_ok=exact_ok, x64=x64):
                return exact_ok and checks.check_random(plan.result(), x64, plan, case)["ok"]

            tuner.measure(label, plan.run, correct, n, 2 * n * 4, copy_gbps=copy_gbps, grid=plan.launches[0]["grid"])
    tuner.write_json(args.json)
    return 0 if all(row["ok"] for row in tuner.rows) else 1


if __name__ == "__main__":
    sys.exit(main())
