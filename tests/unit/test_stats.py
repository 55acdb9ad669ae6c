"""Statistics over raw samples."""

import math

import numpy as np
import pytest

from primbench.runfile import stats


def test_the_median_and_robust_noise_ignore_one_wild_sample():
    samples = [1.00, 1.01, 0.99, 1.00, 1.02, 0.98, 1.00, 50.0]
    summary = stats.summarize(samples)
    assert summary.median == pytest.approx(1.0)
    assert summary.noise < 0.03  # a plain stdev would be ~17x the median
    assert summary.stdev > 10


def test_noise_is_infinite_with_fewer_than_two_samples_so_sampling_never_stops_early():
    assert math.isinf(stats.robust_noise([1.0]))
    assert stats.summarize([]) is None


def test_bandwidth_counts_1e9_bytes_per_gb():
    # 2^28 floats read in 246.5 us: the CUB figure measured on the H200.
    assert stats.bandwidth_gbps(2**28 * 4, 0.2465) == pytest.approx(4355.9, rel=1e-4)
    assert math.isnan(stats.bandwidth_gbps(100, 0.0))


def test_the_nvml_peak_of_the_h200_is_4814_gbps():
    assert stats.peak_gbps(3201, 6016) == pytest.approx(4814.3, abs=0.1)


def test_the_median_error_shrinks_with_more_samples_while_the_spread_does_not():
    import numpy as np

    rng = np.random.default_rng(0)
    few, many = rng.normal(5.0, 0.15, 200), rng.normal(5.0, 0.15, 20000)
    assert stats.robust_noise(many) == pytest.approx(stats.robust_noise(few), rel=0.2)
    assert stats.median_standard_error(many) < stats.median_standard_error(few) / 5
    assert stats.median_standard_error(many) == pytest.approx(1.2533 * 0.03 / np.sqrt(20000), rel=0.1)


def test_the_median_interval_holds_the_median_and_narrows_with_more_samples():
    rng = np.random.default_rng(1)
    few, many = rng.normal(10.0, 0.5, 20), rng.normal(10.0, 0.5, 200)
    for samples in (few, many):
        low, high = stats.median_interval(samples)
        assert low <= np.median(samples) <= high
    assert np.ptp(stats.median_interval(many)) < np.ptp(stats.median_interval(few))
    assert stats.median_interval(many) == stats.median_interval(list(many))  # seeded: the same interval every time


def test_the_median_interval_is_the_base_side_of_the_ratio_interval_bootstrap():
    # With a new side that is one value repeated, median(new) / median(base) is 1 / median(base):
    # the ratio interval is the median interval turned over.
    base = np.random.default_rng(2).normal(5.0, 0.3, 150)
    low, high = stats.median_interval(base)
    ratio_low, ratio_high = stats.ratio_interval(base, [1.0] * 10)
    assert (ratio_low, ratio_high) == pytest.approx((1 / high, 1 / low), rel=1e-6)  # quantiles interpolate


def test_the_median_interval_of_fewer_than_two_samples_is_nan():
    assert all(math.isnan(v) for v in stats.median_interval([3.0]))
    assert all(math.isnan(v) for v in stats.median_interval([]))
