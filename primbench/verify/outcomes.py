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
    """The exact check: an input whose result is known exactly (an op's exact_input), so it must match."""
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


def determinism(bit_patterns: list[bytes], declared: bool) -> tuple[dict, str | None]:
    """Compare the outputs of one input run several times; a declared-deterministic variant must match."""
    equal = len(set(bit_patterns)) == 1
    reason = None
    if declared and not equal:
        reason = (f"declared deterministic, but {len(bit_patterns)} runs of the same input gave "
                  f"{len(set(bit_patterns))} different bit patterns (a race or an order-dependent atomic?)")
    return {"runs": len(bit_patterns), "bitwise_equal": equal}, reason


# -- array outputs (scan and the ops after it) ---------------------------------------------------


def fingerprint(result) -> bytes:
    """The bits of a result, for run-to-run and grid-to-grid comparison: the bytes themselves for a
    small result; for an array, two 64-bit position-weighted sums of its 32-bit words, taken on the
    GPU (a single changed word always changes them: it moves each sum by an odd multiple of the
    change, never 0 mod 2^64)."""
    import cupy

    if result.nbytes <= 64:
        return result.get().tobytes()
    words = result.reshape(-1).view(cupy.uint32) if result.nbytes % 4 == 0 else result.reshape(-1).view(cupy.uint8)
    position = cupy.arange(words.size, dtype=cupy.uint64)
    value = words.astype(cupy.uint64) + cupy.uint64(1)
    first = (value * (position * cupy.uint64(2) + cupy.uint64(1))).sum(dtype=cupy.uint64)
    second = (value * (position * cupy.uint64(0x9E3779B97F4A7C15) | cupy.uint64(1))).sum(dtype=cupy.uint64)
    return cupy.stack([first, second]).get().tobytes()


def check_array(got, expected, tolerance=None) -> dict:
    """Element by element: |got - expected| <= tolerance (an array, or exact when None), NaN never
    passes. Reports the count of bad elements and the worst one (largest error over tolerance)."""
    import cupy

    got64 = got.astype(cupy.float64)
    error = cupy.abs(got64 - expected)
    error = cupy.where(cupy.isnan(error), cupy.inf, error)
    bound = cupy.zeros(1, dtype=cupy.float64) if tolerance is None else tolerance
    bad = error > bound
    mismatches = int(bad.sum())
    # The worst element: the largest error relative to its tolerance (absolute error when exact).
    score = error / cupy.maximum(bound, 1e-300) if tolerance is not None else error
    worst = int(cupy.argmax(score)) if got.size else 0
    check = {
        "ok": mismatches == 0,
        "elements": int(got.size),
        "mismatches": mismatches,
        "worst_index": worst,
        "got": _finite_or_none(float(got64[worst])) if got.size else None,
        "expected": float(expected[worst]) if got.size else None,
        "error": _finite_or_none(float(error[worst])) if got.size else 0.0,
        "tolerance": float(bound[worst] if tolerance is not None else 0.0),
    }
    if mismatches:
        first = int(cupy.argmax(bad))
        check["first_mismatch"] = {"index": first, "got": _finite_or_none(float(got64[first])), "expected": float(expected[first])}
    return check


def _finite_or_none(value: float):
    return value if math.isfinite(value) else None


def array_failure_reason(exact: dict, random: dict, what: str) -> str | None:
    """One line saying what an array check got wrong (`what` names the exact input), or None."""
    for name, check in (("exact check (" + what + ")", exact), ("random-input check", random)):
        if check["ok"]:
            continue
        first = check.get("first_mismatch") or {}
        got = first.get("got")
        if got is None:
            return (f"{name}: {check['mismatches']:,} of {check['elements']:,} elements wrong, the first at index "
                    f"{first.get('index')} is NaN or unwritten (outputs are poisoned first)")
        bound = "" if not check["tolerance"] else f" (tolerance {check['tolerance']:.3g} at the worst element)"
        return (f"{name}: {check['mismatches']:,} of {check['elements']:,} elements wrong; the first, index "
                f"{first['index']}, is {got:.9g} where {first['expected']:.9g} was expected{bound}")
    return None
