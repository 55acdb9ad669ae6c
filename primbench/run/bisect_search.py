"""The search of `primbench bisect`: which commit between GOOD and BAD made a variant SLOWER? No git
and no GPU here: the commits come as a list, and each step is a callable that times commit B's
declaration of the variant against commit A's (run/bisect.py gives the interleaved A/B of
`primbench ab`, in a child process; the tests give a stand-in).

Each step is one interleaved A/B, judged by ab's rule (run/ab.py: SLOWER only when the 95 %
interval excludes 1 and the move passes the threshold). The search:
1. BAD against GOOD. Anything but SLOWER ends it: the move is not reproduced on this GPU (SAME or
   FASTER), or the A/B could not tell (UNSURE).
2. A binary search for the first commit SLOWER than GOOD: the commit halfway between the last one
   known not slower (lo) and the first one known slower (hi), timed against GOOD. When one commit
   is left between them, hi is timed against that commit, its parent, instead: if hi moved on its
   own, that one step finds it and confirms it at once; if not, the parent took (some of) the move.
3. The answer: hi, where hi against its parent lo is SLOWER (timed, or derived: below). Where it
   is not, no one commit made the move: it built up over several commits, each under the threshold.

A commit whose variant does not build, verify or exist is skipped with its reason, and so is one
the A/B cannot tell from GOOD (UNSURE); the search goes on with its neighbours, and where only
skipped commits are left between lo and hi it names them all. The steps are bounded (max_steps); a
search cut short says which commits are still in question.

What is known between two commits that were never timed against each other is derived from two
steps that share a commit: B/A of (a, c) is B/A of (a, b) times B/A of (b, c), and its interval
the product of the two intervals' ends, which covers at least as often as each of them (a wider
interval than the one the two independent estimates would give). So the parent of a culprit found
by step 2's last step is known not to be slower than GOOD without a step of its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from primbench.errors import UserError
from primbench.run.ab import verdict as ab_verdict

SLOWER, FASTER, SAME, UNSURE = "SLOWER", "FASTER", "SAME", "UNSURE"
GOOD = 0  # the history's first commit; its last is BAD

# What a search can end with (Outcome.kind).
FOUND = "found"  # one commit, SLOWER than its parent
FOUND_UNCONFIRMED = "found, not confirmed"  # the first SLOWER than GOOD; against its parent untold
SPREAD = "spread"  # SLOWER than GOOD, its parent not, yet not SLOWER than its parent
AMONG = "among"  # only skipped commits are left between the last good and the first slower
STOPPED = "stopped"  # max_steps reached
NOT_REPRODUCED = "not reproduced"  # BAD is not SLOWER than GOOD here
NOT_TOLD = "not told"  # BAD against GOOD: UNSURE


@dataclass(frozen=True)
class Timing:
    """One interleaved A/B: B/A, its 95 % interval, the verdict; or what was derived from two."""

    ratio: float
    low: float
    high: float
    verdict: str
    derived: bool = False

    def text(self) -> str:
        return f"B/A {self.ratio:.4f} [{self.low:.4f}, {self.high:.4f}] {self.verdict}" + (" (derived)" if self.derived else "")

    def inverse(self) -> tuple[float, float, float]:
        return 1 / self.ratio, 1 / self.high, 1 / self.low


@dataclass(frozen=True)
class Step:
    """One A/B: commit `b` (an index into the history) against commit `a`; or, where it could not be
    timed, the commit skipped (`skipped`: the one of the two never timed) and why."""

    number: int
    a: int
    b: int
    timing: Timing | None
    skipped: int | None = None
    reason: str = ""

    def line(self, history) -> str:
        against = "GOOD" if self.a == GOOD else "its parent" if self.a == self.b - 1 else history[self.a].sha[:12]
        head = f"step {self.number}: {history[self.b].label()} against {against}: "
        if self.timing is not None:
            return head + self.timing.text()
        which = "" if self.skipped == self.b else f" {history[self.skipped].sha[:12]}"
        return head + f"skipped{which}: {self.reason}"

    def to_dict(self, history) -> dict:
        timing = self.timing
        return {"step": self.number, "a": history[self.a].sha, "b": history[self.b].sha, "subject": history[self.b].subject,
                "ratio": timing.ratio if timing else None, "ci_low": timing.low if timing else None,
                "ci_high": timing.high if timing else None, "verdict": timing.verdict if timing else None,
                "skipped": history[self.skipped].sha if self.skipped is not None else None, "reason": self.reason}


@dataclass(frozen=True)
class Outcome:
    """How the search ended: its kind, the line that says so, the commit it names (FOUND and
    FOUND_UNCONFIRMED) and the commits still in question (first, last) where it names no one."""

    kind: str
    line: str
    commit: int | None = None
    range: tuple[int, int] | None = None
    detail: str = ""  # a second line, where the first leans on a fact the steps above do not show


class Search:
    """One bisection. `time_pair(commit_a, commit_b) -> (B/A, low, high, verdict)` times commit_b's
    declaration of the variant against commit_a's; a UserError is why it could not."""

    def __init__(self, history, time_pair: Callable, *, max_steps: int, threshold: float,
                 on_step: Callable[[Step], None] = lambda step: None):
        self.history, self.time_pair, self.on_step = history, time_pair, on_step
        self.max_steps, self.threshold = max_steps, threshold
        self.steps: list[Step] = []
        self.timed: dict[tuple[int, int], Timing] = {}  # (a, b) -> B/A of the step that timed them
        self.works: set[int] = set()  # commits that built, verified and were timed
        self.skipped: dict[int, str] = {}  # commit -> why

    @property
    def bad(self) -> int:
        return len(self.history) - 1

    def run(self) -> Outcome:
        endpoints = self._step(GOOD, self.bad)
        if endpoints is None:
            raise UserError(f"bisect: BAD could not be timed against GOOD ({self.steps[-1].reason[:160]}); "
                            "give commits where the variant builds and verifies")
        if endpoints.verdict != SLOWER:
            return self._not_reproduced(endpoints)
        while True:
            lo, hi = self._bracket()
            candidates = [i for i in range(lo + 1, hi) if i not in self.skipped]
            if not candidates:
                return self._conclusion(lo, hi)
            if len(self.steps) >= self.max_steps:
                return self._stopped(lo, hi)
            self._step(*self._next_pair(lo, hi, candidates))

    def _next_pair(self, lo: int, hi: int, candidates: list[int]) -> tuple[int, int]:
        """hi against its parent when that parent is the one commit left between lo and hi (and
        was not timed against hi yet); else the candidate nearest halfway, against GOOD."""
        if hi - lo == 2 and candidates == [lo + 1] and (lo + 1, hi) not in self.timed:
            return lo + 1, hi
        return GOOD, min(candidates, key=lambda i: (abs(2 * i - lo - hi), i))

    def _step(self, a: int, b: int) -> Timing | None:
        try:
            ratio, low, high, verdict = self.time_pair(self.history[a], self.history[b])
        except UserError as error:
            reason = str(error).removeprefix("primbench: ")
            # The failure is the commit's that never worked; GOOD and BAD both untried: BAD's.
            untried = [i for i in (a, b) if i not in self.works]
            skipped = untried[0] if len(untried) == 1 else b
            self.skipped[skipped] = reason
            step, timing = Step(len(self.steps) + 1, a, b, None, skipped, reason), None
        else:
            timing = Timing(ratio, low, high, verdict)
            self.timed[(a, b)] = timing
            self.works |= {a, b}
            if a == GOOD and verdict == UNSURE:
                self.skipped[b] = "could not be told from GOOD (UNSURE)"
            step = Step(len(self.steps) + 1, a, b, timing)
        self.steps.append(step)
        self.on_step(step)
        return timing

    def known(self, a: int, b: int) -> Timing | None:
        """B/A of commit b against commit a: timed, or derived from two steps through a third
        commit (the narrowest such interval); None where neither is at hand."""
        if a == b:
            return Timing(1.0, 1.0, 1.0, SAME)
        if (a, b) in self.timed:
            return self.timed[(a, b)]
        derived = [self._through(a, k, b) for k in {i for pair in self.timed for i in pair} - {a, b}]
        derived = [bounds for bounds in derived if bounds is not None]
        if not derived:
            return None
        ratio, low, high = min(derived, key=lambda r: math.log(r[2] / r[1]) if r[1] > 0 and math.isfinite(r[2]) else math.inf)
        return Timing(ratio, low, high, ab_verdict(ratio, low, high, self.threshold), derived=True)

    def _through(self, a: int, k: int, b: int) -> tuple[float, float, float] | None:
        first, second = self._one_way(a, k), self._one_way(k, b)
        if first is None or second is None:
            return None
        return first[0] * second[0], first[1] * second[1], first[2] * second[2]

    def _one_way(self, a: int, b: int) -> tuple[float, float, float] | None:
        if (a, b) in self.timed:
            timing = self.timed[(a, b)]
            return timing.ratio, timing.low, timing.high
        return self.timed[(b, a)].inverse() if (b, a) in self.timed else None

    def _bracket(self) -> tuple[int, int]:
        """(lo, hi): the last commit known not slower than GOOD before hi, the first known SLOWER."""
        touched = sorted({i for pair in self.timed for i in pair} - {GOOD})
        verdicts = {i: (self.known(GOOD, i) or Timing(math.nan, math.nan, math.nan, UNSURE)).verdict for i in touched}
        hi = min(i for i in touched if verdicts[i] == SLOWER)
        lo = max([GOOD] + [i for i in touched if i < hi and verdicts[i] in (SAME, FASTER)])
        return lo, hi

    def _conclusion(self, lo: int, hi: int) -> Outcome:
        skipped = [i for i in range(lo + 1, hi) if i in self.skipped]
        if skipped:
            names = ", ".join(self.history[i].sha[:12] for i in [*skipped, hi])
            return Outcome(AMONG, f"not settled: the first SLOWER commit is one of {names} ({len(skipped)} skipped "
                                  "above, with the reason)", range=(lo + 1, hi))
        if (lo, hi) not in self.timed and len(self.steps) < self.max_steps:
            self._step(lo, hi)  # the culprit against its parent, where no step timed them yet
        against = self.known(lo, hi)
        parent = "its parent, GOOD" if lo == GOOD else f"its parent {self.history[lo].sha[:12]}"
        culprit = self.history[hi].label()
        if against is not None and against.verdict == SLOWER:
            parent_then = "" if lo == GOOD else f"its parent against GOOD: {self.known(GOOD, lo).text()}"
            return Outcome(FOUND, f"first SLOWER commit: {culprit} ({against.text()} against {parent})", commit=hi,
                           detail=parent_then)
        if against is not None and against.verdict in (SAME, FASTER):
            return Outcome(SPREAD, f"spread over several commits: {self.history[hi].sha[:12]} is SLOWER than GOOD and "
                                   f"{parent} is not, yet against it {against.text()}: the move builds up over the "
                                   f"{hi} commits after GOOD up to {self.history[hi].sha[:12]}", range=(GOOD + 1, hi))
        why = (f"against {parent} {against.text()}" if against is not None
               else f"not timed against {parent} (--max-steps {self.max_steps})")
        return Outcome(FOUND_UNCONFIRMED, f"first SLOWER commit, not confirmed: {culprit} is the first SLOWER than "
                                          f"GOOD; {why}", commit=hi)

    def _stopped(self, lo: int, hi: int) -> Outcome:
        return Outcome(STOPPED, f"stopped after {len(self.steps)} steps (--max-steps {self.max_steps}): the first SLOWER "
                                f"commit is one of the {hi - lo} after {self.history[lo].sha[:12]} up to "
                                f"{self.history[hi].sha[:12]}", range=(lo + 1, hi))

    def _not_reproduced(self, endpoints: Timing) -> Outcome:
        if endpoints.verdict == UNSURE:
            return Outcome(NOT_TOLD, f"not settled: BAD against GOOD could not be told on this GPU ({endpoints.text()}); "
                                     "give more --rounds, or a size where the kernel runs longer")
        return Outcome(NOT_REPRODUCED, f"not reproduced: BAD is not SLOWER than GOOD on this GPU ({endpoints.text()})")
