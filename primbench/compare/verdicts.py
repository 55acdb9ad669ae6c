"""The one verdict engine: two records of one case (a baseline's and a new one) judged by the rule
of compare/rule.py, and whole runs paired case by case and judged the same way, for compare, the
CI check, the site's history page, the pytest plugin and the dashboard exports.

`judge` gives a pair its verdict from the raw samples of the judged figure (cold, or the graph
batch for small cases), its 95 % bootstrap interval of that same ratio of medians
(stats.ratio_interval), and its % of peak from the same figure, so every column of a row is one
measure. Where both sides measured energy, a pair also carries its energy ratio (compare/energy.py),
which fails `check` only if the config's energy_threshold asks.

Pairs are matched on the case alone. A pair whose kernel changed (by its source and machine-code
hashes, compare/code_change.py: a comment edit is no change) says so and is timed by the same
rule: "is my new kernel faster?" is the question it answers, and a SLOWER changed kernel fails
`check` unless the config's `compare.exempt` names it with a reason. A pair
whose judged figure was measured by another protocol on each side (runfile/protocol.py) keeps its
verdict, marked, and fails nothing: the move may be the protocol's. Pairs that failed on either
side, or exist on one side only, are flagged, never given a speed verdict. Across different GPU
models raw times are not comparable: the pairs are set side by side in % of each GPU's own peak
and get no verdict. Nothing here imports CuPy.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from primbench.compare.code_change import SOURCE_ONLY, CodeChange, CodeChanges, classify
from primbench.compare.energy import EnergyPair, energy_pair, one_board
from primbench.compare.published import (PUBLISHED, REFERENCE_PREFIX, is_published, load_comparable,  # noqa: F401
                                         published_pairs, published_run)
from primbench.compare.rule import (ABS_FLOOR_US, ALPHA, BATCH, BATCH_ABS_FLOOR_US, BATCH_BELOW_US,  # noqa: F401
                                    BATCH_THRESHOLD, BELOW_FLOOR, COLD, DEFAULT_THRESHOLD, FASTER, SAME, SLOWER,
                                    SPEED_VERDICTS, UNSURE, Thresholds, figure_samples, run_spread, speed_verdict)
from primbench.errors import EXIT_FAILED, EXIT_OK, UserError
from primbench.runfile import stats
from primbench.runfile.case_id import CaseId
from primbench.runfile.io import Run
from primbench.runfile.records import CaseRecord

FAILED, MISSING, OTHER_GPU = "FAILED", "MISSING", "OTHER_GPU"
# What `check --confirm` (run/confirm.py) found of a SLOWER or FASTER pair, timed again on this GPU.
CONFIRMED, NOT_REPRODUCED, UNCONFIRMED = "confirmed", "not reproduced", "unconfirmed"


@dataclass
class Pair:
    """One measurement in the baseline and the new run."""

    case: CaseId
    verdict: str
    base_ms: float = math.nan  # the median of the judged figure (`figure`), in ms
    new_ms: float = math.nan
    ratio: float = math.nan  # new median / base median (< 1: faster)
    p_value: float = math.nan
    threshold: float = DEFAULT_THRESHOLD  # the effective relative threshold (floor and spread included)
    base_pct_peak: float = math.nan  # bandwidth in % of each side's peak, from the same judged figure
    new_pct_peak: float = math.nan
    note: str = ""
    newly_failed: bool = False  # failed verification in the new run, not failed (or absent) in the baseline
    code_changed: bool = False  # its kernel or plan changed in between (compare/code_change.py's rule)
    code_change: str = ""  # what of the variant's identity changed: a code_change kind, "" for none
    exempt_reason: str | None = None  # the config lets this changed variant be SLOWER, for this reason
    ci_low: float = math.nan  # 95 % interval of the new/base time ratio (stats.ratio_interval)
    ci_high: float = math.nan
    figure: str = COLD  # the samples the verdict used: "cold", or "batch" (a CUDA graph of K operations)
    missing_from: str = ""  # for a case in one run only: "the baseline" or "the new run", the run that lacks it
    energy: EnergyPair | None = None  # where the baseline measured energy (compare/energy.py)
    spread: float = 0.0  # the baseline's spread across its runs on the judged figure (rule.run_spread)
    protocol_changed: str = ""  # what of the protocol behind the judged figure differs: not gated
    confirmation: str = ""  # CONFIRMED, NOT_REPRODUCED or UNCONFIRMED under `check --confirm`; "" when not asked
    confirmation_note: str = ""  # the re-timing's B/A and interval, or why it was not re-timed

    @property
    def suspect(self) -> bool:
        """A move past the threshold that the test backs: what `check --confirm` times again."""
        return self.verdict in (SLOWER, FASTER)

    @property
    def regressed(self) -> bool:
        """What fails the CI check: significantly slower (unless its changed code is exempt, with a
        reason), or newly broken in the new run, or (under the config's energy gate) more energy. A
        SLOWER pair whose protocol changed fails only where `--confirm` timed it again and confirmed
        it; one that `--confirm` did not reproduce on this GPU never fails."""
        return self.time_regressed or (self.energy is not None and self.energy.regressed)

    @property
    def time_regressed(self) -> bool:
        """What fails the gate on time: a trusted SLOWER (see `regressed`), or newly failing."""
        trusted = self.confirmation == CONFIRMED or (self.confirmation != NOT_REPRODUCED and not self.protocol_changed)
        return (self.verdict == SLOWER and not self.exempt_reason and trusted) or (self.verdict == FAILED and self.newly_failed)

    @property
    def op(self) -> str:
        return self.case.op

    @property
    def text(self) -> str:
        return self.case.key

    def pct_peak_interval(self) -> tuple[float, float]:
        """The 95 % interval of new/base % of peak: the time ratio's, turned over and scaled by the
        same bytes and peaks that make the % of peak ratio itself."""
        time_ratio = self.ratio
        pct = (self.new_pct_peak / self.base_pct_peak) if self.base_pct_peak > 0 else math.nan
        if not all(math.isfinite(v) and v > 0 for v in (time_ratio, pct, self.ci_low, self.ci_high)):
            return math.nan, math.nan
        scale = pct * time_ratio  # (bytes and peaks of new over base): pct = scale / time ratio
        return scale / self.ci_high, scale / self.ci_low


def pct_peak(record: CaseRecord, peak_gbps, figure: str = COLD) -> float:
    """A record's bandwidth in % of `peak_gbps`, from the median of `figure`'s samples."""
    samples = figure_samples(record, figure)
    if not samples or not peak_gbps:
        return math.nan
    # From the median alone: stats.summarize gives the same median but took 0.4 s of a 1,300-case compare.
    median = float(np.median(np.asarray(samples, dtype=np.float64)))
    return 100.0 * stats.bandwidth_gbps(record.bytes or 0, median) / peak_gbps


def _pct_peak(record: CaseRecord, run: Run) -> float:
    return pct_peak(record, run.device.get("peak_gbps"))


def same_gpu_model(base: Run, new: Run) -> bool:
    return (base.device.get("name") or "?") == (new.device.get("name") or "?")


def default_metric(base: Run, new: Run) -> str:
    """The ratio to show: median time on one GPU model; across models, % of each one's peak."""
    return "time" if same_gpu_model(base, new) else "pct_peak"


def judge(b: CaseRecord, n: CaseRecord, thresholds: Thresholds, *, same_gpu: bool = True,
          peaks: tuple = (math.nan, math.nan), base_sha: str | None = None, protocol_changes: dict | None = None,
          code_change: CodeChange | None = None) -> Pair:
    """The verdict of one case measured in a baseline (`b`) and a new run (`n`), both present.
    `peaks` are the two GPUs' peak GB/s; `protocol_changes` {figure: what changed} comes from
    runfile/protocol.py; `base_sha` is the baseline's commit, named in a BELOW_FLOOR pair's note;
    `code_change` is the variant's change between the two headers (compare/code_change.py), or,
    where not given, the records' source hashes alone decide."""
    identity = n.case
    pair = Pair(identity, SAME, threshold=thresholds.for_case(identity.op, identity.variant))
    pair.figure = thresholds.figure(b, n) if b.ok and n.ok and same_gpu else COLD
    base_samples, new_samples = figure_samples(b, pair.figure), figure_samples(n, pair.figure)
    pair.base_pct_peak, pair.new_pct_peak = pct_peak(b, peaks[0], pair.figure), pct_peak(n, peaks[1], pair.figure)
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
    else:
        pair.ci_low, pair.ci_high = stats.ratio_interval(base_samples, new_samples)
        if not same_gpu:
            pair.verdict, pair.note = OTHER_GPU, "different GPU models: compare % of peak"
        else:
            _speed(pair, base_samples, new_samples, thresholds, run_spread(b, pair.figure), n.samples.batch_size)
            pair.protocol_changed = (protocol_changes or {}).get(pair.figure, "") if pair.verdict in SPEED_VERDICTS else ""
    change = code_change or classify((b.variant_hash, n.variant_hash), (None, None))
    if change.kind:  # timed all the same: "is my new kernel faster?" gets an answer
        _note_code_change(pair, change, thresholds)
    if pair.verdict == BELOW_FLOOR:
        pair.note = "; ".join(filter(None, [pair.note, below_floor_note(pair, thresholds, base_sha)]))
    if pair.protocol_changed:  # first: what a reader must see before trusting the verdict
        pair.note = "; ".join(filter(None, [f"protocol changed ({pair.protocol_changed}): not gated", pair.note]))
    return pair


def _speed(pair: Pair, base_samples, new_samples, thresholds: Thresholds, spread: float, batch_size) -> None:
    """The speed verdict of a pair both of whose sides were timed on one GPU model."""
    case = pair.case
    pair.spread = spread
    pair.threshold = thresholds.effective(case.op, case.variant, pair.base_ms, pair.figure, spread)
    notes = [f"batch figure: a CUDA graph of {batch_size} runs, hot L2"] if pair.figure == BATCH else []
    if spread > 0 and pair.threshold <= thresholds.spread_multiple * spread + 1e-12:
        notes.append(f"threshold {thresholds.spread_multiple:g} x the baseline runs' spread of {spread:.1%}")
    pair.note = "; ".join(notes)
    # BELOW_FLOOR is a move past the relative threshold (or the spread's) but not the absolute floor.
    relative = max(thresholds.for_case(case.op, case.variant, pair.figure), thresholds.spread_multiple * spread)
    pair.verdict, pair.ratio, pair.p_value = speed_verdict(base_samples, new_samples, pair.threshold, relative=relative)


def compare_runs(base: Run, new: Run, thresholds: Thresholds | None = None, *, new_cases_only: bool = False,
                 identities: set | None = None) -> list[Pair]:
    """Every case of either run (or, with new_cases_only, of the new run; with `identities`, only
    those), paired by identity, with its verdict (base order first, then new-only cases). Energy is
    gated only between cases of one physical GPU (compare/energy.py one_board)."""
    from primbench.runfile import protocol

    if is_published(base) or is_published(new):
        return published_pairs(base, new, Pair, _pct_peak)
    thresholds = thresholds or Thresholds.from_header(new.header)
    if base.header.baseline.get("spread_multiple"):  # the multiple the baseline of several runs was made for
        thresholds = dataclasses.replace(thresholds, spread_multiple=float(base.header.baseline["spread_multiple"]))
    same_gpu = same_gpu_model(base, new)
    changes = protocol.compare(base.header, new.header).by_figure()
    peaks = (base.device.get("peak_gbps"), new.device.get("peak_gbps"))
    code_changes = CodeChanges(base.header, new.header)
    base_cases = {record.case: record for record in base.cases}
    new_cases = {record.case: record for record in new.cases}
    pairs = []
    order = list(base_cases) + [i for i in new_cases if i not in base_cases]
    if identities is not None:
        order = [i for i in order if i in identities]
    for identity in [i for i in order if i in new_cases] if new_cases_only else order:
        b, n = base_cases.get(identity), new_cases.get(identity)
        if b is None or n is None:
            pairs.append(_one_side(identity, b, n, thresholds))
            continue
        pair = judge(b, n, thresholds, same_gpu=same_gpu, peaks=peaks, base_sha=base.git.get("sha"),
                     protocol_changes=changes,
                     code_change=code_changes.of(f"{identity.op}/{identity.variant}", b.variant_hash, n.variant_hash))
        gate = thresholds.energy_threshold if one_board(base, new, b, n) else None  # compare/energy.py says why
        pair.energy = energy_pair(b, n, gate) if b.ok and n.ok else None
        pairs.append(pair)
    return pairs


def _one_side(identity: CaseId, b: CaseRecord | None, n: CaseRecord | None, thresholds: Thresholds) -> Pair:
    """A case one run lacks: MISSING, or FAILED where the new run has it and it gave a wrong result."""
    side = "the baseline" if b is None else "the new run"
    pair = Pair(identity, MISSING, threshold=thresholds.for_case(identity.op, identity.variant), note=f"not in {side}",
                missing_from=side)
    if n is not None and n.status == "failed":  # a new case with a wrong result fails the gate
        pair.verdict, pair.newly_failed = FAILED, True
        pair.note = f"not in the baseline, and failed in the new run: {n.reason or ''}"[:300]
    return pair


def _note_code_change(pair: Pair, change: CodeChange, thresholds: Thresholds) -> None:
    """Note what of a pair's variant changed; mark a code change, and a SLOWER one the config
    exempts, with its reason. A source edit that left the machine code alone is only noted."""
    pair.code_change = change.kind
    pair.note = "; ".join(filter(None, [pair.note, change.note()]))
    if not change.counts:
        return
    pair.code_changed = True
    pair.exempt_reason = thresholds.exemption(pair.case.op, pair.case.variant) if pair.verdict == SLOWER else None
    if pair.exempt_reason:
        pair.note += f"; slower allowed by the config: {pair.exempt_reason}"


def below_floor_note(pair: Pair, thresholds: Thresholds, base_sha: str | None) -> str:
    """Why a BELOW_FLOOR pair has no speed verdict, and what can give it one: `ab --base` times the
    baseline's version of a changed kernel against today's, interleaved on one GPU."""
    floor = thresholds.batch_abs_floor_us if pair.figure == BATCH else thresholds.abs_floor_us
    moved = f"moved {pair.ratio - 1:+.1%} ({(pair.new_ms - pair.base_ms) * 1e3:+.2f} us), under the {floor:g} us floor"
    if pair.code_change == SOURCE_ONLY:
        return f"{moved}; the machine code is the same in both runs, so this is likely run-to-run noise"
    if not pair.code_changed:
        return f"{moved}; the code is the same in both runs, so this is likely run-to-run noise"
    revision = f"--base {base_sha[:12]} " if base_sha else "--base <the baseline's commit> "
    return f"{moved}: two runs cannot tell; primbench ab {pair.case.op}/{pair.case.variant} {revision}--sizes {pair.case.n} can"


def geometric_means(pairs: list[Pair]) -> dict[str, dict]:
    """Per op: the geometric mean of new/base time ratios over pairs with a speed verdict, and the
    same of the %-of-peak ratios (the measure that stays fair across GPU models), each pair's
    ratios taken on the figure it was judged by."""
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
    """The variants both runs measured whose code changed in between, by compare/code_change.py's
    rule (a source edit that left the machine code alone is no change)."""
    return CodeChanges(base.header, new.header).changed()


def check(base: Run, new: Run, *, allow_different_gpu: bool = False) -> tuple[int, list[Pair]]:
    """The CI gate: (exit code, pairs). 1 when any pair is SLOWER, newly failed or (where the config
    sets energy_threshold) an ENERGY REGRESSION, else 0; a
    different GPU model is unusable input (exit 2) unless allowed."""
    if is_published(base) or is_published(new):
        raise UserError("check compares two measured runs; a published reference has no samples to test (use compare)")
    if not same_gpu_model(base, new) and not allow_different_gpu:
        raise UserError(f"{new.path}: measured on {new.header.device_name}, the baseline {base.path} on "
                        f"{base.header.device_name}; times are not comparable (use a baseline of the same GPU, or "
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
