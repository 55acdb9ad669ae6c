"""Inputs, generated on the GPU from a recorded seed (never zeros), and their references.

Two inputs per case: an *exact* one, built so that any correct kernel must give one known value
bit for bit (a dropped or doubled element always shows), and a *random* one of the case's
distribution, checked against a float64 or exact reference within the variant's tolerance.

bfloat16 has no NumPy or CuPy dtype: its arrays hold the raw 16-bit words (uint16) and the
kernels widen them (a bfloat16 is the top half of a float32).
"""

from __future__ import annotations

from dataclasses import dataclass

ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "int32": 4, "uint8": 1}
DESCRIPTIONS = {
    "uniform": "U[0, 1) (integers: uniform in [-1000, 1000])",
    "normal": "N(0, 1) (integers: N(0, 1000^2) rounded)",
    "ill_conditioned": "pairs +v, -v with |v| = 2^U(-10, 14) (24 binades), shuffled with n/1024 values of U[0, 1): "
                       "the exact sum is that of the small values, about 10^-6 of sum |x| (int32: random signs, "
                       "magnitudes 2^U(0, 30))",
}
ILL_MIN_EXPONENT = -10
ILL_MAX_EXPONENT = 14
ILL_SIGNAL_SHARE = 1024  # one element in this many is a small value that survives the cancellation


def itemsize(dtype: str) -> int:
    return ITEMSIZE[dtype]


def storage_dtype(dtype: str) -> str:
    """The NumPy/CuPy dtype an input of `dtype` is stored as on the GPU."""
    return "uint16" if dtype == "bfloat16" else dtype


def _to_bfloat16_bits(values32, xp):
    """float32 -> bfloat16 words, rounding to nearest even (what __float2bfloat16 does)."""
    bits = values32.astype(xp.float32).view(xp.uint32)
    rounding = xp.uint32(0x7FFF) + ((bits >> 16) & xp.uint32(1))
    return ((bits + rounding) >> 16).astype(xp.uint16)


def from_float32(values32, dtype: str, xp):
    """Convert float32 values to the storage of `dtype` (rounding as the GPU would)."""
    if dtype == "bfloat16":
        return _to_bfloat16_bits(values32, xp)
    return values32.astype(dtype)


def to_float64(x, dtype: str, xp):
    """The values an input of `dtype` holds, as float64 (int32 as int64: exact)."""
    if dtype == "bfloat16":
        return (x.astype(xp.uint32) << 16).view(xp.float32).astype(xp.float64)
    if dtype == "int32":
        return x.astype(xp.int64)
    return x.astype(xp.float64)


def random_input(n: int, dtype: str, distribution: str, rng_seed: int):
    """n values of `distribution` in `dtype` (see DESCRIPTIONS)."""
    import cupy

    rng = cupy.random.default_rng(rng_seed)
    if dtype == "int32":
        if distribution == "uniform":
            return rng.integers(-1000, 1001, n, dtype=cupy.int64).astype(cupy.int32)
        if distribution == "normal":
            return cupy.rint(rng.standard_normal(n, dtype=cupy.float32) * 1000).astype(cupy.int32)
        if distribution == "ill_conditioned":  # wide magnitudes, random signs; sums wrap mod 2^32
            magnitude = cupy.exp2(rng.random(n, dtype=cupy.float32) * 30).astype(cupy.int64)
            return (magnitude * (2 * rng.integers(0, 2, n, dtype=cupy.int64) - 1)).astype(cupy.int32)
        raise ValueError(f"unknown distribution {distribution!r}")
    if distribution == "uniform":
        values = rng.random(n, dtype=cupy.float32)
    elif distribution == "normal":
        values = rng.standard_normal(n, dtype=cupy.float32)
    elif distribution == "ill_conditioned":
        return ill_conditioned_input(n, dtype, rng_seed)
    else:
        raise ValueError(f"unknown distribution {distribution!r}")
    return from_float32(values, dtype, cupy)


def _ill_conditioned_signal(n: int, dtype: str, rng_seed: int):
    """The small values of the ill-conditioned input: float32 U[0, 1) draws. CuPy's generator gives
    multiples of 2^-33 (curand_uniform), so a float64 sum of up to 2^20 of them (below 2^20, on a
    2^-33 grid: at most 53 bits) is exact; rounding to float16 or bfloat16 keeps them on that grid."""
    import cupy

    pairs = (n - max(1, n // ILL_SIGNAL_SHARE)) // 2
    signal = cupy.random.default_rng(rng_seed ^ 0x5EED).random(n - 2 * pairs, dtype=cupy.float32)
    return pairs, from_float32(signal, dtype, cupy)


def ill_conditioned_input(n: int, dtype: str, rng_seed: int):
    """Pairs +v and -v (random signs, |v| log-uniform over 2^-10..2^14, full float32 mantissas)
    and n/1024 small values, shuffled together.

    Why: a sum with a wide dynamic range and heavy cancellation is where summation order
    matters: the partial sums grow like sqrt(n) times the large values, while the result is only
    the small values' sum (sum |x| is about 10^6 times |sum|). Each pair cancels exactly in any
    format (rounding to nearest is symmetric), so the exact result is known: see
    ill_conditioned_exact_sum.
    """
    import cupy

    pairs, signal = _ill_conditioned_signal(n, dtype, rng_seed)
    rng = cupy.random.default_rng(rng_seed)
    exponent = ILL_MIN_EXPONENT + rng.random(pairs, dtype=cupy.float32) * (ILL_MAX_EXPONENT - ILL_MIN_EXPONENT)
    v = cupy.exp2(exponent) * cupy.where(rng.random(pairs, dtype=cupy.float32) < 0.5, -1.0, 1.0).astype(cupy.float32)
    v = from_float32(v, dtype, cupy)
    negated = from_float32(-to_float64(v, dtype, cupy).astype(cupy.float32), dtype, cupy)
    values = cupy.concatenate([v, negated, signal])
    return values[cupy.argsort(rng.random(n, dtype=cupy.float64))]  # a random permutation


def ill_conditioned_exact_sum(n: int, dtype: str, rng_seed: int) -> float:
    """The exact sum of ill_conditioned_input(n, dtype, rng_seed): the pairs cancel, the small values remain."""
    import cupy

    _pairs, signal = _ill_conditioned_signal(n, dtype, rng_seed)
    return float(to_float64(signal, dtype, cupy).sum())


@dataclass
class Reference:
    """What a random input's result must be, and what bounds the error."""

    value: float  # float64 (or exact integer) result
    abs_sum: float  # sum of |x|: scales the float error bound
    exact: bool  # True when `value` is the exact result, not a float64 approximation
    serial_float32: float | None = None  # a left-to-right float32 loop's answer (accuracy study)


def wrap_int32(total):
    """An integer sum (an int, or an int64 array) as int32 arithmetic leaves it: modulo 2^32, signed."""
    return (total + 2**31) % 2**32 - 2**31


def serial_float32_sum(host_values) -> float:
    """A float32 loop from the first element to the last (numpy's cumsum is sequential)."""
    import numpy

    carry = numpy.float32(0.0)
    chunk = 1 << 24
    for start in range(0, len(host_values), chunk):
        part = host_values[start:start + chunk].astype(numpy.float32, copy=True)
        part[0] = numpy.float32(part[0] + carry)
        carry = numpy.cumsum(part, dtype=numpy.float32)[-1]
    return float(carry)


# -- the exact inputs --------------------------------------------------------------------------

EXACT_MODULUS = 1024


def exact_modulus(dtype: str) -> int:
    """bfloat16 holds 8 significant bits, so its 'rare' value is -255 (1 mod 256), not -1023."""
    return 256 if dtype == "bfloat16" else EXACT_MODULUS


def exact_sum_values(uniform01, xp, modulus: int = EXACT_MODULUS):
    """Map uniform [0, 1) draws to +1 (probability 1 - 1/modulus) or 1 - modulus: mean 0, every value 1 mod modulus.

    Why these values: every partial sum is an integer far below 2^24 (a random walk of n steps of
    variance about `modulus` stays within a few times sqrt(modulus n), about 1e6 at n = 2^30), so
    any summation order gives exactly the integer sum; and since every value is 1 mod `modulus`,
    dropping or doubly counting k elements changes the sum by k mod `modulus`, never 0 for
    k < modulus. Values drawn from {-2, -1, 1, 2} would let two dropped elements cancel a quarter of the time.
    """
    rare = uniform01 < 1.0 / modulus
    return xp.where(rare, 1 - modulus, 1).astype(xp.float32)
