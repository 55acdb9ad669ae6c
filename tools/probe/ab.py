"""Probe: where does the A/B bias between two plans of one kernel come from? (same plan object
on both sides vs two plans; strict A B A B vs alternating order)"""
import numpy as np

from primbench import registry
from primbench.config import subset
from primbench.run.runner import Runner, rng_seed, input_key
from primbench.runfile import stats

config = subset.variant_config(("reduce/vector_load_sum",), sizes=(2**20,), blocks=None)
(case,) = config.cases()
runner = Runner(config)
variant = registry.get("reduce", "vector_load_sum")
from primbench.build import load_module

module = load_module(variant.source, variant.kernels)
x = runner._inputs_for(case, rng_seed("p", input_key(case)))[2]
p1 = variant.prepare(runner._context(module, x, case))
p2 = variant.prepare(runner._context(module, x, case))
for label, ops in (("same plan", [p1.run, p1.run]), ("two plans", [p1.run, p2.run]), ("two plans swapped", [p2.run, p1.run])):
    for alternate in (1, 2):
        for trial in range(2):
            a, b = runner.timer.interleaved(ops, 300, rng_seed=alternate * 10 + trial)
            lo, hi = stats.ratio_interval(a, b)
            print(f"{label:18s} seed={alternate * 10 + trial} B/A {np.median(b)/np.median(a):.4f} [{lo:.4f}, {hi:.4f}]  A {np.median(a)*1e3:.2f} us")
