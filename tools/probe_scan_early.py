#!/usr/bin/env python3
"""Where does decoupled_lookback_early's gain come from? How often its early read finds its
prefix, and what the same kernel does with only a part of that read (tools/scan_early_probe.cu;
int32, block 1024, 8 vectors per thread, beside the registered variants and CUB)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    import cupy
    import numpy
    from cupy.cuda import cub

    import kernels.scan as scan
    from kernels import KERNEL_DIR, LaunchContext
    from primbench import stats
    from primbench.build import BASE_OPTIONS
    from primbench.config import TimingPolicy
    from primbench.device import Device
    from primbench.timing import Timer

    device = Device()
    timer = Timer(device.l2_bytes)
    policy = TimingPolicy(min_samples=20, max_noise=0.005, min_time_s=0.005, max_time_s=0.3, max_samples=300)
    code = (KERNEL_DIR / scan.SOURCE).read_text() + (Path(__file__).parent / "scan_early_probe.cu").read_text()
    modes = {0: "nothing", 1: "memory clobber", 2: "one status read", 3: "early read", 4: "early read, counted",
             5: "read until the barrier, counted", 6: "sleep 500 ns", 7: "sleep 1000 ns", 8: "sleep 2000 ns",
             9: "tile 0's status read", 10: "every warp reads one status", 11: "prefetch.L2 of the predecessor's word",
             12: "prefetch.L2 of the window", 13: "nothing, status zeroed before each call"}
    probes = {mode: f"scan_early_probe<int, {min(mode, 12) if mode != 13 else 0}>" for mode in modes}
    module = cupy.RawModule(code=code, name_expressions=list(scan._fast_names()) + sorted(set(probes.values())), options=BASE_OPTIONS)
    hits = module.get_global("early_hits")
    hits_array = cupy.ndarray((1,), dtype=cupy.uint64, memptr=hits)
    for log_n in (28, 28, 25):  # 2^28 twice: the differences sought are about 1 %
        n = 2**log_n
        x = cupy.random.default_rng(3).integers(-1000, 1001, n, dtype=cupy.int64).astype(cupy.int32)
        wanted = cupy.cumsum(x, dtype=cupy.int64).astype(cupy.int32)

        def report(label, run, result, tiles=None):
            run()
            ok = bool((result() == wanted).all())
            median = stats.summarize(timer.measure(run, policy).cold_ms).median
            rate = ""
            if tiles:
                hits_array[...] = 0
                for _ in range(5):
                    run()
                rate = f" early read found the prefix for {int(hits_array.get()[0]) / (5 * tiles):.1%} of tiles"
            print(f"2^{log_n} {label:40} {median * 1e3:8.1f} us {'ok' if ok else 'WRONG'}{rate}", flush=True)

        buffer = x.copy()
        report("cub", lambda: cub.device_scan(buffer, cub.CUPY_CUB_CUMSUM), lambda: buffer)
        ctx = LaunchContext(module, x, n, 1024, device.sm_count, dtype="int32", **device.sm_limits)
        for early in (False, True):
            plan = scan.lookback_plan(early=early)(ctx)
            report(f"registered, early={early}", plan.run, plan.result)
        tiles = -(-n // (1024 * 32))
        for mode, name in probes.items():
            kernel = module.get_function(name)
            out = cupy.empty_like(x)
            status = cupy.zeros(tiles, dtype=cupy.uint64)
            counter = cupy.zeros(1, dtype=cupy.uint32)
            epoch = {"value": 0}

            def run(kernel=kernel, out=out, status=status, counter=counter, epoch=epoch, mode=mode):
                epoch["value"] += 1
                if mode == 13:
                    cupy.cuda.runtime.memsetAsync(status.data.ptr, 0, status.nbytes, cupy.cuda.get_current_stream().ptr)
                kernel((tiles,), (1024,), (x, out, status, counter, numpy.uint32(n), numpy.uint32(epoch["value"])))
            report(f"probe {mode}: {modes[mode]}", run, lambda out=out: out, tiles if mode in (4, 5) else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
