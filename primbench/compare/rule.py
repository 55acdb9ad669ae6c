"""The verdict rule, in one place: which figure of a case is judged, the threshold it must move
past, and the test that must back the move. Every surface that shows a verdict (compare, check,
the history page, the pytest plugin, the dashboard exports) judges through compare/verdicts.py,
which applies this rule; the README's table "The verdict rule" states it in words.

A verdict is FASTER or SLOWER only when the median of the judged figure moved by more than the
threshold AND a Mann-Whitney U test on the two sets of samples agrees (p < ALPHA). A large move
the test does not back is UNSURE; anything smaller is SAME, or BELOW_FLOOR where it moved past
the relative threshold but not the floor (two runs cannot tell; `ab` can). The threshold is the
largest of a relative one (5 % unless the run's config says otherwise for that op or variant), an
absolute floor over the baseline's median (runs of the same code differ by a few microseconds
whatever the kernel, which the samples of one run cannot show: Mann-Whitney alone backs almost any
move of two separate runs; docs/perf-notes.md, "Run to run"), and, for a baseline made of several
runs, SPREAD_MULTIPLE times the case's spread across those runs (what one run's samples cannot see:
another board, another machine start). Nothing here imports CuPy.
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass, field

import numpy as np

from primbench.runfile import stats
# A baseline made of several runs (`primbench baseline A B C`) keeps each case's spread across them:
# (largest median / smallest) - 1 of the judged figure. A case's threshold is at least this multiple
# of it (the baseline's header records the multiple it was made for; runfile/baselines.py says why).
from primbench.runfile.baselines import SPREAD_MULTIPLE
from primbench.runfile.records import CaseRecord

DEFAULT_THRESHOLD = 0.05
ABS_FLOOR_US = 4.0
# Under BATCH_BELOW_US of cold median, a verdict uses the batch figure where both runs timed it as
# a CUDA graph (timing.py): cold samples of a 5 to 20 us kernel moved by up to 18 % between two
# fresh H200 machines, graph batches by at most 1.2 % (docs/perf-notes.md, "Small kernels"). The
# batch figure runs hot in L2 and without launch gaps, so it is a different number from the cold one,
# stable enough to gate on; its floor is BATCH_ABS_FLOOR_US.
BATCH_BELOW_US = 40.0
BATCH_ABS_FLOOR_US = 0.1
# The batch figure's relative threshold, where the config names none for the variant: two fresh H200
# machines differed by 2.4 % (p95) and 4.6 % at worst on it (128 cases of 5 us or more); 8 % keeps
# a margin over that, and an extra launch on a 10 us case moves it by 80 % (tests/gpu/test_small_gate.py).
BATCH_THRESHOLD = 0.08
COLD, BATCH = "cold", "batch"
ALPHA = 0.01
FASTER, SLOWER, SAME, UNSURE = "FASTER", "SLOWER", "SAME", "UNSURE"
# Moved past the relative threshold, but by less than the absolute floor: two separate runs cannot
# tell such a move from run-to-run noise, and `primbench ab` (interleaved on one GPU) can.
BELOW_FLOOR = "BELOW_FLOOR"
SPEED_VERDICTS = (FASTER, SLOWER, SAME, UNSURE, BELOW_FLOOR)  # the pairs whose threshold applies


def graph_batched_small(record: CaseRecord, batch_below_us: float = BATCH_BELOW_US) -> bool:
    """Whether one record could be judged on its batch figure: it timed a CUDA-graph batch, and its
    cold median is under batch_below_us."""
    return bool(record.samples.batch_ms and record.timing.get("batch_method") == "graph" and record.cold_ms
                and float(np.median(record.cold_ms)) * 1e3 < batch_below_us)


def figure_samples(record: CaseRecord, figure: str) -> tuple[float, ...]:
    """The samples (ms) of `figure` in a record: its batch means, or its cold samples."""
    return record.samples.batch_ms if figure == BATCH else record.cold_ms


@dataclass
class Thresholds:
    """The relative change that counts, by op or variant glob ("reduce", "reduce/vector_*"), and
    the absolute change (us) under which no verdict is given."""

    default: float = DEFAULT_THRESHOLD
    overrides: dict = field(default_factory=dict)
    abs_floor_us: float = ABS_FLOOR_US
    exempt: dict = field(default_factory=dict)  # {op/variant glob: why its changed code may be SLOWER}
    batch_below_us: float = BATCH_BELOW_US
    batch_abs_floor_us: float = BATCH_ABS_FLOOR_US
    batch_threshold: float = BATCH_THRESHOLD
    energy_threshold: float | None = None  # None: energy is shown, never gated (compare/energy.py)
    spread_multiple: float = SPREAD_MULTIPLE

    def effective(self, op: str, variant: str, base_ms: float, figure: str = COLD, spread: float = 0.0) -> float:
        """The relative change that counts for a case whose baseline median (of the gated figure) is
        base_ms, and whose baseline runs spread by `spread` (0 for a baseline of one run)."""
        relative = max(self.for_case(op, variant, figure), self.spread_multiple * spread if spread > 0 else 0.0)
        if not base_ms or not math.isfinite(base_ms) or base_ms <= 0:
            return relative
        floor_us = self.batch_abs_floor_us if figure == BATCH else self.abs_floor_us
        return max(relative, floor_us * 1e-3 / base_ms)

    def figure(self, base: CaseRecord, new: CaseRecord) -> str:
        """The figure a pair's verdict uses: the graph batch where both runs timed one and both
        cold medians are under batch_below_us, else the cold samples. Both: the batch runs with a
        hot L2, so a change that costs only cold traffic (a kernel now 10x slower cold) must leave
        the batch's range and be judged cold."""
        small = graph_batched_small(base, self.batch_below_us) and graph_batched_small(new, self.batch_below_us)
        return BATCH if small else COLD

    def lone_figure(self, record: CaseRecord) -> str:
        """The figure one run's case is judged on where there is no pair yet (a dashboard's feed):
        the one `figure` would choose if the other run measured it alike."""
        return BATCH if graph_batched_small(record, self.batch_below_us) else COLD

    def for_case(self, op: str, variant: str, figure: str = COLD) -> float:
        """The config's threshold for the variant (the most specific pattern wins), else the figure's default."""
        key = f"{op}/{variant}"
        for pattern in sorted(self.overrides, key=len, reverse=True):
            if fnmatch.fnmatchcase(key, pattern) or pattern == op:
                return self.overrides[pattern]
        return self.batch_threshold if figure == BATCH else self.default

    @classmethod
    def from_header(cls, header) -> "Thresholds":
        compare = header.config.get("compare") or {}
        return cls(default=compare.get("threshold", DEFAULT_THRESHOLD), overrides=dict(compare.get("thresholds") or {}),
                   abs_floor_us=compare.get("abs_floor_us", ABS_FLOOR_US), exempt=dict(compare.get("exempt") or {}),
                   batch_below_us=compare.get("batch_below_us", BATCH_BELOW_US),
                   batch_abs_floor_us=compare.get("batch_abs_floor_us", BATCH_ABS_FLOOR_US),
                   batch_threshold=compare.get("batch_threshold", BATCH_THRESHOLD),
                   energy_threshold=compare.get("energy_threshold"))

    def exemption(self, op: str, variant: str) -> str | None:
        """The config's reason why this variant's changed code may be slower, if it gives one (the
        most specific matching glob's, as for thresholds)."""
        key = f"{op}/{variant}"
        matching = [pattern for pattern in self.exempt if fnmatch.fnmatchcase(key, pattern)]
        return self.exempt[max(matching, key=len)] if matching else None


def speed_verdict(base_samples, new_samples, threshold: float, alpha: float = ALPHA,
                  relative: float | None = None) -> tuple[str, float, float]:
    """(verdict, new/base median ratio, Mann-Whitney p) for two sets of samples of one figure.
    `threshold` is the effective one (floor included); a move within it but past `relative` is
    BELOW_FLOOR."""
    base = np.asarray(base_samples, dtype=np.float64)
    new = np.asarray(new_samples, dtype=np.float64)
    ratio = float(np.median(new) / np.median(base))
    p_value = stats.mann_whitney_p(base, new) if base.size > 1 and new.size > 1 else 1.0
    if abs(ratio - 1.0) <= threshold:
        below_floor = relative is not None and abs(ratio - 1.0) > relative
        return (BELOW_FLOOR if below_floor else SAME), ratio, p_value
    if p_value >= alpha:
        return UNSURE, ratio, p_value
    return (SLOWER if ratio > 1.0 else FASTER), ratio, p_value


def run_spread(record: CaseRecord, figure: str) -> float:
    """A baseline case's spread across the runs it was made from: (largest median / smallest) - 1
    of `figure`, from its `between_runs` medians; 0 for a case of one run."""
    medians = [m for m in (record.between_runs or {}).get(f"{figure}_median_ms") or () if m and m > 0]
    return max(medians) / min(medians) - 1.0 if len(medians) > 1 else 0.0


def rule_words(thresholds: Thresholds | None = None) -> str:
    """The rule in one line of at most 120 columns, from the defaults in force (a config's per-op
    thresholds show in each pair's threshold), pointing to the README's table: what every surface
    that shows a verdict says of how it was reached."""
    t = thresholds or Thresholds()
    return (f'rule (README "The verdict rule"): cold >{t.default:.0%} and {t.abs_floor_us:g} us; <{t.batch_below_us:g} us: '
            f"batch >{t.batch_threshold:.0%} and {t.batch_abs_floor_us:g} us; {t.spread_multiple:g}x baseline spread; "
            f"U test p<{ALPHA:g}")
