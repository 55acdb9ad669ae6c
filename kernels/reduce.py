"""Reduce (float32 sum) variants: the seeds' kernels in kernels/reduce.cu, and CUB as the baseline.

Each `prepare` builds the complete operation a user would call: every pass down to one value,
and the memset of an atomic target. Allocation happens in `prepare`, never in `run`, so that
timing sees only GPU work; the exception is CUB, whose CuPy wrapper takes its output and
workspace from CuPy's memory pool on each call (host work only: the pool caches the blocks).

Tolerance model: summing in any order where each element passes through at most `depth`
dependent float32 additions errs by at most depth * 2^-24 * sum(|x|) (Higham's gamma bound).
Each plan computes its depth from its actual grid: the serial chain of a grid-stride loop, the
levels of the trees, and the serial chain of atomicAdds into one address.
"""

from __future__ import annotations

import math
import re

from primbench.api import BASELINE_SERIES, CUPY, KERNEL_DIR, LaunchContext, Plan, Variant, pow2, register_variant as register, ceil_div as _ceil_div

SOURCE = "reduce.cu"
BLOCKS = pow2(64, 1024)
BYTES = "n * itemsize"  # every element read once; the one-value output is negligible
_DEFINES = dict(re.findall(r"#define (FIXED_TREE_\w+) (\d+)", (KERNEL_DIR / SOURCE).read_text(encoding="utf-8")))
FIXED_TREE_TILE = int(_DEFINES["FIXED_TREE_TILE"])  # read from reduce.cu: one source of truth
FIXED_TREE_FINAL_THREADS = int(_DEFINES["FIXED_TREE_FINAL_THREADS"])


def _log2(v: int) -> int:
    return int(math.log2(v))


def _i32(v: int):
    import numpy

    return numpy.int32(v)


def _zero(array) -> None:
    """memset the atomic target to 0 on the current stream: part of the operation, so it is timed."""
    import cupy

    cupy.cuda.runtime.memsetAsync(array.data.ptr, 0, array.nbytes, cupy.cuda.get_current_stream().ptr)


def atomic_plan(kernel_name: str, shared_per_thread: bool, atomics_per_block: str):
    """One grid-stride kernel adding into one float with atomicAdd (seed 000 v1-v3, seed 004 blockSum).

    atomics_per_block: 'thread' (every thread), 'two_warps' (seed 000 v3) or 'block' (one per block).
    """

    def prepare(ctx: LaunchContext) -> Plan:
        import cupy

        kernel = ctx.kernel(kernel_name)
        block = ctx.block
        grid = ctx.one_wave_grid(block)
        out = cupy.empty(1, dtype=cupy.float32)
        shared = block * 4 if shared_per_thread else 0
        n = _i32(ctx.n)

        def run():
            _zero(out)
            kernel((grid,), (block,), (ctx.x, out, n), shared_mem=shared)

        atomics = {"thread": grid * block, "two_warps": grid * min(2, block // 32), "block": grid}[atomics_per_block]
        tree = 0 if atomics_per_block == "thread" else _log2(block)
        return Plan(
            run=run,
            result=lambda: out,
            launches=[{"kernel": "memset", "grid": None, "block": None}, {"kernel": kernel_name, "grid": grid, "block": block}],
            depth=_ceil_div(ctx.n, grid * block) + tree + atomics,
            scratch=[out],
        )

    return prepare


def partials_plan(kernel_expr: str, elements_per_thread: int, dynamic_shared: bool):
    """Harris's scheme (seed 002 reduce0-5): one partial per block, the same kernel again on the
    partials, until a single value is left."""

    def prepare(ctx: LaunchContext) -> Plan:
        import cupy

        block = ctx.block
        name = kernel_expr.format(block=block)
        kernel = ctx.kernel(name)
        levels = []
        source, count = ctx.x, ctx.n
        while True:
            grid = _ceil_div(count, block * elements_per_thread)
            target = cupy.empty(grid, dtype=cupy.float32)
            levels.append((grid, source, target, _i32(count)))
            if grid == 1:
                break
            source, count = target, grid
        shared = block * 4 if dynamic_shared else 0

        def run():
            for grid, src, dst, count in levels:
                kernel((grid,), (block,), (src, dst, count), shared_mem=shared)

        return Plan(
            run=run,
            result=lambda: levels[-1][2],
            launches=[{"kernel": name, "grid": level[0], "block": block} for level in levels],
            depth=len(levels) * (_log2(block) + elements_per_thread - 1),
            scratch=[level[2] for level in levels],
        )

    return prepare


def two_pass_plan(kernel_expr: str, dynamic_shared: bool):
    """A grid-stride kernel writes one partial per block; the same kernel with one block reduces
    the partials (seed 000 v4, seed 002 reduce6)."""

    def prepare(ctx: LaunchContext) -> Plan:
        import cupy

        block = ctx.block
        name = kernel_expr.format(block=block)
        kernel = ctx.kernel(name)
        grid = ctx.one_wave_grid(block)
        partials = cupy.empty(grid, dtype=cupy.float32)
        out = cupy.empty(1, dtype=cupy.float32)
        shared = block * 4 if dynamic_shared else 0
        n, count = _i32(ctx.n), _i32(grid)

        def run():
            kernel((grid,), (block,), (ctx.x, partials, n), shared_mem=shared)
            kernel((1,), (block,), (partials, out, count), shared_mem=shared)

        return Plan(
            run=run,
            result=lambda: out,
            launches=[{"kernel": name, "grid": grid, "block": block}, {"kernel": name, "grid": 1, "block": block}],
            depth=_ceil_div(ctx.n, grid * block) + _ceil_div(grid, block) + 2 * _log2(block),
            scratch=[partials, out],
        )

    return prepare


def fixed_tree_prepare(ctx: LaunchContext) -> Plan:
    """Seed 004's fixed tree: tiles of FIXED_TREE_TILE elements, one warp each, then one block of
    1024 threads; the grid only decides which warp takes which tile, never the sum."""
    import cupy

    tiles_kernel = ctx.kernel("seed004_fixed_tree_tiles")
    final_kernel = ctx.kernel("seed004_fixed_tree_final")
    block = ctx.block
    tiles = _ceil_div(ctx.n, FIXED_TREE_TILE)
    grid = ctx.one_wave_grid(block, elements_per_thread=FIXED_TREE_TILE // 32)
    partials = cupy.empty(tiles, dtype=cupy.float32)
    out = cupy.empty(1, dtype=cupy.float32)
    n, count = _i32(ctx.n), _i32(tiles)

    def run():
        tiles_kernel((grid,), (block,), (ctx.x, partials, n))
        final_kernel((1,), (FIXED_TREE_FINAL_THREADS,), (partials, out, count))

    return Plan(
        run=run,
        result=lambda: out,
        launches=[
            {"kernel": "seed004_fixed_tree_tiles", "grid": grid, "block": block},
            {"kernel": "seed004_fixed_tree_final", "grid": 1, "block": FIXED_TREE_FINAL_THREADS},
        ],
        depth=FIXED_TREE_TILE // 32 + 5 + _ceil_div(tiles, FIXED_TREE_FINAL_THREADS) + _log2(FIXED_TREE_FINAL_THREADS),
        scratch=[partials, out],
    )


def cub_prepare(ctx: LaunchContext) -> Plan:
    """CUB DeviceReduce::Sum through cupy.cuda.cub (CuPy's CUB path for a full 1-D reduction)."""
    from cupy.cuda import cub

    state = {}

    def run():
        # dtype given: without it CuPy declines int32 (its sum would promote to int64).
        result = cub.cub_reduction(ctx.x, cub.CUPY_CUB_SUM, dtype=ctx.x.dtype)
        if result is None:
            raise RuntimeError("cupy.cuda.cub.cub_reduction declined this input (CuPy built without CUB?)")
        state["out"] = result

    # CUB's grid and items per thread are its own; assume a chain as long as one thread per
    # 256 elements of a one-wave grid would give, plus two trees: a generous bound.
    depth = _ceil_div(ctx.n, ctx.sm_count * 256) + 64
    return Plan(
        run=run,
        result=lambda: state["out"],
        launches=[{"kernel": "cub::DeviceReduce::Sum", "grid": None, "block": None}],
        depth=depth,
        scratch=[],
    )


TOLERANCE = "depth x 2^-24 x sum|x|, depth from the plan's grid (see kernels/reduce.py)"
VOLATILE_HAZARD = (
    "The last warp relies on implicit warp-synchronous execution through a volatile pointer. "
    "Since Volta (independent thread scheduling) NVIDIA no longer guarantees it; the safe form "
    "(the _syncwarp variant) orders each step with __syncwarp()."
)


def _reduce(name, order, series, origin, prepare, kernels, *, block_sizes=BLOCKS, deterministic=True, notes="", hazard=None,
            dtypes=("float32",), grid_independent=False, claim=None, library=None):
    register(
        Variant(
            op="reduce",
            name=name,
            origin=origin,
            series=series,
            order=order,
            prepare=prepare,
            block_sizes=block_sizes,
            bytes_model=BYTES,
            traffic="read",
            tolerance_model=TOLERANCE,
            deterministic_expected=deterministic,
            source=SOURCE if kernels else None,
            kernels=tuple(kernels),
            notes=notes,
            hazard=hazard,
            dtypes=dtypes,
            grid_independent=grid_independent,
            counter_claim=claim,
            library=library,
        )
    )


def _per_block(expr: str) -> list[str]:
    return [expr.format(block=b) for b in BLOCKS]


# Seed 002: the Harris progression, the report's main story.
_reduce("reduce0_interleaved_divergent", 10, "harris", "seed 002 reduce0 / Harris kernel 1: interleaved addressing, divergent branch",
        partials_plan("reduce0_interleaved_divergent", 1, True), ["reduce0_interleaved_divergent"])
_reduce("reduce1_interleaved_strided", 11, "harris", "seed 002 reduce1 / Harris kernel 2: interleaved addressing, strided index (bank conflicts)",
        partials_plan("reduce1_interleaved_strided", 1, True), ["reduce1_interleaved_strided"], claim=("no divergence in the tree: whole warps idle instead of half their lanes", "idle_lanes"))
_reduce("reduce2_sequential", 12, "harris", "seed 002 reduce2 / Harris kernel 3: sequential addressing",
        partials_plan("reduce2_sequential", 1, True), ["reduce2_sequential"], claim=("no shared-memory bank conflicts", "shared_load_bank_conflicts"))
_reduce("reduce3_first_add_during_load", 13, "harris", "seed 002 reduce3 / Harris kernel 4: first add during global load",
        partials_plan("reduce3_first_add_during_load", 2, True), ["reduce3_first_add_during_load"], claim=("no idle threads: half the blocks, each thread adds two elements on load", "warp_instructions"))
_reduce("reduce4_unroll_last_warp_volatile", 14, "harris", "seed 002 reduce4 / Harris kernel 5: last warp unrolled (volatile)",
        partials_plan("reduce4_unroll_last_warp<false>", 2, True), ["reduce4_unroll_last_warp<false>"], hazard=VOLATILE_HAZARD, claim=("less instruction overhead: the last warp's loop unrolled", "warp_instructions"))
_reduce("reduce4_unroll_last_warp_syncwarp", 15, "harris", "reduce4 made safe: __syncwarp() between the last-warp steps (primbench)",
        partials_plan("reduce4_unroll_last_warp<true>", 2, True), ["reduce4_unroll_last_warp<true>"],
        notes="Not in the seed: the form NVIDIA's guidance asks for since Volta.")
_reduce("reduce5_complete_unroll_volatile", 16, "harris", "seed 002 reduce5 / Harris kernel 6: completely unrolled, block size as a template parameter",
        partials_plan("reduce5_complete_unroll<{block}, false>", 2, False), _per_block("reduce5_complete_unroll<{block}, false>"),
        hazard=VOLATILE_HAZARD, notes="The seed gives no time for reduce5.",
        claim=("less loop overhead: the whole tree unrolled for a fixed block size", "warp_instructions"))
_reduce("reduce5_complete_unroll_syncwarp", 17, "harris", "reduce5 made safe: __syncwarp() between the last-warp steps (primbench)",
        partials_plan("reduce5_complete_unroll<{block}, true>", 2, False), _per_block("reduce5_complete_unroll<{block}, true>"),
        notes="Not in the seed.")
_reduce("reduce6_grid_stride_shuffle", 18, "harris", "seed 002 reduce6 / Harris kernel 7: grid-stride loop (many elements per thread) + warp shuffle",
        two_pass_plan("reduce6_grid_stride_shuffle<{block}>", False), _per_block("reduce6_grid_stride_shuffle<{block}>"),
        notes="The article's code lost its operators in publication; primbench implements the evident intent.",
        claim=("many elements per thread: fewer blocks, less tree work per element", "warp_instructions"))

# Seed 000: the four versions of the introductory article.
_reduce("seed000_v1_global_atomic", 30, "seed000", "seed 000 v1: grid-stride sum per thread, one global atomicAdd per thread",
        atomic_plan("seed000_v1_atomic", False, "thread"), ["seed000_v1_atomic"], deterministic=False)
_reduce("seed000_v2_shared_tree_atomic", 31, "seed000", "seed 000 v2: shared-memory tree, one atomicAdd per block",
        atomic_plan("seed000_v2_shared_tree", True, "block"), ["seed000_v2_shared_tree"], deterministic=False)
_reduce("seed000_v3_warp_shuffle_atomic", 32, "seed000", "seed 000 v3: tree down to a warp, warp shuffle, one atomicAdd per warp",
        atomic_plan("seed000_v3_warp_shuffle", True, "two_warps"), ["seed000_v3_warp_shuffle"], deterministic=False,
        notes="The seed lets every warp add its slice of shared memory, counting values twice; primbench lets only the two warps holding the 64 partials finish.")
_reduce("seed000_v4_multilevel", 33, "seed000", "seed 000 v4: multi-level, block partials then one block, no atomics",
        two_pass_plan("seed000_v4_block_partials", True), ["seed000_v4_block_partials"])

# Seed 004: the patterns chapter.
_reduce("seed004_block_sum_atomic", 40, "seed004", "seed 004 blockSum: grid-stride, warp shuffle, one atomicAdd per block",
        atomic_plan("seed004_block_sum_atomic", False, "block"), ["seed004_block_sum_atomic"], deterministic=False)
_reduce("seed004_fixed_tree_deterministic", 41, "seed004", "seed 004 fixed reduction tree: two stages, no atomics, tree shape set by n alone",
        fixed_tree_prepare, ["seed004_fixed_tree_tiles", "seed004_fixed_tree_final"], grid_independent=True,
        notes=f"Tiles of {FIXED_TREE_TILE} elements, one warp each; the final stage is always one block of {FIXED_TREE_FINAL_THREADS} threads.")

# The baseline a CuPy user gets (kernels/cccl.py has today's CCCL through cuda.compute).
_reduce("cub_device_reduce", 90, BASELINE_SERIES, "CuPy's CUB (CCCL 3.1.2 in CuPy 14.2): DeviceReduce::Sum through cupy.cuda.cub, "
        "the path cupy.sum takes", cub_prepare, [], block_sizes=(), dtypes=("float32", "int32"), library=CUPY,
        notes="The library chooses its grid and block. Not measured on float16 or bfloat16: CUB through CuPy would "
              "accumulate float16 in float16 (overflowing at large n), and CuPy has no bfloat16 dtype.")
