"""A test-only variant about 3 % slower than vector_load_sum at 2^28: the same kernel, then the
same kernel again over the first n/48 elements into its own buffers. The result is vector_load_sum's
own, so it verifies; only the time grows: 2 % more DRAM traffic plus the extra launches' few us.
(A first version summed n/32 with cupy.sum in float64: 7.7 % slower at 2^28, far from 3 %.)
`primbench ab` must call it SLOWER with an interval that excludes 1 (tests/gpu/test_ab.py)."""

import dataclasses

from primbench import registry
from primbench.api import register_variant

EXTRA_FRACTION = 48


def _prepare_with_an_extra_pass(ctx):
    base = registry.get("reduce", "vector_load_sum")
    plan = base.prepare(ctx)
    head = max(1, ctx.n // EXTRA_FRACTION)
    extra = base.prepare(dataclasses.replace(ctx, x=ctx.x[:head], n=head))  # its own output buffers

    def run():
        plan.run()
        extra.run()

    return dataclasses.replace(plan, run=run, launches=plan.launches + extra.launches)


register_variant(dataclasses.replace(registry.get("reduce", "vector_load_sum"), name="test_only_slower_sum",
                                     prepare=_prepare_with_an_extra_pass, series="test", order=999, version=1,
                                     notes="test only: vector_load_sum plus the same kernel over n/48 of the input"))
