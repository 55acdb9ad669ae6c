"""Verifying one case before it is timed: the sequence the runner follows and the GPU tests call.

For a case, on its exact input (whose answer is known) and on its random input (against the op's
reference): outputs poisoned, the plan run, the result checked; then the same input run again to
see the same bits (determinism), and again with the grid scaled (the reproducibility probe). The
op's checks (primbench/ops/<op>.py, handed in by the caller) say what "right" is; this module
only keeps the order, so it sits below ops/ and never imports it.
"""

from __future__ import annotations

from dataclasses import dataclass

from primbench.runfile.case_id import CaseId
from primbench.verify import outcomes

# The reproducibility probe runs each plan again with its grid scaled by these factors.
GRID_PROBE_SCALES = (0.5, 2.0)


@dataclass
class Verified:
    """What verifying a case found, and the random input's plan, ready to be timed."""

    plan: object  # primbench.variant.Plan
    launches: tuple
    verify: dict  # {"exact": ..., "random": ..., "written": ...}
    determinism: dict  # repeated runs and scaled grids: the same bits?
    reason: str | None  # why the case fails, or None when it passed every check


def run_verified(plan, poison: bool = True) -> None:
    """One run whose result is checked: outputs poisoned first, in-place inputs restored."""
    if plan.restore is not None:
        plan.restore()
    if poison:
        outcomes.poison(plan.scratch)
    plan.run()


def verify_case(case: CaseId, variant, inputs: tuple, make_context, *, checks, determinism_runs: int) -> Verified:
    """Check `case` with `inputs` = (exact input, its expected result, random input, its reference)
    by its op's `checks` (ops.OpChecks); `make_context(x, grid_scale)` gives the LaunchContext for x. Raises only what the kernel
    or the GPU raises (a build error, CaseUnsupported, a CUDA error): the caller records those."""
    x_exact, expected, x, reference = inputs
    plan_exact = variant.prepare(make_context(x_exact, 1.0))
    run_verified(plan_exact)
    exact = checks.check_exact(plan_exact.result(), expected, x_exact, case)
    del plan_exact

    plan = variant.prepare(make_context(x, 1.0))
    run_verified(plan)
    first = outcomes.fingerprint(plan.result())
    random_check = checks.check_random(plan.result(), reference, plan, case)
    patterns = [first]
    for _ in range(determinism_runs - 1):
        run_verified(plan, poison=False)
        patterns.append(outcomes.fingerprint(plan.result()))
    determinism, nondeterministic = outcomes.determinism(patterns, variant.deterministic_expected)
    determinism["result_hex"] = first.hex()
    determinism["across_grids"] = probes = _grid_probe(variant, x, make_context, plan.launches, first)
    grid_dependent = None
    if variant.grid_independent and not all(p["bitwise_equal"] for p in probes):
        grid_dependent = ("declared grid-independent, but another grid gave other bits: "
                          + ", ".join(f"x{p['grid_scale']} (grids {p['grids']})" for p in probes if not p["bitwise_equal"]))
    reason = checks.failure_reason(exact, random_check) or nondeterministic or grid_dependent
    return Verified(plan, tuple(plan.launches), {"exact": exact, "random": random_check, "written": random_check["got"] is not None},
                    determinism, reason)


def _grid_probe(variant, x, make_context, launches: list, first: bytes) -> list[dict]:
    """The same input with the grid scaled: does the result keep its bits? (skipped where the
    variant's grid is fixed by n and the block size, or chosen by a library)"""
    tried = []
    for scale in GRID_PROBE_SCALES:
        plan = variant.prepare(make_context(x, scale))
        if plan.launches == launches:
            continue
        run_verified(plan)
        tried.append({"grid_scale": scale, "grids": [launch["grid"] for launch in plan.launches],
                      "bitwise_equal": outcomes.fingerprint(plan.result()) == first})
    return tried
