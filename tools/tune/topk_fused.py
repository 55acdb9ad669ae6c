"""Time the one-launch top-k (kernels/topk_fused.cu, `two_stage_b16_fused`) against the two-launch
two_stage_b16 on the GPU in hand, cold, each output checked index for index against the reference
first, and each against the read probe over the same bytes (one read of the logits, measured here
the way tools/probe/ceiling.py does). Not part of a run; docs/perf-notes.md ("One launch") records
what it found.

Settings: the registered plans; stage 1 of two_stage_b16 alone at its fastest measured form
(block_max_select, 8 groups per thread, 8 loads in flight: what the fused kernel adds its refine
to); and each form of the fused kernel forced: one block per chunk (8, 4 or 2 groups per thread,
64 registers; 8 also at 80), or persistent (one wave by occupancy, equal shares of the chunks).

Usage (on the GPU): python -m tools.tune.topk_fused [--rows 512 64 1] [--vocab 129280] [--json out.json]
"""

import argparse
import sys

from tools.common import Tuner

READ_BLOCK = 256
# (groups per thread, loads in flight, persistent, min blocks per SM) of each forced fused form
FORMS = ((8, 8, False, 4), (4, 8, False, 4), (2, 8, False, 4), (8, 8, False, 3),
         (8, 8, True, 3), (4, 8, True, 3), (2, 8, True, 3))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[512, 64, 1])
    parser.add_argument("--vocab", type=int, default=129280)
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()

    import cupy
    import numpy
    from cupy.cuda import driver

    from primbench import ops, registry
    from primbench.api import LaunchContext
    from primbench.build import HARNESS_KERNELS, HARNESS_SOURCE, load_module
    from primbench.kernels.topk import FUSED_SOURCE, SOURCE, K, fused_name, fused_plan, row_stride
    from primbench.measuring.ceilings import NEVER
    from primbench.runfile.case_id import CaseId as Case

    tuner = Tuner()
    device = tuner.device
    checks = ops.checks("topk")
    slots, vocab, stride = K + 1, args.vocab, row_stride(args.vocab)
    probe = load_module(HARNESS_SOURCE, HARNESS_KERNELS).get_function("primbench_read_probe")
    probe_grid = device.sm_count * max(1, driver.occupancyMaxActiveBlocksPerMultiprocessor(probe.kernel.ptr, READ_BLOCK, 0))
    sink = cupy.zeros(1, dtype=cupy.uint32)
    stage1_name = f"block_max_select<16, {slots}, 8, 8>"
    stage1 = load_module(SOURCE, (stage1_name,)).get_function(stage1_name)
    fused_module = load_module(FUSED_SOURCE, tuple(fused_name(16, slots, *form) for form in FORMS))
    two_stage = registry.get("topk", "two_stage_b16")
    fused = registry.get("topk", "two_stage_b16_fused")

    def context(module, x, rows):
        return LaunchContext(module, x, rows, 256, device.sm_count, params={"vocab": vocab}, **device.sm_limits)

    def describe(kernel, block=256):
        attributes = kernel.attributes
        per_sm = driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, block, 0)
        return f"{attributes['num_regs']} regs, {attributes['local_size_bytes']} B local, {per_sm} blocks/SM"

    def read_probe_us(nbytes: int) -> float:
        """One read of these bytes: the probe over an array of exactly nbytes, cold (tools/probe/ceiling.py's way)."""
        data = cupy.random.default_rng(7).integers(0, 2**31 - 1, size=nbytes // 4, dtype=cupy.int32)
        vectors = cupy.uint64(data.nbytes // 16)
        return tuner.cold_median_us(lambda: probe((probe_grid,), (READ_BLOCK,), (data, vectors, cupy.uint32(NEVER), sink)))

    print(f"{device.info['name']}: {device.sm_count} SMs, read probe grid {probe_grid} x {READ_BLOCK}, vocab {vocab}")
    for rows in args.rows:
        nbytes = rows * vocab * 4
        case = Case("topk", fused.name, "float32", rows, 256, "normal", (("vocab", vocab),))
        x = checks.random_input(case, rng_seed=rows)
        wanted = checks.reference(x, case, rows)
        read_us = read_probe_us(nbytes)
        print(f"\nrows={rows}: {nbytes / 1e6:.1f} MB; read probe {read_us:.2f} us ({nbytes / read_us / 1e3:.0f} GB/s)", flush=True)

        def line(label, us, ok, detail=""):
            row = dict(setting=label, rows=rows, us=round(us, 2), x_one_read=round(us / read_us, 3),
                       read_probe_us=round(read_us, 2), ok=ok, detail=detail)
            tuner.rows.append(row)
            print(f"  {label:44} rows={rows:4d} {us:9.2f} us {us / read_us:6.3f}x one read  {'ok' if ok else 'WRONG'}  {detail}",
                  flush=True)

        def exact(plan) -> bool:
            plan.result().fill(-1)
            plan.run()
            return bool(checks.check_random(plan.result(), wanted, plan, case)["ok"])

        registered = load_module(fused.source, fused.kernels)
        two_launches = load_module(two_stage.source, two_stage.kernels)
        plans = {"two_stage_b16 (two launches)": (two_stage.prepare(context(two_launches, x, rows)), None),
                 "two_stage_b16_fused (registered plan)": (fused.prepare(context(registered, x, rows)), registered)}
        for per_thread, in_flight, persistent, min_blocks in FORMS:
            shape = "persistent" if persistent else "one chunk"
            label = f"fused {per_thread}/thread {in_flight} loads, {shape}, {min_blocks}/SM"
            plans[label] = (fused_plan(16, forms=((per_thread, in_flight),), persistent=persistent, min_blocks=min_blocks)(
                context(fused_module, x, rows)), fused_module)
        for label, (plan, module) in plans.items():
            ok = exact(plan)
            us = tuner.cold_median_us(plan.run)
            ok = ok and exact(plan)  # still exact after the timed launches
            if hasattr(plan, "tickets"):  # the fused plans: every row's ticket back to zero
                ok = ok and int(cupy.count_nonzero(plan.tickets)) == 0
            launch = plan.launches[0]
            detail = f"grid {launch['grid']}"
            if module is not None:
                detail += (f", {launch['groups_per_thread']}/thread, {launch['blocks_per_row']} blocks/row, "
                           + describe(module.get_function(launch["kernel"])))
            line(label, us, ok, detail)
        # Stage 1 of the two launches alone, at the form the fused kernel uses by default (its picks
        # are not checked: stage 2 makes them a result; tools/tune/topk.py times it the same way).
        groups_per_row = -(-vocab // 16)
        blocks = -(-groups_per_row // (256 * 8))
        score = cupy.empty(rows * blocks * slots, dtype=cupy.float32)
        group = cupy.empty(rows * blocks * slots, dtype=cupy.int32)
        i32 = numpy.int32
        line("stage 1 alone: " + stage1_name, tuner.cold_median_us(
            lambda: stage1((blocks, rows), (256,), (x, score, group, i32(vocab), i32(stride), i32(groups_per_row)))), True,
            f"(not checked) grid {blocks} x {rows}, " + describe(stage1))
    tuner.write_json(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
