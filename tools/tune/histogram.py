"""Time the uint8 histogram against the read ceiling on the GPU in hand: kernels/histogram_lanes.cu's
lane-column kernel in a few settings against vector_per_warp, on every input distribution, counts
checked exactly against cupy.bincount; int32 at 2^26 against its read bound; and the counting probe,
which times the shared-memory updates alone (no global load) to show the ceiling any such design has.
Not part of a run; docs/perf-notes.md ("uint8 at the read ceiling") records what it found.

Every histogram line is the whole operation as its plan enqueues it (the memset of the counts, then
the kernel), timed cold (L2 flushed before each sample) the harness's way. "% read" is its bytes
(n x itemsize) at the read probe's rate measured in the same process (primbench_read_probe,
primbench/measuring/ceilings.py), and "x read" the inverse ratio (time / time at the probe's rate).
Usage: python -m tools.tune.histogram [--n 268435456] [--int32-n 67108864] [--skip-int32] [--json out.json]
       python -m tools.tune.histogram --ptxas   # no GPU needed: every instantiation compiles, registers, spills
"""

import argparse
import sys

from tools.common import Tuner, gbps_of, print_ptxas

DISTRIBUTIONS = ("uniform", "skewed", "all_equal", "image")
# (label, kernel template, copies, loads in flight per thread, block): the lane-column kernel
# (copies x 32 KB of shared memory per block), and vector_per_warp's counting with the loads in
# flight (batched_per_warp), which separates what the loads in flight buy from what the columns buy.
SETTINGS = (
    ("lane_columns c1 u4 b256 (registered)", "lane_columns", 1, 4, 256),
    ("lane_columns c1 u8 b256", "lane_columns", 1, 8, 256),
    ("lane_columns c1 u4 b512", "lane_columns", 1, 4, 512),
    ("lane_columns c1 u4 b1024", "lane_columns", 1, 4, 1024),
    ("lane_columns c2 u4 b512", "lane_columns", 2, 4, 512),
    ("batched_per_warp u4 b256", "batched_per_warp", 1, 4, 256),
)
INT32_BINS = (32, 256, 1024)
# The counting probe (histogram_counting_probe<mode, copies>) at the block it is timed with:
# mode 0 lane columns with red.shared, 1 a private 16-bit-pair histogram per lane with plain
# load/add/store (16 KB per warp), 2 a sub-histogram per warp with shared atomics (vector_per_warp).
PROBES = (
    ("probe lane_columns c1 b256 (red.shared, no conflicts)", 0, 1, 256),
    ("probe lane_columns c1 b1024", 0, 1, 1024),
    ("probe lane_columns c2 b512", 0, 2, 512),
    ("probe per-lane private ld/add/st b128 (16 KB/warp)", 1, 1, 128),
    ("probe per-warp atomics b256 (vector_per_warp's)", 2, 1, 256),
)
PROBE_PATTERNS = (("uniform", 0xFFFFFFFF, 0), ("all_equal", 0, 0x07070707))
NEVER = 0x9E3779B9


def setting_kernel(template: str, copies: int, unroll: int) -> str:
    if template == "lane_columns":
        return f"histogram_lane_columns<{copies},{unroll}>"
    return f"histogram_batched_per_warp<unsigned char,256,{unroll}>"


def probe_kernel(mode: int, copies: int) -> str:
    return f"histogram_counting_probe<{mode},{copies}>"


def probe_shared_bytes(mode: int, copies: int, block: int) -> int:
    return {0: copies * 32 * 1024, 1: (block // 32) * 16 * 1024, 2: (block // 32) * 1024}[mode]


def kernel_names() -> tuple[str, ...]:
    """Every instantiation this tool compiles from kernels/histogram_lanes.cu: the registered variant's
    (which the unit tests check for spills) and the settings and probes only this tool launches."""
    from primbench.kernels.histogram import LANE_COPIES, LANE_UNROLL, TYPE_BINS, lane_column_kernel

    names = {setting_kernel(t, c, u) for _label, t, c, u, _b in SETTINGS}
    names |= {lane_column_kernel(dtype, bins, LANE_COPIES, LANE_UNROLL) for dtype, bins in TYPE_BINS}
    names |= {probe_kernel(mode, copies) for _label, mode, copies, _b in PROBES}
    return tuple(sorted(names))


def ptxas_report() -> int:
    """Registers, stack and spills of every instantiation for sm_90 and sm_80, from ptxas through
    NVRTC (no GPU). Exit status 1 if any spills: a spill in a setting or probe would time the local
    memory traffic, not the design."""
    from primbench.kernels.histogram import LANES_SOURCE

    names = kernel_names()
    usages = print_ptxas(LANES_SOURCE, names)
    spilled = [f"{arch} {name}" for (arch, name), kernel in usages.items() if kernel.spilled]
    if len(usages) != 2 * len(names):
        print(f"ptxas reported {len(usages)} of {2 * len(names)} kernels", flush=True)
        return 1
    if spilled:
        print("SPILLS: " + ", ".join(spilled), flush=True)
    return 1 if spilled else 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2**28, help="uint8 samples (default 2^28)")
    parser.add_argument("--int32-n", type=int, default=2**26, help="int32 samples (default 2^26: the same bytes)")
    parser.add_argument("--skip-int32", action="store_true")
    parser.add_argument("--ptxas", action="store_true", help="print registers and spills (NVRTC, no GPU) and stop")
    parser.add_argument("--json", help="write every line here")
    args = parser.parse_args()
    if args.ptxas:
        return ptxas_report()

    import cupy
    import numpy

    from primbench import ops, registry
    from primbench.api import LaunchContext, Plan, check_aligned_16
    from primbench.build import load_module
    from primbench.kernels import histogram as hk
    from primbench.measuring import ceilings
    from primbench.runfile import stats
    from primbench.runfile.case_id import CaseId as Case

    tuner = Tuner()
    device = tuner.device
    sm_count = device.sm_count
    checks = ops.checks("histogram")
    lanes = load_module(hk.LANES_SOURCE, kernel_names())

    read = ceilings.measure_read(tuner.timer, tuner.policy, device)
    read_ms = stats.summarize(read["samples_ms"]).median
    read_gbps = read["bytes"] / (read_ms * 1e-3) / 1e9
    clock = device.info["max_sm_clock_mhz"]  # the clock the H200 holds under load (the run records' NVML readings)
    print(f"read probe: {read_ms * 1e3:.1f} us for {read['bytes']} bytes = {read_gbps:.0f} GB/s (grid {read['grid']}); "
          f"SM clock {clock} MHz, {sm_count} SMs; {device.info['name']}", flush=True)
    tuner.rows.append({"label": "read probe", "us": round(read_ms * 1e3, 2), "gbps": round(read_gbps), "sm_clock_mhz": clock})

    def context(module, x, n, block, dtype, bins):
        return LaunchContext(module, x, n, block, sm_count, dtype=dtype, params={"bins": bins}, **device.sm_limits)

    def registered(name, x, n, block, dtype, bins) -> Plan:
        variant = registry.get("histogram", name)
        return variant.prepare(context(load_module(variant.source, variant.kernels), x, n, block, dtype, bins))

    def batched_plan(ctx, unroll) -> Plan:
        """vector_per_warp's counting (a sub-histogram per warp) with `unroll` loads in flight."""
        name = setting_kernel("batched_per_warp", 1, unroll)
        kernel = ctx.kernel(name)
        shared = ctx.dynamic_shared(kernel, (ctx.block // 32) * 256 * 4)
        grid = ctx.occupancy_grid(kernel, ctx.block, elements_per_thread=16 * unroll, dynamic_shared=shared)
        out = cupy.empty(256, dtype=cupy.uint32)
        check_aligned_16(ctx.x)

        def run():
            hk._zero(out)
            kernel((grid,), (ctx.block,), (ctx.x, numpy.int32(ctx.n), out), shared_mem=shared)

        return Plan(run=run, result=lambda: out, depth=0, launches=[{"kernel": name, "grid": grid, "block": ctx.block}])

    def line(label, dist, plan, x, bins, nbytes):
        wanted = cupy.bincount(x[(x >= 0) & (x < bins)].astype(cupy.int32) if x.dtype != cupy.uint8 else x, minlength=bins)
        plan.run()
        got = plan.result()
        ok = bool(cupy.array_equal(got.astype(cupy.int64), wanted.astype(cupy.int64)))
        us = tuner.cold_median_us(plan.run)
        gbps = gbps_of(nbytes, us)
        grid = [launch.get("grid") for launch in plan.launches if launch.get("grid")]
        row = dict(label=label, dist=dist, dtype=str(x.dtype), bins=bins, n=int(x.size), us=round(us, 2), gbps=round(gbps),
                   pct_read=round(100 * gbps / read_gbps, 1), x_read=round(read_gbps / gbps, 3), grid=grid, ok=ok)
        tuner.rows.append(row)
        print(f"{label:44} {str(x.dtype):5} bins={bins:<4} {dist:9} {us:8.1f} us {gbps:6.0f} GB/s {row['pct_read']:5.1f}% read "
              f"x{row['x_read']:.3f} grid={grid} {'ok' if ok else 'WRONG'}", flush=True)
        return row

    n = args.n
    for dist in DISTRIBUTIONS:
        x = checks.random_input(Case("histogram", "lane_columns", "uint8", n, 256, dist, (("bins", 256),)), rng_seed=1)
        line("vector_per_warp b256", dist, registered("vector_per_warp", x, n, 256, "uint8", 256), x, 256, n)
        for label, template, copies, unroll, block in SETTINGS:
            ctx = context(lanes, x, n, block, "uint8", 256)
            plan = hk.lane_columns_plan(copies, unroll)(ctx) if template == "lane_columns" else batched_plan(ctx, unroll)
            line(label, dist, plan, x, 256, n)
        del x
        cupy.get_default_memory_pool().free_all_blocks()

    if not args.skip_int32:
        m = args.int32_n
        for bins in INT32_BINS:
            for dist in DISTRIBUTIONS:
                x = checks.random_input(Case("histogram", "lane_columns", "int32", m, 256, dist, (("bins", bins),)), rng_seed=1)
                for name in ("vector_per_warp", "lane_columns"):
                    line(f"{name} b256", dist, registered(name, x, m, 256, "int32", bins), x, bins, 4 * m)
                del x
                cupy.get_default_memory_pool().free_all_blocks()

    # The counting probe: 2^28 samples' shared updates (n / 16 vectors made in registers), one wave.
    from cupy.cuda import driver

    sink = cupy.zeros(1, dtype=cupy.uint32)
    vectors = numpy.int32(n // 16)
    for label, mode, copies, block in PROBES:
        kernel = lanes.get_function(probe_kernel(mode, copies))
        shared = probe_shared_bytes(mode, copies, block)
        if shared > 48 * 1024:
            kernel.max_dynamic_shared_size_bytes = shared
        per_sm = driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, block, shared)
        grid = sm_count * max(1, per_sm)
        for pattern, mask, fill in PROBE_PATTERNS:
            def probe(kernel=kernel, grid=grid, block=block, shared=shared, mask=mask, fill=fill):
                kernel((grid,), (block,), (vectors, numpy.uint32(mask), numpy.uint32(fill), numpy.uint32(NEVER), sink),
                       shared_mem=shared)

            us = tuner.cold_median_us(probe)
            per_clock = n / (us * clock * sm_count)  # samples per SM clock per SM
            equivalent = gbps_of(n, us)
            row = dict(label=label, dist=pattern, us=round(us, 2), samples_per_clock_per_sm=round(per_clock, 2),
                       uint8_gbps=round(equivalent), pct_read=round(100 * equivalent / read_gbps, 1), grid=grid, block=block,
                       blocks_per_sm=per_sm)
            tuner.rows.append(row)
            print(f"{label:52} {pattern:9} {us:8.1f} us {per_clock:6.2f} samples/clk/SM = {equivalent:6.0f} GB/s of uint8 "
                  f"({row['pct_read']:.0f}% of read) grid={grid} ({per_sm}/SM)", flush=True)
    tuner.write_json(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
