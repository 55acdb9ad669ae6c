"""Verification before timing: poisoned outputs, an exact check, a float check within a declared
tolerance, and determinism (the same input run several times, compared bit for bit)."""

from __future__ import annotations

import math

FLOAT32_UNIT_ROUNDOFF = 2.0**-24


def poison(arrays) -> None:
    """Fill every buffer the operation writes with NaN (floats) or all ones (integers)."""
    for array in arrays:
        if array.dtype.kind == "f":
            array.fill(math.nan)
        else:
            array.fill(-1)


def sum_tolerance(depth: int, abs_sum: float) -> float:
    """Bound on the float32 error of a sum whose elements each pass through `depth` additions."""
    return depth * FLOAT32_UNIT_ROUNDOFF * abs_sum


def scalar(array) -> float:
    """The single value of a one-element device array, on the host."""
    return float(array.reshape(-1)[0].get())


def check_exact_sum(got: float, expected: int) -> dict:
    """The exact check: small-integer input, so the sum must equal the integer sum exactly."""
    ok = math.isfinite(got) and got == expected
    return {"ok": ok, "got": got if math.isfinite(got) else None, "expected": expected}


def check_float_sum(got: float, reference: float, abs_sum: float, depth: int) -> dict:
    """The float check: |got - float64 reference| within the variant's bound for its depth."""
    tolerance = sum_tolerance(depth, abs_sum)
    error = abs(got - reference) if math.isfinite(got) else math.inf
    return {
        "ok": error <= tolerance,
        "got": got if math.isfinite(got) else None,
        "expected": reference,
        "error": error if math.isfinite(error) else None,
        "tolerance": tolerance,
        "depth": depth,
    }


def failure_reason(exact: dict, float_check: dict) -> str | None:
    """One line saying what a failed verification got wrong, or None if it passed."""
    if exact["got"] is None or float_check["got"] is None:
        return "output is NaN after the operation: not written (it was poisoned with NaN first) or NaN computed"
    if not exact["ok"]:
        off = exact["got"] - exact["expected"]
        return (f"exact check: sum of small integers gave {exact['got']:.0f}, expected {exact['expected']} "
                f"(off by {off:+.0f}: elements missed or counted twice)")
    if not float_check["ok"]:
        return (f"float check: error {float_check['error']:.3g} exceeds the tolerance "
                f"{float_check['tolerance']:.3g} (depth {float_check['depth']})")
    return None


def determinism(bit_patterns: list[bytes], declared: bool) -> tuple[dict, str | None]:
    """Compare the outputs of one input run several times; a declared-deterministic variant must match."""
    equal = len(set(bit_patterns)) == 1
    reason = None
    if declared and not equal:
        reason = (f"declared deterministic, but {len(bit_patterns)} runs of the same input gave "
                  f"{len(set(bit_patterns))} different bit patterns (a race or an order-dependent atomic?)")
    return {"runs": len(bit_patterns), "bitwise_equal": equal}, reason
