"""The fast verdict path gives the figures the per-pair scipy code gave, bit for bit.

compare_runs once ran scipy.stats.mannwhitneyu and a bootstrap of (300, n) median matrices for
every pair. The oracles below are that code, copied as it was, and every pair of the committed runs
must get the same verdict, ratio, p-value and interval from both: these figures are printed, written
to JUnit and gated on, so "close" is not enough. (How fast it is, the benchmark runs measure.)
"""

import math
from pathlib import Path

import numpy as np
import pytest

from primbench.compare import verdicts
from primbench.runfile import stats
from primbench.runfile.io import load_run

ROOT = Path(__file__).resolve().parents[2]
RUN_PAIRS = {
    "baseline vs reference": ("results/baselines/nvidia-h200.jsonl.gz", "results/reference/nvidia-h200.jsonl.gz"),
    "baseline vs fixture-a": ("results/baselines/nvidia-h200.jsonl.gz", "tests/data/runs/fixture-a.jsonl.gz"),
    "fixture-a vs fixture-b": ("tests/data/runs/fixture-a.jsonl.gz", "tests/data/runs/fixture-b.jsonl.gz"),
}


def oracle_speed_verdict(base_samples, new_samples, threshold, alpha=verdicts.ALPHA, relative=None):
    # verdicts.speed_verdict as it was before the numpy Mann-Whitney.
    from scipy.stats import mannwhitneyu

    base = np.asarray(base_samples, dtype=np.float64)
    new = np.asarray(new_samples, dtype=np.float64)
    ratio = float(np.median(new) / np.median(base))
    p_value = float(mannwhitneyu(base, new, alternative="two-sided").pvalue) if base.size > 1 and new.size > 1 else 1.0
    if abs(ratio - 1.0) <= threshold:
        below_floor = relative is not None and abs(ratio - 1.0) > relative
        return (verdicts.BELOW_FLOOR if below_floor else verdicts.SAME), ratio, p_value
    if p_value >= alpha:
        return verdicts.UNSURE, ratio, p_value
    return (verdicts.SLOWER if ratio > 1.0 else verdicts.FASTER), ratio, p_value


def oracle_ratio_interval(base, new, confidence=0.95, at_most=200, resamples=300, rng_seed=0):
    # stats.ratio_interval as it was before the medians came from sorted draws.
    b, n = stats._thinned(base, at_most), stats._thinned(new, at_most)
    if b.size < 2 or n.size < 2:
        return math.nan, math.nan
    rng = np.random.default_rng(rng_seed)
    base_medians = np.median(b[rng.integers(0, b.size, (resamples, b.size))], axis=1)
    new_medians = np.median(n[rng.integers(0, n.size, (resamples, n.size))], axis=1)
    ratios = new_medians / base_medians
    tail = (1.0 - confidence) / 2
    low, high = np.quantile(ratios, [tail, 1.0 - tail])
    return float(low), float(high)


def same_bits(a, b) -> bool:
    return (a == b and math.copysign(1.0, a) == math.copysign(1.0, b)) or (math.isnan(a) and math.isnan(b))


def oracle_pct_peak(record, run, figure) -> float:
    # The per-pair code as first written: the median of a full summary, of the figure the pair is judged by.
    samples = record.samples.batch_ms if figure == verdicts.BATCH else record.cold_ms
    summary, peak = stats.summarize(samples), run.device.get("peak_gbps")
    if summary is None or not peak:
        return math.nan
    return 100.0 * stats.bandwidth_gbps(record.bytes or 0, summary.median) / peak


@pytest.mark.parametrize("runs", list(RUN_PAIRS), ids=list(RUN_PAIRS))
def test_every_pair_of_the_committed_runs_gets_the_figures_the_per_pair_code_gave(runs):
    base_path, new_path = (ROOT / path for path in RUN_PAIRS[runs])
    base, new = load_run(base_path), load_run(new_path)
    thresholds = verdicts.Thresholds.from_header(new.header)
    base_cases, new_cases = {r.case: r for r in base.cases}, {r.case: r for r in new.cases}
    pairs = verdicts.compare_runs(base, new)
    timed = [p for p in pairs if p.verdict in verdicts.SPEED_VERDICTS]
    assert len(timed) > 20, f"{runs}: only {len(timed)} pairs with a speed verdict, too few to prove anything"
    differences = []
    for pair in pairs:
        b, n = base_cases.get(pair.case), new_cases.get(pair.case)
        if b is not None and n is not None:
            expected_peaks = (oracle_pct_peak(b, base, pair.figure), oracle_pct_peak(n, new, pair.figure))
            if not all(map(same_bits, (pair.base_pct_peak, pair.new_pct_peak), expected_peaks)):
                differences.append(f"{pair.text}: % of peak {pair.base_pct_peak, pair.new_pct_peak} != {expected_peaks}")
        if pair.verdict not in verdicts.SPEED_VERDICTS:
            assert math.isnan(pair.p_value) and math.isnan(pair.ci_low), pair.text
            continue
        base_samples, new_samples = ((b.samples.batch_ms, n.samples.batch_ms) if pair.figure == verdicts.BATCH
                                     else (b.cold_ms, n.cold_ms))
        relative = thresholds.for_case(pair.case.op, pair.case.variant, pair.figure)
        verdict, ratio, p_value = oracle_speed_verdict(base_samples, new_samples, pair.threshold, relative=relative)
        low, high = oracle_ratio_interval(base_samples, new_samples)
        got, expected = (pair.verdict, pair.ratio, pair.p_value, pair.ci_low, pair.ci_high), (verdict, ratio, p_value, low, high)
        if got[0] != expected[0] or not all(map(same_bits, got[1:], expected[1:])):
            differences.append(f"{pair.text}: {got} != {expected}")
    assert not differences, f"{len(differences)} of {len(pairs)} pairs differ:\n" + "\n".join(differences[:20])


SIZES = (1, 2, 5, 8, 9, 50, 200)


@pytest.mark.parametrize("size_x", SIZES)
@pytest.mark.parametrize("size_y", SIZES)
@pytest.mark.parametrize("kind", ["distinct", "ties", "shifted ties", "all tied"])
def test_the_numpy_mann_whitney_p_value_is_scipys_to_the_bit(size_x, size_y, kind):
    from scipy.stats import mannwhitneyu

    rng = np.random.default_rng([size_x, size_y, len(kind)])
    for attempt in range(20):
        if kind == "distinct":
            x, y = rng.normal(10.0, 1.0, size_x), rng.normal(10.3, 1.0, size_y)
        elif kind == "all tied":
            x, y = np.full(size_x, 7.25), np.full(size_y, 7.25)
        else:  # timings quantized to 0.5 us, as CUDA events give them: ties within and across the sides
            shift = 1.0 if kind == "shifted ties" else 0.0
            x = np.round(rng.normal(10.0, 1.5, size_x) * 2) / 2
            y = np.round(rng.normal(10.0 + shift, 1.5, size_y) * 2) / 2
        expected = float(mannwhitneyu(x, y, alternative="two-sided").pvalue)
        got = stats.mann_whitney_p(x, y)
        assert same_bits(got, expected), f"attempt {attempt}: x={x.tolist()} y={y.tolist()}: {got!r} != {expected!r}"


@pytest.mark.parametrize("size_base", [2, 3, 8, 9, 50, 199, 200, 201, 1000])
@pytest.mark.parametrize("size_new", [2, 5, 200, 777])
def test_the_bootstrap_interval_is_the_one_the_median_matrices_gave(size_base, size_new):
    rng = np.random.default_rng([size_base, size_new])
    base = rng.lognormal(0.0, 0.05, size_base)
    new = np.round(rng.lognormal(0.02, 0.05, size_new) * 1e3) / 1e3  # quantized: tied values
    for confidence in (0.95, 0.5):
        got = stats.ratio_interval(base, new, confidence)
        expected = oracle_ratio_interval(base, new, confidence)
        assert all(map(same_bits, got, expected)), f"{got} != {expected}"


def test_the_bootstrap_interval_keeps_the_median_matrices_rules_for_nan_and_few_samples():
    base, new = np.array([1.0, 1.1, np.nan, 0.9]), np.array([1.0, 1.2, 1.1])
    assert all(map(same_bits, stats.ratio_interval(base, new), oracle_ratio_interval(base, new)))
    assert all(math.isnan(value) for value in stats.ratio_interval([1.0], [1.0, 2.0]))
    assert all(map(same_bits, stats.ratio_interval(new, new, rng_seed=5), oracle_ratio_interval(new, new, rng_seed=5)))
