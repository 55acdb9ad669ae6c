#!/usr/bin/env python3
"""Time the two stages of kernels/topk.py's two-stage top-k separately on the GPU in hand (cold L2),
to see where the time goes. Not part of a run; docs/perf-notes.md records what it found.
Usage: python tools/tune_topk.py [--rows 1 64 512]
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 64, 512])
    args = parser.parse_args()

    import cupy

    import kernels
    from kernels import KERNEL_DIR, LaunchContext
    from primbench.build import BASE_OPTIONS
    from kernels.topk import two_stage_plan
    from primbench import ops, stats
    from primbench.build import load_module
    from primbench.config import Case, TimingPolicy
    from primbench.device import Device
    from primbench.timing import Timer

    device = Device()
    timer = Timer(device.l2_bytes)
    policy = TimingPolicy(min_samples=20, max_noise=0.005, min_time_s=0.005, max_time_s=0.3, max_samples=300)
    checks = ops.checks("topk")
    for rows in args.rows:
        case = Case("topk", "two_stage_b16", "float32", rows, 256, "normal", (("vocab", 129280),))
        x = checks.random_input(case, seed=1)
        for group in (16, 8):
            variant = kernels.get("topk", f"two_stage_b{group}")
            module = load_module(variant.source, variant.kernels)
            plan = two_stage_plan(group)(LaunchContext(module, x, rows, 256, device.sm_count, params=case.param_dict))
            plan.run()
            first, second = (module.get_function(launch["kernel"]) for launch in plan.launches)
            score, group_index, index, value = plan.scratch
            from kernels.topk import row_stride
            import numpy
            i32 = numpy.int32
            vocab, stride = 129280, row_stride(129280)
            g1, g2 = plan.launches[0]["grid"], plan.launches[1]["grid"]
            per_row = plan.launches[1]["picked_per_row"]
            forms = {
                "both": plan.run,
                "stage 1 (block_max_select)": lambda: first(tuple(g1), (256,), (x, score, group_index, i32(vocab), i32(stride),
                                                                             i32(plan.launches[0]["groups_per_row"]))),
                "stage 2 (refine)": lambda: second((g2,), (256,), (x, score, group_index, index, value, i32(rows), i32(vocab),
                                                                  i32(stride), i32(per_row))),
            }
            # Stage 1's knobs: groups per thread and float4 loads in flight (template arguments). Each
            # form gets buffers for its own number of blocks per row; a form whose loads in flight do
            # not divide into whole groups, or whose groups in flight do not divide its groups per
            # thread, would read another block's groups, so it is skipped.
            for per_thread, in_flight in ((8, 8), (16, 8), (16, 16), (4, 16)):
                groups_in_flight = in_flight // (group // 4)
                if groups_in_flight < 1 or per_thread % groups_in_flight:
                    print(f"rows={rows:4d} B={group:2d} stage 1, {per_thread}/thread, {in_flight} loads: skipped (not whole groups)")
                    continue
                name = f"block_max_select<{group}, 9, {per_thread}, {in_flight}>"
                kernel = cupy.RawModule(code=(KERNEL_DIR / "topk.cu").read_text(), options=BASE_OPTIONS,
                                        name_expressions=[name]).get_function(name)
                blocks = -(-plan.launches[0]["groups_per_row"] // (256 * per_thread))
                own_score = cupy.empty(rows * blocks * 9, dtype=cupy.float32)
                own_group = cupy.empty(rows * blocks * 9, dtype=cupy.int32)
                forms[f"stage 1, {per_thread}/thread, {in_flight} loads"] = (
                    lambda kernel=kernel, blocks=blocks, own_score=own_score, own_group=own_group: kernel(
                        (blocks, rows), (256,), (x, own_score, own_group, i32(vocab), i32(stride), i32(plan.launches[0]["groups_per_row"]))))
            for label, op in forms.items():
                median = stats.summarize(timer.measure(op, policy).cold_ms).median
                print(f"rows={rows:4d} B={group:2d} {label:30s} {median * 1e3:9.1f} us", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
