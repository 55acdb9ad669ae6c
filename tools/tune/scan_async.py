"""Time the async-copy look-back scan (kernels/scan_async.cu, `decoupled_lookback_async_copy`) at a few
template settings beside `decoupled_lookback_status_prefetch`, the same tile scan with its prefix
handed to it, and CUB, to choose its settings.

Not part of a run. Each form is run once and its output checked exactly against a cumsum of an input
whose every partial sum is exact in its dtype (the op's own exact input: int32 wraps, float32 holds
integers), then timed cold (L2 flushed) the harness's way; one line per form: median us, GB/s for
2n x 4 bytes, % of the NVML peak and % of a copy measured just before.

A setting is BLOCKxVECSxSTAGES: threads per block, 16-byte vectors per thread (a tile is
BLOCK x VECS x 4 elements) and tile buffers in shared memory (STAGES x the tile's bytes per block).
  python -m tools.tune.scan_async                       # 2^28, int32 and float32, the settings below
  python -m tools.tune.scan_async --settings 1024x4x3 512x8x2 --sizes 28 25 --json out.json
  python -m tools.tune.scan_async --ptxas               # no GPU needed: registers and spills per setting
Then the diagnostic forms (FORMS, int32 unless --form-dtypes says otherwise): the same pipeline with
one suspect of the pipeline's slowness switched on or off, each checked exactly against the cumsum.
docs/perf-notes.md records what it found and which code each suspect was measured at.
"""

import argparse
import re
import sys

from tools.common import Tuner, exact_case, gbps_of, print_ptxas

# 1024x4x3: the registered default on the H200 (3 x 64 KB buffers, two tiles in flight);
# 1024x4x2: what it falls back to where 192 KB does not fit (A100), one tile in flight;
# 512x8x2: the same 64 KB tiles with 16 warps, each thread holding 32 elements (as the register scan);
# 1024x2x3: 32 KB tiles, 96 KB per block: two blocks per SM where the registers allow (32 per thread),
#           so that one block's look-back overlaps the other's scan.
SETTINGS = ("1024x4x3", "1024x4x2", "512x8x2", "1024x2x3")

# Diagnostic forms of the same kernel (kernels/scan_async.cu, scan_async_copy_form<T, kVecs, kStages,
# kForm>), each one suspect of 3666c3d's 1040 us (docs/perf-notes.md) switched on or off, timed at
# 1024x4x3 (FORM_STAGES where given). Bits as in the .cu file.
PREFIX_GIVEN, BLOCK_ORDER, EARLY_REFILL, AS_3666C3D = 1, 2, 4, 8
FORMS = (
    ("as 3666c3d (ticket tested at its draw, status prefetched 2 tiles early)", AS_3666C3D, 3),
    ("prefix given, tickets (the async pipeline alone)", PREFIX_GIVEN, 3),
    ("prefix given, tickets, as 3666c3d (+ thread 0 waits for the atomic)", PREFIX_GIVEN | AS_3666C3D, 3),
    ("prefix given, blockIdx order (no atomics)", PREFIX_GIVEN | BLOCK_ORDER, 3),
    ("look-back, blockIdx order (no atomics)", BLOCK_ORDER, 3),
    ("look-back, early refill (3 tiles in flight during it)", EARLY_REFILL, 3),
    ("look-back, early refill, 2 buffers", EARLY_REFILL, 2),
    ("prefix given, early refill, 2 buffers", PREFIX_GIVEN | EARLY_REFILL, 2),
)
FORM_BLOCK, FORM_VECS = 1024, 4


def form_name(t: str, vecs: int, stages: int, form: int) -> str:
    return f"scan_async_copy_form<{t}, {vecs}, {stages}, {form}>"


def form_names(vecs: int = FORM_VECS) -> list[str]:
    import primbench.kernels.scan as scan

    names = [form_name(scan.CTYPE[d], vecs, stages, form) for d in scan.DTYPES for _, form, stages in FORMS]
    names += [f"tile_reduce<{scan.CTYPE[d]}, {vecs}>" for d in scan.DTYPES]
    return names + [f"scan_tile_sums_exclusive<{scan.CTYPE[d]}>" for d in scan.DTYPES]


def parse_setting(text: str) -> tuple[int, int, int]:
    match = re.fullmatch(r"(\d+)x(\d+)x(\d+)", text)
    if not match:
        raise SystemExit(f"setting {text!r}: expected BLOCKxVECSxSTAGES, e.g. 1024x4x3")
    return tuple(int(v) for v in match.groups())


def ptxas_report(settings) -> None:
    """Registers, stack and spills of each instantiation, from ptxas through NVRTC (no GPU)."""
    import primbench.kernels.scan as scan

    names = [scan._async_name(scan.CTYPE[d], vecs, stages) for d in scan.DTYPES for _, vecs, stages in settings]
    names += [scan._lookback_name(scan.CTYPE[d], scan.FAST_VECS, scan.LOOKBACK_WINDOW, True) for d in scan.DTYPES]
    names += [name for name in form_names() if name.startswith("scan_async_copy_form")]
    print_ptxas(scan.ASYNC_SOURCE, names)


def form_plan(module, x, n: int, dtype: str, device, form: int, stages: int):
    """(run, result, extra) for one diagnostic form at FORM_BLOCK x FORM_VECS x stages; the
    PREFIX_GIVEN forms get each tile's exclusive prefix from scan.cu's tile_reduce and
    scan_tile_sums_exclusive first (not timed), so their output is the exact cumsum too."""
    import cupy

    import primbench.kernels.scan as scan
    from primbench.api import LaunchContext

    t = scan.CTYPE[dtype]
    ctx = LaunchContext(module, x, n, FORM_BLOCK, device.sm_count, dtype=dtype, **device.sm_limits)
    kernel, _, _, shared = scan.async_kernel_with_shared(ctx, (stages,), lambda s: form_name(t, FORM_VECS, s, form))
    tiles = -(-n // (FORM_BLOCK * FORM_VECS * 4))
    grid = ctx.occupancy_grid(kernel, FORM_BLOCK, elements_per_thread=FORM_VECS * 4, dynamic_shared=shared)
    out = cupy.empty_like(x)
    status = cupy.zeros(tiles, dtype=cupy.uint64)
    counter = cupy.zeros(1, dtype=cupy.uint32)
    sums = cupy.empty(tiles, dtype=x.dtype)
    module.get_function(f"tile_reduce<{t}, {FORM_VECS}>")((tiles,), (FORM_BLOCK,), (x, sums, cupy.uint32(n)))
    module.get_function(f"scan_tile_sums_exclusive<{t}>")((1,), (1024,), (sums, cupy.uint32(tiles)))
    epoch = {"value": 0}

    def run():
        epoch["value"] = epoch["value"] % (2**30 - 1) + 1
        kernel((grid,), (FORM_BLOCK,), (x, out, status, counter, cupy.uint32(n), cupy.uint32(epoch["value"]), cupy.uint32(tiles), sums),
               shared_mem=shared)

    return run, lambda: out, dict(grid=grid, tiles=tiles, shared_kb=shared // 1024)


def tune_one(tuner, modules, dtype: str, n: int, settings, forms=FORMS) -> None:
    """The copy, CUB, the register-held look-back scan, the tile scan with its prefix given, then each
    async-copy setting, at one dtype and size; each output checked exactly on its first call."""
    import cupy
    from cupy.cuda import cub

    import primbench.kernels.scan as scan
    from primbench.api import CaseUnsupported, LaunchContext

    fast_module, async_module, form_module = modules
    device = tuner.device
    x, wanted = exact_case(dtype, n)
    dst = cupy.empty_like(x)
    copy_us = tuner.cold_median_us(lambda: cupy.copyto(dst, x))
    copy_peak = gbps_of(2 * n * 4, copy_us)
    print(f"copy {dtype} n=2^{n.bit_length() - 1}: {copy_us:.1f} us {copy_peak:.0f} GB/s", flush=True)

    def measure(label, operation, result, **extra):
        tuner.measure(f"{dtype} {label}", operation, lambda: bool((result() == wanted).all()), n, 2 * n * 4,
                      copy_gbps=copy_peak, **extra)

    buffer = x.copy()
    measure("cub in place (checked on the first call)", lambda: cub.device_scan(buffer, cub.CUPY_CUB_CUMSUM), lambda: buffer)
    ctx = LaunchContext(fast_module, x, n, 1024, device.sm_count, dtype=dtype, **device.sm_limits)
    plan = scan.lookback_plan(prefetch_status=True)(ctx)
    measure("decoupled_lookback_status_prefetch 1024x8", plan.run, plan.result, tiles=plan.launches[0]["grid"])
    # The same tile scan with its prefix handed to it: reduce-then-scan's third pass alone.
    given = scan.reduce_then_scan_plan()(ctx)
    given.run()
    third = fast_module.get_function(given.launches[2]["kernel"])
    out, sums = given.scratch
    grid = given.launches[2]["grid"]
    measure("tile scan, prefix given (no look-back) 1024x8", lambda: third((grid,), (1024,), (x, out, sums, cupy.uint32(n))),
            lambda: out)
    for block, vecs, stages in settings:
        ctx = LaunchContext(async_module, x, n, block, device.sm_count, dtype=dtype, **device.sm_limits)
        try:
            plan = scan.async_copy_plan(vecs, (stages,))(ctx)
        except CaseUnsupported as exc:
            print(f"{dtype} async copy {block}x{vecs}x{stages}: skipped, {exc}", flush=True)
            continue
        launch = plan.launches[0]
        measure(f"async copy {block}x{vecs}x{stages}", plan.run, plan.result, grid=launch["grid"], tiles=launch["tiles"],
                shared_kb=launch["shared_bytes"] // 1024)
    for label, form, stages in forms:
        try:
            run, result, extra = form_plan(form_module, x, n, dtype, device, form, stages)
        except CaseUnsupported as exc:
            print(f"{dtype} form {form} {label}: skipped, {exc}", flush=True)
            continue
        measure(f"form {form:2d} {FORM_BLOCK}x{FORM_VECS}x{stages} {label}", run, result, **extra)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--settings", nargs="+", default=list(SETTINGS), help="BLOCKxVECSxSTAGES")
    parser.add_argument("--sizes", type=int, nargs="+", default=[28], help="log2 of n")
    parser.add_argument("--dtypes", nargs="+", default=["int32", "float32"], choices=["int32", "float32"])
    parser.add_argument("--ptxas", action="store_true", help="print registers and spills (NVRTC, no GPU) and stop")
    parser.add_argument("--form-dtypes", nargs="*", default=["int32"], choices=["int32", "float32"],
                        help="dtypes at which the diagnostic forms run (none: skip them)")
    parser.add_argument("--json")
    args = parser.parse_args()
    settings = [parse_setting(s) for s in args.settings]
    if args.ptxas:
        ptxas_report(settings)
        return 0

    import primbench.kernels.scan as scan
    from primbench.build import load_module

    tuner = Tuner()
    names = tuple({scan._async_name(scan.CTYPE[d], vecs, stages) for d in scan.DTYPES for _, vecs, stages in settings})
    modules = (load_module(scan.SOURCE, scan._fast_names()), load_module(scan.ASYNC_SOURCE, names),
               load_module(scan.ASYNC_SOURCE, tuple(form_names())))
    for dtype in args.dtypes:
        for log_n in args.sizes:
            tune_one(tuner, modules, dtype, 2**log_n, settings, FORMS if dtype in args.form_dtypes else ())
    tuner.write_json(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
