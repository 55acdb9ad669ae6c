"""Energy per operation of compared pairs, and the energy figures the exports carry.

A case's `energy` (docs/run-file.md) holds `mj_per_op` and the counter `windows` it came from,
each {seconds, mj, ops, ...}. A pair where both sides have it gets new/base of `mj_per_op` (the
figure the report shows) and a 95 % interval from the windows' own mJ per operation (mj / ops).

Energy is shown, never gated, unless the new run's config sets `compare: {energy_threshold: 0.05}`
(a relative change, like `threshold`). Then a pair whose whole interval lies above 1 + threshold is
an ENERGY REGRESSION (it fails `check`), one wholly below 1 - threshold an ENERGY IMPROVEMENT, and
any other ENERGY SAME. The interval, not the ratio, decides: a move past the threshold that the
windows' own spread cannot back is not called a change, as a time move needs Mann-Whitney's
backing (verdicts.py). The windows come from one run, so the interval says nothing of how far two
runs of the same code differ; the threshold has to cover that. A case the baseline
measured and the new run did not (its `reason` says why, or it did not ask) is ENERGY MISSING,
listed by every output rather than silently passed over. Nothing here imports CuPy or pandas, nor
verdicts.py (which imports this module): pairs are read by their attributes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from primbench.runfile import stats
from primbench.runfile.records import CaseRecord

ENERGY_REGRESSION, ENERGY_IMPROVEMENT = "ENERGY REGRESSION", "ENERGY IMPROVEMENT"
ENERGY_SAME, ENERGY_MISSING = "ENERGY SAME", "ENERGY MISSING"
LEADING = (ENERGY_REGRESSION, ENERGY_IMPROVEMENT)  # energy verdicts that show a pair on its own
# The interval is the range of every ratio the windows allow, [min new / max base, max new / min
# base], at any number of windows. With 3 windows a side (the default) a percentile bootstrap of the
# ratio of medians returns exactly that range (a resampled median is the smallest window with
# probability 7/27, so the smallest ratio occurs in 6.7 % of resamples, past the 2.5 % tail;
# checked on 200 random triples). Past 3 a side a bootstrap of medians is narrower but answers for
# another statistic than the pooled figure shown and gated (all mJ over all operations), and the two
# can part (20 windows, two of them tiny: ratio 1.000, median interval [1.100, 1.100]); the pooled
# figure always lies inside the range, so the range is the interval.


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def mj_per_op(record: CaseRecord | None) -> float | None:
    """The case's millijoules per operation, or None where it has none (not asked, or `reason`)."""
    return stats.energy_mj_per_op(record.energy) if record is not None else None


def window_mj(record: CaseRecord) -> list[float]:
    """Each counter window's millijoules per operation (mj / ops), those that can be divided."""
    return [w["mj"] / w["ops"] for w in stats.energy_windows(record.energy)]


def ratio_interval(base_windows, new_windows) -> tuple[float, float]:
    """The interval of new/base mJ per op from the windows (the range: see above); (nan, nan) with
    fewer than 2 windows a side, where there is no spread to read."""
    base, new = np.asarray(base_windows, dtype=np.float64), np.asarray(new_windows, dtype=np.float64)
    if base.size < 2 or new.size < 2:
        return math.nan, math.nan
    return float(new.min() / base.max()), float(new.max() / base.min())


@dataclass
class EnergyPair:
    """One pair's energy: the two sides' mJ per op, new/base and its interval, and, where the
    config gates energy, the verdict."""

    base_mj: float
    new_mj: float = math.nan
    ratio: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    threshold: float | None = None  # the config's energy_threshold; None: shown, never gated
    verdict: str = ""  # one of the ENERGY_* names under a gate, else ""
    reason: str = ""  # for ENERGY_MISSING: why the new run has none

    @property
    def regressed(self) -> bool:
        return self.verdict == ENERGY_REGRESSION

    def interval(self) -> str:
        if not (math.isfinite(self.ci_low) and math.isfinite(self.ci_high)):
            return "(no interval: fewer than 2 windows)"
        return f"[{self.ci_low:.3f}, {self.ci_high:.3f}]"

    def text(self) -> str:
        """'energy 1.021 [1.004, 1.039]', or why the new run has none."""
        if self.verdict == ENERGY_MISSING:
            return f"energy: not measured in the new run ({self.reason})"
        return f"energy {self.ratio:.3f} {self.interval()}"

    def detail(self) -> str:
        """The text, with the gate's verdict and threshold where there is one (JUnit, Markdown)."""
        if self.verdict in ("", ENERGY_MISSING):
            return self.text()
        return f"{self.text()}: {self.verdict} (energy threshold {self.threshold * 100:.1f} %)"


def one_board(base, new, base_record=None, new_record=None) -> bool:
    """Whether two runs (or, given, two of their cases: a case of a run over several GPUs names its
    own) come from one physical GPU, by its NVML uuid. Energy is gated only then: two H200s drew 577
    and 660 W on vector_load_sum at 2^25 (18.8 and 21.9 mJ a sum, docs/perf-notes.md), a gap no 5 %
    threshold survives, where one GPU repeated within 2.1 %."""
    first = (base_record.device_uuid if base_record is not None else None) or base.header.device.get("uuid")
    second = (new_record.device_uuid if new_record is not None else None) or new.header.device.get("uuid")
    # A baseline of several runs (runfile/baselines.py) holds records of each of its runs' boards.
    boards = {run.get("device_uuid") for run in base.header.baseline.get("runs") or ()}
    if len(boards) > 1 or (boards and first not in boards):
        return False
    return bool(first) and first == second


def not_gated_note(base, new, threshold: float | None) -> str | None:
    """The line `check` prints when the config gates energy but the runs come from two GPUs."""
    if threshold is None or one_board(base, new):
        return None
    return ("energy: not gated: the two runs come from two GPUs (NVML uuids differ), whose draw differs by "
            "more than the threshold for one model; gate energy against a baseline from this GPU")


def energy_pair(base: CaseRecord, new: CaseRecord, threshold: float | None) -> EnergyPair | None:
    """The energy of one pair of measured cases, or None where there is nothing to show: the
    baseline has no energy, or the new run has none and no gate asks about it."""
    base_mj, new_mj = mj_per_op(base), mj_per_op(new)
    if base_mj is None:  # energy only in the new run: nothing to compare it with
        return None
    if new_mj is None:
        if threshold is None:
            return None
        reason = (new.energy or {}).get("reason") or "the new run did not ask for energy"
        return EnergyPair(base_mj, threshold=threshold, verdict=ENERGY_MISSING, reason=str(reason)[:200])
    pair = EnergyPair(base_mj, new_mj, new_mj / base_mj, *ratio_interval(window_mj(base), window_mj(new)),
                      threshold=threshold)
    if threshold is not None:
        # No interval (a side with fewer than 2 windows): the ratio alone decides, so that a gated
        # rise is never passed in silence.
        low, high = (pair.ci_low, pair.ci_high) if math.isfinite(pair.ci_low) else (pair.ratio, pair.ratio)
        pair.verdict = (ENERGY_REGRESSION if low > 1 + threshold else
                        ENERGY_IMPROVEMENT if high < 1 - threshold else ENERGY_SAME)
    return pair


def of(pair) -> EnergyPair | None:
    return getattr(pair, "energy", None)


def leads(pair) -> bool:
    """Whether the pair's energy alone shows it on its own (a regression or an improvement)."""
    return of(pair) is not None and of(pair).verdict in LEADING


def measured(pairs) -> bool:
    """Whether some pair has an energy ratio: only then do outputs speak of energy."""
    return any(of(p) is not None and math.isfinite(of(p).ratio) for p in pairs)


def geometric_means(pairs) -> dict[str, float]:
    """Per op (in the pairs' order): the geometric mean of the energy ratios, NaN where none."""
    ratios: dict[str, list[float]] = {}
    for p in pairs:
        ratios.setdefault(p.op, [])
        if of(p) is not None and math.isfinite(of(p).ratio) and of(p).ratio > 0:
            ratios[p.op].append(of(p).ratio)
    return {op: float(np.exp(np.mean(np.log(values)))) if values else math.nan for op, values in ratios.items()}


def missing(pairs) -> dict[str, int]:
    """{reason: cases} the baseline measured and the new run did not, under a gate."""
    counts: dict[str, int] = {}
    for p in pairs:
        if of(p) is not None and of(p).verdict == ENERGY_MISSING:
            counts[of(p).reason] = counts.get(of(p).reason, 0) + 1
    return counts


def missing_lines(pairs) -> list[str]:
    """The cases whose energy the gate could not check, where there are any: a count, then one
    line per reason (the three commonest)."""
    counts = missing(pairs)
    if not counts:
        return []
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    lines = [f"{ENERGY_MISSING}: {sum(counts.values())} case(s) with energy in the baseline have none in the new run; "
             "the energy gate did not check them:"]
    lines += [f"  {count}: {reason}" for reason, count in ranked[:3]]
    return lines + ([f"  and {len(ranked) - 3} other reasons (--all lists each case)"] if len(ranked) > 3 else [])


def case_figures(record: CaseRecord) -> dict | None:
    """The energy figures an export carries, as runfile/frame.py defines them: mJ per op, the mean
    and peak draw (W; peak None where the GPU gives no instant reading) and GB per joule (None
    where the case declares no bytes). None where the case has no energy."""
    figures = stats.energy_figures(record.energy)
    if figures is None:
        return None
    mj, energy = figures["mj_per_op"], record.energy
    return {"mj_per_op": mj, "avg_w": figures["avg_w"] if _number(figures["avg_w"]) else None,
            "peak_w": float(energy["peak_w"]) if _number(energy.get("peak_w")) else None,
            "gb_per_j": record.bytes / 1e9 / (mj / 1e3) if record.bytes else None}


def run_has_energy(run) -> bool:
    """Whether any case of the run has energy: an export adds its energy fields only then."""
    return any(mj_per_op(record) is not None for record in run.cases)
