"""The adaptive stopping rule and the verification helpers, without a GPU."""

import numpy as np
import pytest

from primbench.measuring.policy import TimingPolicy
from primbench.measuring.timing import stop_reason
from primbench.ops import reduce as reduce_checks
from primbench.verify import outcomes
from primbench.verify.inputs import EXACT_MODULUS, exact_sum_values

POLICY = TimingPolicy(min_samples=10, max_noise=0.005, max_median_error=0.0025, min_time_s=0.001,
                      max_time_s=1.0, max_samples=1000)


def test_sampling_goes_on_until_min_samples_even_when_quiet():
    assert stop_reason([1.0] * 9, POLICY, elapsed_s=5.0, wall_cap_s=1.0) is None
    assert stop_reason([1.0] * 10, POLICY, elapsed_s=0.0, wall_cap_s=1.0) == "converged"


def test_sampling_goes_on_until_min_time_of_gpu_time():
    assert stop_reason([0.00001] * 50, POLICY, elapsed_s=0.0, wall_cap_s=1.0) is None


def test_a_noisy_short_kernel_stops_once_its_median_is_known_well_enough():
    noisy = list(np.random.default_rng(1).normal(0.005, 0.00015, 20))  # 3 % spread
    assert stop_reason(noisy, POLICY, 0.0, 1.0) is None
    many = list(np.random.default_rng(1).normal(0.005, 0.00015, 400))
    assert stop_reason(many, POLICY, 0.0, 1.0) == "median_converged"


def test_a_hopelessly_noisy_case_stops_at_max_time_or_max_samples():
    wild = list(np.random.default_rng(2).uniform(0.001, 0.01, 30))
    assert stop_reason(wild, POLICY, elapsed_s=0.5, wall_cap_s=1.0) is None
    assert stop_reason(wild, POLICY, elapsed_s=1.5, wall_cap_s=1.0) == "max_time"
    assert stop_reason(list(np.random.default_rng(2).uniform(0.001, 0.01, 1000)), POLICY, 0.0, 1.0) == "max_samples"


def test_exact_check_values_are_one_mod_1024_so_no_drop_of_fewer_than_1024_elements_cancels():
    values = exact_sum_values(np.random.default_rng(3).random(2**20), np).astype(np.int64)
    assert set(np.unique(values)) == {1, 1 - EXACT_MODULUS}
    total = values.sum()
    for dropped in (1, 2, 3, 100, 1023):
        assert (total - values[:dropped].sum()) % EXACT_MODULUS != total % EXACT_MODULUS
    assert abs(values.mean()) < 0.5  # mean zero: partial sums stay far below 2^24


def test_the_float_tolerance_grows_with_depth_and_rejects_a_larger_error():
    ok = outcomes.check_float_sum(100.0 + 1e-5, 100.0, abs_sum=100.0, depth=10)
    bad = outcomes.check_float_sum(100.5, 100.0, abs_sum=100.0, depth=10)
    assert ok["ok"] and not bad["ok"]
    assert outcomes.sum_tolerance(20, 1.0) == pytest.approx(2 * outcomes.sum_tolerance(10, 1.0))


def test_a_declared_deterministic_variant_with_different_bits_fails():
    record, reason = outcomes.determinism([b"a", b"a", b"b"], declared=True)
    assert record == {"runs": 3, "bitwise_equal": False} and "declared deterministic" in reason
    assert outcomes.determinism([b"a", b"b"], declared=False)[1] is None
    assert outcomes.determinism([b"a", b"a"], declared=True) == ({"runs": 2, "bitwise_equal": True}, None)


def test_the_compensated_bound_fails_a_plain_float32_tree_on_the_ill_conditioned_input():
    # The committed run at 2^28: exact sum 131,207, sum|x| 2.6e11; a plain tree erred by 7.5, the
    # compensated sum by 0.0016. The bound (chain 125 x 2^-48 x sum|x| + 2^-24 |sum|) is about 0.1.
    from primbench.verify.inputs import Reference

    ref = Reference(value=131207.0, abs_sum=2.6e11, exact=True)
    bound = dict(depth=126, unit_roundoff=2.0**-48, result_rounding=2.0**-24, n=2**28)
    assert reduce_checks.check_random("reduce", "float32", ref.value + 0.0016, ref, **bound)["ok"]
    assert not reduce_checks.check_random("reduce", "float32", ref.value + 7.5, ref, **bound)["ok"]


def test_a_float64_reference_that_is_not_exact_widens_the_tolerance_by_its_own_error():
    from primbench.verify.inputs import Reference

    ref = Reference(value=1.0e6, abs_sum=1.0e6, exact=False)
    check = reduce_checks.check_random("reduce", "float32", 1.0e6, ref, depth=0, n=2**20)
    assert check["tolerance"] == pytest.approx(21 * 2.0**-53 * 1.0e6)
