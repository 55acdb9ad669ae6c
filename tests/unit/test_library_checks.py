"""How ops/ judges the library baselines, without a GPU (numpy standing in for CuPy: the checks use
only what both offer): top-k from a library that returns any of equal logits passes on the logits
at its indices and fails on a repeated, out-of-range or wrong one; the cupyx stencil's exact input
is held to the bound of its reciprocal-weight arithmetic, the kernels' still to the bit."""

import sys
import types

import numpy
import pytest

from primbench import ops
from primbench.runfile.case_id import CaseId


@pytest.fixture
def numpy_as_cupy(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", numpy)


def _topk_case(k, vocab=300, rows=4, distribution="many_ties"):
    return CaseId("topk", "torch_topk", "float32", rows, None, distribution, {"vocab": vocab, "k": k})


def _ties(rows, vocab, stride):
    x = numpy.full((rows, stride), numpy.inf, dtype=numpy.float32)
    x[:, :vocab] = numpy.random.default_rng(5).integers(1, 5, (rows, vocab)).astype(numpy.float32)
    return x.reshape(-1)


@pytest.mark.parametrize("k", [8, 64])
def test_a_library_top_k_may_pick_any_of_equal_logits_but_no_other(numpy_as_cupy, k):
    rows, vocab, stride = 4, 300, 512
    case = _topk_case(k, vocab, rows)
    x = _ties(rows, vocab, stride)
    logits = x.reshape(rows, stride)[:, :vocab]
    expected = numpy.argsort(-logits, axis=1, kind="stable")[:, :k].astype(numpy.float64).reshape(-1)
    plan = types.SimpleNamespace(ties_in_any_order_of=x)
    check = ops.checks("topk").check_random
    # Another choice among the ties: the stable order's mirror image within each value.
    other = numpy.lexsort((-numpy.arange(vocab)[None, :].repeat(rows, 0), -logits), axis=1)[:, :k]
    assert not numpy.array_equal(other.reshape(-1), expected)
    assert check(other.reshape(-1), expected, plan, case)["ok"]
    for damage in ("repeat", "outside", "smaller"):
        bad = other.copy()
        if damage == "repeat":
            bad[1, 1] = bad[1, 0]
        elif damage == "outside":
            bad[2, 0] = vocab  # the row's +inf padding
        else:
            bad[3, k - 1] = int(numpy.argmin(logits[3]))
        result = check(bad.reshape(-1), expected, plan, case)
        assert not result["ok"] and result["mismatches"] >= 1, damage
    # The kernels' plans carry no such mark: index for index.
    assert not check(other.reshape(-1), expected, types.SimpleNamespace(), case)["ok"]


def test_the_exact_top_k_input_plants_k_distinct_maxima(numpy_as_cupy):
    case = _topk_case(64, vocab=1000, rows=3, distribution="normal")
    x, places = ops.checks("topk").exact_input(case, 9)
    assert places.shape == (3 * 64,)
    rows = x.reshape(3, 1024)
    for row, wanted in zip(rows, places.reshape(3, 64).astype(int)):
        assert numpy.array_equal(numpy.argsort(-row[:1000], kind="stable")[:64], wanted)
        assert wanted[2] == 999  # rank 2 at the last index, as for k = 8


def _reciprocal_blur(x, radius):
    """cupyx's arithmetic in float32: each input times float32(1 / (2R + 1)), added left to right."""
    width = 2 * radius + 1
    weight = numpy.float32(1 / width)
    padded = numpy.concatenate([numpy.zeros(radius, numpy.float32), x, numpy.zeros(radius, numpy.float32)])
    total = numpy.zeros(x.size, numpy.float32)
    for k in range(width):
        total = (total + padded[k:k + x.size] * weight).astype(numpy.float32)
    return total


@pytest.mark.parametrize("radius", [1, 4, 16])
def test_the_cupyx_stencil_is_held_to_its_own_arithmetics_bound_and_the_kernels_to_the_bit(numpy_as_cupy, radius):
    checks = ops.checks("stencil")
    x = numpy.random.default_rng(radius).integers(0, 8, 5000).astype(numpy.float32)
    got = _reciprocal_blur(x, radius)
    library = CaseId("stencil", "cupyx_uniform_filter1d", "float32", x.size, None, "uniform", {"radius": radius})
    kernel = CaseId("stencil", "blur1d_naive_global", "float32", x.size, 256, "uniform", {"radius": radius})
    assert checks.check_exact(got, None, x, library)["ok"]
    assert not checks.check_exact(got, None, x, kernel)["ok"]  # not the divided sum, bit for bit
    missing = got.copy()
    missing[0] -= numpy.float32(x[0] / (2 * radius + 1)) if x[0] else -numpy.float32(1 / (2 * radius + 1))
    assert not checks.check_exact(missing, None, x, library)["ok"]  # a lost neighbour is still caught
