"""Today's CCCL as baselines, through cuda.compute (pip package cuda-cccl; its 1.2.1 wheel bundles
CCCL 3.6): DeviceReduce's sum at two Determinism levels and its max, DeviceScan's
inclusive sum, and DeviceHistogram::HistogramEven with int32 counters. Determinism.GPU_TO_GPU is
not among them: cuda.compute 1.2.1's build refuses it ("gpu-to-gpu determinism is not supported",
seen on the H200, 2026-12-05). What a CuPy user gets (CuPy's
bundled CCCL 3.1.2, 64-bit histogram counters) stays beside them (kernels/reduce.py and the others).

Each plan calls the library as its documentation's object API does: `prepare` makes the algorithm
(cuda.compute.make_*, which JIT-compiles the operator for these dtypes on first use; primbench keeps
the build between processes: primbench/library_cache.py), asks it for its temporary storage (a call
with temp_storage=None, which launches nothing) and allocates that from CuPy's pool; `run` is the
one call that enqueues the whole operation on CuPy's current stream (libraries.CurrentStream):
nothing allocated, nothing synchronised. Only well-known operators (OpKind.PLUS, OpKind.MAXIMUM):
they need no numba, which cuda-cccl's minimal install leaves out. Where cuda-cccl is not installed,
every case here is skipped with the line that says how to install it.
"""

from __future__ import annotations

from primbench.api import BASELINE_SERIES, CUDA_CCCL, CaseUnsupported, CurrentStream, LaunchContext, Plan, Variant, cached_build
from primbench.api import ceil_div as _ceil_div, register_variant as register

ORDER = 91  # after CuPy's CUB (90): the report's default baseline stays the one it was
# The accumulator of a sum, by input dtype: float16 read and added in float32, as the kernels do
# (CuPy's CUB would add float16 in float16; CuPy has no bfloat16 dtype, so none here either).
SUM_TYPES = {"float32": "float32", "float16": "float32", "int32": "int32"}
MAX_TYPES = ("float32", "float16", "int32")
# CUB's tiles and look-back are its own: the float scan's tolerance assumes tiles of at least this
# many elements and 7 roundings per tile, as kernels/scan.py does for CuPy's CUB.
SCAN_MIN_TILE, SCAN_ROUNDINGS_PER_TILE = 128, 7
HISTOGRAM_BINS = (256, 32, 1024)  # kernels/histogram.py's bins, the first the default
INT32_MAX = 2**31 - 1


def _library_call(what: str, call):
    """call(): a refusal of cuda.compute's own (a type or option it does not take) skips the case with
    its message; any other error of the library fails the case (as a RuntimeError the runner records)
    rather than ending the run."""
    try:
        return call()
    except CaseUnsupported:
        raise
    except (TypeError, ValueError, NotImplementedError) as exc:
        raise CaseUnsupported(f"cuda.compute refuses {what}: {' '.join(str(exc).split())[:160]}") from None
    except Exception as exc:  # noqa: BLE001 (cuda.bindings' and the JIT's own error types)
        raise RuntimeError(f"cuda.compute {what}: {type(exc).__name__}: {' '.join(str(exc).split())[:160]}") from exc


def _algorithm(compute, factory: str, key: tuple, arguments: dict):
    """make_<factory>(**arguments), built once per process and kept on disk between processes."""
    import cupy

    architecture = cupy.cuda.Device().compute_capability
    algorithm, _source = cached_build(CUDA_CCCL.identity(), (factory, architecture, *key),
                                      lambda: getattr(compute, f"make_{factory}")(**arguments),
                                      getattr(compute, "serialize", None), getattr(compute, "deserialize", None))
    return algorithm


def _enqueuer(algorithm, arguments: dict):
    """(run, temporary storage): the size asked once (a call that launches nothing), the storage
    allocated here, and run() the one call that enqueues the operation on CuPy's current stream."""
    import cupy

    stream = CurrentStream()
    nbytes = int(algorithm(temp_storage=None, stream=stream, **arguments))
    storage = cupy.empty(max(nbytes, 1), dtype=cupy.uint8)

    def run():
        algorithm(temp_storage=storage, stream=stream, **arguments)

    return run, storage


def reduce_plan(op: str, determinism: str):
    """DeviceReduce of op ("PLUS" or "MAXIMUM") at a Determinism level, into one value: make_reduce_into
    with h_init the operator's identity in the accumulator's dtype."""

    def prepare(ctx: LaunchContext) -> Plan:
        import cupy
        import numpy

        compute = CUDA_CCCL.load()
        accumulate = SUM_TYPES[ctx.dtype] if op == "PLUS" else ctx.dtype
        out = cupy.empty(1, dtype=accumulate)
        identity = 0 if op == "PLUS" else (numpy.iinfo(accumulate).min if accumulate == "int32" else -numpy.inf)
        h_init = numpy.array([identity], dtype=accumulate)
        kind = getattr(compute.OpKind, op)
        level = getattr(compute.Determinism, determinism)
        what = f"reduce_into ({ctx.dtype} into {accumulate}, {op}, {determinism})"
        algorithm = _library_call(what, lambda: _algorithm(
            compute, "reduce_into", (ctx.dtype, accumulate, op, determinism),
            dict(d_in=ctx.x, d_out=out, op=kind, h_init=h_init, determinism=level)))
        run, storage = _library_call(what, lambda: _enqueuer(
            algorithm, dict(d_in=ctx.x, d_out=out, num_items=ctx.n, op=kind, h_init=h_init)))
        # The library's grid is its own: as for CuPy's CUB, a chain as long as one thread per 256
        # elements of a one-wave grid, two trees, and one atomic per block of up to 32 per SM (the
        # single-pass NOT_GUARANTEED kernel): a generous bound.
        depth = _ceil_div(ctx.n, ctx.sm_count * 256) + 64 + (32 * ctx.sm_count if determinism == "NOT_GUARANTEED" else 0)
        return Plan(run=run, result=lambda: out, depth=depth if op == "PLUS" else 0, scratch=[out],
                    launches=[{"kernel": f"cub::DeviceReduce ({op}, {determinism}) via cuda.compute", "grid": None,
                               "block": None, "temp_bytes": int(storage.nbytes)}])

    return prepare


def inclusive_scan_prepare(ctx: LaunchContext) -> Plan:
    """DeviceScan's inclusive sum, out of place: make_inclusive_scan with OpKind.PLUS and no initial value."""
    import cupy

    compute = CUDA_CCCL.load()
    out = cupy.empty(ctx.n, dtype=ctx.x.dtype)
    what = f"inclusive_scan ({ctx.dtype}, PLUS)"
    algorithm = _library_call(what, lambda: _algorithm(
        compute, "inclusive_scan", (ctx.dtype,), dict(d_in=ctx.x, d_out=out, op=compute.OpKind.PLUS, init_value=None)))
    run, storage = _library_call(what, lambda: _enqueuer(
        algorithm, dict(d_in=ctx.x, d_out=out, op=compute.OpKind.PLUS, init_value=None, num_items=ctx.n)))
    tiles = _ceil_div(ctx.n, SCAN_MIN_TILE)
    return Plan(run=run, result=lambda: out, depth=SCAN_ROUNDINGS_PER_TILE * tiles + 64, scratch=[out],
                launches=[{"kernel": "cub::DeviceScan::InclusiveScan (PLUS) via cuda.compute", "grid": None, "block": None,
                           "temp_bytes": int(storage.nbytes)}])


def histogram_prepare(ctx: LaunchContext) -> Plan:
    """DeviceHistogram::HistogramEven into int32 counters: bins + 1 int32 levels from 0 to bins, one
    bin per value, samples outside dropped (CUB zeroes the counters itself)."""
    import cupy
    import numpy

    compute = CUDA_CCCL.load()
    bins = ctx.params["bins"]
    counts = cupy.empty(bins, dtype=cupy.int32)
    levels = dict(h_num_output_levels=numpy.array([bins + 1], dtype=numpy.int32),
                  h_lower_level=numpy.array([0], dtype=numpy.int32), h_upper_level=numpy.array([bins], dtype=numpy.int32))
    arguments = dict(d_samples=ctx.x, d_histogram=counts, num_samples=ctx.n, **levels)
    # cuda.compute builds 32- and 64-bit sample offsets apart: the key says which this is.
    wide_offsets = ctx.n * ctx.x.dtype.itemsize >= INT32_MAX
    what = f"histogram_even ({ctx.dtype} samples, {bins} bins, int32 counters)"
    algorithm = _library_call(what, lambda: _algorithm(compute, "histogram_even", (ctx.dtype, "int32", bins, "int32", wide_offsets),
                                                       arguments))
    run, storage = _library_call(what, lambda: _enqueuer(algorithm, arguments))
    return Plan(run=run, result=lambda: counts, depth=0, scratch=[counts],
                launches=[{"kernel": "cub::DeviceHistogram::HistogramEven (int32 counters) via cuda.compute", "grid": None,
                           "block": None, "temp_bytes": int(storage.nbytes)}])


_COMMON = dict(series=BASELINE_SERIES, block_sizes=(), library=CUDA_CCCL)
SUM_TOLERANCE = "assumed: depth x 2^-24 x sum|x|, depth as for a grid of one thread per 256 elements (the library's own)"


def _reduce(name, order, determinism, dtypes, deterministic, origin, notes):
    register(Variant(op="reduce", name=name, order=order, origin=origin, prepare=reduce_plan("PLUS", determinism),
                     bytes_model="n * itemsize", traffic="read", tolerance_model=SUM_TOLERANCE,
                     deterministic_expected=deterministic, dtypes=dtypes, notes=notes, **_COMMON))


CCCL = "CCCL (pip cuda-cccl; its 1.2.1 bundles CCCL 3.6):"
_reduce("cccl_reduce", ORDER, "NOT_GUARANTEED", tuple(SUM_TYPES), False,
        f"{CCCL} DeviceReduce through cuda.compute.make_reduce_into, Determinism.NOT_GUARANTEED: one pass, atomics",
        "The fastest level CCCL offers: block sums added by atomics in one launch, so float sums may differ from run "
        "to run. float16 is read and added in float32 (h_init and the output float32).")
_reduce("cccl_reduce_run_to_run", ORDER + 1, "RUN_TO_RUN", tuple(SUM_TYPES), True,
        f"{CCCL} DeviceReduce through cuda.compute.make_reduce_into, Determinism.RUN_TO_RUN (CUB's default): a fixed "
        "tree, the same bits every run on one GPU",
        "Beside vector_fixed_tree_deterministic: reproducible run to run, though its tree follows CUB's tuning for the "
        "GPU, so another architecture may give other bits.")
register(Variant(
    op="reduce_max", name="cccl_reduce_max", order=ORDER, prepare=reduce_plan("MAXIMUM", "RUN_TO_RUN"),
    origin=f"{CCCL} DeviceReduce through cuda.compute.make_reduce_into, OpKind.MAXIMUM",
    bytes_model="n * itemsize", traffic="read", tolerance_model="exact: max picks an element", deterministic_expected=True,
    dtypes=MAX_TYPES, notes="Max is exact whatever the order: CCCL's three Determinism levels give the same bits, "
                            "and its atomic path is for sums only, so the default level stands for all three.", **_COMMON,
))
register(Variant(
    op="scan", name="cccl_inclusive_scan", order=ORDER, prepare=inclusive_scan_prepare,
    origin=f"{CCCL} DeviceScan through cuda.compute.make_inclusive_scan, OpKind.PLUS, out of place",
    bytes_model="2 * n * itemsize", traffic="read_write",
    tolerance_model=f"assumed: as a look-back over tiles of at least {SCAN_MIN_TILE} elements", deterministic_expected=False,
    dtypes=("int32", "float32"), work_span=("n", "log2 n + look-back"),
    notes="CCCL's scan (decoupled look-back) as cuda.compute calls it; its default determinism is not guaranteed: float32 "
          "results may differ in the last bits from run to run (cuda.compute 1.2.1 takes no Determinism for scans).",
    **_COMMON,
))
register(Variant(
    op="histogram", name="cccl_histogram_even", order=ORDER, prepare=histogram_prepare,
    origin=f"{CCCL} DeviceHistogram::HistogramEven through cuda.compute.make_histogram_even, int32 counters",
    bytes_model="n * itemsize", traffic="read", tolerance_model="exact: counts", deterministic_expected=True,
    dtypes=("uint8", "int32"), params=(("bins", HISTOGRAM_BINS),), work_span=("n", "1 (with atomics)"),
    notes="The counter type a user of CUB picks (int), not the 64-bit counters CuPy's wrapper passes "
          "(cub_histogram_even); int32 levels 0..bins, so that 256 bins of bytes fit.",
    **_COMMON,
))
