"""What reading each cold sample's SM clock costs: the same operations timed with the hold stamped
(the default) and unstamped, in alternating repetitions, on this GPU. Prints the ratio of the
medians of a ~250 us sum and of an ~8 us one (cold), and the difference of their batch figures.

    python tools/clock_overhead.py [--repeats 10]
"""

from __future__ import annotations

import argparse
import statistics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()

    import cupy

    from primbench.measuring.device import Device
    from primbench.measuring.policy import TimingPolicy
    from primbench.measuring.timing import PRIMBENCH_COLD, ColdProtocol, Timer

    device = Device()
    timer = Timer(device.l2_bytes)
    protocols = {"stamped": PRIMBENCH_COLD, "plain": ColdProtocol(stamped=False)}
    policy = TimingPolicy(min_samples=300, max_samples=300, min_time_s=0.0, max_time_s=60.0, batch_below_us=100.0)
    rng = cupy.random.default_rng(1)
    cases = {"sum of 2^28 float32 (~250 us)": rng.random(2**28, dtype=cupy.float32),
             "sum of 2^21 float32 (~8 us)": rng.random(2**21, dtype=cupy.float32)}
    out = cupy.empty((), dtype=cupy.float32)
    for name, x in cases.items():
        medians = {"stamped": [], "plain": []}
        batches = {"stamped": [], "plain": []}
        clocks = []
        for repeat in range(args.repeats):
            for mode in (("stamped", "plain") if repeat % 2 == 0 else ("plain", "stamped")):
                result = timer.measure(lambda x=x: cupy.sum(x, out=out), policy, protocol=protocols[mode])
                medians[mode].append(statistics.median(result.cold_ms) * 1e3)
                if result.batch_ms:
                    batches[mode].append(statistics.median(result.batch_ms) * 1e3)
                clocks += result.cold_clock_mhz
        stamped, plain = statistics.median(medians["stamped"]), statistics.median(medians["plain"])
        line = (f"{name}: cold median stamped {stamped:.3f} us, plain {plain:.3f} us, "
                f"ratio {stamped / plain:.4f} ({(stamped / plain - 1) * 100:+.2f} %)")
        if batches["stamped"] and batches["plain"]:
            line += (f"; batch stamped {statistics.median(batches['stamped']):.3f} us, plain "
                     f"{statistics.median(batches['plain']):.3f} us, difference "
                     f"{statistics.median(batches['stamped']) - statistics.median(batches['plain']):+.3f} us")
        if clocks:
            line += f"; SM clock median {statistics.median(clocks):.0f} MHz, min {min(clocks):.0f}, max {max(clocks):.0f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
