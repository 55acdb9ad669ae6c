"""kernels/stencil_window.cu's arithmetic, emulated on the host (no GPU): the order in which
blur1d_window adds each output's window (a shared core, running suffix and prefix sums) stays within
the stencil op's tolerance model, and its 3-instruction division gives the bits of IEEE division."""

import numpy
import pytest

from primbench.kernels.stencil import RADII, WINDOW_OUTPUTS

F32 = numpy.float32
U = 2.0**-24


def emulate_window_sums(x, radius: int, outputs: int):
    """The window sums of x as blur1d_window<radius, outputs> adds them, in float32: thread chunks of
    `outputs` outputs starting at multiples of `outputs`, split into groups of G = min(K, 2R + 1);
    y_{e0+j} = (S_j + C) + P_j with C the group's common inputs added left to right, S_j the suffix
    sums of the inputs left of C (added from the right), P_j the prefix sums of those right of it."""
    n = x.size
    chunks = -(-n // outputs)
    pad = numpy.zeros(radius, F32)
    padded = numpy.concatenate([pad, x.astype(F32), numpy.zeros(chunks * outputs - n + radius, F32)])
    at = lambda offset: padded[radius + offset + outputs * numpy.arange(chunks)]  # input p + offset of every chunk p
    group = min(outputs, 2 * radius + 1)
    y = numpy.empty((chunks, outputs), F32)
    for e0 in range(0, outputs, group):
        g = min(group, outputs - e0)
        first = e0 - radius  # offset of output e0's leftmost input
        core = at(first + g - 1)
        for k in range(first + g, e0 + radius + 1):
            core = core + at(k)
        y[:, e0 + g - 1] = core
        if g >= 2:
            suffix = at(first + g - 2)
            y[:, e0 + g - 2] = suffix + core
            for j in range(g - 3, -1, -1):
                suffix = at(first + j) + suffix
                y[:, e0 + j] = suffix + core
            prefix = at(e0 + radius + 1)
            y[:, e0 + 1] = y[:, e0 + 1] + prefix
            for j in range(2, g):
                prefix = prefix + at(e0 + radius + j)
                y[:, e0 + j] = y[:, e0 + j] + prefix
    return y.reshape(-1)[:n]


def window_sums64(x, radius: int):
    padded = numpy.concatenate([numpy.zeros(radius), x.astype(numpy.float64), numpy.zeros(radius)])
    return numpy.lib.stride_tricks.sliding_window_view(padded, 2 * radius + 1).sum(axis=1)


@pytest.mark.parametrize("distribution", ["uniform", "normal"])
@pytest.mark.parametrize("radius", RADII)
def test_the_core_and_edge_order_is_within_the_ops_tolerance(radius, distribution):
    # primbench/ops/stencil.py's check_random, in numpy: depth (2R + 1) roundings of the window's
    # sum|x| / (2R + 1), one of |y|, and the float64 reference's own error.
    rng = numpy.random.default_rng(radius)
    n = 2**18 + 13  # not a multiple of any K
    x = (rng.random(n) if distribution == "uniform" else rng.standard_normal(n)).astype(F32)
    width = 2 * radius + 1
    for outputs in sorted({dict(WINDOW_OUTPUTS)[radius], 4, 8, 16, 32}):
        got = (emulate_window_sums(x, radius, outputs) / F32(width)).astype(numpy.float64)
        expected = window_sums64(x, radius) / width
        window_abs = window_sums64(numpy.abs(x), radius) / width
        tolerance = width * U * window_abs + U * numpy.abs(expected) + width * 2.0**-53 * window_abs
        ratio = numpy.abs(got - expected) / tolerance
        assert ratio.max() <= 1.0, (outputs, ratio.max())


@pytest.mark.parametrize("radius", RADII)
def test_exact_inputs_give_exact_sums_whatever_the_order(radius):
    x = numpy.random.default_rng(1).integers(0, 8, 1000 + radius).astype(F32)
    for outputs in (4, 8, 16, 32):
        assert numpy.array_equal(emulate_window_sums(x, radius, outputs), window_sums64(x, radius).astype(F32))


def markstein_divide(a, d: int):
    """divide_in_range<d>: q0 = RN(a c), c = RN(1/d); q = RN(q0 + (a - q0 d) c), the residual exact
    (an FMA), emulated exactly: the residual in float64 (Sterbenz), the last FMA's rounding with an
    error-free float64 sum and the midpoint decided by its low part."""
    c = F32(1) / F32(d)
    q0 = (a * c).astype(F32)
    r64 = a.astype(numpy.float64) - q0.astype(numpy.float64) * d
    r = r64.astype(F32)
    assert numpy.array_equal(r.astype(numpy.float64), r64)  # the FMA's residual is a float32: exact
    p = r.astype(numpy.float64) * numpy.float64(c)  # exact: 48 bits
    q64 = q0.astype(numpy.float64)
    s = q64 + p
    b = s - q64
    low = (q64 - (s - b)) + (p - b)
    t = s.astype(F32)
    up, down = numpy.nextafter(t, F32(numpy.inf)), numpy.nextafter(t, F32(-numpy.inf))
    t = numpy.where((s == (t.astype(numpy.float64) + up) / 2) & (low > 0), up, t)
    return numpy.where((s == (t.astype(numpy.float64) + down) / 2) & (low < 0), down, t)


@pytest.mark.parametrize("radius", RADII)
def test_the_three_instruction_division_gives_ieee_bits_in_its_range(radius):
    # divide_all uses it only for |y| in [2^-96, FLT_MAX]; a binade's significands decide it everywhere
    # in that range (the host check of all of them, and of the range's ends, is in docs/perf-notes.md).
    d = 2 * radius + 1
    significands = numpy.arange(0, 2**23, 5, dtype=numpy.uint32)
    values = [numpy.arange(2**20, dtype=F32)]  # every exact window sum and then some
    for exponent in (0, -96, 127):
        a = (significands + numpy.uint32((exponent + 127) << 23)).view(F32)
        values += [a, -a]
    for a in values:
        assert numpy.array_equal(markstein_divide(a, d).view(numpy.uint32), (a / F32(d)).view(numpy.uint32))
