"""What the GPU tests share: a case verified by the runner's own sequence (checking.verify_case),
and a variant's plan prepared and run once as the runner does it, for tests of one kernel's output."""

from __future__ import annotations

import functools

import pytest

from primbench import ops, registry
from primbench.api import CaseUnsupported, LaunchContext
from primbench.build import load_module
from primbench.run.runner import input_key
from primbench.runfile.case_id import CaseId
from primbench.verify.sequence import Verified, run_verified, verify_case


@functools.lru_cache(maxsize=1)
def device_limits() -> dict:
    """This GPU's threads and blocks per SM and opt-in shared memory, which the runner passes too."""
    from primbench.measuring.device import Device

    return Device().sm_limits


def _context(variant, x, case: CaseId, sm_count: int, grid_scale: float = 1.0) -> LaunchContext:
    module = load_module(variant.source, variant.kernels) if variant.source else None
    return LaunchContext(module, x, case.n, case.block, sm_count, dtype=case.dtype, grid_scale=grid_scale,
                         params=dict(case.params), **device_limits())


_INPUTS: dict = {}
_SKIPPED: list = []  # why the last case this GPU could not run was skipped (a missing library names its package)


def op_inputs(case: CaseId, rng_seed: int) -> tuple:
    """(exact input, its expected result, random input, its reference) from the op's own checks,
    as the runner makes them (random input and reference at seed + 1); one input key at a time."""
    key = (input_key(case), rng_seed)
    if key not in _INPUTS:
        _INPUTS.clear()  # large inputs of several dtypes add up
        checks = ops.checks(case.op)
        exact, expected = checks.exact_input(case, rng_seed)
        x = checks.random_input(case, rng_seed + 1)
        _INPUTS[key] = (exact, expected, x, checks.reference(x, case, rng_seed + 1))
    return _INPUTS[key]


def verify_like_the_runner(case: CaseId, sm_count: int, inputs: tuple | None = None, *, rng_seed: int = 11,
                           determinism_runs: int = 2) -> Verified | None:
    """The runner's verification of `case` (exact and random checks, determinism, the grid probe),
    or None where this GPU cannot run it (the runner records it skipped). The returned plan has just
    run once more on the random input, so that its result() is that input's output."""
    variant = registry.get(case.op, case.variant)
    inputs = inputs if inputs is not None else op_inputs(case, rng_seed)
    try:
        verified = verify_case(case, variant, inputs, lambda x, scale: _context(variant, x, case, sm_count, scale),
                               checks=ops.checks(case.op), determinism_runs=determinism_runs)
    except CaseUnsupported as exc:
        _SKIPPED[:] = [str(exc)]
        return None
    run_verified(verified.plan)
    return verified


def verify_every_block(cases, sm_count: int, inputs: tuple | None = None) -> list[tuple[CaseId, Verified]]:
    """verify_like_the_runner for each case: (case, what it found) for those this GPU runs. Fails
    the test naming the first case that fails a check; skips it where the GPU runs none."""
    verified = []
    for case in cases:
        result = verify_like_the_runner(case, sm_count, inputs)
        if result is None:
            continue
        assert result.reason is None, f"{case.label}: {result.reason}"
        verified.append((case, result))
    if not verified:
        pytest.skip(f"this GPU can run none of these cases: {_SKIPPED[0] if _SKIPPED else 'none was given'}")
    return verified


def run_plan(variant, x, n: int, block, sm_count: int, *, dtype: str = "float32", params: dict | None = None,
             grid_scale: float = 1.0):
    """Compile the variant, prepare its plan on `x` with this GPU's limits, run it once over poisoned
    outputs (inputs put back first where it works in place), and return the plan: its result() is
    the output. A case this GPU cannot run is skipped, as the runner skips it."""
    case = CaseId(variant.op, variant.name, dtype, n, block, None, params or {})
    try:
        plan = variant.prepare(_context(variant, x, case, sm_count, grid_scale))
    except CaseUnsupported as exc:
        pytest.skip(f"{variant.key} block={block}: {exc}")
    run_verified(plan)
    return plan
