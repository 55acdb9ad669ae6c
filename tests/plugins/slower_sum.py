"""A test-only variant about 3 % slower than vector_load_sum at 2^28: the same kernel, then one
extra dependent pass that reads 1/32 of the input again (CUB's sum of the first n/32 elements into
a scratch value). The result is vector_load_sum's own, so it verifies; only the time grows, by the
extra bytes: 1/32 = 3.1 % more DRAM traffic. `primbench ab` must call it SLOWER with an interval
that excludes 1 (tests/gpu/test_ab.py)."""

import dataclasses

from primbench import registry
from primbench.api import register_variant


def _prepare_with_an_extra_pass(ctx):
    import cupy

    plan = registry.get("reduce", "vector_load_sum").prepare(ctx)
    head = ctx.x[: max(1, ctx.n // 32)]
    scratch = cupy.empty((), dtype=cupy.float64)

    def run():
        plan.run()
        cupy.sum(head, dtype=cupy.float64, out=scratch)

    return dataclasses.replace(plan, run=run, launches=plan.launches + [{"kernel": "cub sum of n/32", "grid": None}])


register_variant(dataclasses.replace(registry.get("reduce", "vector_load_sum"), name="test_only_slower_sum",
                                     prepare=_prepare_with_an_extra_pass, series="test", order=999, version=1,
                                     notes="test only: vector_load_sum plus a pass over n/32 of the input"))
