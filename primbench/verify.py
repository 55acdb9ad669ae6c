"""Verification before timing: poisoned outputs, an exact check, a float check within a declared
tolerance, and determinism (the same input run several times, compared bit for bit)."""

from __future__ import annotations

import math

FLOAT32_UNIT_ROUNDOFF = 2.0**-24


def poison(arrays) -> None:
    """Fill every buffer the operation writes with NaN (floats) or all one bits (integers)."""
    for array in arrays:
        if array.dtype.kind == "f":
            array.fill(math.nan)
        elif array.dtype.kind == "u":
            array.fill(2 ** (8 * array.dtype.itemsize) - 1)
        else:
            array.fill(-1)


def sum_tolerance(depth: int, abs_sum: float, unit_roundoff: float = FLOAT32_UNIT_ROUNDOFF) -> float:
    """Bound on the error of a sum whose elements each pass through `depth` roundings of `unit_roundoff`."""
    return depth * unit_roundoff * abs_sum


def scalar(array) -> float:
    """The single value of a one-element device array, on the host."""
    return float(array.reshape(-1)[0].get())


def check_exact_sum(got: float, expected: float) -> dict:
    """The exact check: an input whose result is known exactly (inputs.exact_input), so it must match."""
    ok = math.isfinite(got) and got == expected
    return {"ok": ok, "got": got if math.isfinite(got) else None, "expected": expected}


def check_float_sum(got: float, reference: float, abs_sum: float, depth: int,
                    unit_roundoff: float = FLOAT32_UNIT_ROUNDOFF, result_rounding: float = 0.0,
                    reference_error: float = 0.0) -> dict:
    """The float check: |got - reference| within the variant's bound for its depth (+ a final
    rounding of the result, + what the reference itself may be off by)."""
    tolerance = sum_tolerance(depth, abs_sum, unit_roundoff) + result_rounding * abs(reference) + reference_error
    error = abs(got - reference) if math.isfinite(got) else math.inf
    return {
        "ok": error <= tolerance,
        "got": got if math.isfinite(got) else None,
        "expected": reference,
        "error": error if math.isfinite(error) else None,
        "tolerance": tolerance,
        "depth": depth,
    }


def check_random(op: str, dtype: str, got: float, ref, depth: int, unit_roundoff: float = FLOAT32_UNIT_ROUNDOFF,
                 result_rounding: float = 0.0, n: int = 1) -> dict:
    """The check on the random input: float sums within depth x unit roundoff x sum|x| (+ the
    plan's result rounding, + the float64 reference's own error when it is not exact); integer
    sums and maxima exactly (max picks an element, it never rounds)."""
    if op == "reduce" and dtype != "int32":
        # A float64 sum of n values errs by at most about log2(n) + 1 roundings of 2^-53 x sum|x|.
        reference_error = 0.0 if ref.exact else (math.ceil(math.log2(max(n, 2))) + 1) * 2.0**-53 * ref.abs_sum
        check = check_float_sum(got, ref.value, ref.abs_sum, depth, unit_roundoff, result_rounding, reference_error)
    else:
        check = check_float_sum(got, ref.value, 0.0, 0)
    check["reference"] = "exact" if ref.exact else "float64"
    check["abs_sum"] = ref.abs_sum  # the scale of the error bound, kept for the accuracy study
    return check


def failure_reason(exact: dict, float_check: dict, op: str = "reduce") -> str | None:
    """One line saying what a failed verification got wrong, or None if it passed."""
    if exact["got"] is None or float_check["got"] is None:
        return "output is NaN after the operation: not written (it was poisoned with NaN first) or NaN computed"
    if not exact["ok"]:
        if op == "reduce_max":
            return (f"exact check: max of negative values with -1.5 planted last gave {exact['got']:g}, expected "
                    f"{exact['expected']:g} (0 means padding with 0 instead of -inf; less, a dropped tail)")
        off = exact["got"] - exact["expected"]
        return (f"exact check: sum of small integers gave {exact['got']:.0f}, expected {exact['expected']} "
                f"(off by {off:+.0f}: elements missed or counted twice)")
    if not float_check["ok"]:
        if not float_check["tolerance"]:
            return f"random-input check: got {float_check['got']!r}, expected exactly {float_check['expected']!r}"
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
