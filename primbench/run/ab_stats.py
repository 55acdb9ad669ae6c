"""The A/B interval of `primbench ab`, from rounds grouped by plan instance.

Each side runs as INSTANCES separately prepared plans (its buffers allocated in turn with the
other sides', the inputs alternating between two copies), and round r times instance r mod
INSTANCES of A, of B and of the A/A slice (A again, prepared as B is), in a random order. On the
H200 one plan of vector_load_sum at 2^22 ran 4 % slower than another plan of the same kernel,
every round, and two plans of lane_columns at 2^25 15 % apart: a plan instance carries an effect of
its own (where its buffers landed), which no number of rounds averages out.

So the rounds of each instance give one value, the median of their log(B / A); the ratio is
exp(the mean of the INSTANCES values), and its 95 % interval a Student t interval over them, so
the spread between instances is in it. The interval is then widened by the A/A slice's distance
from 1 (in log terms): what the order of the sides leaves between identical kernels.

Pooling each side's samples as independent (the rule before) covered the truth in about 70 % of
A/A calls; two instances a side with a bootstrap over rounds, 36 of 40.
"""

from __future__ import annotations

import math

import numpy as np

INSTANCES = 8
CONFIDENCE = 0.95


def instance_log_ratios(a_ms, b_ms, instances: int = INSTANCES) -> np.ndarray:
    """For each instance (rounds i, i + instances, ...), the median of log(b / a) over its rounds;
    an instance with no finite positive pair is left out."""
    a, b = np.asarray(a_ms, dtype=np.float64), np.asarray(b_ms, dtype=np.float64)
    rounds = min(a.size, b.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(b[:rounds]) - np.log(a[:rounds])
    values = []
    for instance in range(instances):
        mine = logs[instance::instances]
        mine = mine[np.isfinite(mine)]
        if mine.size:
            values.append(float(np.median(mine)))
    return np.asarray(values)


def paired_ratio(a_ms, b_ms, *, instances: int = INSTANCES, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(B/A, low, high): exp of the instances' mean log ratio and its t interval. NaNs with fewer
    than 3 instances timed."""
    from scipy.special import stdtrit

    values = instance_log_ratios(a_ms, b_ms, instances)
    if values.size < 3:
        return math.nan, math.nan, math.nan
    mean = float(values.mean())
    half = float(stdtrit(values.size - 1, 1 - (1 - confidence) / 2)) * float(values.std(ddof=1)) / math.sqrt(values.size)
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)


def widened(low: float, high: float, aa_ratio: float) -> tuple[float, float]:
    """The interval widened on both sides by the A/A slice's distance from 1 (in log terms): what
    the order of the sides still shifts between identical kernels, measured in the same call."""
    if not math.isfinite(aa_ratio) or aa_ratio <= 0:
        return low, high
    spread = abs(math.log(aa_ratio))
    return low * math.exp(-spread), high * math.exp(spread)
