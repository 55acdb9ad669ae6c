"""Random inputs, generated on the GPU from a recorded seed; never zeros."""

from __future__ import annotations

# The input distributions each op accepts (a sweep axis in the YAML).
DISTRIBUTIONS = {
    "reduce": ("uniform", "normal"),
}
DTYPES = {
    "reduce": ("float32",),
}


def random_input(n: int, dtype: str, distribution: str, seed: int):
    """n values of `distribution`: uniform is U[0, 1), normal is N(0, 1)."""
    import cupy

    rng = cupy.random.default_rng(seed)
    if distribution == "uniform":
        values = rng.random(n, dtype=cupy.float32)
    elif distribution == "normal":
        values = rng.standard_normal(n, dtype=cupy.float32)
    else:
        raise ValueError(f"unknown distribution {distribution!r}")
    return values.astype(dtype, copy=False)


def exact_sum_input(n: int, seed: int):
    """Values drawn from {-2, -1, 1, 2} as float32, and their exact sum.

    Every partial sum of such values is an integer far below 2^24 (a random walk of n steps stays
    within a few sqrt(n)), so any summation order gives exactly the integer sum: a missed or
    doubly counted element always shows, whatever the tolerance of the float check.
    """
    import cupy

    rng = cupy.random.default_rng(seed)
    index = rng.integers(0, 4, size=n, dtype=cupy.int32)
    values = (index - 2 + (index >= 2)).astype(cupy.float32)  # 0,1,2,3 -> -2,-1,1,2
    expected = int(values.astype(cupy.int64).sum())
    return values, expected
