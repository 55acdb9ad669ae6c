"""Probe: where does the cold-sample jitter of kernels under 20 us come from?

One case at a time, the cold sample is taken with one ingredient changed, 400 samples each, in
interleaved rounds (every recipe sees the same drift):
- flush2x:   the runner's recipe when this probe was written (cold protocol 1): memset of 2 x L2,
             hold kernel, start event, operation, end event; the runner now also waits for the
             memset before the hold (Timer.cold_sample);
- noflush:   no memset (L2 warm from the last sample): what the flush's tail and cold data cost;
- flush1x / flush4x: the memset over 1 x or 4 x L2 (more pages touched: TLB reach);
- kernelflush: the flush as a kernel writing the buffer instead of cudaMemsetAsync;
- longhold:  the hold 10x longer (a memset tail still draining would be hidden by it);
- nohold:    no hold kernel (the host enqueues while the GPU idles);
- sleep:     2 ms of host sleep before each sample (the GPU idles: clock ramp after idle);
- empty:     the events around nothing (event resolution and the recording floor).
Its loop is its own, not Timer.cold_sample: several of these recipes (a kernel flush, a sleep, no
hold, a 4 x L2 flush) are departures the protocol does not offer, taken in one interleaved loop.
Prints one line per case and recipe: median, p5, p95, p99, IQR in us; OUT.json gets every sample.
Usage (on the GPU): python -m tools.probe.jitter [OUT.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from tools.common import prepared

CASES = [("reduce_max/cub_device_max", 2**20, "int32"), ("reduce/vector_load_sum", 2**20, "float32"),
         ("reduce/vector_load_sum", 2**14, "float32"), ("scan/decoupled_lookback", 2**20, "int32"),
         ("reduce/vector_load_sum", 2**24, "float32")]
RECIPES = ["flush2x", "noflush", "flush1x", "flush4x", "kernelflush", "longhold", "nohold", "sleep", "empty"]
ROUNDS = 400


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", help="write every sample here (JSON)")
    args = parser.parse_args()

    import cupy

    results = {}
    for key, n, dtype in CASES:
        runner, case, variant, module, x = prepared(key, n, dtype)
        timer = runner.timer
        plan = variant.prepare(runner._context(module, x, case))
        l2 = runner.device.l2_bytes
        big = cupy.empty(4 * l2, dtype=cupy.uint8)
        writer = cupy.ElementwiseKernel("", "uint8 y", "y = (unsigned char)i", "primbench_probe_fill")
        stream = cupy.cuda.get_current_stream()
        for _ in range(20):
            plan.run()
        writer(big)
        stream.synchronize()
        spin = 60.0
        events = [(cupy.cuda.Event(), cupy.cuda.Event()) for _ in RECIPES]
        samples = {r: [] for r in RECIPES}
        rng = np.random.default_rng(0)

        def memset(nbytes):
            cupy.cuda.runtime.memsetAsync(big.data.ptr, 0, nbytes, stream.ptr)

        for _ in range(ROUNDS):
            for index in rng.permutation(len(RECIPES)):
                recipe = RECIPES[index]
                start, end = events[index]
                if recipe in ("flush2x", "longhold", "nohold", "sleep", "empty"):
                    memset(2 * l2)
                elif recipe == "flush1x":
                    memset(l2)
                elif recipe == "flush4x":
                    memset(4 * l2)
                elif recipe == "kernelflush":
                    writer(big[: 2 * l2])
                if recipe == "sleep":
                    stream.synchronize()
                    time.sleep(0.002)
                if recipe != "nohold" and recipe != "sleep":
                    timer.hold(spin * (10 if recipe == "longhold" else 1))
                start.record()
                if recipe != "empty":
                    plan.run()
                end.record()
            stream.synchronize()  # a round at a time, as the runner enqueues a chunk at a time
            for recipe, (start, end) in zip(RECIPES, events):
                samples[recipe].append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
        results[f"{key} {dtype} n={n}"] = samples
        for recipe in RECIPES:
            s = np.array(samples[recipe])
            p = np.percentile(s, [5, 25, 50, 75, 95, 99])
            print(f"{key:28s} {dtype:8s} n=2^{int(np.log2(n)):2d} {recipe:12s} median {p[2]:8.2f}  p5 {p[0]:8.2f}  "
                  f"p95 {p[4]:8.2f}  p99 {p[5]:8.2f}  IQR {p[3] - p[1]:6.2f} us", flush=True)
        del big, plan, x
        runner._inputs.clear()
    if args.out:
        with open(args.out, "w") as out:
            json.dump(results, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
