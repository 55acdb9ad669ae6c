"""The A/B interval of `primbench ab`, from paired rounds.

Each round times A and B once each (and an A/A slice, A again on B's buffers), in a random order.
The rounds come in swap pairs: in the first A reads buffer set 0 and B set 1, in the second the
other way round, so a pair's two log ratios average out where the data sit in memory. The ratio is
exp(median of the pairs' mean log ratios); its interval is a moving-block bootstrap over the pairs
in the order they were taken, so a slow drift (a clock, the temperature) that makes neighbouring
rounds alike widens the interval instead of passing for a difference.

Pooling each side's samples and bootstrapping the two pools as if every sample were independent
(the rule before) covered the truth in about 70 % of A/A calls, not 95 %: the order, the buffers
and the placement of the two sides shift a ratio by up to ~1 % at 2^20 (docs/perf-notes.md).
"""

from __future__ import annotations

import math

import numpy as np

RESAMPLES = 2000
CONFIDENCE = 0.95
SWAP_PAIR = 2  # rounds per swap pair: buffer set 0 then 1 for A (1 then 0 for B)


def pair_log_ratios(a_ms, b_ms, pair: int = SWAP_PAIR) -> np.ndarray:
    """The mean of log(b / a) over each swap pair of rounds, in the order taken (an incomplete
    last pair, or a pair with a non-positive or non-finite sample, is left out)."""
    a, b = np.asarray(a_ms, dtype=np.float64), np.asarray(b_ms, dtype=np.float64)
    rounds = (min(a.size, b.size) // pair) * pair
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = (np.log(b[:rounds]) - np.log(a[:rounds])).reshape(-1, pair)
    means = logs.mean(axis=1)
    return means[np.isfinite(means)]


def block_length(count: int) -> int:
    """Pairs per bootstrap block: the cube root of the count (the usual rate for a moving-block
    bootstrap of a statistic of a weakly dependent sequence), at least 1."""
    return max(1, round(count ** (1 / 3)))


def paired_ratio(a_ms, b_ms, *, confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
                 rng_seed: int = 0) -> tuple[float, float, float]:
    """(B/A, low, high): the ratio from the swap pairs' median log ratio and its moving-block
    bootstrap percentile interval. NaNs with fewer than 4 pairs."""
    logs = pair_log_ratios(a_ms, b_ms)
    if logs.size < 4:
        return math.nan, math.nan, math.nan
    length = block_length(logs.size)
    starts_count = logs.size - length + 1
    blocks = math.ceil(logs.size / length)
    rng = np.random.default_rng(rng_seed)
    starts = rng.integers(0, starts_count, (resamples, blocks))
    # Each resample: `blocks` runs of `length` consecutive pairs, trimmed to the original count.
    picks = (starts[:, :, None] + np.arange(length)[None, None, :]).reshape(resamples, -1)[:, :logs.size]
    medians = np.median(logs[picks], axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(medians, [tail, 1 - tail])
    return float(math.exp(np.median(logs))), float(math.exp(low)), float(math.exp(high))


def widened(low: float, high: float, aa_ratio: float) -> tuple[float, float]:
    """The interval widened on both sides by the A/A slice's distance from 1 (in log terms): what
    order and placement still shift between two identical sides, measured in the same call."""
    if not math.isfinite(aa_ratio) or aa_ratio <= 0:
        return low, high
    spread = abs(math.log(aa_ratio))
    return low * math.exp(-spread), high * math.exp(spread)
