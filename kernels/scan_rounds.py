"""The persistent scan with no look-back chain (kernels/scan_rounds.cu): one cooperative
wave of blocks, block b scanning tiles b, b + G, b + 2G, ...; every block reads back each round's
G tile sums and keeps the sum of all earlier rounds itself, so no tile waits for another's prefix.

Tolerance model (float32), as in kernels/scan.py: depth x 2^-24 x (|x_0| + ... + |x_i|), the depth
an upper bound on the dependent roundings between any input and an output (_longest_chain below).
"""

from __future__ import annotations

from primbench.api import CaseUnsupported, LaunchContext, Plan, Variant, register_variant as register
# The plan calls these by their private names (a plan's source is part of its variant's hash).
from primbench.api import ceil_div as _ceil_div, check_aligned_16 as _check_aligned
from primbench.kernels.scan import BYTES, CTYPE, DTYPES, _fast_tile, _output, _shared_optin_limit, _u32

SOURCE = "scan_rounds.cu"
BLOCKS = (256, 512, 1024)
# Kernels: "shared" (scan_round_sums: the tiles that wait for their round stay in shared memory) and
# "held" (scan_round_sums_held, at most 512 threads: they wait in registers, and every shared buffer
# streams). A setting: (kernel, 16-byte vectors per thread, tile buffers, lag in rounds, status words
# per lane of the gathering warp); the plan takes the first that takes the block and fits the GPU's
# shared memory per block. A tile is block x vecs x 4 elements; the grid is at most 32 x words blocks.
# Chosen with tools/tune/scan_rounds.py on the H200 (docs/perf-notes.md, "Every block adds up every
# round"; 2^28 int32 / float32):
#   held 6 x 3, lag 2: 48 KB tiles at block 512, 144 KB (an A100's 163 KB too), three in flight:
#     551.6 / 549.6 us, 92 % of copy (512 threads may hold 128 registers: two waiting tiles);
#   shared 3 x 4, lag 2: block 1024's, 48 KB tiles, 192 KB, one in flight: 608.1 / 615.1 us;
#   shared 2 x 5, lag 2: block 1024 on an A100 (160 KB), 32 KB tiles.
SETTINGS = (("held", 6, 3, 2, 5), ("shared", 3, 4, 2, 5), ("shared", 2, 5, 2, 5))
KERNELS = {"shared": ("scan_round_sums", 1024), "held": ("scan_round_sums_held", 512)}  # template, most threads
# Roundings charged per round for the running sum. The true chain is one addition a round; 11 is
# the first model's (recorded runs carry it, and the variant's identity hash covers the constant),
# so it stays: a looser bound, still a bound.
ROUND_ROUNDINGS = 11
FORM = 0  # kernels/scan_rounds.cu's diagnostic bits; the registered kernel is form 0


def _name(t: str, kernel: str, vecs: int, stages: int, lag: int, gather: int, form: int = FORM) -> str:
    return f"{KERNELS[kernel][0]}<{t}, {vecs}, {stages}, {lag}, {gather}, {form}>"


def _choose(ctx: LaunchContext, settings, form: int):
    """(kernel, name, setting, dynamic bytes) for the first setting whose kernel takes the block
    and whose buffers and static shared memory fit this device's opt-in limit, the kernel's dynamic
    maximum raised to exactly its buffers (the launch fails otherwise past 48 KB minus the static part)."""
    limit = _shared_optin_limit(ctx)
    for setting in settings:
        kind, vecs, stages = setting[:3]
        if ctx.block > KERNELS[kind][1]:
            continue
        name = _name(CTYPE[ctx.dtype], *setting, form)
        kernel = ctx.kernel(name)
        dynamic = stages * _fast_tile(ctx, vecs) * ctx.x.itemsize
        if dynamic + int(kernel.shared_size_bytes) <= limit:
            kernel.max_dynamic_shared_size_bytes = dynamic
            return kernel, name, setting, dynamic
    raise CaseUnsupported(f"block {ctx.block}: no setting of {settings} takes this block and fits {limit / 1024:.0f} KB "
                          "of shared memory per block")


def _longest_chain(vecs: int, gather: int) -> int:
    """Roundings on the longest path from an input to an output, besides the running sum's one a
    round: an element of an earlier tile goes through its thread's sequential sum (4 x vecs), the
    warp's and the block's 5-level trees (its tile's sum), the gathering lane's sequential sum of
    `gather` words and a 5-level tree (the round's sums), then the tile's prefix, its warp offset and
    the output's own addition (3). Elements of the same tile take shorter paths: the in-tile scan
    (3 + 5 + vecs + 2) and the same offset additions."""
    return 4 * vecs + 5 + 5 + gather + 5 + 3


def round_sums_plan(settings=SETTINGS, form: int = FORM, grid: int | None = None, spins=None):
    """One cooperative wave of persistent blocks (kernels/scan_rounds.cu). The grid is the
    occupancy wave, never more blocks than tiles or than the gathering warp reads (32 x words), and
    never more than one wave, whatever the context's grid scale: a block waits for every other
    block's tile sums, so all must be resident, which the cooperative launch guarantees (CuPy would
    shrink a larger grid, with a warning; this plan never asks for one). `grid`: a fixed smaller
    grid (the tools' one-block runs); `spins`: a one-element uint64 array the diagnostic form counts
    its re-reads in."""

    def prepare(ctx: LaunchContext) -> Plan:
        import cupy
        from cupy.cuda import driver

        kernel, name, (kind, vecs, stages, lag, gather), shared = _choose(ctx, settings, form)
        tiles = _ceil_div(ctx.n, _fast_tile(ctx, vecs))
        per_sm = driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, ctx.block, shared)
        if per_sm < 1:
            raise CaseUnsupported(f"block {ctx.block}: the kernel cannot be resident on an SM with {shared} bytes of shared memory")
        wave = ctx.sm_count * per_sm
        blocks = min(wave, max(1, round(wave * min(ctx.grid_scale, 1.0))), 32 * gather, tiles)
        if grid is not None:
            blocks = max(1, min(grid, blocks))
        rounds = _ceil_div(tiles, blocks)
        out = _output(ctx)
        status = cupy.zeros(tiles, dtype=cupy.uint64)  # epoch 0: nothing published
        counter = cupy.zeros(1, dtype=cupy.uint64) if spins is None else spins  # the diagnostic form's only
        _check_aligned(ctx.x, out)
        epoch = {"value": 0}

        def run():
            # A new epoch per call: what earlier calls left in `status` reads as unpublished.
            epoch["value"] = epoch["value"] % (2**30 - 1) + 1
            kernel.kernel((blocks,), (ctx.block,), (ctx.x, out, status, _u32(ctx.n), _u32(epoch["value"]), _u32(tiles), counter),
                          shared_mem=shared, enable_cooperative_groups=True)

        return Plan(run=run, result=lambda: out,
                    launches=[{"kernel": name, "grid": blocks, "block": ctx.block, "tiles": tiles, "rounds": rounds,
                               "shared_bytes": shared, "stages": stages, "lag": lag, "held_in": kind, "cooperative": True}],
                    depth=_longest_chain(vecs, gather) + ROUND_ROUNDINGS * (rounds + 1), scratch=[out])

    return prepare


register(Variant(
    op="scan", name="round_sums_async_copy", series="beyond", order=63,
    origin="primbench: a persistent scan with no look-back chain: every block adds up every round's tile sums",
    prepare=round_sums_plan(), source=SOURCE,
    kernels=tuple(_name(CTYPE[dtype], *setting) for dtype in DTYPES for setting in SETTINGS),
    block_sizes=BLOCKS, bytes_model=BYTES, traffic="read_write", dtypes=DTYPES,
    tolerance_model="depth x 2^-24 x prefix sum|x| (see kernels/scan_rounds.py)", deterministic_expected=True,
    work_span=("n", "log2 B + rounds"),
    notes="One cooperative wave of blocks; block b scans tiles b, b + G, b + 2G, ... copied into shared memory by "
          "cp.async. Each block publishes its tile's sum and reads back the whole round's sums two iterations later, "
          "so every block keeps the sum of all earlier rounds itself and no tile waits for another tile's prefix. "
          "At block 512 the waiting tiles are held in registers and every shared buffer streams (its best); at 1024 "
          "they wait in shared memory. float32 results are the same from run to run (every block adds the same sums "
          "in the same order).",
))
