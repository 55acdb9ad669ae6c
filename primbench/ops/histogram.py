"""histogram: inputs, reference and exact checks, for uint8 samples (256 bins) and int32 samples
(32, 256 or 1024 bins: the case's `bins` parameter; sample v counts in bin v when 0 <= v < bins).

Inputs, generated on the GPU from the case's seed: `uniform` over the bins; `skewed` (90 % of
samples in one bin, the rest uniform); `all_equal` (every sample 7: the worst case for atomics);
`image` (a smooth synthetic 4096-wide picture with a little noise, scaled to the bins: neighbours
share bins, as in real data). The exact input is x_i = (167 i + 13) mod M - OFFSET: M = 256 and no
offset for bytes; M = bins + 8 and OFFSET 4 for int32, so that 4 values below 0 and 4 at or above
`bins` must be dropped. 167 is a prime dividing no M, so every run of M samples holds each value
once and the counts are known without counting. The random input is checked against counts made
by another route than any variant: a sort, then the boundaries between the bin edges.
"""

from __future__ import annotations

from primbench.ops import OpChecks, register
from primbench.verify import outcomes

DISTRIBUTIONS = ("uniform", "skewed", "all_equal", "image")
BYTE_BINS = 256  # a byte is its own bin
SKEWED_BIN, SKEWED_SHARE = 42, 0.9  # the bin is taken modulo the bins
EQUAL_VALUE = 7
IMAGE_WIDTH = 4096
EXACT_MULTIPLIER, EXACT_OUT_OF_RANGE = 167, 4  # int32's exact input: 4 values under 0, 4 past the bins


def bins_of(case) -> int:
    """The case's bin count; 256 (bytes) where the case names none."""
    return case.params.get("bins", BYTE_BINS)


def refuses(dtype: str, params: dict) -> str | None:
    """Why a sample type cannot take these parameters, or None."""
    if dtype == "uint8" and params.get("bins", BYTE_BINS) != BYTE_BINS:
        return f"uint8 samples have {BYTE_BINS} bins (a byte is its own bin); other bin counts need dtypes: [int32]"
    return None


def random_input(case, rng_seed: int):
    import cupy

    n, bins = case.n, bins_of(case)
    dtype = cupy.dtype(case.dtype)
    rng = cupy.random.default_rng(rng_seed)
    if case.distribution in ("uniform", "skewed"):
        uniform = rng.integers(0, bins, n, dtype=cupy.int32).astype(dtype)
        if case.distribution == "uniform":
            return uniform
        return cupy.where(rng.random(n, dtype=cupy.float32) < SKEWED_SHARE, dtype.type(SKEWED_BIN % bins), uniform)
    if case.distribution == "all_equal":
        return cupy.full(n, EQUAL_VALUE, dtype=dtype)
    if case.distribution == "image":
        i = cupy.arange(n, dtype=cupy.float32)
        x, y = i % IMAGE_WIDTH, cupy.floor(i / IMAGE_WIDTH)
        picture = 128 + 80 * cupy.sin(x / 97) * cupy.cos(y / 53) + 30 * cupy.sin((x + y) / 400)
        picture += rng.standard_normal(n, dtype=cupy.float32) * 4
        return cupy.clip(cupy.rint(picture * (bins / 256)), 0, bins - 1).astype(dtype)
    raise ValueError(f"unknown distribution {case.distribution!r}")


def exact_input(case, rng_seed: int):
    """x_i = (167 i + 13) mod M - offset, and its counts: n // M for every bin, + 1 for the bins whose
    value the last partial run of M holds (module docstring)."""
    import cupy

    n, bins = case.n, bins_of(case)
    period, offset = (bins, 0) if case.dtype == "uint8" else (bins + 2 * EXACT_OUT_OF_RANGE, EXACT_OUT_OF_RANGE)
    x = ((cupy.arange(n, dtype=cupy.int64) * EXACT_MULTIPLIER + 13) % period - offset).astype(case.dtype)
    expected = cupy.full(bins, n // period, dtype=cupy.float64)
    tail = x[n - n % period:].astype(cupy.int64)  # the last partial run of M
    tail = tail[(tail >= 0) & (tail < bins)]
    expected[tail] += 1
    return x, expected


def reference(x, case, rng_seed: int):
    """Counts by sorting: the number of samples below each bin edge, differenced (samples outside
    [0, bins) fall below the first edge or past the last and are not counted)."""
    import cupy

    bins = bins_of(case)
    ordered = cupy.sort(x).astype(cupy.int32)  # edges up to 1024 do not fit a uint8
    edges = cupy.searchsorted(ordered, cupy.arange(bins + 1, dtype=cupy.int32), side="left")
    return cupy.diff(edges).astype(cupy.float64)


def _working_bytes(case, itemsize: int) -> int:
    # Two inputs, the sort's copy and its int32 copy and buffers, the image input's float32 temporaries.
    return 4 * itemsize * case.n + 4 * case.n + (24 * case.n if case.distribution == "image" else 0) + (64 << 20)


HISTOGRAM = register(OpChecks(
    op="histogram",
    dtypes=("uint8", "int32"),
    distributions=DISTRIBUTIONS,
    refuses=refuses,
    input_params=("bins",),
    exact_input=exact_input,
    random_input=random_input,
    reference=reference,
    check_exact=lambda result, expected, _x, _case: outcomes.check_array(result, expected),
    check_random=lambda result, expected, _plan, _case: {**outcomes.check_array(result, expected), "reference": "sort"},
    failure_reason=lambda exact, random: outcomes.array_failure_reason(exact, random, "every value equally often"),
    working_bytes=_working_bytes,
))
