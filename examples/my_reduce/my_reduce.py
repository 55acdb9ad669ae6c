"""A plugin: one variant of primbench's built-in `reduce` op, with its CUDA source beside it.

primbench imports this file (a config's `plugins:` or `--plugin`), and the module-level
register_variant call adds the variant. The op's inputs, reference and checks are the built-in
reduce's, so the variant is verified and timed exactly as the built-in ones are.
"""

from pathlib import Path

from primbench.api import LaunchContext, Plan, Variant, ceil_div, check_aligned_16, register_variant

SOURCE = Path(__file__).with_name("my_reduce.cu")
BLOCKS = (128, 256, 512)


def prepare(ctx: LaunchContext) -> Plan:
    """Allocate the output, size the grid, and return the whole operation: zero, then one launch."""
    import cupy
    import numpy

    check_aligned_16(ctx.x)  # float4 loads need 16-byte-aligned input
    name = f"my_float4_reduce<{ctx.block}>"
    kernel = ctx.kernel(name)
    grid = ctx.occupancy_grid(kernel, ctx.block, elements_per_thread=8)
    out = cupy.empty(1, dtype=cupy.float32)
    n = numpy.int32(ctx.n)

    def run():
        out.fill(0)  # part of the operation (an atomic target), so it is timed with it
        kernel((grid,), (ctx.block,), (ctx.x, out, n))

    per_accumulator = ceil_div(ctx.n, 8 * grid * ctx.block) + 1  # float4s one accumulator adds in turn
    return Plan(
        run=run,
        result=lambda: out,
        launches=[{"kernel": "fill", "grid": None, "block": None}, {"kernel": name, "grid": grid, "block": ctx.block}],
        # The longest chain of dependent float additions an element goes through: its float4's
        # 2 levels, the accumulator's serial chain, a + b, the two warp trees, one atomic per block.
        depth=2 + per_accumulator + 1 + 10 + grid,
        scratch=[out],
    )


register_variant(Variant(
    op="reduce",
    name="my_float4_atomic",
    origin="examples/my_reduce: a user's own kernel (float4 loads, two accumulators, one atomic per block)",
    series="plugin",
    order=95,
    prepare=prepare,
    block_sizes=BLOCKS,
    bytes_model="n * itemsize",
    tolerance_model="depth x unit roundoff x sum|x|: the chain in prepare's depth",
    deterministic_expected=False,  # the blocks' atomicAdds land in any order
    source=str(SOURCE),
    kernels=tuple(f"my_float4_reduce<{block}>" for block in BLOCKS),
))
