"""`check --confirm`: before the gate fails, each SLOWER or FASTER suspect is timed again on the GPU
at hand, interleaved against the baseline's own code (run/confirm.py does the timing, with
`primbench ab --base`'s machinery; cli/check.py hands it in), and the verdict engine's pairs are
marked with what it found. No CuPy here: the timing is a callable.

Two runs on two machines (or under two protocols) differ by what no interval of one run can see:
on the H200, a 3 us sum read 8.4 % slower on one board than on another with the same code. An
interleaved A/B on one GPU sees only what the code changed. So a suspect is
- confirmed: the A/B says the same as the pair (SLOWER or FASTER) at the gate's relative threshold;
- not reproduced on this GPU: the A/B says SAME, or the other way (a board or protocol shift);
- unconfirmed, with the reason: the A/B could not tell (UNSURE), or it could not be timed (no GPU,
  the baseline's commit is not in this clone, the working tree is not the new run's code, a pytest
  case, the limits). An unconfirmed SLOWER still fails the gate: nothing dismissed it.

The A/B times cold samples, whatever figure the pair was judged on (a small kernel's batch figure
included), at the pair's relative threshold for cold samples. Work is bounded: at most `limit`
suspects (SLOWER before FASTER, the largest moves first), each of at most about `seconds_each` of
samples (fewer rounds for a long kernel), and all of them within `limit` x `seconds_each` x 2.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from primbench.compare.verdicts import (COLD, CONFIRMED, FASTER, NOT_REPRODUCED, SAME, SLOWER, UNCONFIRMED, Pair,
                                        Thresholds)
from primbench.errors import UserError

DEFAULT_LIMIT = 20
DEFAULT_SECONDS = 30.0
# A round takes three cold samples (A, B and the A/A slice), each an L2 flush (a memset of 2 x L2,
# about 40 us on the H200), a wait, a hold and the operation: about 0.3 ms a sample besides the operation.
SAMPLE_OVERHEAD_S = 3e-4
# `primbench ab`'s bounds on rounds (run/ab.py: MIN_ROUNDS, DEFAULT_ROUNDS), kept here so that no
# module after the run file imports run/.
MIN_ROUNDS, MAX_ROUNDS = 16, 200


@dataclass
class Confirmation:
    """What --confirm did: how many suspects it timed again, what each found, and what it left."""

    suspects: int = 0
    sha: str | None = None
    found: dict = field(default_factory=dict)  # {CONFIRMED: n, NOT_REPRODUCED: n, UNCONFIRMED: n}
    reasons: dict = field(default_factory=dict)  # {why unconfirmed: n}

    def line(self) -> str:
        if not self.suspects:
            return "confirm: no SLOWER or FASTER suspect to time again"
        counts = ", ".join(f"{self.found[name]} {name}" for name in (CONFIRMED, NOT_REPRODUCED, UNCONFIRMED)
                           if self.found.get(name))
        why = "; ".join(f"{count} {reason}" for reason, count in self.reasons.items())
        against = f"the baseline's code at {self.sha[:12]}" if self.sha else "the baseline's code"
        return (f"confirm: {self.suspects} suspect(s), timed again on this GPU interleaved against {against}: {counts}"
                + (f" (unconfirmed: {why})" if why else ""))


def suspects_in_order(pairs: list[Pair]) -> list[Pair]:
    """The pairs to time again: SLOWER before FASTER, the largest moves first."""
    def move(p: Pair) -> float:
        return -abs(math.log(p.ratio)) if p.ratio > 0 and math.isfinite(p.ratio) else 0.0

    return sorted((p for p in pairs if p.suspect), key=lambda p: (p.verdict != SLOWER, move(p), p.text))


def confirm_suspects(pairs: list[Pair], base, new, retime, *, limit: int = DEFAULT_LIMIT,
                     seconds_each: float = DEFAULT_SECONDS, cannot: str | None = None) -> Confirmation:
    """Mark each suspect of `pairs` CONFIRMED, NOT_REPRODUCED or UNCONFIRMED, with its note.
    `retime(case, (baseline's hash, new run's hash), sha, rounds, threshold, seconds) -> (ratio, low,
    high, verdict)` times one suspect against commit `sha`'s code (a UserError: why it could not);
    `cannot` is why none can be timed here (no GPU), if so."""
    suspects = suspects_in_order(pairs)
    result = Confirmation(len(suspects), base.git.get("sha"))
    cannot = cannot or (None if result.sha else "the baseline names no commit")
    new_records = {record.case: record for record in new.cases}
    base_hashes = {record.case: record.variant_hash for record in base.cases}
    thresholds = Thresholds.from_header(new.header)
    deadline = time.monotonic() + limit * seconds_each * 2
    for index, pair in enumerate(suspects):
        if cannot is not None:
            _unconfirmed(result, pair, cannot)
        elif index >= limit:
            _unconfirmed(result, pair, f"over the limit of {limit} suspects (--confirm-limit)")
        elif time.monotonic() > deadline:
            _unconfirmed(result, pair, "past the time limit (--confirm-seconds)")
        else:
            _retime_one(result, pair, new_records[pair.case], base_hashes.get(pair.case), thresholds, seconds_each, retime)
    return result


def rounds_for(median_ms: float, seconds_each: float) -> int:
    """How many interleaved rounds fit in about `seconds_each` for an operation of `median_ms`."""
    median_s = (median_ms if math.isfinite(median_ms) and median_ms > 0 else 1.0) / 1e3
    return int(min(MAX_ROUNDS, max(MIN_ROUNDS, seconds_each / (3 * (median_s + SAMPLE_OVERHEAD_S)))))


def _retime_one(result: Confirmation, pair: Pair, record, base_hash, thresholds: Thresholds, seconds_each: float,
                retime) -> None:
    if pair.op == "pytest":
        _unconfirmed(result, pair, "a pytest case (time it again with pytest)")
        return
    rounds = rounds_for(pair.new_ms, seconds_each)
    threshold = thresholds.for_case(pair.op, pair.case.variant, COLD)
    try:
        ratio, low, high, verdict = retime(pair.case, (base_hash, record.variant_hash), result.sha, rounds, threshold,
                                           seconds_each)
    except UserError as exc:
        _unconfirmed(result, pair, str(exc).removeprefix("primbench: ")[:160])
        return
    timed = f"B/A {ratio:.3f} [{low:.3f}, {high:.3f}] {verdict} in {rounds} interleaved rounds, cold"
    if verdict == pair.verdict:
        _mark(result, pair, CONFIRMED, f"confirmed on this GPU: {timed}")
    elif verdict in (SAME, SLOWER, FASTER):
        _mark(result, pair, NOT_REPRODUCED, f"not reproduced on this GPU (board or protocol shift): {timed}")
    else:
        _unconfirmed(result, pair, "the interleaved A/B could not tell (UNSURE)", detail=timed)


def _mark(result: Confirmation, pair: Pair, found: str, note: str) -> None:
    pair.confirmation, pair.confirmation_note = found, note
    pair.note = "; ".join(filter(None, [note, pair.note]))
    result.found[found] = result.found.get(found, 0) + 1


def _unconfirmed(result: Confirmation, pair: Pair, reason: str, detail: str = "") -> None:
    _mark(result, pair, UNCONFIRMED, f"unconfirmed: {reason}" + (f": {detail}" if detail else ""))
    result.reasons[reason] = result.reasons.get(reason, 0) + 1
