"""Summaries of raw timing samples. Everything here is derived when a run file is read."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# 1.4826 x MAD estimates the standard deviation of normal data while ignoring the rare slow
# outlier (a preempted sample, a late clock ramp) that would inflate a plain stdev.
MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True)
class Summary:
    """The statistics primbench reports for one list of samples (milliseconds)."""

    count: int
    median: float
    mean: float
    stdev: float
    min: float
    max: float
    p05: float
    p95: float
    noise: float  # robust relative spread: 1.4826 * MAD / median

    @property
    def median_us(self) -> float:
        return self.median * 1e3


def robust_noise(samples) -> float:
    """Relative spread of the samples: 1.4826 * MAD / median (inf for fewer than two samples)."""
    values = np.asarray(samples, dtype=np.float64)
    return _noise(values, float(np.median(values))) if values.size else math.inf


def _noise(values, median: float) -> float:
    # robust_noise of `values`, whose median the caller has: summarize computes it once.
    if values.size < 2 or median <= 0:
        return math.inf
    mad = float(np.median(np.abs(values - median)))
    return MAD_TO_SIGMA * mad / median


def median_standard_error(samples) -> float:
    """Relative standard error of the median: 1.2533 x robust sigma / sqrt(N) / median.

    The spread of single samples (robust_noise) does not shrink with more samples; this does. A
    noisy short kernel sampled 1000 times has a median known far better than its spread suggests.
    """
    values = np.asarray(samples, dtype=np.float64)
    if values.size < 2:
        return math.inf
    return 1.2533 * robust_noise(values) / math.sqrt(values.size)


def summarize(samples) -> Summary | None:
    """Summary of a list of samples, or None when there are none."""
    values = np.asarray(samples, dtype=np.float64)
    if values.size == 0:
        return None
    # A run's frame summarizes ~2,600 lists: the median once, both percentiles in one call (the
    # same figures, bit for bit, at half the cost).
    median = float(np.median(values))
    p05, p95 = np.percentile(values, (5, 95)).tolist()
    return Summary(
        count=int(values.size),
        median=median,
        mean=float(values.mean()),
        stdev=float(values.std(ddof=1)) if values.size > 1 else 0.0,
        min=float(values.min()),
        max=float(values.max()),
        p05=p05,
        p95=p95,
        noise=_noise(values, median),
    )


def bandwidth_gbps(nbytes: float, time_ms: float) -> float:
    """Achieved bandwidth in GB/s (1 GB = 1e9 B) for `nbytes` moved in `time_ms`."""
    if not time_ms or time_ms <= 0:
        return math.nan
    return nbytes / (time_ms * 1e-3) / 1e9


def peak_gbps(max_mem_clock_mhz: float, bus_width_bits: float) -> float:
    """Theoretical DRAM bandwidth: 2 (double data rate) x max memory clock x bus width / 8."""
    return 2.0 * max_mem_clock_mhz * 1e6 * bus_width_bits / 8.0 / 1e9


def _thinned(values, at_most: int):
    """At most `at_most` values spread evenly over the sorted sample (its quantiles), so that an
    interval over thousands of samples costs what one over a few hundred does."""
    values = np.sort(np.asarray(values, dtype=np.float64))
    if values.size <= at_most:
        return values
    return values[np.linspace(0, values.size - 1, at_most).round().astype(int)]


def ratio_interval(base, new, confidence: float = 0.95, at_most: int = 200, resamples: int = 300,
                   rng_seed: int = 0) -> tuple[float, float]:
    """A percentile-bootstrap interval for median(new) / median(base), the ratio every verdict uses.

    Each side is first thinned to `at_most` of its quantiles, and the bootstrap redraws that many
    values, so for more than `at_most` samples a side the interval is wider than the data need (by
    at most sqrt(n / at_most)): cautious, and bounded in cost (a 1,296-case compare adds about 3 s).
    Seeded, so one pair of runs always gets the same interval. (nan, nan) below 2 samples a side.
    """
    b, n = _thinned(base, at_most), _thinned(new, at_most)
    if b.size < 2 or n.size < 2:
        return math.nan, math.nan
    rng = np.random.default_rng(rng_seed)
    base_medians = np.median(b[rng.integers(0, b.size, (resamples, b.size))], axis=1)
    new_medians = np.median(n[rng.integers(0, n.size, (resamples, n.size))], axis=1)
    ratios = new_medians / base_medians
    tail = (1.0 - confidence) / 2
    low, high = np.quantile(ratios, [tail, 1.0 - tail])
    return float(low), float(high)
