"""Compare runs: align their cases, give each pair a verdict from the raw samples, and the CI check.

A verdict is FASTER or SLOWER only when the median moved by more than the threshold AND a
Mann-Whitney U test on the two sets of cold samples agrees (p < ALPHA). A large move the test
does not back is UNSURE; anything smaller is SAME, or BELOW_FLOOR where it moved past the
relative threshold but not the floor (two runs cannot tell; `ab` can). The threshold is the larger of a relative one
(5 % unless the run's config says otherwise for that op or variant) and an absolute floor
(ABS_FLOOR_US over the baseline's median), because runs of the same code differ by a few
microseconds whatever the kernel, which the samples of one run cannot show: Mann-Whitney alone
backs almost any move of two separate runs (docs/perf-notes.md, "Run to run", has the figures).
The floor does the work, and the test guards the cases with few samples. Every ratio carries a 95 % bootstrap interval of that
same ratio of medians (stats.ratio_interval). Where both sides measured energy, a pair also carries
its energy ratio (compare/energy.py), which fails `check` only if the config's energy_threshold asks.

Pairs are matched on the case alone. A pair whose kernel changed (variant hash) says so and is
timed by the same rule: "is my new kernel faster?" is the question it answers, and a SLOWER
changed kernel fails `check` unless the config's `compare.exempt` names it with a reason. Pairs
that failed on either side, or exist on one side only, are flagged, never given a speed verdict.
Across different GPU models raw times are not comparable: the pairs are set side by side in % of
each GPU's own peak and get no verdict. Nothing here imports CuPy.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import math
from dataclasses import dataclass, field

import numpy as np

from primbench.compare.energy import EnergyPair, energy_pair, one_board
from primbench.errors import EXIT_FAILED, EXIT_OK, UserError
from primbench.runfile import stats
from primbench.runfile.case_id import CaseId
from primbench.runfile.io import Run
from primbench.runfile.records import CaseRecord, RunHeader, Samples
from primbench.verify.inputs import ITEMSIZE

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
FAILED, MISSING, OTHER_GPU = "FAILED", "MISSING", "OTHER_GPU"
PUBLISHED = "PUBLISHED"  # one side is a quoted figure: no samples, no verdict, % of peak only
REFERENCE_PREFIX = "ref:"
SPEED_VERDICTS = (FASTER, SLOWER, SAME, UNSURE, BELOW_FLOOR)  # the pairs whose threshold applies


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

    def effective(self, op: str, variant: str, base_ms: float, figure: str = COLD) -> float:
        """The relative change that counts for a case whose baseline median (of the gated figure) is base_ms."""
        relative = self.for_case(op, variant, figure)
        if not base_ms or not math.isfinite(base_ms) or base_ms <= 0:
            return relative
        floor_us = self.batch_abs_floor_us if figure == BATCH else self.abs_floor_us
        return max(relative, floor_us * 1e-3 / base_ms)

    def figure(self, base: CaseRecord, new: CaseRecord) -> str:
        """The figure a pair's verdict uses: the graph batch where both runs timed one and both
        cold medians are under batch_below_us, else the cold samples. Both: the batch runs with a
        hot L2, so a change that costs only cold traffic (a kernel now 10x slower cold) must leave
        the batch's range and be judged cold."""
        def small_graph(record: CaseRecord) -> bool:
            return bool(record.samples.batch_ms and record.timing.get("batch_method") == "graph" and record.cold_ms
                        and float(np.median(record.cold_ms)) * 1e3 < self.batch_below_us)

        return BATCH if small_graph(base) and small_graph(new) else COLD

    def for_case(self, op: str, variant: str, figure: str = COLD) -> float:
        """The config's threshold for the variant (the most specific pattern wins), else the figure's default."""
        key = f"{op}/{variant}"
        for pattern in sorted(self.overrides, key=len, reverse=True):
            if fnmatch.fnmatchcase(key, pattern) or pattern == op:
                return self.overrides[pattern]
        return self.batch_threshold if figure == BATCH else self.default

    @classmethod
    def from_header(cls, header: RunHeader) -> "Thresholds":
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


@dataclass
class Pair:
    """One measurement in the baseline and the new run."""

    case: CaseId
    verdict: str
    base_ms: float = math.nan
    new_ms: float = math.nan
    ratio: float = math.nan  # new median / base median (< 1: faster)
    p_value: float = math.nan
    threshold: float = DEFAULT_THRESHOLD  # the effective relative threshold (floor included)
    base_pct_peak: float = math.nan
    new_pct_peak: float = math.nan
    note: str = ""
    newly_failed: bool = False  # failed verification in the new run, not failed (or absent) in the baseline
    code_changed: bool = False  # the variant's hash differs: its kernel or plan changed in between
    exempt_reason: str | None = None  # the config lets this changed variant be SLOWER, for this reason
    ci_low: float = math.nan  # 95 % interval of the new/base time ratio (stats.ratio_interval)
    ci_high: float = math.nan
    figure: str = COLD  # the samples the verdict used: "cold", or "batch" (a CUDA graph of K operations)
    missing_from: str = ""  # for a case in one run only: "the baseline" or "the new run", the run that lacks it
    energy: EnergyPair | None = None  # where the baseline measured energy (compare/energy.py)

    @property
    def regressed(self) -> bool:
        """What fails the CI check: significantly slower (unless its changed code is exempt, with a
        reason), or newly broken in the new run."""
        return ((self.verdict == SLOWER and not self.exempt_reason) or (self.verdict == FAILED and self.newly_failed)
                or (self.energy is not None and self.energy.regressed))

    @property
    def op(self) -> str:
        return self.case.op

    @property
    def text(self) -> str:
        return self.case.key


def speed_verdict(base_samples, new_samples, threshold: float, alpha: float = ALPHA,
                  relative: float | None = None) -> tuple[str, float, float]:
    """(verdict, new/base median ratio, Mann-Whitney p) for two sets of cold samples. `threshold`
    is the effective one (floor included); a move within it but past `relative` is BELOW_FLOOR."""
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


def _pct_peak(record: CaseRecord, run: Run) -> float:
    # From the median alone: stats.summarize (mean, spread, percentiles) gives the same median but
    # took 0.4 s of a 1,300-case compare; this takes 0.08 s.
    peak = run.device.get("peak_gbps")
    if not record.cold_ms or not peak:
        return math.nan
    median = float(np.median(np.asarray(record.cold_ms, dtype=np.float64)))
    return 100.0 * stats.bandwidth_gbps(record.bytes or 0, median) / peak


def same_gpu_model(base: Run, new: Run) -> bool:
    return (base.device.get("name") or "?") == (new.device.get("name") or "?")


def default_metric(base: Run, new: Run) -> str:
    """The ratio to show: median time on one GPU model; across models, % of each one's peak."""
    return "time" if same_gpu_model(base, new) else "pct_peak"


def is_published(run: Run) -> bool:
    return run.header.published


def published_run(argument: str, path=None) -> Run:
    """A published progression (results/reference/published.json) as a run of one-sample cases,
    marked so that it never gets a speed verdict: `ref:seed002_rtx3080`."""
    from pathlib import Path

    from primbench.runfile.published import load_published

    wanted = argument[len(REFERENCE_PREFIX):]
    progressions = {p.id: p for p in load_published(path)}
    if wanted not in progressions:
        raise UserError(f"{argument}: no such published progression; valid: "
                        + ", ".join(REFERENCE_PREFIX + name for name in progressions))
    p = progressions[wanted]
    header = RunHeader(run_id=p.id, started="published figures", git={"sha": None},
                       device={"name": p.device, "peak_gbps": p.peak_gbps}, published=True)
    cases = [CaseRecord(CaseId(p.op, e.variant, p.dtype, p.n, None, None), bytes=p.n * ITEMSIZE.get(p.dtype, 4),
                        samples=Samples(cold_ms=(e.time_ms,))) for e in p.entries if e.time_ms]
    return Run(path=Path(f"{p.id} (published)"), header=header, cases=cases)


def load_comparable(argument: str) -> Run:
    """A run file, or `ref:<id>` for a published progression."""
    from primbench.runfile.io import load_run

    return published_run(argument) if argument.startswith(REFERENCE_PREFIX) else load_run(argument)


def _published_pairs(base: Run, new: Run) -> list[Pair]:
    # Published figures have no block or distribution: pair on (op, variant, dtype, n), the run's
    # fastest valid case standing for the variant.
    def by_kernel(run):
        best = {}
        for record in run.cases:
            if not record.ok or not record.cold_ms:
                continue
            # the case with no block or distribution, as published figures name none
            key = dataclasses.replace(record.case, block=None, distribution=None)
            if key not in best or np.median(record.cold_ms) < np.median(best[key].cold_ms):
                best[key] = record
        return best

    base_cases, new_cases = by_kernel(base), by_kernel(new)
    pairs = []
    for key in [k for k in base_cases if k in new_cases]:
        b, n = base_cases[key], new_cases[key]
        pair = Pair(dataclasses.replace(key, block=n.case.block or b.case.block), PUBLISHED, base_pct_peak=_pct_peak(b, base),
                    new_pct_peak=_pct_peak(n, new), note="a published figure: no samples, no verdict")
        pair.base_ms = float(np.median(b.cold_ms))
        pair.new_ms = float(np.median(n.cold_ms))
        pair.ratio = pair.new_ms / pair.base_ms
        pairs.append(pair)
    return pairs


def compare_runs(base: Run, new: Run, thresholds: Thresholds | None = None, *, new_cases_only: bool = False,
                 identities: set | None = None) -> list[Pair]:
    """Every case of either run (or, with new_cases_only, of the new run; with `identities`, only
    those), paired by identity, with its verdict (base order first, then new-only cases). Energy is
    gated only between cases of one physical GPU (compare/energy.py one_board)."""
    if is_published(base) or is_published(new):
        return _published_pairs(base, new)
    thresholds = thresholds or Thresholds.from_header(new.header)
    same_gpu = same_gpu_model(base, new)
    base_cases = {record.case: record for record in base.cases}
    new_cases = {record.case: record for record in new.cases}
    pairs = []
    order = list(base_cases) + [i for i in new_cases if i not in base_cases]
    if identities is not None:
        order = [i for i in order if i in identities]
    for identity in [i for i in order if i in new_cases] if new_cases_only else order:
        b, n = base_cases.get(identity), new_cases.get(identity)
        threshold = thresholds.for_case(identity.op, identity.variant)
        if b is None or n is None:
            side = "the baseline" if b is None else "the new run"
            pair = Pair(identity, MISSING, threshold=threshold, note=f"not in {side}", missing_from=side)
            if n is not None and n.status == "failed":  # a new case with a wrong result fails the gate
                pair.verdict, pair.newly_failed = FAILED, True
                pair.note = f"not in the baseline, and failed in the new run: {n.reason or ''}"[:300]
            pairs.append(pair)
            continue
        pair = Pair(identity, SAME, threshold=threshold, base_pct_peak=_pct_peak(b, base), new_pct_peak=_pct_peak(n, new))
        pair.figure = thresholds.figure(b, n) if b.ok and n.ok and same_gpu else COLD
        base_samples, new_samples = (b.samples.batch_ms, n.samples.batch_ms) if pair.figure == BATCH else (b.cold_ms, n.cold_ms)
        if base_samples and new_samples:
            pair.base_ms, pair.new_ms = float(np.median(base_samples)), float(np.median(new_samples))
            pair.ratio = pair.new_ms / pair.base_ms
        if not b.ok or not n.ok:
            # failed = wrong result; skipped = not run (e.g. not enough GPU memory): flagged, not a regression.
            side = [f"{name} {record.status}" for name, record in (("baseline", b), ("new run", n)) if not record.ok]
            reason = (b if n.ok else n).reason or ""
            pair.verdict = FAILED if "failed" in (b.status, n.status) else MISSING
            pair.note = f"{' and '.join(side)}: {reason}"[:300]
            pair.newly_failed = n.status == "failed" and b.status != "failed"  # ok or skipped before
        elif not base_samples or not new_samples:
            pair.verdict, pair.note = MISSING, "no samples recorded on " + ("either side" if not base_samples and not new_samples
                                                                        else "the baseline" if not base_samples else "the new run")
        elif not same_gpu:
            pair.verdict, pair.note = OTHER_GPU, "different GPU models: compare % of peak"
        else:
            pair.threshold = thresholds.effective(identity.op, identity.variant, pair.base_ms, pair.figure)
            if pair.figure == BATCH:
                pair.note = f"batch figure: a CUDA graph of {n.samples.batch_size} runs, hot L2"
            pair.verdict, pair.ratio, pair.p_value = speed_verdict(
                base_samples, new_samples, pair.threshold, relative=thresholds.for_case(identity.op, identity.variant, pair.figure))
            pair.ci_low, pair.ci_high = stats.ratio_interval(base_samples, new_samples)
        if b.variant_hash != n.variant_hash:  # timed all the same: "is my new kernel faster?" gets an answer
            _note_code_change(pair, b, n, thresholds)
        gate = thresholds.energy_threshold if one_board(base, new, b, n) else None  # compare/energy.py says why
        pair.energy = energy_pair(b, n, gate) if b.ok and n.ok else None
        if pair.verdict == BELOW_FLOOR:
            pair.note = "; ".join(filter(None, [pair.note, below_floor_note(pair, thresholds, base.git.get("sha"))]))
        pairs.append(pair)
    return pairs


def _note_code_change(pair: Pair, b: CaseRecord, n: CaseRecord, thresholds: Thresholds) -> None:
    """Mark a pair whose variant hash changed, and a SLOWER one the config exempts, with its reason."""
    pair.code_changed = True
    pair.note = "; ".join(filter(None, [pair.note, f"code changed (hash {b.variant_hash} -> {n.variant_hash})"]))
    pair.exempt_reason = thresholds.exemption(pair.case.op, pair.case.variant) if pair.verdict == SLOWER else None
    if pair.exempt_reason:
        pair.note += f"; slower allowed by the config: {pair.exempt_reason}"


def below_floor_note(pair: Pair, thresholds: Thresholds, base_sha: str | None) -> str:
    """Why a BELOW_FLOOR pair has no speed verdict, and what can give it one: `ab --base` times the
    baseline's version of a changed kernel against today's, interleaved on one GPU."""
    floor = thresholds.batch_abs_floor_us if pair.figure == BATCH else thresholds.abs_floor_us
    moved = f"moved {pair.ratio - 1:+.1%} ({(pair.new_ms - pair.base_ms) * 1e3:+.2f} us), under the {floor:g} us floor"
    if not pair.code_changed:
        return f"{moved}; the code is the same in both runs, so this is likely run-to-run noise"
    revision = f"--base {base_sha[:12]} " if base_sha else "--base <the baseline's commit> "
    return f"{moved}: two runs cannot tell; primbench ab {pair.case.op}/{pair.case.variant} {revision}--sizes {pair.case.n} can"


def geometric_means(pairs: list[Pair]) -> dict[str, dict]:
    """Per op: the geometric mean of new/base time ratios over pairs with a speed verdict, and the
    same of the %-of-peak ratios (the measure that stays fair across GPU models)."""
    result = {}
    for op in dict.fromkeys(p.op for p in pairs):
        mine = [p for p in pairs if p.op == op]
        times = [p.ratio for p in mine if p.verdict in SPEED_VERDICTS and p.ratio > 0]
        peaks = [p.new_pct_peak / p.base_pct_peak for p in mine
                 if p.verdict not in (FAILED, MISSING) and p.base_pct_peak > 0 and p.new_pct_peak > 0]
        counts = {}
        for p in mine:
            counts[p.verdict] = counts.get(p.verdict, 0) + 1
        result[op] = {
            "time_ratio": float(np.exp(np.mean(np.log(times)))) if times else math.nan,
            "pct_peak_ratio": float(np.exp(np.mean(np.log(peaks)))) if peaks else math.nan,
            "pairs": len(mine),
            "verdicts": counts,
        }
    return result


def changed_variants(base: Run, new: Run) -> list[str]:
    """The variants both runs measured whose identity hash differs: their code changed in between."""
    before, after = base.header.variants, new.header.variants
    return sorted(key for key in before.keys() & after.keys()
                  if isinstance(before[key], dict) and isinstance(after[key], dict)
                  and before[key].get("hash") != after[key].get("hash"))


def check(base: Run, new: Run, *, allow_different_gpu: bool = False) -> tuple[int, list[Pair]]:
    """The CI gate: (exit code, pairs). 1 when any pair is SLOWER, newly failed or (where the config
    sets energy_threshold) an ENERGY REGRESSION, else 0; a
    different GPU model is unusable input (exit 2) unless allowed."""
    if is_published(base) or is_published(new):
        raise UserError("check compares two measured runs; a published reference has no samples to test (use compare)")
    if not same_gpu_model(base, new) and not allow_different_gpu:
        raise UserError(f"{new.path}: measured on {new.device.get('name')}, the baseline {base.path} on "
                        f"{base.device.get('name')}; times are not comparable (use a baseline of the same GPU, or "
                        "--allow-different-gpu to list % of peak side by side, which gates nothing)")
    if not new.finished:
        raise UserError(f"{new.path}: the run was interrupted (no end record); finish it with `primbench run --resume` "
                        "before checking it")
    pairs = compare_runs(base, new, new_cases_only=True)
    if not any(p.verdict != MISSING for p in pairs):
        raise UserError(f"{new.path}: no case in common with the baseline {base.path}; check it against a baseline "
                        "made from the same config")
    return (EXIT_FAILED if any(p.regressed for p in pairs) else EXIT_OK), pairs


def not_compared(pairs: list[Pair]) -> dict[str, int]:
    """How many pairs the check did not time against each other, by reason (missing, unsure,
    another GPU model, failed in the baseline): they pass the gate, and a summary must say so."""
    counts = {}
    for p in pairs:
        if p.verdict in (MISSING, UNSURE, OTHER_GPU) or (p.verdict == FAILED and not p.newly_failed):
            counts[p.verdict] = counts.get(p.verdict, 0) + 1
    return counts
