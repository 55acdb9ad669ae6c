"""One case made ready for a probe (tools/jitter_probe*.py): its runner, variant, compiled module and
random input, exactly as the runner would make them."""

from __future__ import annotations

from primbench import registry
from primbench.build import load_module
from primbench.config import subset
from primbench.run.runner import Runner, rng_seed, input_key


def prepared(variant_key: str, n: int, dtype: str, seed_name: str = "jitter"):
    """(runner, case, variant, module, x) for `variant_key` at size n and dtype."""
    config = subset.variant_config((variant_key,), sizes=(n,), blocks=None, dtypes=(dtype,))
    case = config.cases()[0]
    runner = Runner(config)
    variant = registry.get(case.op, case.variant)
    module = load_module(variant.source, variant.kernels) if variant.source else None
    x = runner._inputs_for(case, rng_seed(seed_name, input_key(case)))[2]
    return runner, case, variant, module, x
