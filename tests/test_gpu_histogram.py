"""Every histogram variant on every input distribution, count for count against numpy.bincount on
the host (marker `gpu`), at n = 1, 1000, 2^20 + 5 and 2^26: sizes that are multiples of no block and
of no 16-byte vector."""

import numpy
import pytest

import kernels
from kernels import LaunchContext
from primbench import ops
from primbench.build import load_module
from primbench.config import Case
from primbench.runner import run_verified

pytestmark = pytest.mark.gpu

SIZES = [1, 1000, 2**20 + 5, 2**26]
CHECKS = ops.checks("histogram")


@pytest.fixture(scope="module")
def sm_count():
    import cupy

    return cupy.cuda.Device().attributes["MultiProcessorCount"]


def _counts(variant, x, case, sm_count):
    module = load_module(variant.source, variant.kernels) if variant.source else None
    plan = variant.prepare(LaunchContext(module, x, case.n, case.block, sm_count, dtype="uint8", params=case.param_dict))
    run_verified(plan)
    return plan.result().get().astype(numpy.int64)


@pytest.mark.parametrize("n", SIZES, ids=lambda n: f"n={n}")
@pytest.mark.parametrize("variant", kernels.variants("histogram"), ids=lambda v: v.key)
def test_every_histogram_counts_exactly_on_every_distribution_and_block_size(variant, n, sm_count):
    replicas = [(("replicas", k),) for k in dict(variant.params).get("replicas", ())] or [()]
    for distribution in CHECKS.distributions:
        case0 = Case("histogram", variant.name, "uint8", n, None, distribution)
        x = CHECKS.random_input(case0, seed=n % 113)
        wanted = numpy.bincount(x.get(), minlength=256)
        exact, expected = CHECKS.exact_input(case0, seed=0)
        assert numpy.array_equal(expected.get().astype(numpy.int64), numpy.bincount(exact.get(), minlength=256))
        for block in variant.block_sizes or (None,):
            for params in replicas:
                case = Case("histogram", variant.name, "uint8", n, block, distribution, params)
                got = _counts(variant, x, case, sm_count)
                assert numpy.array_equal(got, wanted), f"{case.key}: {numpy.flatnonzero(got != wanted)[:5]}"
                assert numpy.array_equal(_counts(variant, exact, case, sm_count), numpy.bincount(exact.get(), minlength=256))


def test_the_sort_reference_counts_like_numpy_and_a_lost_sample_is_caught():
    case = Case("histogram", "any", "uint8", 2**20 + 5, None, "image")
    x = CHECKS.random_input(case, seed=3)
    reference = CHECKS.reference(x, case, 3)
    assert numpy.array_equal(reference.get().astype(numpy.int64), numpy.bincount(x.get(), minlength=256))
    counts = reference.astype(numpy.uint32)
    counts[int(x[0])] -= 1
    check = CHECKS.check_random(counts, reference, None, case)
    assert not check["ok"] and check["mismatches"] == 1
