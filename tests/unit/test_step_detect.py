"""Step detection on a history of median times: noise makes no step, a lasting slowdown is dated
at its first run, a single outlier is not a regression."""

import numpy as np

from primbench.report.site import step_detect


def _noisy(count, level=100.0, noise=0.01, rng_seed=1):
    return list(level * np.exp(np.random.default_rng(rng_seed).normal(0, noise, count)))


def test_a_year_of_noise_has_no_regression():
    assert step_detect.regressions(_noisy(365)) == []


def test_a_lasting_8_percent_slowdown_is_dated_at_its_first_run():
    times = _noisy(365)
    times[200:] = [t * 1.08 for t in times[200:]]
    ((index, rise),) = step_detect.regressions(times)
    assert index == 200 and 0.06 < rise < 0.10


def test_a_speedup_and_a_single_slow_run_are_not_regressions():
    times = _noisy(100)
    times[40:] = [t * 0.8 for t in times[40:]]  # faster from run 40
    times[70] *= 1.06  # one slow run
    assert step_detect.regressions(times) == []


def test_two_runs_ten_percent_apart_are_a_step_and_one_percent_is_not():
    assert step_detect.regressions([100.0, 110.0]) == [(1, step_detect.regressions([100.0, 110.0])[0][1])]
    assert abs(step_detect.regressions([100.0, 110.0])[0][1] - 0.10) < 1e-9
    assert step_detect.regressions([100.0, 101.0]) == []
    assert step_detect.regressions([]) == [] and step_detect.regressions([5.0]) == []


def test_a_fast_glitch_is_no_regression_and_does_not_move_the_date_of_a_real_step():
    # Review finding: a single fast run before the usual level read as a 25 % step up.
    assert step_detect.regressions([100] * 20 + [80] + [100] * 20) == []
    assert step_detect.regressions([60] + [100] * 30) == []
    ((index, rise),) = step_detect.regressions([100] * 20 + [80] + [110] * 20)
    assert index == 21 and abs(rise - 0.10) < 1e-9
