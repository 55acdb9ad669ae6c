"""What the GPU tests share: a variant's plan prepared and run once as the runner does it."""

from __future__ import annotations

import functools

import pytest

from primbench.api import CaseUnsupported, LaunchContext
from primbench.build import load_module
from primbench.runner import run_verified


@functools.lru_cache(maxsize=1)
def device_limits() -> dict:
    """This GPU's threads and blocks per SM and opt-in shared memory, which the runner passes too."""
    from primbench.device import Device

    return Device().sm_limits


def run_plan(variant, x, n: int, block, sm_count: int, *, dtype: str = "float32", params: dict | None = None,
             grid_scale: float = 1.0):
    """Compile the variant, prepare its plan on `x` with this GPU's limits, run it once over poisoned
    outputs (inputs put back first where it works in place), and return the plan: its result() is
    the output. A case this GPU cannot run is skipped, as the runner skips it."""
    module = load_module(variant.source, variant.kernels) if variant.source else None
    context = LaunchContext(module, x, n, block, sm_count, dtype=dtype, grid_scale=grid_scale, params=params or {}, **device_limits())
    try:
        plan = variant.prepare(context)
    except CaseUnsupported as exc:
        pytest.skip(f"{variant.key} block={block}: {exc}")
    run_verified(plan)
    return plan
