"""histogram (256 bins of uint8 samples): inputs, reference and exact checks.

Inputs, generated on the GPU from the case's seed: `uniform` bytes; `skewed` (90 % of samples in
bin 42, the rest uniform); `all_equal` (every sample 7: the worst case for atomics); `image` (a
smooth synthetic 4096-wide picture with a little noise: neighbours share bins, as in real data).
The exact input is x_i = (167 i + 13) mod 256: 167 is odd, so every run of 256 samples holds each
byte once and the counts are known without counting. The random input is checked against counts
made by another route than any variant: a sort, then the boundaries between equal values.
"""

from __future__ import annotations

from primbench import verify
from primbench.ops import OpChecks, register

BINS = 256
DISTRIBUTIONS = ("uniform", "skewed", "all_equal", "image")
SKEWED_BIN, SKEWED_SHARE = 42, 0.9
EQUAL_VALUE = 7
IMAGE_WIDTH = 4096


def random_input(case, seed: int):
    import cupy

    n = case.n
    rng = cupy.random.default_rng(seed)
    if case.distribution in ("uniform", "skewed"):
        uniform = rng.integers(0, BINS, n, dtype=cupy.int32).astype(cupy.uint8)
        if case.distribution == "uniform":
            return uniform
        return cupy.where(rng.random(n, dtype=cupy.float32) < SKEWED_SHARE, cupy.uint8(SKEWED_BIN), uniform)
    if case.distribution == "all_equal":
        return cupy.full(n, EQUAL_VALUE, dtype=cupy.uint8)
    if case.distribution == "image":
        i = cupy.arange(n, dtype=cupy.float32)
        x, y = i % IMAGE_WIDTH, cupy.floor(i / IMAGE_WIDTH)
        picture = 128 + 80 * cupy.sin(x / 97) * cupy.cos(y / 53) + 30 * cupy.sin((x + y) / 400)
        picture += rng.standard_normal(n, dtype=cupy.float32) * 4
        return cupy.clip(cupy.rint(picture), 0, 255).astype(cupy.uint8)
    raise ValueError(f"unknown distribution {case.distribution!r}")


def exact_input(case, seed: int):
    """x_i = (167 i + 13) mod 256, and its counts: n // 256 for every bin, + 1 for the bins of the
    last partial run of 256."""
    import cupy

    n = case.n
    x = ((cupy.arange(n, dtype=cupy.int64) * 167 + 13) % BINS).astype(cupy.uint8)
    expected = cupy.full(BINS, n // BINS, dtype=cupy.float64)
    tail = (cupy.arange(n % BINS, dtype=cupy.int64) * 167 + 13) % BINS
    expected[tail] += 1
    return x, expected


def reference(x, case, seed: int):
    """Counts by sorting: the number of samples below each bin edge, differenced."""
    import cupy

    ordered = cupy.sort(x)
    # Edges 0..256 as int32: 256 does not fit a uint8, and searchsorted compares the values.
    edges = cupy.searchsorted(ordered.astype(cupy.int32), cupy.arange(BINS + 1, dtype=cupy.int32), side="left")
    return cupy.diff(edges).astype(cupy.float64)


def _working_bytes(case, itemsize: int) -> int:
    # Two inputs, the sort's copy and its buffers, the image input's float32 temporaries.
    return 2 * case.n + 2 * case.n + 4 * case.n + (24 * case.n if case.distribution == "image" else 0) + (64 << 20)


HISTOGRAM = register(OpChecks(
    op="histogram",
    dtypes=("uint8",),
    distributions=DISTRIBUTIONS,
    exact_input=exact_input,
    random_input=random_input,
    reference=reference,
    check_exact=lambda result, expected, _x, _case: verify.check_array(result, expected),
    check_random=lambda result, expected, _plan, _case: {**verify.check_array(result, expected), "reference": "sort"},
    failure_reason=lambda exact, random: verify.array_failure_reason(exact, random, "every byte equally often"),
    working_bytes=_working_bytes,
))
