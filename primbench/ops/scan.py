"""scan (inclusive prefix sum): inputs, references and element-by-element checks.

The exact input: int32, uniform integers in [-1000, 1000] whose prefix sums (int64 on the GPU,
wrapped to int32 as the kernels wrap) are exact; float32, the values of inputs.exact_sum_values
(+1, or 1 - 1024), whose every partial sum, over any range, is an integer far below 2^24, so any
order of addition gives the exact prefix sums. A dropped, doubled or misplaced element or tile
offset shows as a wrong prefix from that point on.

The random input is checked element by element: int32 exactly; float32 within the plan's depth x
2^-24 x the prefix sum of |x| (see kernels/scan.py), + the float64 reference's own error.
"""

from __future__ import annotations

from dataclasses import dataclass

from primbench.ops import OpChecks, register
from primbench.verify import inputs, outcomes

DTYPES = ("int32", "float32")  # int32 first: the acceptance case, and exact
DISTRIBUTIONS = ("uniform", "normal")


@dataclass
class ScanReference:
    """The float64 (or exact integer) prefix sums of an input, and the prefix sums of |x|."""

    value: object  # device float64 array
    abs_prefix: object | None  # device float64 array; None for exact (integer) references
    exact: bool


def _wrapped_int32_prefix(x):
    """The int32 prefix sums as the kernels compute them (wrapping modulo 2^32), as float64."""
    import cupy

    return inputs.wrap_int32(cupy.cumsum(x.astype(cupy.int64))).astype(cupy.float64)


def exact_input(case, rng_seed: int):
    """An input whose prefix sums are known exactly, and those sums (a float64 device array)."""
    import cupy

    n, dtype = case.n, case.dtype
    if dtype == "int32":
        x = cupy.random.default_rng(rng_seed).integers(-1000, 1001, n, dtype=cupy.int64).astype(cupy.int32)
        return x, _wrapped_int32_prefix(x)
    draws = cupy.random.default_rng(rng_seed).random(n, dtype=cupy.float64)
    x = inputs.exact_sum_values(draws, cupy)
    return x, cupy.cumsum(x.astype(cupy.int64)).astype(cupy.float64)


def reference(x, case, rng_seed: int) -> ScanReference:
    import cupy

    if case.dtype == "int32":
        return ScanReference(value=_wrapped_int32_prefix(x), abs_prefix=None, exact=True)
    values = x.astype(cupy.float64)
    return ScanReference(value=cupy.cumsum(values), abs_prefix=cupy.cumsum(cupy.abs(values)), exact=False)


def check_random(result, ref: ScanReference, plan, case) -> dict:
    n = case.n
    if ref.exact:
        check = outcomes.check_array(result, ref.value)
    else:
        # The float64 reference errs by at most n x 2^-53 x the prefix sum of |x|, in any order of addition.
        per_unit = plan.depth * plan.unit_roundoff + n * 2.0**-53
        check = outcomes.check_array(result, ref.value, per_unit * ref.abs_prefix)
        check["depth"] = plan.depth
    check["reference"] = "exact" if ref.exact else "float64"
    return check


def _working_bytes(case, itemsize: int) -> int:
    # Two inputs and the output; float64 references (expected, value, prefix |x|); the check's and
    # the fingerprint's float64 and uint64 temporaries; the L2 flush buffer.
    n = case.n
    return 3 * n * itemsize + 3 * 8 * n + 6 * 8 * n + (64 << 20)


SCAN = register(OpChecks(
    op="scan",
    dtypes=DTYPES,
    distributions=DISTRIBUTIONS,
    exact_input=exact_input,
    random_input=lambda case, rng_seed: inputs.random_input(case.n, case.dtype, case.distribution, rng_seed),
    reference=reference,
    check_exact=lambda result, expected, _x, _case: outcomes.check_array(result, expected),
    check_random=check_random,
    failure_reason=lambda exact, random: outcomes.array_failure_reason(exact, random, "integers with exact prefix sums"),
    working_bytes=_working_bytes,
))

