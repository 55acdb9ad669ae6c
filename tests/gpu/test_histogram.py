"""Every histogram variant on every input distribution, count for count against numpy.bincount on
the host (marker `gpu`), at n = 1, 1000, 2^20 + 5 and 2^26: sizes that are multiples of no block and
of no 16-byte vector; uint8 samples with 256 bins and int32 samples with 32, 256 and 1024 bins,
whose exact input holds values outside the bins that every variant must drop."""

import numpy
import pytest

from primbench import ops, registry
from primbench.run.runner import input_key
from primbench.runfile.case_id import CaseId as Case
from tests.gpu.helpers import op_inputs, verify_every_block

pytestmark = pytest.mark.gpu

SIZES = [1, 1000, 2**20 + 5, 2**26]
CHECKS = ops.checks("histogram")
TYPE_BINS = [("uint8", 256), ("int32", 32), ("int32", 256), ("int32", 1024)]


def _host_counts(x, bins: int):
    """numpy's bincount of the samples in [0, bins): the others have no bin."""
    samples = x.get().astype(numpy.int64)
    return numpy.bincount(samples[(samples >= 0) & (samples < bins)], minlength=bins)


_HOST_COUNTS: dict = {}  # counting 2^26 samples on the host once per input, not once per variant


def _inputs(case):
    """The case's inputs as the runner makes them, and numpy's counts of the random one."""
    inputs = op_inputs(case, rng_seed=case.n % 113)
    exact, expected, x, _reference = inputs
    key = input_key(case)
    if key not in _HOST_COUNTS:
        _HOST_COUNTS.clear()
        _HOST_COUNTS[key] = _host_counts(x, case.params["bins"])
        assert numpy.array_equal(expected.get().astype(numpy.int64), _host_counts(exact, case.params["bins"]))
    return inputs, _HOST_COUNTS[key]


@pytest.mark.parametrize("dtype,bins", TYPE_BINS, ids=lambda v: str(v))
@pytest.mark.parametrize("n", SIZES, ids=lambda n: f"n={n}")
@pytest.mark.parametrize("variant", registry.variants("histogram"), ids=lambda v: v.key)
def test_every_histogram_counts_exactly_on_every_distribution_and_block_size(variant, n, dtype, bins, sm_count):
    if bins not in dict(variant.params)["bins"]:
        pytest.skip(f"{variant.name} takes at most {max(dict(variant.params)['bins'])} bins")
    replicas = [(("replicas", k),) for k in dict(variant.params).get("replicas", ())] or [()]
    for distribution in CHECKS.distributions:
        inputs, wanted = _inputs(Case("histogram", variant.name, dtype, n, None, distribution, (("bins", bins),)))
        cases = [Case("histogram", variant.name, dtype, n, block, distribution, (("bins", bins), *replica))
                 for block in variant.block_sizes or (None,) for replica in replicas]
        for case, verified in verify_every_block(cases, sm_count, inputs):  # the runner's checks, then numpy's counts
            got = verified.plan.result().get().astype(numpy.int64)
            assert numpy.array_equal(got, wanted), f"{case.key}: {numpy.flatnonzero(got != wanted)[:5]}"


def test_the_sort_reference_counts_like_numpy_and_a_lost_sample_is_caught():
    case = Case("histogram", "any", "uint8", 2**20 + 5, None, "image", (("bins", 256),))
    x = CHECKS.random_input(case, rng_seed=3)
    reference = CHECKS.reference(x, case, 3)
    assert numpy.array_equal(reference.get().astype(numpy.int64), _host_counts(x, 256))
    counts = reference.astype(numpy.uint32)
    counts[int(x[0])] -= 1
    check = CHECKS.check_random(counts, reference, None, case)
    assert not check["ok"] and check["mismatches"] == 1


def test_the_int32_exact_input_has_samples_outside_the_bins_and_the_reference_drops_them():
    case = Case("histogram", "any", "int32", 100_003, None, "uniform", (("bins", 32),))
    x, expected = CHECKS.exact_input(case, rng_seed=0)
    host = x.get()
    assert (host < 0).any() and (host >= 32).any()
    reference = CHECKS.reference(x, case, 0)
    assert numpy.array_equal(reference.get(), expected.get()) and int(expected.sum()) == int(((host >= 0) & (host < 32)).sum())
