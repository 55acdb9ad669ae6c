"""Probe, after tools/probe/jitter.py: which figure of a small kernel is stable from machine to machine?
Recipes, interleaved in random order per round (300 rounds), one stream:
- cold:          L2 flush (memset 2 x L2), hold 60 us, the operation (the runner's cold sample under
                 cold protocol 1; it now waits for the flush too: Timer.cold_sample);
- idle_hold60:   2 ms of host sleep first (the GPU idles), then as cold: clock ramp after idle?
- idle_hold2000: as idle_hold60 with a 2 ms hold: does a longer busy spell before the sample help?
- graph1:        as cold, the operation replayed from a CUDA graph (no launch-path cost);
- batch20:       hold, then 20 operations back to back, time / 20 (the runner's batch sample, hot L2);
- graph20:       hold, then one graph of 20 operations, time / 20.
Its loop is its own, not Timer's: graphs of 1 and 20 and idle spells are recipes the protocol
does not offer, and every recipe shares one interleaved loop so that all see the same drift.
Run it on two fresh machines and compare the medians: the stable figure is the one to gate on.
Usage (on the GPU): python -m tools.probe.jitter_stable [OUT.json]"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from tools.common import prepared

CASES = [("reduce/vector_load_sum", 2**10, "float32"), ("reduce/vector_load_sum", 2**16, "float32"),
         ("reduce/vector_load_sum", 2**20, "float32"), ("reduce_max/vector_max", 2**20, "int32"),
         ("scan/decoupled_lookback", 2**20, "int32"), ("reduce/vector_load_sum", 2**24, "float32")]
RECIPES = ["cold", "idle_hold60", "idle_hold2000", "graph1", "batch20", "graph20"]
ROUNDS = 300
K = 20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", help="write every sample and the clocks here (JSON)")
    args = parser.parse_args()

    import cupy

    results = {}
    for key, n, dtype in CASES:
        runner, case, variant, module, x = prepared(key, n, dtype)
        timer = runner.timer
        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            plan = variant.prepare(runner._context(module, x, case))
            for _ in range(20):
                plan.run()
            stream.synchronize()
            graphs = {}
            try:
                for count in (1, K):
                    stream.begin_capture()
                    for _ in range(count):
                        plan.run()
                    graphs[count] = stream.end_capture()
                    graphs[count].upload(stream)
                    graphs[count].launch(stream)
                stream.synchronize()
            except Exception as exc:  # noqa: BLE001 (a plan that cannot be captured: no graph recipes)
                print(f"{key} n={n}: no CUDA graph ({type(exc).__name__}: {exc})", flush=True)
                if stream.is_capturing():
                    stream.end_capture()
                graphs = {}
            l2 = runner.device.l2_bytes
            flush = cupy.empty(2 * l2, dtype=cupy.uint8)
            events = [(cupy.cuda.Event(), cupy.cuda.Event()) for _ in RECIPES]
            samples = {r: [] for r in RECIPES}
            rng = np.random.default_rng(1)
            clocks = [runner.device.clock_state()]
            for _ in range(ROUNDS):
                for index in rng.permutation(len(RECIPES)):
                    recipe = RECIPES[index]
                    start, end = events[index]
                    if recipe.startswith("graph") and not graphs:
                        continue
                    if recipe.startswith("idle"):
                        stream.synchronize()
                        time.sleep(0.002)
                    if recipe in ("cold", "idle_hold60", "idle_hold2000", "graph1"):
                        cupy.cuda.runtime.memsetAsync(flush.data.ptr, 0, flush.nbytes, stream.ptr)
                    timer.hold(2000 if recipe == "idle_hold2000" else 60 if recipe != "batch20" else 60 + K * 40)
                    start.record(stream)
                    if recipe == "graph1":
                        graphs[1].launch(stream)
                    elif recipe == "graph20":
                        graphs[K].launch(stream)
                    elif recipe == "batch20":
                        for _ in range(K):
                            plan.run()
                    else:
                        plan.run()
                    end.record(stream)
                stream.synchronize()
                for recipe, (start, end) in zip(RECIPES, events):
                    if recipe.startswith("graph") and not graphs:
                        continue
                    per = K if recipe in ("batch20", "graph20") else 1
                    samples[recipe].append(cupy.cuda.get_elapsed_time(start, end) * 1e3 / per)
            clocks.append(runner.device.clock_state())
        label = f"{key} {dtype} n=2^{int(np.log2(n))}"
        results[label] = {"samples": samples, "clocks": clocks, "uuid": runner.device.info["uuid"]}
        for recipe in RECIPES:
            s = np.array(samples[recipe])
            if not len(s):
                continue
            p = np.percentile(s, [5, 25, 50, 75, 95])
            print(f"{label:42s} {recipe:14s} median {p[2]:8.3f}  p5 {p[0]:8.3f}  p95 {p[4]:8.3f}  IQR {p[3] - p[1]:6.3f} us",
                  flush=True)
        print(f"{label:42s} clocks {clocks[0].get('sm_clock_mhz')} -> {clocks[1].get('sm_clock_mhz')} MHz", flush=True)
        del flush, plan, x, graphs
        runner._inputs.clear()
    if args.out:
        with open(args.out, "w") as out:
            json.dump(results, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
