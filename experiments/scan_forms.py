"""The scan forms the registry does not hold: the async-copy look-back scan with a wide look-back
window (experiments/scan_async_wide.cu) and with its look-back off the per-tile path
(experiments/scan_async_deferred.cu). Both were measured slower than the registered scans
(docs/perf-notes.md), so they are experiments, not variants: only experiments/tune_scan_wide.py and
experiments/tune_scan_deferred.py build them. They launch like kernels/scan.py's async_copy_plan,
whose text stays as it is (the registered variant's hash).

The sources are named by absolute path, as a plugin's are (primbench.build.source_path): they live
here, not under kernels/, so primbench does not ship them; they include kernels/scan_async.cu,
which NVRTC finds on primbench's include path."""

from pathlib import Path

from primbench.api import LaunchContext, Plan, ceil_div as _ceil_div, check_aligned_16 as _check_aligned
from primbench.kernels.scan import (ASYNC_STAGES, ASYNC_VECS, CTYPE, LOOKBACK_ROUNDINGS_PER_TILE, LOOKBACK_WINDOW,
                                    _fast_depth, _fast_tile, _output, _u32, async_kernel_with_shared)

HERE = Path(__file__).resolve().parent


# The async-copy scan with a wide look-back window (experiments/scan_async_wide.cu): the persistent grid
# scans ~132 consecutive tiles at once, so a window of 32 tiles made the k-th of them walk back
# k / 32 round trips. WIDE_WINDOW x 32 = 256 tiles covers a round in one read. WIDE_FORM: 0 (the
# registered async kernel's pipeline) or 4 (early refill). Measured on the H200, no faster than the
# 32-tile window (1033-1059 us at 2^28): the chain was not the cost, so it is not registered; only
# experiments/tune_scan_wide.py builds it. docs/perf-notes.md, "A look-back window of a whole round".
WIDE_SOURCE = str(HERE / "scan_async_wide.cu")
WIDE_WINDOW = 8
WIDE_FORM = 0


def _wide_name(t: str, vecs: int, stages: int, window: int, form: int) -> str:
    return f"scan_lookback_async_wide<{t}, {vecs}, {stages}, {window}, {form}>"


def _persistent_async_plan(name_of, vecs: int, stages: tuple, grid: int | None = None, **launch_facts):
    """async_copy_plan's launch for another persistent async-copy kernel of the same signature
    (the unregistered forms the experiments build); `name_of(t, stages)` names the instantiation; `grid`:
    a fixed grid instead of one wave by occupancy, never more blocks than tiles."""

    def prepare(ctx: LaunchContext) -> Plan:
        import cupy

        kernel, name, chosen, shared = async_kernel_with_shared(ctx, stages, lambda s: name_of(CTYPE[ctx.dtype], s))
        tiles = _ceil_div(ctx.n, _fast_tile(ctx, vecs))
        blocks = ctx.occupancy_grid(kernel, ctx.block, elements_per_thread=vecs * 4, dynamic_shared=shared)
        if grid is not None:
            blocks = max(1, min(grid, tiles))
        out = _output(ctx)
        status = cupy.zeros(tiles, dtype=cupy.uint64)  # epoch 0: nothing published
        counter = cupy.zeros(1, dtype=cupy.uint32)  # the tile ticket; the block drawing the last resets it
        _check_aligned(ctx.x, out)
        epoch = {"value": 0}

        def run():
            epoch["value"] = epoch["value"] % (2**30 - 1) + 1  # what earlier calls left reads as unpublished
            kernel((blocks,), (ctx.block,), (ctx.x, out, status, counter, _u32(ctx.n), _u32(epoch["value"]), _u32(tiles)),
                   shared_mem=shared)

        return Plan(run=run, result=lambda: out,
                    launches=[{"kernel": name, "grid": blocks, "block": ctx.block, "tiles": tiles, "shared_bytes": shared,
                               "stages": chosen, **launch_facts}],
                    depth=_fast_depth(ctx, vecs) + LOOKBACK_ROUNDINGS_PER_TILE * tiles, scratch=[out])

    return prepare


def async_wide_plan(window: int = WIDE_WINDOW, form: int = WIDE_FORM, vecs: int = ASYNC_VECS, stages: tuple = ASYNC_STAGES):
    """async_copy_plan's launch with the wide-window kernel (experiments/tune_scan_wide.py builds others)."""
    return _persistent_async_plan(lambda t, s: _wide_name(t, vecs, s, window, form), vecs, stages, window_tiles=32 * window)


# The async-copy scan with its look-back off the per-tile path (experiments/scan_async_deferred.cu): tile
# k is scanned locally and left in its buffer, its aggregate published, and the first warp looks
# back (for tile k with DEFERRED_LAG 1, for tile k - 1 with lag 2) while every warp stores the tile
# scanned `lag` iterations before and scans the next. Not registered; measured slower (docs/perf-notes.md):
# only experiments/tune_scan_deferred.py builds it. docs/perf-notes.md, "The look-back off the per-tile path".
DEFERRED_SOURCE = str(HERE / "scan_async_deferred.cu")
DEFERRED_LAG = 1
DEFERRED_STAGES = (3,)  # with lag 1: one 64 KB tile in flight while one is scanned and one waits for its stores


def _deferred_name(t: str, vecs: int, stages: int, lag: int, window: int) -> str:
    return f"scan_lookback_async_deferred<{t}, {vecs}, {stages}, {lag}, {window}>"


def async_deferred_plan(lag: int = DEFERRED_LAG, window: int = LOOKBACK_WINDOW, vecs: int = ASYNC_VECS,
                        stages: tuple = DEFERRED_STAGES, grid: int | None = None):
    """async_copy_plan's launch with the deferred kernel. `stages` must exceed lag + 1 (the kernel
    asserts it); `grid`: a fixed grid instead of one wave by occupancy (experiments/tune_scan_deferred.py
    runs one block), never more blocks than tiles."""
    return _persistent_async_plan(lambda t, s: _deferred_name(t, vecs, s, lag, window), vecs, stages, grid,
                                  lag=lag, window_tiles=32 * window)
