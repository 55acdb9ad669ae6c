"""How ops/ judges the library baselines and the k axis, without a GPU (numpy standing in for CuPy:
the checks use only what both offer): top-k's exact input plants k distinct maxima."""

import sys

import numpy
import pytest

from primbench import ops
from primbench.runfile.case_id import CaseId


@pytest.fixture
def numpy_as_cupy(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", numpy)


def _topk_case(k, vocab=300, rows=4, distribution="many_ties"):
    return CaseId("topk", "torch_topk", "float32", rows, None, distribution, {"vocab": vocab, "k": k})


def test_the_exact_top_k_input_plants_k_distinct_maxima(numpy_as_cupy):
    case = _topk_case(64, vocab=1000, rows=3, distribution="normal")
    x, places = ops.checks("topk").exact_input(case, 9)
    assert places.shape == (3 * 64,)
    rows = x.reshape(3, 1024)
    for row, wanted in zip(rows, places.reshape(3, 64).astype(int)):
        assert numpy.array_equal(numpy.argsort(-row[:1000], kind="stable")[:64], wanted)
        assert wanted[2] == 999  # rank 2 at the last index, as for k = 8
