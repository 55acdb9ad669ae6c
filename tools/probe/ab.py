"""Probe: is there an A/B bias between two plans of one kernel, and where from? One plan of
vector_load_sum at 2^20 timed against itself, then two plans of it against each other, either way
round, each through Timer.interleaved (primbench ab's sampling: a random order per round) under
four seeds; one line per trial: B/A median ratio, its interval and A's median. An A/B comparison
is only as good as this null result.
Usage (on the GPU): python -m tools.probe.ab
"""

import argparse
import sys

from tools.common import prepared

VARIANT = "reduce/vector_load_sum"
N = 2**20
ROUNDS = 300


def main() -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()

    import numpy as np

    from primbench.runfile import stats

    runner, case, variant, module, x = prepared(VARIANT, N, seed_name="p")
    p1 = variant.prepare(runner._context(module, x, case))
    p2 = variant.prepare(runner._context(module, x, case))
    for label, ops in (("same plan", [p1.run, p1.run]), ("two plans", [p1.run, p2.run]), ("two plans swapped", [p2.run, p1.run])):
        for alternate in (1, 2):
            for trial in range(2):
                a, b = runner.timer.interleaved(ops, ROUNDS, rng_seed=alternate * 10 + trial).samples_ms
                lo, hi = stats.ratio_interval(a, b)
                print(f"{label:18s} seed={alternate * 10 + trial} B/A {np.median(b)/np.median(a):.4f} [{lo:.4f}, {hi:.4f}]  "
                      f"A {np.median(a)*1e3:.2f} us", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
