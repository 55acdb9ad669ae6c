"""What a comparison shows first, and how it folds the rest. Every output (terminal, Markdown, JUnit,
HTML) leads with the pairs that changed: SLOWER, newly failing, FASTER, UNSURE, one by one. Every
other pair is folded into one line per variant, with each count stated: "scan/decoupled_lookback:
30 cases only in the baseline". The variants of an op whose cases are all SAME or BELOW_FLOOR share
a line. A pair whose energy is an ENERGY REGRESSION or IMPROVEMENT (compare/energy.py, under the
config's energy_threshold) leads too, whatever its time verdict: a gate that fails on it must show
it. `--all` (the HTML page's toggle) shows every pair. Nothing here imports CuPy or pandas."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from primbench.compare import energy
from primbench.compare.code_change import SOURCE_ONLY
from primbench.compare.verdicts import (BELOW_FLOOR, FAILED, FASTER, MISSING, OTHER_GPU, PUBLISHED, SAME, SLOWER,
                                        UNSURE, Pair)

LEAD_ORDER = {SLOWER: 0, FAILED: 1, FASTER: 2, UNSURE: 3}
# A pair led by its energy alone sits with the time verdict it mirrors: a regression with SLOWER.
ENERGY_LEAD_ORDER = {energy.ENERGY_REGRESSION: 0, energy.ENERGY_IMPROVEMENT: 2}
SIDE_BY_SIDE = (OTHER_GPU, PUBLISHED)  # no verdict: the pairs are the content, ranked by % of peak
ONLY_IN_BASELINE, ONLY_IN_NEW = "only in the baseline", "only in the new run"
NOT_TIMED, FAILED_BEFORE = "not timed on both sides", "failed in the baseline"
# A folded line lists its classes in this order.
CLASS_ORDER = (SAME, BELOW_FLOOR, ONLY_IN_NEW, ONLY_IN_BASELINE, NOT_TIMED, FAILED_BEFORE)
_QUIET = {SAME, BELOW_FLOOR}  # the classes whose variants of one op may share a line


def _time_leads(pair: Pair) -> bool:
    return pair.verdict in (SLOWER, FASTER, UNSURE) or (pair.verdict == FAILED and pair.newly_failed)


def leads(pair: Pair) -> bool:
    """Whether the pair changed, in time or (under an energy gate) in energy: it is shown on its
    own, before everything else."""
    return _time_leads(pair) or energy.leads(pair)


def _rank(pair: Pair) -> int:
    """Its place among the pairs that changed: the more serious of its time and energy changes."""
    ranks = [LEAD_ORDER[pair.verdict]] if _time_leads(pair) else []
    if energy.leads(pair):
        ranks.append(ENERGY_LEAD_ORDER[pair.energy.verdict])
    return min(ranks)


def lead(pairs: list[Pair]) -> list[Pair]:
    """The pairs that changed, most serious first: by verdict, then by the size of the move."""
    def size(p: Pair) -> float:
        return -abs(math.log(p.ratio)) if p.ratio > 0 and math.isfinite(p.ratio) else 0.0

    return sorted((p for p in pairs if leads(p)), key=lambda p: (_rank(p), size(p), p.text))


def side_by_side(pairs: list[Pair]) -> list[Pair]:
    """Pairs of different GPU models or published figures: no verdict, the new side's % of its own
    peak first."""
    def rank(p: Pair) -> float:
        return -p.new_pct_peak if math.isfinite(p.new_pct_peak) else math.inf

    return sorted((p for p in pairs if p.verdict in SIDE_BY_SIDE), key=lambda p: (rank(p), p.text))


def fold_class(pair: Pair) -> str:
    """What a pair that did not change is: SAME, BELOW_FLOOR, on one side only, not timed, failed before."""
    if pair.verdict == MISSING:
        if pair.missing_from:
            return ONLY_IN_NEW if pair.missing_from == "the baseline" else ONLY_IN_BASELINE
        return NOT_TIMED
    if pair.verdict == FAILED:
        return FAILED_BEFORE
    return pair.verdict


def folded(pairs: list[Pair]) -> list[Pair]:
    """The pairs that neither changed nor are set side by side, in the order their folds list them."""
    return [p for fold in folds(pairs) for p in fold.pairs]


@dataclass
class Fold:
    """One folded line: a variant's unchanged pairs, or those of several variants of one op."""

    op: str
    variants: list[str]
    pairs: list[Pair] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        counts = {}
        for p in self.pairs:
            counts[fold_class(p)] = counts.get(fold_class(p), 0) + 1
        return {name: counts[name] for name in CLASS_ORDER if name in counts}

    @property
    def code_changed(self) -> bool:
        return any(p.code_changed for p in self.pairs)

    @property
    def label(self) -> str:
        return f"{self.op}/{self.variants[0]}" if len(self.variants) == 1 else f"{self.op}: {len(self.variants)} variants"

    def moves(self) -> tuple[float, float] | None:
        """The smallest and largest BELOW_FLOOR move (ratio - 1), if any."""
        moved = [p.ratio - 1 for p in self.pairs if p.verdict == BELOW_FLOOR and math.isfinite(p.ratio)]
        return (min(moved), max(moved)) if moved else None

    def classes(self) -> list[tuple[str, int, str]]:
        """(class, count, detail) in CLASS_ORDER; BELOW_FLOOR's detail is its range of moves."""
        moves = self.moves()
        detail = "" if not moves else f"{moves[0]:+.1%} to {moves[1]:+.1%}" if moves[0] != moves[1] else f"{moves[0]:+.1%}"
        return [(name, count, detail if name == BELOW_FLOOR else "") for name, count in self.counts.items()]

    def code(self) -> str:
        """'code changed' (every pair), 'code changed in 3' (some); where no code changed but a source
        did and its machine code did not (compare/code_change.py), 'source changed, machine code
        identical' (or 'source changed in 3, machine code identical'); or ''."""
        changed = sum(p.code_changed for p in self.pairs)
        if changed:
            return "code changed" if changed == len(self.pairs) else f"code changed in {changed}"
        edited = sum(p.code_change == SOURCE_ONLY for p in self.pairs)
        if edited:
            return SOURCE_ONLY if edited == len(self.pairs) else f"source changed in {edited}, machine code identical"
        return ""

    def verdicts(self) -> str:
        """'10 SAME, 2 BELOW_FLOOR (+5.1% to +7.0%), code changed': each class's count, and the code."""
        parts = [f"{count} {name}" + (f" ({detail})" if detail else "") for name, count, detail in self.classes()]
        return ", ".join(parts) + (f", {self.code()}" if self.code() else "")

    def line(self) -> str:
        """'reduce/vector_load_sum: 12 cases SAME, code changed'."""
        total = len(self.pairs)
        if len(self.counts) == 1:
            return f"{self.label}: {total} case{'s' if total != 1 else ''} {self.verdicts().split(' ', 1)[1]}"
        return f"{self.label}: {total} cases: {self.verdicts()}"


def folds(pairs: list[Pair], max_lines: int | None = None) -> list[Fold]:
    """The folded lines, op by op in the pairs' order: per variant, the variants of an op whose
    pairs are all SAME or BELOW_FLOOR (and alike in whether their code, or their source alone, changed)
    sharing one. When
    that takes more than max_lines, one line per op and class of pair instead (counts kept)."""
    rest = [p for p in pairs if not leads(p) and p.verdict not in SIDE_BY_SIDE]
    by_variant: dict[tuple[str, str], list[Pair]] = {}
    for p in rest:
        by_variant.setdefault((p.op, p.case.variant), []).append(p)
    lines: list[Fold] = []
    shared: dict[tuple[str, bool, bool], Fold] = {}
    for (op, variant), mine in by_variant.items():
        quiet = {fold_class(p) for p in mine} <= _QUIET
        if quiet:
            key = (op, all(p.code_changed for p in mine), all(p.code_change == SOURCE_ONLY for p in mine))
            if key not in shared:
                shared[key] = Fold(op, [])
                lines.append(shared[key])
            shared[key].variants.append(variant)
            shared[key].pairs.extend(mine)
        else:
            lines.append(Fold(op, [variant], list(mine)))
    op_order = list(dict.fromkeys(p.op for p in pairs))
    lines.sort(key=lambda fold: op_order.index(fold.op))  # stable: an op's shared line first, as built
    if max_lines is None or len(lines) <= max_lines:
        return lines
    by_op: dict[tuple[str, str], Fold] = {}
    for p in rest:
        key = (p.op, fold_class(p))
        fold = by_op.setdefault(key, Fold(p.op, []))
        if p.case.variant not in fold.variants:
            fold.variants.append(p.case.variant)
        fold.pairs.append(p)
    return sorted(by_op.values(), key=lambda f: (op_order.index(f.op), CLASS_ORDER.index(fold_class(f.pairs[0]))))


def below_floor_meaning(pairs: list[Pair]) -> str | None:
    """The one line that says what BELOW_FLOOR means, where a pair has it."""
    if not any(p.verdict == BELOW_FLOOR for p in pairs):
        return None
    return "BELOW_FLOOR: past the threshold but not the absolute floor; two runs cannot tell, `primbench ab` can (--all)"
