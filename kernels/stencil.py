"""1-D stencil variants (kernels/stencil.cu): seed 004's blur1d with its shared-memory halo, the
naive global-memory form, and a form with 16-byte loads; and the library call a Python user makes,
cupyx.scipy.ndimage.uniform_filter1d. The radius is a parameter of each variant (a sweep axis:
`params: {radius: [1, 4, 16]}`), compiled in as the seed's constexpr R.

Tolerance model: each output adds 2R + 1 inputs in a chain and divides once, so it errs by at most
(2R + 1) x 2^-24 x (its window's sum of |x|) / (2R + 1) + 2^-24 x |y| (primbench/ops/stencil.py).
"""

from __future__ import annotations

# The plans call these by their private names (a plan's source is part of its variant's hash).
from primbench.api import BASELINE_SERIES, CUPYX_NDIMAGE, LaunchContext, Plan, Variant, pow2, register_variant as register
from primbench.api import ceil_div as _ceil_div, check_aligned_16 as _check_aligned

SOURCE = "stencil.cu"
RADII = (4, 1, 16)  # the first is the default of a sweep that names none (the seed's R = 4)
BLOCKS = pow2(64, 1024)
BYTES = "2 * n * itemsize"  # every element read once and written once; the halo is reuse
VECTOR_VECS = 2  # float4 vectors per thread in blur1d_vector_shared_halo (not tuned: 2 reached the copy rate)


def one_output_per_thread_plan(template: str, halo_in_shared: bool):
    """kernel<<<ceil(n / block), block>>>, one output per thread: seed 004's blur1d, with its block's
    inputs and halo in (block + 2R) floats of shared memory, or the naive form, which has none."""

    def prepare(ctx: LaunchContext) -> Plan:
        import cupy
        import numpy

        radius = ctx.params["radius"]
        name = template.format(r=radius)
        kernel = ctx.kernel(name)
        out = cupy.empty(ctx.n, dtype=cupy.float32)
        grid = _ceil_div(ctx.n, ctx.block)
        shared = (ctx.block + 2 * radius) * 4 if halo_in_shared else 0

        def run():
            kernel((grid,), (ctx.block,), (ctx.x, out, numpy.int32(ctx.n)), shared_mem=shared)

        return Plan(run=run, result=lambda: out, launches=[{"kernel": name, "grid": grid, "block": ctx.block}],
                    depth=2 * radius + 1, scratch=[out])

    return prepare


def vector_plan(vecs: int = VECTOR_VECS):
    def prepare(ctx: LaunchContext) -> Plan:
        import cupy
        import numpy

        radius = ctx.params["radius"]
        name = f"blur1d_vector<{radius}, {vecs}>"
        kernel = ctx.kernel(name)
        out = cupy.empty(ctx.n, dtype=cupy.float32)
        tile = vecs * ctx.block * 4
        grid = _ceil_div(ctx.n, tile)
        pad = _ceil_div(radius, 4) * 4
        shared = (tile + 2 * pad) * 4
        _check_aligned(ctx.x, out)

        def run():
            kernel((grid,), (ctx.block,), (ctx.x, out, numpy.int32(ctx.n)), shared_mem=shared)

        return Plan(run=run, result=lambda: out, launches=[{"kernel": name, "grid": grid, "block": ctx.block}],
                    depth=2 * radius + 1, scratch=[out])

    return prepare


def _register(name, order, series, origin, prepare, template, notes=""):
    register(Variant(
        op="stencil", name=name, origin=origin, series=series, order=order, prepare=prepare, block_sizes=BLOCKS,
        bytes_model=BYTES, tolerance_model="(2R + 1) roundings of 2^-24 x the window's sum|x| / (2R + 1), + one of |y|",
        deterministic_expected=True, source=SOURCE, kernels=tuple(template.format(r=r) for r in RADII),
        dtypes=("float32",), notes=notes, params=(("radius", RADII),), grid_independent=True,
        work_span=("(2R + 1) n", "2R + 1"), traffic="read_write",
    ))


_register("blur1d_naive_global", 10, "seed004", "every thread reads its 2R + 1 inputs from global memory",
          one_output_per_thread_plan("blur1d_naive<{r}>", halo_in_shared=False), "blur1d_naive<{r}>", notes="The baseline of seed 004's argument: the caches must catch a (2R + 1)-fold reuse.")
_register("seed004_blur1d_shared_halo", 20, "seed004", "seed 004 (its stencil section): blur1d, the block's inputs and a halo of R in shared memory",
          one_output_per_thread_plan("seed004_blur1d<{r}>", halo_in_shared=True), "seed004_blur1d<{r}>", notes="The article's kernel: one output per thread, scalar loads.")
_register("blur1d_vector_shared_halo", 30, "beyond", f"primbench: blur1d with 16-byte loads and stores, {VECTOR_VECS * 4} outputs per thread, the halo padded to whole vectors",
          vector_plan(), "blur1d_vector<{r}, " + str(VECTOR_VECS) + ">")


# The work per output cut (kernels/stencil_window.cu, its own file so that the variants above
# keep their hashes). Each thread computes K consecutive outputs from the K + 2R inputs around them:
# groups of G = min(K, 2R + 1) outputs share the sum of their common inputs, and the rest of each
# window is a running suffix or prefix sum, so G outputs take 2R + 3G - 5 additions instead of 2R G.
WINDOW_SOURCE = "stencil_window.cu"
# K per radius as measured by tools/tune/stencil.py on the H200 (2^26, block 256, docs/perf-notes.md):
# at R = 16, K = 8 took 143.5 us against 150.4 at K = 16 (fewer adds, but 48 registers and 40 KB of
# shared memory a block against 32 and 24 KB) and 143.4 at K = 32.
WINDOW_OUTPUTS = ((1, 8), (4, 8), (16, 8))  # (radius, outputs per thread K)


def window_kernel_name(radius: int, outputs: int, staged_stores: bool = True, fast_divide: bool = True) -> str:
    """The name expression of one blur1d_window instantiation (tools/tune/stencil.py builds others)."""
    return f"blur1d_window<{radius}, {outputs}, {str(staged_stores).lower()}, {str(fast_divide).lower()}>"


def window_shared_bytes(block: int, outputs: int, radius: int, staged_stores: bool = True) -> int:
    """Dynamic shared memory of blur1d_window: a chunk of K / 4 float4 slots per thread, padded to an
    odd number (the kernel's WindowLayout), the halo's chunks on each side, and the staged outputs."""
    vecs = outputs // 4
    stride = vecs + 1 if vecs % 2 == 0 else vecs
    halo_chunks = _ceil_div(_ceil_div(radius, 4), vecs)
    return 16 * stride * (block + 2 * halo_chunks + (block if staged_stores else 0))


def window_plan(outputs: int | None = None, staged_stores: bool = True, fast_divide: bool = True):
    """blur1d_window<R, K, ...><<<ceil(n / (K block)), block>>>: K outputs per thread, K from
    WINDOW_OUTPUTS by radius unless given (the tuning tool's other forms)."""

    def prepare(ctx: LaunchContext) -> Plan:
        import cupy
        import numpy

        radius = ctx.params["radius"]
        per_thread = outputs or dict(WINDOW_OUTPUTS)[radius]
        if ctx.block % 32:
            raise ValueError(f"blur1d_window needs a block of whole warps, not {ctx.block}")
        name = window_kernel_name(radius, per_thread, staged_stores, fast_divide)
        kernel = ctx.kernel(name)
        out = cupy.empty(ctx.n, dtype=cupy.float32)
        grid = _ceil_div(ctx.n, per_thread * ctx.block)
        shared = ctx.dynamic_shared(kernel, window_shared_bytes(ctx.block, per_thread, radius, staged_stores))
        _check_aligned(ctx.x, out)

        def run():
            kernel((grid,), (ctx.block,), (ctx.x, out, numpy.int32(ctx.n)), shared_mem=shared)

        return Plan(run=run, result=lambda: out, launches=[{"kernel": name, "grid": grid, "block": ctx.block}],
                    depth=2 * radius + 1, scratch=[out])

    return prepare


register(Variant(
    op="stencil", name="blur1d_core_edge_window", series="beyond", order=40,
    origin="primbench: K outputs per thread from K + 2R inputs in registers; each group of outputs shares "
           "the sum of its common inputs (the core) and adds running suffix and prefix sums of the rest (the edges)",
    prepare=window_plan(), block_sizes=BLOCKS, bytes_model=BYTES,
    tolerance_model="(2R + 1) roundings of 2^-24 x the window's sum|x| / (2R + 1), + one of |y|: each output still adds "
                    "exactly its own 2R + 1 inputs, in a tree no deeper than the chain",
    deterministic_expected=True, source=WINDOW_SOURCE, kernels=tuple(window_kernel_name(r, k) for r, k in WINDOW_OUTPUTS),
    dtypes=("float32",), params=(("radius", RADII),), grid_independent=True, work_span=("(2R + 3K - 5) n / K", "2R + 1"),
    traffic="read_write",
    notes="At R = 16 and K = 8, 51 additions per 8 outputs instead of 256, and a 3-instruction division (same bits as "
          "IEEE's) instead of about 10. K = 8 at every radius: K = 16 adds less but holds fewer blocks per SM.",
))


def uniform_filter_prepare(ctx: LaunchContext) -> Plan:
    """cupyx.scipy.ndimage.uniform_filter1d(x, 2R + 1, mode="constant", cval=0) into an output made
    here: the same window (origin 0: i - R to i + R) and the same edges (zeros outside). Not the same
    arithmetic: CuPy correlates with 2R + 1 float32 weights of 1 / (2R + 1), adding x * w in float32,
    where the kernels add the window and divide once; it errs by at most 2R + 2 roundings of the
    window's sum|x| / (2R + 1) (the reciprocal's, one per product-add), so its depth says so, and
    ops/stencil.py checks its exact input within that bound instead of bit for bit. One call here
    compiles CuPy's kernel for this window, so that no run pays for it."""
    import cupy

    ndimage = CUPYX_NDIMAGE.load()
    radius = ctx.params["radius"]
    out = cupy.empty(ctx.n, dtype=cupy.float32)

    def run():
        ndimage.uniform_filter1d(ctx.x, 2 * radius + 1, output=out, mode="constant", cval=0.0, origin=0)

    run()
    return Plan(run=run, result=lambda: out, depth=2 * radius + 2, scratch=[out],
                launches=[{"kernel": "cupyx.scipy.ndimage.uniform_filter1d (a correlation; weights filled per call)",
                           "grid": None, "block": None}])


register(Variant(
    op="stencil", name="cupyx_uniform_filter1d", series=BASELINE_SERIES, order=90, prepare=uniform_filter_prepare,
    block_sizes=(), library=CUPYX_NDIMAGE,
    origin="cupyx.scipy.ndimage.uniform_filter1d(x, 2R + 1, mode='constant', cval=0.0): what a CuPy user calls for a 1-D box filter",
    bytes_model=BYTES, traffic="read_write", dtypes=("float32",), params=(("radius", RADII),),
    tolerance_model="(2R + 2) roundings of 2^-24 x the window's sum|x| / (2R + 1): a float32 product-add per input "
                    "with a rounded weight 1 / (2R + 1), not one division (its exact input is checked to that bound)",
    deterministic_expected=True, work_span=("(2R + 1) n", "2R + 1"),
    notes="Same window and edges as seed 004's blur1d; each call also fills a (2R + 1)-element weight array (a small "
          "extra launch), as uniform_filter1d does for every caller.",
))
