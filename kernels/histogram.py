"""Histogram variants (kernels/histogram.cu): 256 bins of uint32 counts over uint8 samples, from
seed 004's global atomics to warp aggregation, and CUB's HistogramEven as the baseline.

Each plan is the whole operation, as seed 004 insists: the memset of the output, then the kernel.
The grid is one wave of blocks by the kernel's occupancy (grid-stride loops); every block merges
its shared histogram into the output with one global atomic per non-empty bin.
"""

from __future__ import annotations

from kernels import LaunchContext, Plan, Variant, pow2, register

SOURCE = "histogram.cu"
BINS = 256
BLOCKS = pow2(128, 1024)
BYTES = "n * itemsize"  # every sample read once; the 1 KB of counts is negligible
REPLICAS = (8, 2, 4, 16, 32)  # seed 004's K; the first is the default of a sweep that names none


def _zero(array) -> None:
    import cupy

    cupy.cuda.runtime.memsetAsync(array.data.ptr, 0, array.nbytes, cupy.cuda.get_current_stream().ptr)


def kernel_plan(name_of, per_thread: int = 1, per_warp_shared: bool = False):
    """memset, then one grid-stride kernel. `name_of(ctx)` names the kernel; `per_thread` is how many
    samples a thread reads per step (16 for the 16-byte loads); `per_warp_shared` gives each warp
    1 KB of dynamic shared memory for its sub-histogram."""

    def prepare(ctx: LaunchContext) -> Plan:
        import cupy
        import numpy

        name = name_of(ctx)
        kernel = ctx.kernel(name)
        shared = (ctx.block // 32) * BINS * 4 if per_warp_shared else 0
        grid = ctx.occupancy_grid(kernel, ctx.block, elements_per_thread=per_thread, dynamic_shared=shared)
        out = cupy.empty(BINS, dtype=cupy.uint32)
        if per_thread > 1 and ctx.x.data.ptr % 16:
            raise RuntimeError("the 16-byte-load histograms need a 16-byte-aligned input (CuPy allocations are 256-byte aligned)")
        n = numpy.int32(ctx.n)

        def run():
            _zero(out)
            kernel((grid,), (ctx.block,), (ctx.x, n, out), shared_mem=shared)

        return Plan(run=run, result=lambda: out, depth=0, scratch=[out],
                    launches=[{"kernel": "memset", "grid": None, "block": None}, {"kernel": name, "grid": grid, "block": ctx.block}])

    return prepare


def cub_prepare(ctx: LaunchContext) -> Plan:
    """CUB DeviceHistogram::HistogramEven through cupy.cuda.cub.cub_histogram (257 levels over [0, 256))."""
    import cupy
    from cupy.cuda import cub

    counts = cupy.zeros(BINS, dtype=cupy.int64)  # what cupy.bincount hands it; CUB counts in int
    state = {}

    def run():
        result = cub.cub_histogram(ctx.x, counts, BINS + 1)
        if result is None:
            raise RuntimeError("cupy.cuda.cub.cub_histogram declined the input")
        state["out"] = result

    return Plan(run=run, result=lambda: state["out"], depth=0,
                launches=[{"kernel": "cub::DeviceHistogram::HistogramEven", "grid": None, "block": None}])


def _register(name, order, series, origin, prepare, kernel_names, notes="", params=()):
    register(Variant(
        op="histogram", name=name, origin=origin, series=series, order=order, prepare=prepare, block_sizes=BLOCKS,
        bytes_model=BYTES, tolerance_model="exact: counts", deterministic_expected=True, source=SOURCE,
        kernels=kernel_names, dtypes=("uint8",), notes=notes, params=params, grid_independent=True,
        work_span=("n", "1 (with atomics)"),
    ))


_register("seed004_global_atomic", 10, "seed004", "seed 004 §4.4: one global atomicAdd per sample",
          kernel_plan(lambda ctx: "histogram_global_atomic"), ("histogram_global_atomic",))
_register("seed004_shared_privatized", 20, "seed004", "seed 004 §4.4: a shared histogram per block, one global atomic per non-empty bin",
          kernel_plan(lambda ctx: "seed004_histogram"), ("seed004_histogram",), notes="The article's kernel.")
_register("seed004_replicated", 30, "seed004", "seed 004 §4.4: K shared sub-histograms, thread t adding into copy t % K",
          kernel_plan(lambda ctx: f"histogram_replicated<{ctx.params['replicas']}>"),
          tuple(f"histogram_replicated<{k}>" for k in REPLICAS), params=(("replicas", REPLICAS),))
_register("vector_per_warp", 40, "beyond", "primbench: 16-byte loads (16 samples each), one sub-histogram per warp",
          kernel_plan(lambda ctx: "histogram_vector_per_warp", per_thread=16, per_warp_shared=True), ("histogram_vector_per_warp",))
_register("warp_aggregated", 50, "beyond", "primbench: 16-byte loads, equal bytes of a warp counted by one atomic (__match_any_sync)",
          kernel_plan(lambda ctx: "histogram_warp_aggregated", per_thread=16, per_warp_shared=True), ("histogram_warp_aggregated",),
          notes="Keeps all-equal input fast: one shared atomic per warp and byte place instead of 32 on one counter.")
register(Variant(
    op="histogram", name="cub_histogram_even", origin="CUB DeviceHistogram::HistogramEven through cupy.cuda.cub (257 levels)",
    series="baseline", order=90, prepare=cub_prepare, block_sizes=(), bytes_model=BYTES, tolerance_model="exact: counts",
    deterministic_expected=True, dtypes=("uint8",), work_span=("n", "1 (with atomics)"),
    notes="CuPy's wrapper takes its workspace from the memory pool on every call (host work only).",
))
