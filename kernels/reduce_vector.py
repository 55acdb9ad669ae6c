"""Reduce beyond the seeds (kernels/reduce_vector.cu): 16-byte loads at the memory limit, a fixed
tree that is bitwise reproducible at the same speed, compensated and float64 accumulation for
accuracy, the same kernels for max, and a dtype axis (float32; float16 and bfloat16 read and
summed in float32; int32).

Each kernel is a single launch: every block writes one partial, and the last block to finish
(an integer ticket tells it) combines them. The ticket resets itself, so it is zeroed once here.

Tolerance model: as in kernels/reduce.py, depth x unit roundoff x sum|x|, the depth taken from
the plan's grid: each accumulator's serial chain, the combining of the accumulators, the trees.
"""

from __future__ import annotations

import math
import re

from primbench.api import BASELINE_SERIES, CUPY, KERNEL_DIR, LaunchContext, Plan, Variant, pow2, register_variant as register
# The plans call these by their private names (a plan's source is part of its variant's hash).
from primbench.api import ceil_div as _ceil_div, check_aligned_16 as _check_aligned

SOURCE = "reduce_vector.cu"
BLOCKS = pow2(64, 1024)
BYTES = "n * itemsize"
# 16-byte loads in flight per thread (independent accumulators), and the input size from which
# the kernels load with plain ld.global.nc instead of L1::no_allocate: both chosen with
# tools/tune/reduce_vector.py on the H200 (docs/perf-notes.md).
UNROLL = 8
L1_ALLOCATE_FROM_BYTES = 512 << 20
# The fixed tree's virtual grid: at most this many virtual warps, fewer for small n so that each
# virtual thread gets UNROLL vectors. 8448 = 132 SMs x 64 warps is exactly one full wave of an
# H200: with 8192 the grid left 8 of its 132 SMs half busy and the kernel ran 2.9 % behind the
# grid-stride one at 2^28 (docs/perf-notes.md). Any constant keeps the result a function of n
# alone; on another GPU this one is merely not a whole number of waves.
MAX_VIRTUAL_WARPS = 8448
FIXED_FINAL_LANES = int(re.search(r"#define FIXED_FINAL_LANES (\d+)", (KERNEL_DIR / SOURCE).read_text(encoding="utf-8")).group(1))

LOADS = {"float32": "LoadF32", "float16": "LoadF16", "bfloat16": "LoadBF16", "int32": "LoadI32"}
PER_VECTOR = {"float32": 4, "float16": 8, "bfloat16": 8, "int32": 4}  # elements in 16 bytes
PER_VECTOR_BYTES = 16
# Policy -> (dtype of the partials passed between threads, dtype of the result)
POLICY_TYPES = {
    "SumFloat": ("float32", "float32"),
    "SumCompensated": ("float64", "float32"),
    "SumDouble": ("float64", "float64"),
    "SumInt": ("uint32", "int32"),
    "MaxFloat": ("float32", "float32"),
    "MaxInt": ("int32", "int32"),
}
SUM = {"float32": "SumFloat", "float16": "SumFloat", "bfloat16": "SumFloat", "int32": "SumInt"}
MAX = {"float32": "MaxFloat", "float16": "MaxFloat", "bfloat16": "MaxFloat", "int32": "MaxInt"}
COMPENSATED = {"float32": "SumCompensated", "float16": "SumCompensated", "bfloat16": "SumCompensated"}
DOUBLE = {"float32": "SumDouble", "float16": "SumDouble", "bfloat16": "SumDouble"}
# A compensated (TwoSum) chain of N additions keeps every rounding error exactly; only adding up
# those errors rounds, by at most N u^2 sum|x| (u = 2^-24). The chain, the threads and the blocks
# then meet in float64 (each level 2^-53 sum|x| = u^2 sum|x| / 32), and the float32 result rounds
# once: |error| <= (N + levels / 32 + 1) u^2 sum|x| + u |sum|. On the ill-conditioned input that
# is about 0.1 at 2^28 where a plain float32 tree errs by several units: a lost compensation fails.
COMPENSATED_UNIT = 2.0**-48
COMPENSATED_RESULT_ROUNDING = 2.0**-24


def _log2(v: int) -> int:
    return int(math.log2(v))


def load_mode(n: int, dtype: str) -> int:
    """kL1 in reduce_vector.cu: 1 (L1::no_allocate) below L1_ALLOCATE_FROM_BYTES of input, else 0."""
    return 1 if n * PER_VECTOR_BYTES // PER_VECTOR[dtype] < L1_ALLOCATE_FROM_BYTES else 0


def kernel_name(template: str, dtype: str, policy: str, unroll: int = UNROLL, l1_mode: int = 0) -> str:
    return f"{template}<{LOADS[dtype]}<{l1_mode}>, {policy}, {unroll}>"


def _buffers(policy: str, partial_count: int):
    import cupy

    partial_dtype, out_dtype = POLICY_TYPES[policy]
    partials = cupy.empty(partial_count, dtype=partial_dtype)
    counters = cupy.zeros(1, dtype=cupy.uint32)  # the last-block ticket: reset by the last block
    out = cupy.empty(1, dtype=out_dtype)
    return partials, counters, out


def _unit_roundoff(policy: str) -> float:
    return 2.0**-53 if policy == "SumDouble" else 2.0**-24


def vector_plan(policies: dict[str, str], unroll: int = UNROLL, l1_mode: int | None = None):
    """The grid-stride kernel with 16-byte loads, one wave of blocks by the kernel's occupancy.
    `unroll` and `l1_mode` (None: by input size) are parameters for tools/tune/reduce_vector.py."""

    def prepare(ctx: LaunchContext) -> Plan:
        import numpy

        policy = policies[ctx.dtype]
        mode = load_mode(ctx.n, ctx.dtype) if l1_mode is None else l1_mode
        name = kernel_name("vector_reduce", ctx.dtype, policy, unroll, mode)
        kernel = ctx.kernel(name)
        block = ctx.block
        grid = ctx.occupancy_grid(kernel, block, elements_per_thread=PER_VECTOR[ctx.dtype] * unroll)
        partials, counters, out = _buffers(policy, grid)
        _check_aligned(ctx.x)
        n = numpy.uint32(ctx.n)

        def run():
            kernel((grid,), (block,), (ctx.x, n, partials, counters, out))

        width = PER_VECTOR[ctx.dtype]
        # Each accumulator adds whole vectors: at most ceil(vectors per thread / unroll) of them, + the tail element.
        chain = _ceil_div(_ceil_div(ctx.n, grid * block * width), unroll) * width + 1
        tree = unroll + 2 * _log2(block) + _ceil_div(grid, block)
        if policy == "SumCompensated":
            return Plan(run=run, result=lambda: out, launches=[{"kernel": name, "grid": grid, "block": block}],
                        depth=chain + _ceil_div(tree, 32) + 1, scratch=[partials, out], unit_roundoff=COMPENSATED_UNIT,
                        result_rounding=COMPENSATED_RESULT_ROUNDING)
        return Plan(
            run=run,
            result=lambda: out,
            launches=[{"kernel": name, "grid": grid, "block": block}],
            depth=chain + tree,
            scratch=[partials, out],
            unit_roundoff=_unit_roundoff(policy),
        )

    return prepare


def virtual_warps_for(n: int, dtype: str, unroll: int = UNROLL, max_virtual_warps: int = MAX_VIRTUAL_WARPS) -> int:
    """The fixed tree's virtual grid, in warps: a function of n and the dtype alone, never of the GPU."""
    return max(1, min(max_virtual_warps, _ceil_div(n, PER_VECTOR[dtype] * 32 * unroll)))


def fixed_tree_plan(policies: dict[str, str], unroll: int = UNROLL, max_virtual_warps: int = MAX_VIRTUAL_WARPS,
                    l1_mode: int | None = None):
    """The vectorised kernel on a virtual grid fixed by n; the physical grid only decides who computes what."""

    def prepare(ctx: LaunchContext) -> Plan:
        import numpy

        policy = policies[ctx.dtype]
        mode = load_mode(ctx.n, ctx.dtype) if l1_mode is None else l1_mode
        name = kernel_name("fixed_tree_reduce", ctx.dtype, policy, unroll, mode)
        kernel = ctx.kernel(name)
        block = ctx.block
        virtual_warps = virtual_warps_for(ctx.n, ctx.dtype, unroll, max_virtual_warps)
        per_thread = _ceil_div(ctx.n, 32 * virtual_warps)  # elements per virtual thread
        grid = ctx.occupancy_grid(kernel, block, elements_per_thread=per_thread)
        partials, counters, out = _buffers(policy, virtual_warps)
        _check_aligned(ctx.x)
        args = (numpy.uint32(ctx.n), numpy.uint32(virtual_warps))

        def run():
            kernel((grid,), (block,), (ctx.x, *args, partials, counters, out))

        width = PER_VECTOR[ctx.dtype]
        chain = _ceil_div(_ceil_div(per_thread, width), unroll) * width + 1  # as in vector_plan, per virtual thread
        depth = chain + unroll + 5 + _ceil_div(virtual_warps, FIXED_FINAL_LANES) + 10
        return Plan(
            run=run,
            result=lambda: out,
            launches=[{"kernel": name, "grid": grid, "block": block, "virtual_warps": virtual_warps}],
            depth=depth,
            scratch=[partials, out],
            unit_roundoff=_unit_roundoff(policy),
        )

    return prepare


def cub_max_prepare(ctx: LaunchContext) -> Plan:
    """CUB DeviceReduce::Max through cupy.cuda.cub."""
    from cupy.cuda import cub

    state = {}

    def run():
        result = cub.cub_reduction(ctx.x, cub.CUPY_CUB_MAX)
        if result is None:
            raise RuntimeError(f"cupy.cuda.cub.cub_reduction declined max of {ctx.dtype}")
        state["out"] = result

    return Plan(run=run, result=lambda: state["out"], launches=[{"kernel": "cub::DeviceReduce::Max", "grid": None, "block": None}],
                depth=0)


def _names(template: str, policies: dict[str, str]) -> list[str]:
    return [kernel_name(template, dtype, policy, UNROLL, mode) for dtype, policy in policies.items() for mode in (0, 1)]


def _variant(op, name, order, origin, template, policies, *, tolerance, notes, series="beyond", grid_independent=False,
             claim=None):
    plan = fixed_tree_plan if template == "fixed_tree_reduce" else vector_plan
    register(
        Variant(
            op=op,
            name=name,
            origin=origin,
            series=series,
            order=order,
            prepare=plan(policies),
            block_sizes=BLOCKS,
            bytes_model=BYTES,
            traffic="read",
            tolerance_model=tolerance,
            deterministic_expected=True,
            grid_independent=grid_independent,
            source=SOURCE,
            kernels=tuple(_names(template, policies)),
            dtypes=tuple(policies),
            notes=notes,
            counter_claim=claim,
        )
    )


TREE = "depth x 2^-24 x sum|x|, depth from the plan's grid (see kernels/reduce_vector.py)"
_variant("reduce", "vector_load_sum", 50, "primbench: 16-byte loads, 8 in flight per thread, one wave by occupancy, last block finishes",
         "vector_reduce", SUM, tolerance=TREE,
         notes="Run to run the same bits (no float atomics); a different grid or block size gives a different tree.",
         claim=("16-byte loads, 8 in flight: a quarter of the load instructions, and one launch", "warp_instructions"))
_variant("reduce", "vector_fixed_tree_deterministic", 51, "primbench: the 16-byte-load kernel on a virtual grid fixed by n (seed 004's fixed tree at full speed)",
         "fixed_tree_reduce", SUM, tolerance=TREE, grid_independent=True,
         notes=f"Bitwise the same for any block size and grid: a virtual grid of at most {MAX_VIRTUAL_WARPS} warps set by n, "
               f"then {FIXED_FINAL_LANES} fixed lanes and fixed shuffle trees.")
_variant("reduce", "vector_compensated_sum", 52, "primbench: the 16-byte-load kernel with compensated (Kahan-Babuska-Neumaier) accumulators, float64 between threads",
         "vector_reduce", COMPENSATED, tolerance="(chain + tree / 32 + 1) x 2^-48 x sum|x| + 2^-24 x |sum| (the compensated bound)",
         series="accuracy",
         notes="Seed 004 names Kahan summation for accurate sums; Kahan's own form loses its compensation when an "
               "element is larger than the running sum, so this is Neumaier's (TwoSum) form.")
_variant("reduce", "vector_float64_accumulate", 53, "primbench: the 16-byte-load kernel accumulating in float64 (float64 result)",
         "vector_reduce", DOUBLE, tolerance="depth x 2^-53 x sum|x|", series="accuracy",
         notes="Hopper runs float64 at half the float32 rate: free in a memory-bound kernel.")
_variant("reduce_max", "vector_max", 50, "primbench: the 16-byte-load kernel with max, padding with -inf, not 0 (a mistake seed 004's list of pitfalls warns of)",
         "vector_reduce", MAX, tolerance="exact: max picks an element",
         notes="Threads without data contribute -inf, never 0.")
register(
    Variant(
        op="reduce_max", name="cub_device_max", origin="CuPy's CUB (CCCL 3.1.2 in CuPy 14.2): DeviceReduce::Max through cupy.cuda.cub",
        series=BASELINE_SERIES, order=90, library=CUPY,
        prepare=cub_max_prepare, block_sizes=(), bytes_model=BYTES, traffic="read", tolerance_model="exact: max picks an element",
        deterministic_expected=True, dtypes=("float32", "float16", "int32"),
        notes="CuPy has no bfloat16 dtype, so CUB is not measured on bfloat16.",
    )
)
