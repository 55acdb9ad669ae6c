"""Scan (inclusive prefix sum) variants: kernels/scan.cu from seed 004's Hillis-Steele block scan to
a single-pass decoupled look-back scan, and CUB's inclusive scan as the baseline.

Each `prepare` builds the whole operation: every pass of a multi-block scan. The output is a new
array of n elements; the input is never written (CUB's CuPy wrapper scans in place: see
cub_scan_prepare).

Tolerance model (float32): each output y_i is a sum of x_0..x_i in which every element passes
through at most `depth` dependent roundings, so |y_i - exact| <= depth x 2^-24 x (|x_0| + ... + |x_i|).
The depth is the plan's: the levels of its block scan, the passes of its recursion, and, for
the look-back, the chain of tile prefixes (up to 7 roundings per tile: a loose worst case; the
exact input, small integers whose every partial sum is exact, is what catches a wrong offset).
"""

from __future__ import annotations

import math

from primbench.api import BASELINE_SERIES, CUPY, LaunchContext, Plan, Variant, pow2, register_variant as register
# The plans call these by their private names (a plan's source is part of its variant's hash).
from primbench.api import ceil_div as _ceil_div, check_aligned_16 as _check_aligned

SOURCE = "scan.cu"
DTYPES = ("int32", "float32")
CTYPE = {"int32": "int", "float32": "float"}
BYTES = "2 * n * itemsize"  # every element read once and written once
# 16-byte vectors per thread in the fast tile scan: a tile is block x FAST_VECS x 4 elements.
# Chosen with tools/tune/scan.py on the H200 (docs/perf-notes.md).
FAST_VECS = 8
# Loads per lane in one look-back window: the window covers LOOKBACK_WINDOW x 32 tiles.
LOOKBACK_WINDOW = 1
FAST_BLOCKS = pow2(128, 1024)
TILE_BLOCKS = pow2(64, 1024)
LOOKBACK_ROUNDINGS_PER_TILE = 7  # tile prefix = (window sum: 5-level tree + 1) + aggregate


def _log2_ceil(v: int) -> int:
    return max(0, math.ceil(math.log2(max(v, 1))))


def _u32(v: int):
    import numpy

    return numpy.uint32(v)


def _output(ctx: LaunchContext):
    import cupy

    return cupy.empty(ctx.n, dtype=ctx.x.dtype)


def single_block_prepare(ctx: LaunchContext) -> Plan:
    """Seed 004's scan<<<1, n>>>: one block of ctx.block >= n threads, shared memory for the block."""
    import numpy

    name = f"scan_hillis_steele_single_block<{CTYPE[ctx.dtype]}>"
    kernel = ctx.kernel(name)
    out = _output(ctx)
    shared = ctx.block * ctx.x.itemsize

    def run():
        kernel((1,), (ctx.block,), (ctx.x, out, numpy.int32(ctx.n)), shared_mem=shared)

    return Plan(run=run, result=lambda: out, launches=[{"kernel": name, "grid": 1, "block": ctx.block}],
                depth=_log2_ceil(ctx.n) + 1, scratch=[out])


# Block scans for the multi-block scan: kernel template, elements per thread, shared words per
# element (padding included), and the roundings one level adds to an element.
TILE_SCANS = {
    "hillis_steele": ("tile_scan_hillis_steele<{t}>", 1, 1.0, lambda tile: _log2_ceil(tile) + 1),
    "blelloch": ("tile_scan_blelloch<{t}, false>", 2, 1.0, lambda tile: 2 * _log2_ceil(tile) + 2),
    "blelloch_padded": ("tile_scan_blelloch<{t}, true>", 2, 33 / 32, lambda tile: 2 * _log2_ceil(tile) + 2),
    "warp_shuffle": ("tile_scan_warp_shuffle<{t}>", 1, 0.0, lambda tile: 5 + 5 + 2),
}


def tile_scan_plan(block_scan: str):
    """Scan, then add offsets: scan each tile and write its total; scan the totals the same way
    (recursively, in place) until one tile holds them; add each tile's scanned offset back down.
    Traffic: about 4n (read, write, then read and write again to add the offsets)."""

    def prepare(ctx: LaunchContext) -> Plan:
        import cupy

        template, per_thread, shared_words, level_depth = TILE_SCANS[block_scan]
        name = template.format(t=CTYPE[ctx.dtype])
        add_name = f"add_tile_offsets<{CTYPE[ctx.dtype]}>"
        scan_kernel, add_kernel = ctx.kernel(name), ctx.kernel(add_name)
        block = ctx.block
        tile = block * per_thread
        shared = int(math.ceil(tile * shared_words)) * ctx.x.itemsize
        out = _output(ctx)
        # Level k scans `counts[k]` values held in `arrays[k]`, writing one total per tile to arrays[k + 1].
        counts, arrays = [ctx.n], [out]
        while True:
            tiles = _ceil_div(counts[-1], tile)
            arrays.append(cupy.empty(tiles, dtype=ctx.x.dtype))
            if tiles == 1:
                break
            counts.append(tiles)
        sources = [ctx.x] + arrays[1:-1]  # level 0 reads the input, the others scan the totals in place
        launches = [{"kernel": name, "grid": _ceil_div(c, tile), "block": block} for c in counts]
        launches += [{"kernel": add_name, "grid": _ceil_div(c - tile, 256), "block": 256}
                     for c in reversed(counts) if c > tile]

        def run():
            for level, count in enumerate(counts):
                scan_kernel((_ceil_div(count, tile),), (block,), (sources[level], arrays[level], arrays[level + 1], _u32(count)),
                            shared_mem=shared)
            for level in reversed(range(len(counts))):
                count = counts[level]
                if count > tile:
                    add_kernel((_ceil_div(count - tile, 256),), (256,), (arrays[level], arrays[level + 1], _u32(count), _u32(tile)))

        return Plan(run=run, result=lambda: out, launches=launches,
                    depth=len(counts) * level_depth(tile) + 1, scratch=arrays)

    return prepare


def _fast_tile(ctx: LaunchContext, vecs: int) -> int:
    return ctx.block * vecs * 4


def _fast_depth(ctx: LaunchContext, vecs: int) -> int:
    """Roundings inside one tile of the fast scan: the vector, the warp scan, the step chain, the warps."""
    return 3 + 5 + vecs + 1 + _log2_ceil(ctx.block // 32) + 2


def _lookback_name(t: str, vecs: int, window: int, prefetch_status: bool) -> str:
    return f"scan_decoupled_lookback<{t}, {vecs}, {window}, {'true' if prefetch_status else 'false'}>"


def lookback_plan(vecs: int = FAST_VECS, window: int = LOOKBACK_WINDOW, prefetch_status: bool = False):
    """One pass, one tile per block, tiles chained by decoupled look-back; `prefetch_status`: the
    predecessor's status line is fetched into L2 while the tile's loads are in flight
    (kernels/scan.cu, LookBackPrefix)."""

    def prepare(ctx: LaunchContext) -> Plan:
        import cupy

        name = _lookback_name(CTYPE[ctx.dtype], vecs, window, prefetch_status)
        kernel = ctx.kernel(name)
        tiles = _ceil_div(ctx.n, _fast_tile(ctx, vecs))
        out = _output(ctx)
        status = cupy.zeros(tiles, dtype=cupy.uint64)  # epoch 0: nothing published
        counter = cupy.zeros(1, dtype=cupy.uint32)  # the tile ticket; the last block resets it
        _check_aligned(ctx.x, out)
        epoch = {"value": 0}

        def run():
            # A new epoch per call: what earlier calls left in `status` reads as unpublished.
            epoch["value"] = epoch["value"] % (2**30 - 1) + 1
            kernel((tiles,), (ctx.block,), (ctx.x, out, status, counter, _u32(ctx.n), _u32(epoch["value"])))

        return Plan(run=run, result=lambda: out, launches=[{"kernel": name, "grid": tiles, "block": ctx.block}],
                    depth=_fast_depth(ctx, vecs) + LOOKBACK_ROUNDINGS_PER_TILE * tiles, scratch=[out])

    return prepare


def reduce_then_scan_plan(vecs: int = FAST_VECS):
    """Three passes: the sum of each tile; one block scans those sums; each tile is scanned again
    from its offset. Reads the input twice: 3n of traffic against the look-back's 2n."""

    def prepare(ctx: LaunchContext) -> Plan:
        import cupy

        t = CTYPE[ctx.dtype]
        names = (f"tile_reduce<{t}, {vecs}>", f"scan_tile_sums_exclusive<{t}>", f"tile_scan_with_prefix<{t}, {vecs}>")
        reduce_kernel, sums_kernel, scan_kernel = (ctx.kernel(name) for name in names)
        tiles = _ceil_div(ctx.n, _fast_tile(ctx, vecs))
        out = _output(ctx)
        sums = cupy.empty(tiles, dtype=ctx.x.dtype)
        _check_aligned(ctx.x, out)
        n = _u32(ctx.n)
        sums_block = 1024

        def run():
            reduce_kernel((tiles,), (ctx.block,), (ctx.x, sums, n))
            sums_kernel((1,), (sums_block,), (sums, _u32(tiles)))
            scan_kernel((tiles,), (ctx.block,), (ctx.x, out, sums, n))

        sums_depth = (vecs * 4 + 10) + _ceil_div(tiles, sums_block * 4) + 4 + 5 + 5 + 2
        return Plan(run=run, result=lambda: out,
                    launches=[{"kernel": names[0], "grid": tiles, "block": ctx.block},
                              {"kernel": names[1], "grid": 1, "block": sums_block},
                              {"kernel": names[2], "grid": tiles, "block": ctx.block}],
                    depth=_fast_depth(ctx, vecs) + sums_depth, scratch=[out, sums])

    return prepare


# The persistent look-back scan fed by asynchronous copies (kernels/scan_async.cu). Its
# tiles are smaller than the register-held scan's (16 elements per thread, not 32): the tile
# buffers live in shared memory, 1024 x 16 x 4 bytes = 64 KB each, and the copies in flight, not
# the tile's size, keep DRAM busy. Buffers: 3 where they fit (192 KB at block 1024: two tiles in
# flight while one is scanned), else 2 (128 KB: an A100's 163 KB). docs/perf-notes.md, "Async
# copies into shared memory".
ASYNC_SOURCE = "scan_async.cu"
ASYNC_VECS = 4
ASYNC_STAGES = (3, 2)  # the first that fits the GPU's shared memory per block


def _async_name(t: str, vecs: int, stages: int) -> str:
    return f"scan_lookback_async_copy<{t}, {vecs}, {stages}>"


def _shared_optin_limit(ctx: LaunchContext) -> int:
    """The opt-in shared memory per block: the device's own where CuPy can ask it, never above the context's."""
    try:
        import cupy

        return min(ctx.shared_per_block_optin, int(cupy.cuda.Device().attributes["MaxSharedMemoryPerBlockOptin"]))
    except Exception:  # no device to ask (the context's figure is the runner's, from the same device)
        return ctx.shared_per_block_optin


def async_kernel_with_shared(ctx: LaunchContext, stages: tuple, name_of):
    """(kernel, name, stages, dynamic bytes) for the first of `stages` whose buffers and the kernel's
    static shared memory fit this device's opt-in limit at ctx.block, with that kernel's maximum
    dynamic shared memory raised to exactly its buffers (any size: CUDA's default maximum is
    48 KB minus the static part, which at block 256 x 3 buffers of 16 KB was 144 bytes short:
    the launch failed with CUDA_ERROR_INVALID_VALUE). The attribute is set on the very object
    that launches. CaseUnsupported where no choice fits."""
    from primbench.api import CaseUnsupported

    limit = _shared_optin_limit(ctx)
    for count in stages:
        name = name_of(count)
        kernel = ctx.kernel(name)
        dynamic = count * tile_bytes_of(ctx, name)
        static = int(kernel.shared_size_bytes)
        if dynamic + static <= limit:
            kernel.max_dynamic_shared_size_bytes = dynamic  # whatever the size: see above
            return kernel, name, count, dynamic
    raise CaseUnsupported(f"block {ctx.block}: no buffer count of {stages} fits {limit / 1024:.0f} KB of shared memory per block")


def tile_bytes_of(ctx: LaunchContext, name: str) -> int:
    """One tile's bytes for an async-copy kernel name (its second template argument is kVecs)."""
    vecs = int(name.split("<", 1)[1].split(",")[1])
    return _fast_tile(ctx, vecs) * ctx.x.itemsize


def async_copy_plan(vecs: int = ASYNC_VECS, stages: tuple = ASYNC_STAGES):
    """One pass, one wave of persistent blocks (by occupancy) looping over tiles taken by atomic
    ticket; each block keeps its next tiles in flight as cp.async copies into shared-memory buffers
    while it scans and looks back (kernels/scan_async.cu). `stages`: buffers per block, the first
    of them that fits the GPU's shared memory per block."""

    def prepare(ctx: LaunchContext) -> Plan:
        import cupy

        kernel, name, chosen, shared = async_kernel_with_shared(ctx, stages, lambda s: _async_name(CTYPE[ctx.dtype], vecs, s))
        tile = _fast_tile(ctx, vecs)
        tiles = _ceil_div(ctx.n, tile)
        grid = ctx.occupancy_grid(kernel, ctx.block, elements_per_thread=vecs * 4, dynamic_shared=shared)
        out = _output(ctx)
        status = cupy.zeros(tiles, dtype=cupy.uint64)  # epoch 0: nothing published
        counter = cupy.zeros(1, dtype=cupy.uint32)  # the tile ticket; the block drawing the last resets it
        _check_aligned(ctx.x, out)
        epoch = {"value": 0}

        def run():
            # A new epoch per call: what earlier calls left in `status` reads as unpublished.
            epoch["value"] = epoch["value"] % (2**30 - 1) + 1
            kernel((grid,), (ctx.block,), (ctx.x, out, status, counter, _u32(ctx.n), _u32(epoch["value"]), _u32(tiles)),
                   shared_mem=shared)

        return Plan(run=run, result=lambda: out,
                    launches=[{"kernel": name, "grid": grid, "block": ctx.block, "tiles": tiles, "shared_bytes": shared,
                               "stages": chosen}],
                    depth=_fast_depth(ctx, vecs) + LOOKBACK_ROUNDINGS_PER_TILE * tiles, scratch=[out])

    return prepare


# CUB's tile and its look-back chain are not ours to see: the float tolerance assumes tiles of at
# least this many elements (CUB's scan tiles hold thousands) and our look-back's roundings per tile.
CUB_ASSUMED_MIN_TILE = 128


def cub_scan_prepare(ctx: LaunchContext) -> Plan:
    """CUB DeviceScan::InclusiveSum through cupy.cuda.cub.device_scan, which scans in place: the plan
    copies the input once (not timed); `restore` copies it back before each verified run. Timed
    runs rescan their own output, which costs CUB the same: integer and float additions take the
    same time whatever the values."""
    from cupy.cuda import cub

    buffer = ctx.x.copy()

    def run():
        cub.device_scan(buffer, cub.CUPY_CUB_CUMSUM)

    def restore():
        buffer[...] = ctx.x

    tiles = _ceil_div(ctx.n, CUB_ASSUMED_MIN_TILE)
    return Plan(run=run, result=lambda: buffer, launches=[{"kernel": "cub::DeviceScan::InclusiveSum", "grid": None, "block": None}],
                depth=LOOKBACK_ROUNDINGS_PER_TILE * tiles + 64, restore=restore)


def _kernel_names(template: str) -> tuple[str, ...]:
    return tuple(template.format(t=CTYPE[dtype]) for dtype in DTYPES)


def _fast_names(vecs: int = FAST_VECS, window: int = LOOKBACK_WINDOW) -> tuple[str, ...]:
    names = []
    for dtype in DTYPES:
        t = CTYPE[dtype]
        names += [_lookback_name(t, vecs, window, False), _lookback_name(t, vecs, window, True), f"tile_reduce<{t}, {vecs}>",
                  f"scan_tile_sums_exclusive<{t}>", f"tile_scan_with_prefix<{t}, {vecs}>"]
    return tuple(names)


def _register(name, order, series, origin, prepare, kernel_names, *, block_sizes, work_span, notes="",
              deterministic=True, max_n_per_block=None, tolerance="depth x 2^-24 x prefix sum|x| (see kernels/scan.py)"):
    register(Variant(
        op="scan", name=name, origin=origin, series=series, order=order, prepare=prepare, block_sizes=block_sizes,
        bytes_model=BYTES, tolerance_model=tolerance, deterministic_expected=deterministic,
        source=SOURCE if kernel_names else None, kernels=kernel_names, dtypes=DTYPES, notes=notes,
        work_span=work_span, max_n_per_block=max_n_per_block, traffic="read_write",
    ))


_register("seed004_hillis_steele_single_block", 10, "seed004", "seed 004 (its scan section): Hillis-Steele scan in one block (scan<<<1, n>>>)",
          single_block_prepare, _kernel_names("scan_hillis_steele_single_block<{t}>"), block_sizes=pow2(32, 1024),
          work_span=("n log2 n", "log2 n"), max_n_per_block=1,
          notes="The article's kernel: one block, so n is at most the block size (1024). Input and output are "
                "separate arrays here so that every timed run scans the same data.")
_register("hillis_steele_tiles", 20, "seed004", "the Hillis-Steele step of seed 004's scan section as the block scan of a multi-block scan",
          tile_scan_plan("hillis_steele"), _kernel_names("tile_scan_hillis_steele<{t}>") + _kernel_names("add_tile_offsets<{t}>"),
          block_sizes=TILE_BLOCKS, work_span=("n log2 B", "log2 B per level"),
          notes="Scan each tile of B elements, scan the tile totals the same way, add each tile's offset: about 4n of traffic.")
_register("blelloch_tiles", 30, "textbook", "Blelloch's work-efficient scan (up-sweep, down-sweep; GPU Gems 3 ch. 39), seed 004's O(n) alternative",
          tile_scan_plan("blelloch"), _kernel_names("tile_scan_blelloch<{t}, false>") + _kernel_names("add_tile_offsets<{t}>"),
          block_sizes=TILE_BLOCKS, work_span=("2n", "2 log2(2B) per level"),
          notes="Two elements per thread; the tree's stride-2^d accesses hit the same shared-memory bank.")
_register("blelloch_padded_tiles", 31, "textbook", "Blelloch's scan with one padding word every 32 (no bank conflicts)",
          tile_scan_plan("blelloch_padded"), _kernel_names("tile_scan_blelloch<{t}, true>") + _kernel_names("add_tile_offsets<{t}>"),
          block_sizes=TILE_BLOCKS, work_span=("2n", "2 log2(2B) per level"))
_register("warp_shuffle_tiles", 40, "textbook", "block scan from __shfl_up_sync warp scans (the building block of the fast scans)",
          tile_scan_plan("warp_shuffle"), _kernel_names("tile_scan_warp_shuffle<{t}>") + _kernel_names("add_tile_offsets<{t}>"),
          block_sizes=TILE_BLOCKS, work_span=("n log2 32", "log2 32 + log2(B/32) per level"))
_register("reduce_then_scan", 50, "beyond", f"primbench: reduce, scan the tile sums, scan again (16-byte loads, {FAST_VECS * 4} elements per thread)",
          reduce_then_scan_plan(), _fast_names(), block_sizes=FAST_BLOCKS, work_span=("2n", "log2 n"),
          notes="Reads the input twice: 3n of traffic, so at best 2/3 of a single pass.")
_register("decoupled_lookback", 60, "beyond", "Merrill & Garland 2016: single-pass scan with decoupled look-back, 16-byte loads, tiles by atomic ticket",
          lookback_plan(), _fast_names(), block_sizes=FAST_BLOCKS, work_span=("n", "log2 B + look-back"),
          deterministic=False,
          notes="float32 results can differ in the last bits from run to run: a tile's prefix adds up whichever "
                "predecessors had published their prefix when it looked. int32 is exact.")
_register("decoupled_lookback_status_prefetch", 61, "beyond", "primbench: the look-back scan, the predecessor's status line fetched into L2 while the tile's loads are in flight",
          lookback_plan(prefetch_status=True), _fast_names(), block_sizes=FAST_BLOCKS, work_span=("n", "log2 B + look-back"),
          deterministic=False,
          notes="One prefetch.global.L2 per tile: the look-back's first read then finds its predecessors' line in L2, "
                "not in DRAM (kernels/scan.cu). float32 results can differ in the last bits from run to run; int32 is exact.")
register(Variant(
    op="scan", name="decoupled_lookback_async_copy", series="beyond", order=62,
    origin="primbench: the look-back scan made persistent, its next tiles copied into shared memory by cp.async while it looks back",
    prepare=async_copy_plan(), source=ASYNC_SOURCE,
    kernels=tuple(_async_name(CTYPE[dtype], ASYNC_VECS, stages) for dtype in DTYPES for stages in ASYNC_STAGES),
    block_sizes=FAST_BLOCKS, bytes_model=BYTES, traffic="read_write", dtypes=DTYPES,
    tolerance_model="depth x 2^-24 x prefix sum|x| (see kernels/scan.py)", deterministic_expected=False,
    work_span=("n", "log2 B + look-back"),
    notes="One wave of blocks, each keeping its next tiles in flight as asynchronous copies into shared memory (16 "
          "elements per thread, 3 buffers where they fit, else 2), so that DRAM stays busy while its first warp looks "
          "back; tiles by atomic ticket, the status line prefetched as in decoupled_lookback_status_prefetch. "
          "float32 results can differ in the last bits from run to run; int32 is exact.",
))
register(Variant(
    op="scan", name="cub_inclusive_scan", origin="CuPy's CUB (CCCL 3.1.2 in CuPy 14.2): DeviceScan::InclusiveSum through "
                                                 "cupy.cuda.cub.device_scan, in place",
    series=BASELINE_SERIES, order=90, library=CUPY, prepare=cub_scan_prepare, block_sizes=(), bytes_model=BYTES, traffic="read_write",
    tolerance_model=f"assumed: as a look-back over tiles of at least {CUB_ASSUMED_MIN_TILE} elements",
    deterministic_expected=False, dtypes=DTYPES, work_span=("n", "log2 n + look-back"),
    notes="CuPy exposes CUB's scan in place only: it rescans its own output on each timed run (same cost).",
))
