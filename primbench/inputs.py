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


EXACT_MODULUS = 1024


def exact_sum_values(uniform01, xp):
    """Map uniform [0, 1) draws to +1 (probability 1023/1024) or -1023: mean 0, every value 1 mod 1024.

    Why these values: every partial sum is an integer far below 2^24 (a random walk of n steps of
    variance 1023 stays within a few times sqrt(1023 n), about 1e6 at n = 2^30), so any summation
    order gives exactly the integer sum; and since every value is 1 mod 1024, dropping or doubly
    counting k elements changes the sum by k mod 1024, never 0 for k < 1024. Values drawn from
    {-2, -1, 1, 2} would let two dropped elements cancel a quarter of the time.
    """
    rare = uniform01 < 1.0 / EXACT_MODULUS
    return xp.where(rare, 1 - EXACT_MODULUS, 1).astype(xp.float32)


def exact_sum_input(n: int, seed: int):
    """Values whose sum every summation order computes exactly (see exact_sum_values), and that sum."""
    import cupy

    rng = cupy.random.default_rng(seed)
    values = exact_sum_values(rng.random(n, dtype=cupy.float64), cupy)
    expected = int(values.astype(cupy.int64).sum())
    return values, expected
