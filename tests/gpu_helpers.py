"""What the GPU tests share: a variant's plan prepared and run once as the runner does it."""

from __future__ import annotations

from kernels import LaunchContext
from primbench.build import load_module
from primbench.runner import run_verified


def run_plan(variant, x, n: int, block, sm_count: int, *, dtype: str = "float32", params: dict | None = None,
             grid_scale: float = 1.0):
    """Compile the variant, prepare its plan on `x`, run it once over poisoned outputs (inputs put
    back first where it works in place), and return the plan: its result() is the output."""
    module = load_module(variant.source, variant.kernels) if variant.source else None
    plan = variant.prepare(LaunchContext(module, x, n, block, sm_count, dtype=dtype, grid_scale=grid_scale, params=params or {}))
    run_verified(plan)
    return plan
