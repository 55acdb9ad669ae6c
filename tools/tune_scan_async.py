#!/usr/bin/env python3
"""Time the async-copy look-back scan (kernels/scan_async.cu, `decoupled_lookback_async_copy`) at a few
template settings beside `decoupled_lookback_status_prefetch`, the same tile scan with its prefix
handed to it, and CUB, to choose its settings (issue 20).

Not part of a run. Each form is run once and its output checked exactly against a cumsum of an input
whose every partial sum is exact in its dtype (the op's own exact input: int32 wraps, float32 holds
integers), then timed cold (L2 flushed) the harness's way; one line per form: median us, GB/s for
2n x 4 bytes, % of the NVML peak and % of a copy measured just before.

A setting is BLOCKxVECSxSTAGES: threads per block, 16-byte vectors per thread (a tile is
BLOCK x VECS x 4 elements) and tile buffers in shared memory (STAGES x the tile's bytes per block).
  python3 tools/tune_scan_async.py                      # 2^28, int32 and float32, the settings below
  python3 tools/tune_scan_async.py --settings 1024x4x3 512x8x2 --sizes 28 25 --json out.json
  python3 tools/tune_scan_async.py --ptxas              # no GPU needed: registers and spills per setting
docs/perf-notes.md records what it found.
"""

import argparse
import re
import sys

from tuning import Tuner, gbps_of

# 1024x4x3: the registered default on the H200 (3 x 64 KB buffers, two tiles in flight);
# 1024x4x2: what it falls back to where 192 KB does not fit (A100), one tile in flight;
# 512x8x2: the same 64 KB tiles with 16 warps, each thread holding 32 elements (as the register scan);
# 1024x2x3: 32 KB tiles, 96 KB per block: two blocks per SM where the registers allow (32 per thread),
#           so that one block's look-back overlaps the other's scan.
SETTINGS = ("1024x4x3", "1024x4x2", "512x8x2", "1024x2x3")


def parse_setting(text: str) -> tuple[int, int, int]:
    match = re.fullmatch(r"(\d+)x(\d+)x(\d+)", text)
    if not match:
        raise SystemExit(f"setting {text!r}: expected BLOCKxVECSxSTAGES, e.g. 1024x4x3")
    return tuple(int(v) for v in match.groups())


def ptxas_report(settings, archs=("sm_90", "sm_80")) -> None:
    """Registers, stack and spills of each instantiation, from ptxas through NVRTC (no GPU)."""
    from cupy.cuda import nvrtc

    import primbench.kernels.scan as scan
    from primbench.build import _options, source_path

    path = source_path(scan.ASYNC_SOURCE)
    names = [scan._async_name(scan.CTYPE[d], vecs, stages) for d in scan.DTYPES for _, vecs, stages in settings]
    names += [scan._lookback_name(scan.CTYPE[d], scan.FAST_VECS, scan.LOOKBACK_WINDOW, True) for d in scan.DTYPES]
    for arch in archs:
        program = nvrtc.createProgram(path.read_text(), path.name, [], [])
        try:
            for name in names:
                nvrtc.addNameExpression(program, name)
            nvrtc.compileProgram(program, [*_options(path), f"-arch={arch}", "--ptxas-options=-v"])
            lowered = {nvrtc.getLoweredName(program, name): name for name in names}
            log = nvrtc.getProgramLog(program)
        finally:
            nvrtc.destroyProgram(program)
        current, spills = None, ""
        for line in log.splitlines():
            entry = re.search(r"Compiling entry function '(\w+)'", line)
            if entry:
                current = lowered.get(entry.group(1), entry.group(1))
            elif "spill" in line:
                spills = re.search(r"\d+ bytes stack frame.*", line).group(0)
            elif "Used" in line and current:
                registers = re.search(r"Used \d+ registers", line).group(0)
                print(f"{arch} {current:48} {registers}; {spills}")


def tune_one(tuner, modules, dtype: str, n: int, settings) -> None:
    """The copy, CUB, the register-held look-back scan, the tile scan with its prefix given, then each
    async-copy setting, at one dtype and size; each output checked exactly on its first call."""
    import cupy
    from cupy.cuda import cub

    import primbench.kernels.scan as scan
    from primbench import ops
    from primbench.api import CaseUnsupported, LaunchContext
    from primbench.model import CaseId

    fast_module, async_module = modules
    device = tuner.device
    x, expected = ops.checks("scan").exact_input(CaseId("scan", "tune", dtype, n, None, "uniform"), 7)
    wanted = expected.astype(x.dtype)  # exact in the dtype (int32 wrapped, float32 integers)
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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--settings", nargs="+", default=list(SETTINGS), help="BLOCKxVECSxSTAGES")
    parser.add_argument("--sizes", type=int, nargs="+", default=[28], help="log2 of n")
    parser.add_argument("--dtypes", nargs="+", default=["int32", "float32"], choices=["int32", "float32"])
    parser.add_argument("--ptxas", action="store_true", help="print registers and spills (NVRTC, no GPU) and stop")
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
    modules = load_module(scan.SOURCE, scan._fast_names()), load_module(scan.ASYNC_SOURCE, names)
    for dtype in args.dtypes:
        for log_n in args.sizes:
            tune_one(tuner, modules, dtype, 2**log_n, settings)
    tuner.write_json(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
