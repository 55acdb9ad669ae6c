"""Where a series of median times steps up or down, as asv's step detection does: the best
piecewise-constant fit of the log times, each step paying a penalty scaled by the series' own
noise, so that noise makes no step and a sudden lasting change of a few per cent does (a slow
drift over many runs does not). A regression is a step up of at least `threshold`; it is dated at
the first run of the slower level."""

from __future__ import annotations

import math

NOISE_FLOOR = 0.005  # relative: below half a per cent, run-to-run noise is not resolved anyway
REGRESSION_THRESHOLD = 0.05  # a level 5 % slower than the one before it


def noise(logs) -> float:
    """The series' relative noise: the median absolute difference of neighbours, as a standard
    deviation (1.4826 x MAD / sqrt 2), never below NOISE_FLOOR. Steps barely move it."""
    import numpy as np

    if len(logs) < 3:
        return NOISE_FLOOR
    differences = np.abs(np.diff(logs))
    return max(NOISE_FLOOR, 1.4826 * float(np.median(differences)) / math.sqrt(2))


def segments(values, penalty_scale: float = 4.0) -> list[tuple[int, int, float]]:
    """(start, end exclusive, level) of the best piecewise-constant fit of log(values): least
    squares plus a penalty of penalty_scale x noise^2 x ln(n) per segment (optimal partitioning,
    O(n^2) in numpy: a year of nightly runs takes milliseconds)."""
    import numpy as np

    y = np.log(np.asarray(values, dtype=float))
    n = len(y)
    if n == 0:
        return []
    penalty = penalty_scale * noise(y) ** 2 * max(math.log(n), 1.0)
    sums = np.concatenate([[0.0], np.cumsum(y)])
    squares = np.concatenate([[0.0], np.cumsum(y * y)])
    best = np.empty(n + 1)
    best[0] = 0.0
    start_of = np.zeros(n + 1, dtype=int)
    for end in range(1, n + 1):
        starts = np.arange(end)
        lengths = end - starts
        total = sums[end] - sums[starts]
        cost = squares[end] - squares[starts] - total * total / lengths
        candidates = best[:end] + np.maximum(cost, 0.0) + penalty
        start_of[end] = int(np.argmin(candidates))
        best[end] = candidates[start_of[end]]
    found, end = [], n
    while end > 0:
        start = start_of[end]
        found.append((start, end, float(math.exp(y[start:end].mean()))))
        end = start
    return found[::-1]


def regressions(values, threshold: float = REGRESSION_THRESHOLD) -> list[tuple[int, float]]:
    """(index of the first run at the slower level, relative increase) of every step up of at
    least `threshold` in a series of times (oldest first). A single run that is not the newest is
    an outlier whichever way it went (a slow one the next run undoes, or a fast glitch before the
    usual level): it is left out, and the levels on either side of it are compared. The newest
    run alone may be a regression (it has no next run yet). A slow drift spread over many small
    steps is not reported: each level is compared with the one before it."""
    fitted = segments(values)
    last = len(fitted) - 1

    def a_level(index: int) -> bool:
        start, end, _ = fitted[index]
        if end - start > 1 or index == last:
            return True
        # A single first run is the baseline of a short history, but a glitch before a lasting level.
        return index == 0 and fitted[1][1] - fitted[1][0] == 1

    levels = [segment for index, segment in enumerate(fitted) if a_level(index)]
    found = []
    for before, after in zip(levels, levels[1:]):
        if after[2] / before[2] - 1 >= threshold:
            found.append((int(after[0]), after[2] / before[2] - 1))
    return found
