"""test_only_small_sum with one extra tiny kernel launch (issue 23): vector_load_sum's kernel again
over 1,024 elements into its own buffers, which adds about 2 us to a 10 us case. The result is
vector_load_sum's own, so it verifies. `check` against a run of tests/plugins/small_sum.py must
call it SLOWER (tests/gpu/test_small_gate.py)."""

import dataclasses

from primbench import registry
from primbench.api import register_variant

TINY = 1024


def _prepare_with_a_tiny_launch(ctx):
    base = registry.get("reduce", "vector_load_sum")
    plan = base.prepare(ctx)
    tiny = base.prepare(dataclasses.replace(ctx, x=ctx.x[:TINY], n=min(TINY, ctx.n)))

    def run():
        plan.run()
        tiny.run()

    return dataclasses.replace(plan, run=run, launches=plan.launches + tiny.launches)


register_variant(dataclasses.replace(registry.get("reduce", "vector_load_sum"), name="test_only_small_sum", series="test",
                                     order=998, prepare=_prepare_with_a_tiny_launch, version=2,
                                     notes="test only: vector_load_sum plus one tiny launch of the same kernel"))
