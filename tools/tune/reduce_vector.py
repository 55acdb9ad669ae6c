"""Measure the knobs of kernels/reduce_vector.cu on the GPU in hand, beside CUB, to choose them.

Not part of a run: it times kernel forms the registry does not hold (unroll factors, block sizes,
the load instruction), checks each result against the float64 sum (within 1e-5 of sum|x|: a
sanity check, not the harness's verification) and prints one line per form. docs/perf-notes.md
records what it found.
Usage: python -m tools.tune.reduce_vector [--json OUT]
"""

import argparse
import itertools
import sys

from tools.common import Tuner

LOADS = {0: "ld.global.nc", 1: "ld.global.nc.L1::no_allocate"}
SIZES = (2**28, 2**27, 2**26, 2**25, 2**22, 2**20)
UNROLLS = (4, 8)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    args = parser.parse_args()

    import cupy
    from cupy.cuda import cub

    import primbench.kernels.reduce_vector as rv
    from primbench.api import LaunchContext
    from primbench.build import load_module
    from primbench.verify import inputs

    tuner = Tuner(max_samples=400)
    device = tuner.device
    names = [rv.kernel_name(t, "float32", "SumFloat", u, load) for t in ("vector_reduce", "fixed_tree_reduce") for u in UNROLLS
             for load in LOADS]
    module = load_module(rv.SOURCE, tuple(names))

    def measure(label, operation, result, n, reference, extra):
        correct = lambda: abs(float(result().get().reshape(-1)[0]) - reference[0]) <= 1e-5 * reference[1]
        tuner.measure(label, operation, correct, n, n * 4, **extra)

    for n in SIZES:
        x = inputs.random_input(n, "float32", "uniform", rng_seed=11)
        x64 = x.astype(cupy.float64)
        reference = (float(x64.sum()), float(cupy.abs(x64).sum()))
        del x64
        state = {}

        def cub_sum():
            state["out"] = cub.cub_reduction(x, cub.CUPY_CUB_SUM)

        measure("cub", cub_sum, lambda: state["out"], n, reference, {})
        for template, load, unroll, block in itertools.product(("vector", "fixed"), LOADS, UNROLLS, (512, 1024)):
            ctx = LaunchContext(module, x, n, block, device.sm_count, dtype="float32", **device.sm_limits)
            make = rv.vector_plan if template == "vector" else rv.fixed_tree_plan
            plan = make({"float32": "SumFloat"}, unroll, l1_mode=load)(ctx)
            measure(f"{template} load={LOADS[load]} U={unroll} block={block}", plan.run, plan.result, n, reference,
                    {"grid": plan.launches[0]["grid"]})
        del x
    tuner.write_json(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
