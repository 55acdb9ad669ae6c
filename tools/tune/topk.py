"""Time the two stages of kernels/topk.py's two-stage top-k separately on the GPU in hand (cold L2),
to see where the time goes. Not part of a run; docs/perf-notes.md records what it found.
Usage: python -m tools.tune.topk [--rows 1 64 512]
"""

import argparse
import sys

from tools.common import Tuner

GROUPS = (16, 8)
# Stage 1's knobs: groups per thread and float4 loads in flight (template arguments).
STAGE1_FORMS = ((8, 8), (16, 8), (16, 16), (4, 16))
VOCAB = 129280


def whole_groups(group: int, per_thread: int, in_flight: int) -> bool:
    """A form whose loads in flight are not whole groups, or whose groups in flight do not divide its
    groups per thread, would read another block's groups (block_max_select's static_assert)."""
    groups_in_flight = in_flight // (group // 4)
    return in_flight % (group // 4) == 0 and groups_in_flight >= 1 and per_thread % groups_in_flight == 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 64, 512])
    args = parser.parse_args()

    import cupy
    import numpy

    from primbench import ops, registry
    from primbench.api import LaunchContext
    from primbench.build import load_module
    from primbench.kernels.topk import SOURCE, K, row_stride, two_stage_plan
    from primbench.runfile.case_id import CaseId as Case

    tuner = Tuner()
    slots = K + 1  # groups each block keeps: the registered variants' (kernels/topk.py)
    checks = ops.checks("topk")
    stage1_name = "block_max_select<{group}, {slots}, {per_thread}, {in_flight}>"
    stage1 = load_module(SOURCE, tuple(stage1_name.format(group=g, slots=slots, per_thread=p, in_flight=f)
                                       for g in GROUPS for p, f in STAGE1_FORMS if whole_groups(g, p, f)))
    i32 = numpy.int32
    stride = row_stride(VOCAB)
    for rows in args.rows:
        case = Case("topk", "two_stage_b16", "float32", rows, 256, "normal", (("vocab", VOCAB),))
        x = checks.random_input(case, rng_seed=1)
        for group in GROUPS:
            variant = registry.get("topk", f"two_stage_b{group}")
            module = load_module(variant.source, variant.kernels)
            plan = two_stage_plan(group)(LaunchContext(module, x, rows, 256, tuner.device.sm_count, params=dict(case.params),
                                                        **tuner.device.sm_limits))
            plan.run()
            first, second = (module.get_function(launch["kernel"]) for launch in plan.launches)
            score, group_index, index, value = plan.scratch
            g1, g2 = plan.launches[0]["grid"], plan.launches[1]["grid"]
            groups_per_row = plan.launches[0]["groups_per_row"]
            per_row = plan.launches[1]["picked_per_row"]
            forms = {
                "both": plan.run,
                "stage 1 (block_max_select)": lambda: first(tuple(g1), (256,), (x, score, group_index, i32(VOCAB), i32(stride),
                                                                             i32(groups_per_row))),
                "stage 2 (refine)": lambda: second((g2,), (256,), (x, score, group_index, index, value, i32(rows), i32(VOCAB),
                                                                  i32(stride), i32(per_row))),
            }
            # Each stage-1 form gets buffers for its own number of blocks per row.
            for per_thread, in_flight in STAGE1_FORMS:
                if not whole_groups(group, per_thread, in_flight):
                    print(f"rows={rows:4d} B={group:2d} stage 1, {per_thread}/thread, {in_flight} loads: skipped (not whole groups)")
                    continue
                kernel = stage1.get_function(stage1_name.format(group=group, slots=slots, per_thread=per_thread, in_flight=in_flight))
                blocks = -(-groups_per_row // (256 * per_thread))
                own_score = cupy.empty(rows * blocks * slots, dtype=cupy.float32)
                own_group = cupy.empty(rows * blocks * slots, dtype=cupy.int32)
                forms[f"stage 1, {per_thread}/thread, {in_flight} loads"] = (
                    lambda kernel=kernel, blocks=blocks, own_score=own_score, own_group=own_group: kernel(
                        (blocks, rows), (256,), (x, own_score, own_group, i32(VOCAB), i32(stride), i32(groups_per_row))))
            for label, op in forms.items():
                print(f"rows={rows:4d} B={group:2d} {label:30s} {tuner.cold_median_us(op):9.1f} us", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
