"""Summaries of raw timing samples. Everything here is derived when a run file is read."""

from __future__ import annotations

import functools
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


def _positive(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def energy_windows(energy: dict) -> list[dict]:
    """The counter windows of a run-file `energy` that every reader can divide by: seconds, mJ and
    operations all above 0 (the validator requires them; this also guards a dict built in code)."""
    windows = (energy if isinstance(energy, dict) else {}).get("windows") or ()
    return [w for w in windows if isinstance(w, dict) and all(_positive(w.get(name)) for name in ("mj", "ops", "seconds"))]


def energy_figures(energy: dict) -> dict | None:
    """A case's energy from its run-file `energy`: {"mj_per_op", "avg_w", "op_ms"}, all its counter
    windows taken together (their millijoules over their operations and seconds, as
    measuring/energy.py pools them) where the windows are kept, else the recorded figures; None
    where there is none (not asked, or only `reason`). Every reader takes its figures from here."""
    energy = energy if isinstance(energy, dict) else {}
    windows = energy_windows(energy)
    if windows:
        mj, ops, seconds = (sum(w[name] for w in windows) for name in ("mj", "ops", "seconds"))
        return {"mj_per_op": mj / ops, "avg_w": mj / seconds / 1000.0, "op_ms": seconds * 1e3 / ops}
    if not _positive(energy.get("mj_per_op")):
        return None
    return {"mj_per_op": float(energy["mj_per_op"]), **{name: float(energy[name]) if _positive(energy.get(name)) else math.nan
                                                       for name in ("avg_w", "op_ms")}}


def energy_mj_per_op(energy: dict) -> float | None:
    """energy_figures' millijoules per operation, or None."""
    figures = energy_figures(energy)
    return figures["mj_per_op"] if figures else None


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
    return values[_evenly_spread_indices(values.size, at_most)]


@functools.lru_cache(maxsize=1024)
def _evenly_spread_indices(size: int, count: int):
    # The same few sizes recur across a run's cases; linspace costs more than the indexing.
    return np.linspace(0, size - 1, count).round().astype(int)


def ratio_interval(base, new, confidence: float = 0.95, at_most: int = 200, resamples: int = 300,
                   rng_seed: int = 0) -> tuple[float, float]:
    """A percentile-bootstrap interval for median(new) / median(base), the ratio every verdict uses.

    Each side is first thinned to `at_most` of its quantiles, and the bootstrap redraws that many
    values, so for more than `at_most` samples a side the interval is wider than the data need (by
    at most sqrt(n / at_most)): cautious, and bounded in cost. Seeded, so one pair of runs always
    gets the same interval. (nan, nan) below 2 samples a side.
    """
    b, n = _thinned(base, at_most), _thinned(new, at_most)
    if b.size < 2 or n.size < 2:
        return math.nan, math.nan
    if np.isnan(b[-1]) or np.isnan(n[-1]):  # sorted: a NaN is last; np.median's NaN rules then apply
        base_medians, new_medians = _resampled_medians_by_value(b, n, resamples, rng_seed)
    else:
        base_positions, new_positions = _resampled_median_positions(b.size, n.size, resamples, rng_seed)
        base_medians, new_medians = _median_at(b, base_positions), _median_at(n, new_positions)
    ratios = new_medians / base_medians
    tail = (1.0 - confidence) / 2
    low, high = np.quantile(ratios, [tail, 1.0 - tail])
    return float(low), float(high)


def median_interval(samples, confidence: float = 0.95, at_most: int = 200, resamples: int = 300,
                    rng_seed: int = 0) -> tuple[float, float]:
    """A percentile-bootstrap interval for the median of one set of samples: ratio_interval's
    bootstrap on one side (thinned to `at_most` quantiles, `resamples` draws, seeded), so a
    dashboard's range and a pair's interval are made alike. (nan, nan) below 2 samples or with a NaN."""
    values = _thinned(samples, at_most)
    if values.size < 2 or np.isnan(values[-1]):
        return math.nan, math.nan
    # The base side's draw of ratio_interval: the same positions, cached by size and seed.
    positions, _ = _base_positions_and_state(values.size, resamples, rng_seed)
    tail = (1.0 - confidence) / 2
    low, high = np.quantile(_median_at(values, positions), [tail, 1.0 - tail])
    return float(low), float(high)


def _resampled_medians_by_value(b, n, resamples: int, rng_seed: int):
    # The bootstrap as first written: the medians of (resamples, size) matrices of drawn values.
    rng = np.random.default_rng(rng_seed)
    base_medians = np.median(b[rng.integers(0, b.size, (resamples, b.size))], axis=1)
    new_medians = np.median(n[rng.integers(0, n.size, (resamples, n.size))], axis=1)
    return base_medians, new_medians


def _median_at(sorted_values, positions):
    # np.median of each resample, bit for bit: the mean of its two middle values (even size), or
    # its middle one.
    low, high = positions
    return sorted_values[high] if low is None else (sorted_values[low] + sorted_values[high]) / 2.0


@functools.lru_cache(maxsize=4096)
def _resampled_median_positions(base_size: int, new_size: int, resamples: int, rng_seed: int):
    """Where each resample's median lies in the sorted thinned sides: (base (low, high), new (low, high)).

    The sides are sorted, so a resample's k-th smallest value is the value at its k-th smallest drawn
    index: the medians follow from the draws alone, which depend on the sizes and the seed only, and
    one compare has a few hundred size pairs for a thousand or more cases. Sorting small indices is
    far cheaper than the medians of drawn values it replaces (3 s of a 1,296-case compare).
    """
    base_positions, state = _base_positions_and_state(base_size, resamples, rng_seed)
    rng = np.random.default_rng(rng_seed)
    rng.bit_generator.state = state
    return base_positions, _median_positions(rng.integers(0, new_size, (resamples, new_size)))


@functools.lru_cache(maxsize=1024)
def _base_positions_and_state(base_size: int, resamples: int, rng_seed: int):
    # The base side is drawn first: its medians' positions, and the generator's state where the new
    # side's draw begins, depend on the base size alone and serve every size pair that has it.
    rng = np.random.default_rng(rng_seed)
    positions = _median_positions(rng.integers(0, base_size, (resamples, base_size)))
    return positions, rng.bit_generator.state


def _median_positions(draw):
    size = draw.shape[1]
    # int16 sorts several times faster than int64, and holds any thinned index (at_most is small).
    small = np.int16 if size <= np.iinfo(np.int16).max else np.int64
    ordered = np.sort(draw.astype(small), axis=1)
    high = ordered[:, size // 2].astype(np.intp)
    return (ordered[:, size // 2 - 1].astype(np.intp) if size % 2 == 0 else None), high


def mann_whitney_p(x, y) -> float:
    """The two-sided p-value of scipy.stats.mannwhitneyu(x, y) (method "auto"), bit for bit.

    Where scipy uses the normal approximation (both sides over 8 samples, or any tie) it is computed
    here with numpy, tie and continuity corrections in scipy's order of operations: importing
    scipy.stats takes ~0.7 s and its per-call checks about as long again over a 1,300-case compare.
    The exact distribution (no ties and a side of at most 8) and NaN samples are left to scipy itself.
    """
    # x sorted: searchsorted below is several times faster with ordered keys, and the ranks' sum
    # does not depend on the order of x.
    x, y = np.sort(np.asarray(x, dtype=np.float64).ravel()), np.asarray(y, dtype=np.float64).ravel()
    n1, n2 = x.size, y.size
    pooled = np.sort(np.concatenate((x, y)))
    first_of_each_value = np.flatnonzero(np.concatenate(([True], pooled[1:] != pooled[:-1])))
    tie_sizes = np.diff(np.append(first_of_each_value, pooled.size))
    exact = (n1 <= 8 or n2 <= 8) and not (tie_sizes > 1).any()
    if not n1 or not n2 or exact or np.isnan(pooled[-1]):
        from scipy.stats import mannwhitneyu

        return float(mannwhitneyu(x, y, alternative="two-sided").pvalue)
    # Average ranks (1-based) of x's values: a tied value ranks at the middle of its run. Ranks are
    # halves of integers, so their sum is exact in any order (scipy adds them as floats, also exactly).
    below, up_to = np.searchsorted(pooled, x, "left"), np.searchsorted(pooled, x, "right")
    rank_sum = (int(below.sum()) + int(up_to.sum()) + n1) / 2
    u1 = rank_sum - n1 * (n1 + 1) / 2
    u = max(u1, n1 * n2 - u1)
    n = n1 + n2
    # scipy's tie counts: one per sample, the run's size at its first sample and 0 elsewhere, summed so.
    ties = np.zeros(pooled.size)
    ties[first_of_each_value] = tie_sizes
    tie_term = np.sum(ties**3 - ties)
    spread = np.sqrt(np.float64(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))))
    with np.errstate(divide="ignore", invalid="ignore"):  # all values tied: spread 0, as in scipy
        z = (np.float64(u) - n1 * n2 / 2 - 0.5) / spread
    return float(np.clip(_normal_sf(z) * 2, 0.0, 1.0))


def _normal_sf(z):
    # scipy's own normal CDF, for the same bits; scipy.special imports in a fraction of scipy.stats' time.
    from scipy.special import ndtr

    return ndtr(-z)
