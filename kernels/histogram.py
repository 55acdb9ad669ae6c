"""Histogram variants (kernels/histogram.cu): uint32 counts over uint8 samples (256 bins) or int32
samples (32, 256 or 1024 bins, the `bins` parameter), from seed 004's global atomics to warp
aggregation, and CUB's HistogramEven as the baseline.

Each plan is the whole operation, as seed 004 insists: the memset of the output, then the kernel.
The grid is one wave of blocks by the kernel's occupancy (grid-stride loops); every block merges
its shared histogram into the output with one global atomic per non-empty bin.
"""

from __future__ import annotations

from primbench.api import BASELINE_SERIES, CUPY, LaunchContext, Plan, Variant, check_aligned_16, pow2, register_variant as register

SOURCE = "histogram.cu"
BLOCKS = pow2(128, 1024)
BYTES = "n * itemsize"  # every sample read once; the at most 4 KB of counts is negligible
# The first value of each is the default of a sweep that names none.
BINS = (256, 32, 1024)  # uint8 takes only 256 (primbench/ops/histogram.py refuses the others)
REPLICAS = (8, 2, 4, 16, 32)  # seed 004's K
SAMPLE_TYPES = {"uint8": "unsigned char", "int32": "int"}
# (dtype, bins) pairs the kernels are compiled for: what primbench/ops/histogram.py accepts.
TYPE_BINS = (("uint8", 256), ("int32", 32), ("int32", 256), ("int32", 1024))


def _zero(array) -> None:
    import cupy

    cupy.cuda.runtime.memsetAsync(array.data.ptr, 0, array.nbytes, cupy.cuda.get_current_stream().ptr)


def kernel_name(template: str, dtype: str, bins: int, *extra: int) -> str:
    """The name expression of one instantiation, e.g. histogram_global_atomic<int,1024>."""
    return f"{template}<{','.join([SAMPLE_TYPES[dtype], str(bins), *map(str, extra)])}>"


def instantiations(template: str, *extra: int, most_bins: int = max(BINS)) -> tuple[str, ...]:
    return tuple(kernel_name(template, dtype, bins, *extra) for dtype, bins in TYPE_BINS if bins <= most_bins)


def kernel_plan(template: str, shared_copies, vector_loads: bool = False):
    """memset, then one grid-stride kernel, instantiated for the case's sample type and bins.
    `shared_copies(ctx)` is how many shared histograms of `bins` counts a block keeps (dynamic
    shared memory); with `vector_loads` each thread reads 16 bytes per step."""

    def prepare(ctx: LaunchContext) -> Plan:
        import cupy
        import numpy

        bins = ctx.params["bins"]
        extra = (ctx.params["replicas"],) if "replicas" in ctx.params else ()
        name = kernel_name(template, ctx.dtype, bins, *extra)
        kernel = ctx.kernel(name)
        shared = ctx.dynamic_shared(kernel, shared_copies(ctx) * bins * 4)
        per_thread = 16 // ctx.x.dtype.itemsize if vector_loads else 1
        grid = ctx.occupancy_grid(kernel, ctx.block, elements_per_thread=per_thread, dynamic_shared=shared)
        out = cupy.empty(bins, dtype=cupy.uint32)
        if vector_loads:
            check_aligned_16(ctx.x)
        n = numpy.int32(ctx.n)

        def run():
            _zero(out)
            kernel((grid,), (ctx.block,), (ctx.x, n, out), shared_mem=shared)

        return Plan(run=run, result=lambda: out, depth=0, scratch=[out],
                    launches=[{"kernel": "memset", "grid": None, "block": None}, {"kernel": name, "grid": grid, "block": ctx.block}])

    return prepare


def cub_prepare(ctx: LaunchContext) -> Plan:
    """CUB DeviceHistogram::HistogramEven through cupy.cuda.cub.cub_histogram (bins + 1 levels over
    [0, bins): one bin per value, samples outside dropped)."""
    import cupy
    from cupy.cuda import cub

    bins = ctx.params["bins"]
    counts = cupy.zeros(bins, dtype=cupy.int64)  # what cupy.bincount hands it; CUB counts in int
    state = {}

    def run():
        result = cub.cub_histogram(ctx.x, counts, bins + 1)
        if result is None:
            raise RuntimeError("cupy.cuda.cub.cub_histogram declined the input")
        state["out"] = result

    return Plan(run=run, result=lambda: state["out"], depth=0,
                launches=[{"kernel": "cub::DeviceHistogram::HistogramEven", "grid": None, "block": None}])


def _register(name, order, series, origin, prepare, kernel_names, notes="", params=(), bins=BINS, blocks=BLOCKS):
    register(Variant(
        op="histogram", name=name, origin=origin, series=series, order=order, prepare=prepare, block_sizes=blocks,
        bytes_model=BYTES, traffic="read", tolerance_model="exact: counts", deterministic_expected=True, source=SOURCE,
        kernels=kernel_names, dtypes=("uint8", "int32"), notes=notes, params=(("bins", bins), *params),
        grid_independent=True, work_span=("n", "1 (with atomics)"),
    ))


def _per_warp(ctx) -> int:
    """One sub-histogram per warp of the block."""
    return ctx.block // 32


_register("seed004_global_atomic", 10, "seed004", "seed 004 (its histogram section): one global atomicAdd per sample",
          kernel_plan("histogram_global_atomic", lambda ctx: 0), instantiations("histogram_global_atomic"))
_register("seed004_shared_privatized", 20, "seed004", "seed 004 (its histogram section): a shared histogram per block, one global atomic per non-empty bin",
          kernel_plan("seed004_histogram", lambda ctx: 1), instantiations("seed004_histogram"),
          notes="The article's kernel (written there for bytes and 256 bins).")
_register("seed004_replicated", 30, "seed004", "seed 004 (its histogram section): K shared sub-histograms, thread t adding into copy t % K",
          kernel_plan("histogram_replicated", lambda ctx: ctx.params["replicas"]),
          tuple(name for k in REPLICAS for name in instantiations("histogram_replicated", k)), params=(("replicas", REPLICAS),))
_register("vector_per_warp", 40, "beyond", "primbench: 16-byte loads (16 bytes or 4 int32 each), one sub-histogram per warp",
          kernel_plan("histogram_vector_per_warp", _per_warp, vector_loads=True), instantiations("histogram_vector_per_warp"))
_register("warp_aggregated", 50, "beyond", "primbench: 16-byte loads, equal samples of a warp counted by one atomic (__match_any_sync)",
          kernel_plan("histogram_warp_aggregated", _per_warp, vector_loads=True), instantiations("histogram_warp_aggregated"),
          notes="Keeps all-equal input fast: one shared atomic per warp and sample place instead of 32 on one counter.")
_register("packed_per_lane", 60, "beyond", "primbench: 16-byte loads, a private histogram of byte counters per lane, in its own bank (no conflicts)",
          kernel_plan("histogram_packed_per_lane", lambda ctx: 1 + 8 * (ctx.block // 32), vector_loads=True),
          instantiations("histogram_packed_per_lane", most_bins=256), bins=(256, 32), blocks=pow2(128, 512),
          notes="Byte counters four to a word, each lane's in its own bank: no conflicts on any input; "
                "flushed into registers before a counter can overflow. 8 KB per warp for 256 bins: blocks up to 512.")
register(Variant(
    op="histogram", name="cub_histogram_even",
    origin="CuPy's CUB (CCCL 3.1.2 in CuPy 14.2), 64-bit counters: DeviceHistogram::HistogramEven through cupy.cuda.cub "
           "(bins + 1 levels), as cupy.bincount calls it",
    series=BASELINE_SERIES, order=90, library=CUPY, prepare=cub_prepare, block_sizes=(), bytes_model=BYTES, traffic="read",
    tolerance_model="exact: counts",
    deterministic_expected=True, dtypes=("uint8", "int32"), work_span=("n", "1 (with atomics)"), params=(("bins", BINS),),
    notes="CuPy's wrapper counts in 64-bit (long long) counters, a handicap next to CUB's usual int: kernels/cccl.py "
          "has CCCL's HistogramEven with int32 counters. It takes its workspace from the memory pool on every call (host work only).",
))

# Histograms at the read ceiling (kernels/histogram_lanes.cu, a source of its own so that
# the variants above keep their hashes). uint8 samples are counted in lane columns (lane l of every
# warp adds into words b * 32 + l, bank l: no warp instruction can conflict, on any input), int32
# samples in a sub-histogram per warp; both keep LANE_UNROLL 16-byte loads in flight per thread.
LANES_SOURCE = "histogram_lanes.cu"
LANE_COLUMN_BYTES = 256 * 32 * 4  # one copy of the lane columns: 256 bins x 32 lanes x 4 bytes
# Copies of the lane columns per block (warp w adds into copy w % copies) and loads in flight per
# thread: tools/tune/histogram.py measures the others (docs/perf-notes.md).
LANE_COPIES, LANE_UNROLL = 1, 4


def lane_column_kernel(dtype: str, bins: int, copies: int, unroll: int) -> str:
    """The kernel lane_columns launches for a case: lane columns for bytes, per-warp copies for int32."""
    if dtype == "uint8":
        return f"histogram_lane_columns<{copies},{unroll}>"
    return kernel_name("histogram_batched_per_warp", dtype, bins, unroll)


def lane_columns_plan(copies: int, unroll: int):
    """memset, then one kernel of one wave by occupancy: histogram_lane_columns<copies, unroll> for
    uint8 (copies x 32 KB of shared memory per block), histogram_batched_per_warp<int, bins, unroll>
    for int32 (one sub-histogram of `bins` counts per warp). Each thread reads `unroll` 16-byte
    vectors per step."""

    def prepare(ctx: LaunchContext) -> Plan:
        import cupy
        import numpy

        bins = ctx.params["bins"]
        name = lane_column_kernel(ctx.dtype, bins, copies, unroll)
        kernel = ctx.kernel(name)
        nbytes = copies * LANE_COLUMN_BYTES if ctx.dtype == "uint8" else (ctx.block // 32) * bins * 4
        shared = ctx.dynamic_shared(kernel, nbytes)
        per_thread = unroll * 16 // ctx.x.dtype.itemsize
        grid = ctx.occupancy_grid(kernel, ctx.block, elements_per_thread=per_thread, dynamic_shared=shared)
        out = cupy.empty(bins, dtype=cupy.uint32)
        check_aligned_16(ctx.x)
        n = numpy.int32(ctx.n)

        def run():
            _zero(out)
            kernel((grid,), (ctx.block,), (ctx.x, n, out), shared_mem=shared)

        return Plan(run=run, result=lambda: out, depth=0, scratch=[out],
                    launches=[{"kernel": "memset", "grid": None, "block": None}, {"kernel": name, "grid": grid, "block": ctx.block}])

    return prepare


register(Variant(
    op="histogram", name="lane_columns", order=70, series="beyond",
    origin="primbench: 16-byte loads, several in flight; uint8 counted in lane columns (lane l's counters all in bank l, "
           "shared by the block's warps through shared atomics: no conflicts on any input)",
    prepare=lane_columns_plan(LANE_COPIES, LANE_UNROLL), block_sizes=BLOCKS, bytes_model=BYTES, traffic="read",
    tolerance_model="exact: counts", deterministic_expected=True, source=LANES_SOURCE,
    kernels=tuple(sorted({lane_column_kernel(dtype, bins, LANE_COPIES, LANE_UNROLL) for dtype, bins in TYPE_BINS})),
    dtypes=("uint8", "int32"), params=(("bins", BINS),), grid_independent=True, work_span=("n", "1 (with atomics)"),
    notes=f"uint8: 256 bins x 32 lane columns of 32-bit counters, {LANE_COPIES} x 32 KB per block whatever its size, "
          f"one red.shared per sample, {LANE_UNROLL} loads in flight per thread. int32: a sub-histogram per warp "
          "(vector_per_warp's counting) with the same loads in flight.",
))
