"""stencil (1-D blur of radius R, zeros outside the array): inputs, reference, element-wise checks.

The exact input holds integers 0..7: every window sum is an exact float32 integer, so a correct
kernel's output is that sum divided by 2R + 1 in float32, bit for bit, whatever order it adds in;
a wrong halo (a missing neighbour, a boundary read as garbage instead of 0) changes the sum.
The random input is checked against a float64 blur within the plan's bound.

A library that multiplies each input by a rounded weight 1 / (2R + 1) instead of dividing the sum
once (cupyx.scipy.ndimage's uniform filter: RECIPROCAL_WEIGHTS) cannot meet the exact check bit
for bit; its exact input is checked within that arithmetic's bound, which a missing neighbour
(an error of at least 1 / (2R + 1)) still exceeds a hundred thousand times over.
"""

from __future__ import annotations

from primbench.ops import OpChecks, register
from primbench.verify import inputs, outcomes

UNIT_ROUNDOFF = outcomes.FLOAT32_UNIT_ROUNDOFF  # the kernels add and divide in float32
RECIPROCAL_WEIGHTS = ("cupyx_uniform_filter1d",)  # kernels/stencil.py: x * float32(1 / (2R + 1)), added up


def _radius(case) -> int:
    return case.params["radius"]


def window_sums(x, radius: int, xp_dtype):
    """sum_{k=-R..R} x[i + k] with zeros outside, in `xp_dtype` (float64 for the reference, exact for integers)."""
    import cupy

    padded = cupy.concatenate([cupy.zeros(radius, dtype=xp_dtype), x.astype(xp_dtype), cupy.zeros(radius, dtype=xp_dtype)])
    total = cupy.zeros(x.size, dtype=xp_dtype)
    for k in range(2 * radius + 1):  # left to right, like the kernels (exact for integers anyway)
        total += padded[k:k + x.size]
    return total


def exact_input(case, rng_seed: int):
    import cupy

    x = cupy.random.default_rng(rng_seed).integers(0, 8, case.n, dtype=cupy.int64).astype(cupy.float32)
    return x, None  # the expected output depends on the radius: check_exact derives it


def check_exact(result, _expected, x, case) -> dict:
    import cupy

    radius = _radius(case)
    sums = window_sums(x, radius, cupy.float64).astype(cupy.float32)  # exact: at most 33 x 7
    expected = (sums / cupy.float32(2 * radius + 1)).astype(cupy.float64)  # float32 division, as the kernels
    if case.variant in RECIPROCAL_WEIGHTS:
        # 2R + 2 roundings of the window's sum / (2R + 1) (the inputs are >= 0), + the division's own.
        bound = (2 * radius + 2) * UNIT_ROUNDOFF * sums.astype(cupy.float64) / (2 * radius + 1) + UNIT_ROUNDOFF * expected
        return {**outcomes.check_array(result, expected, bound), "arithmetic": "reciprocal weights"}
    return outcomes.check_array(result, expected)


def reference(x, case, rng_seed: int):
    import cupy

    return x.astype(cupy.float64)


def check_random(result, x64, plan, case) -> dict:
    import cupy

    radius = _radius(case)
    width = 2 * radius + 1
    expected = window_sums(x64, radius, cupy.float64) / width
    window_abs = window_sums(cupy.abs(x64), radius, cupy.float64) / width
    tolerance = plan.depth * UNIT_ROUNDOFF * window_abs + UNIT_ROUNDOFF * cupy.abs(expected) + width * 2.0**-53 * window_abs
    check = outcomes.check_array(result, expected, tolerance)
    check["depth"] = plan.depth
    check["reference"] = "float64"
    return check


def _working_bytes(case, itemsize: int) -> int:
    # Two inputs, the output, the float64 copies, window sums and tolerances, the check's temporaries.
    return 3 * case.n * itemsize + 10 * 8 * case.n + (64 << 20)


STENCIL = register(OpChecks(
    op="stencil",
    dtypes=("float32",),
    distributions=("uniform", "normal"),
    exact_input=exact_input,
    random_input=lambda case, rng_seed: inputs.random_input(case.n, case.dtype, case.distribution, rng_seed),
    reference=reference,
    check_exact=check_exact,
    check_random=check_random,
    failure_reason=lambda exact, random: outcomes.array_failure_reason(exact, random, "integers 0..7, exact window sums"),
    working_bytes=_working_bytes,
    input_params=("radius",),
))
