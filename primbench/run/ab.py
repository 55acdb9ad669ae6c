"""`primbench ab A B`: is B faster than A? An interleaved A/B test on one GPU, in one process.

Two separate runs meet different conditions: the clocks, the temperature, a neighbour's load and
the machine itself drift between them, which is why `compare` needs a relative threshold and an
absolute floor. Here both variants see the same input and take their cold samples in turn, so
whatever drifts falls on both sides alike and far smaller changes can be told apart. Both are
verified first by the runner's own checks.

The design is paired (ab_stats.py): each side runs as 8 separately prepared plans, and each round
times one plan of A, of B and of an A/A slice (A again, prepared as B is) once each, in a random
order, the input copies alternating between the sides. B/A comes from each plan instance's median
log ratio, with a t interval over the instances (a plan carries an effect of its own: where its
buffers landed), widened by the A/A slice's distance from 1.

The verdict, and its error rates where the 95 % interval covers the true ratio 95 % of the time
(docs/perf-notes.md, "A/B in one process", measures that it does): FASTER or SLOWER when the
interval excludes 1 and the ratio moved by more than the threshold (1 % by default): at most 2.5 %
of calls on two sides of equal speed say SLOWER, and 2.5 % FASTER. SAME when the interval rules out
a change of twice the threshold and either holds 1 or lies within the threshold: at most 2.5 % of
calls where B is really 2 x threshold (or more) away say SAME. UNSURE otherwise: the data are too
few or too noisy to say either, and it claims nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from primbench.errors import UserError
from primbench.run import ab_stats
from primbench.runfile.case_id import CaseId

DEFAULT_ROUNDS = 200
MIN_ROUNDS = 16  # two rounds of each of the 8 plan instances: the fewest the interval is built from
MAX_ROUNDS = 100_000
DEFAULT_THRESHOLD = 0.01


@dataclass
class ABResult:
    """One size (or one pair of callables): both sides' samples in the order they were taken, and
    what they say."""

    case_a: CaseId | None
    case_b: CaseId | None
    a_ms: list[float]
    b_ms: list[float]
    ratio: float
    ci_low: float  # the 95 % interval, widened by the A/A slice
    ci_high: float
    verdict: str
    label: str | None = None  # for callables, which have no case: "A vs B"
    aa_ms: list[float] | None = None  # the A/A slice: A again, on B's buffers, in the same rounds
    # Each side's samples' SM clocks (A, B, the A/A slice), where the holds could stamp them, and
    # how many rounds were retaken for a clock under the floor: the run's throttle rule, by round.
    # `primbench ab` takes the run's floor; primbench.ab on callables records the clocks and, like
    # primbench.measure, sets no floor (its caller's GPU settings are the caller's), so retakes none.
    clock_mhz: list[list[float]] | None = None
    throttled_rounds: int = 0

    @property
    def aa_ratio(self) -> float:
        """The A/A slice's ratio (A on B's buffers over A): 1 where order and placement cancel."""
        return ab_stats.paired_ratio(self.a_ms, self.aa_ms)[0] if self.aa_ms is not None and len(self.aa_ms) else math.nan

    def line(self) -> str:
        a, b = np.median(self.a_ms) * 1e3, np.median(self.b_ms) * 1e3
        what = f"n={self.case_a.n}" if self.case_a is not None else (self.label or "B vs A")
        aa = f", A/A slice {self.aa_ratio:.4f}" if self.aa_ms else ""
        retaken = f", {self.throttled_rounds} retaken for a throttled clock" if self.throttled_rounds else ""
        return (f"{what}: A {a:,.2f} us, B {b:,.2f} us, B/A {self.ratio:.4f} "
                f"[{self.ci_low:.4f}, {self.ci_high:.4f}] {self.verdict} ({len(self.a_ms)} rounds{retaken}{aa})")

    __str__ = line

    def to_dict(self) -> dict:
        return {"a": self.case_a.key if self.case_a else None, "b": self.case_b.key if self.case_b else None,
                "label": self.label, "ratio": self.ratio, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "verdict": self.verdict, "aa_ratio": self.aa_ratio, "a_ms": list(self.a_ms), "b_ms": list(self.b_ms),
                "aa_ms": list(self.aa_ms or []),
                "clock_mhz": dict(zip(("a", "b", "aa"), self.clock_mhz or ([], [], []))),
                "throttled_rounds": self.throttled_rounds}

    @classmethod
    def of(cls, taken, case_a=None, case_b=None, *, threshold: float, label: str | None = None) -> ABResult:
        """The result of Timer.interleaved's three sides (A, B, the A/A slice), judged."""
        a_ms, b_ms, aa_ms = taken.samples_ms
        return cls(case_a, case_b, a_ms, b_ms, *judge(a_ms, b_ms, aa_ms, threshold=threshold), label=label,
                   aa_ms=aa_ms, clock_mhz=taken.clock_mhz, throttled_rounds=taken.throttled_rounds)


def judge(a_ms, b_ms, aa_ms=None, *, threshold: float = DEFAULT_THRESHOLD) -> tuple[float, float, float, str]:
    """(B/A, its 95 % interval, the verdict) of paired rounds (a_ms[i] and b_ms[i] from round i),
    the interval widened by the A/A slice `aa_ms` where there is one: the CLI's, the Python API's
    and the tests' one rule."""
    ratio, low, high = ab_stats.paired_ratio(a_ms, b_ms)
    if aa_ms is not None and len(aa_ms):
        low, high = ab_stats.widened(low, high, ab_stats.paired_ratio(a_ms, aa_ms)[0])
    return ratio, low, high, verdict(ratio, low, high, threshold)


def verdict(ratio: float, low: float, high: float, threshold: float) -> str:
    """The A/B rule above, from the ratio and its interval."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return "UNSURE"
    if low > 1.0 and ratio > 1.0 + threshold:
        return "SLOWER"
    if high < 1.0 and ratio < 1.0 - threshold:
        return "FASTER"
    narrow = low >= 1.0 - 2 * threshold and high <= 1.0 + 2 * threshold
    if narrow and (low <= 1.0 <= high or (low >= 1.0 - threshold and high <= 1.0 + threshold)):
        return "SAME"
    return "UNSURE"


def pairs_of(config, a: str, b: str, narrowed_by: str = "--sizes or --blocks") -> list[tuple[CaseId, CaseId]]:
    """(A's case, B's case) for each point of the config's sweep: the same input (dtype, n,
    distribution, parameters), and the same block size unless a library chooses B's. With none,
    one line names what narrows the sweep (`narrowed_by`: the CLI's options, or ab's arguments)."""
    name_a, name_b = a.partition("/")[2], b.partition("/")[2]
    cases = config.cases()
    b_cases: dict = {}
    for case in cases:
        if case.variant == name_b:
            b_cases.setdefault((case.dtype, case.n, case.distribution, case.params), []).append(case)
    pairs = []
    for case in (c for c in cases if c.variant == name_a):
        candidates = b_cases.get((case.dtype, case.n, case.distribution, case.params), [])
        match = next((c for c in candidates if c.block == case.block), candidates[0] if candidates else None)
        if match is not None:
            pairs.append((case, match))
    if not pairs:
        raise UserError(f"{a[:80]} and {b[:80]}: no size and block size that both take; give {narrowed_by}")
    return pairs


def run_ab(config, a: str, b: str, *, rounds: int, threshold: float, variant_a=None, variant_b=None) -> list[ABResult]:
    """Verify A and B on each size, then time `rounds` paired rounds of A, B and the A/A slice.
    `variant_a` and `variant_b` replace A's and B's registered variants (a side at a git revision:
    ab_revision.variant_at; `primbench bisect` takes both sides from git)."""
    from primbench.measuring.case_limit import process_ends_if_hung
    from primbench.run.runner import Runner

    pairs = pairs_of(config, a, b)  # before the GPU is opened: a request with no pair is a bad request
    runner = Runner(config)
    results = []
    for case_a, case_b in pairs:
        # A size that makes no progress for the case limit ends the process with one line (ab runs
        # in one process: case_limit.py says why it cannot go on).
        with process_ends_if_hung(f"ab {case_b.label}"[:120], config.timing.case_limit_s, runner.timer):
            results.append(_one_size(config, runner, case_a, case_b, rounds, threshold, (variant_a, variant_b)))
    return results


def _one_size(config, runner, case_a, case_b, rounds: int, threshold: float, given: tuple) -> ABResult:
    """One size: A and B verified on one input, then `rounds` paired rounds of A, B and the A/A slice."""
    from primbench import ops, registry
    from primbench.build import load_module
    from primbench.run.runner import input_key, rng_seed_for
    from primbench.verify.sequence import verify_case

    inputs = runner._inputs_for(case_a, rng_seed_for("ab", input_key(case_a)))
    makers = []
    for side, case, variant in (("A", case_a, given[0]), ("B", case_b, given[1])):
        variant = variant if variant is not None else registry.get(case.op, case.variant)
        module = load_module(variant.source, variant.kernels) if variant.source else None

        def context(x, scale, module=module, case=case):
            return runner._context(module, x, case, scale)

        verified = verify_case(case, variant, inputs, context, checks=ops.checks(case.op),
                               determinism_runs=config.determinism_runs)
        if verified.reason:
            raise UserError(f"{side} {case.label}: fails verification ({verified.reason[:200]}); fix it before timing it")
        makers.append(lambda x, variant=variant, context=context: variant.prepare(context(x, 1.0)))
    taken = runner.timer.interleaved(_swapped_plans(*makers, inputs[2]), _whole_cycles(rounds))
    return ABResult.of(taken, case_a, case_b, threshold=threshold)


def _swapped_plans(make_a, make_b, x) -> list[tuple]:
    """The three sides' operations, each a tuple of ab_stats.INSTANCES plans cycled by round: fresh
    plans, prepared in turn (A, B, the A/A slice: A again, prepared as B is), so that no side's
    buffers all come from one stretch of memory, and instance k reading input copy k mod 2 (B and
    the slice the other copy), so that where the input lies cancels too."""
    copies = (x, _copy_of(x))  # the same values in two places
    trios = []
    for instance in range(ab_stats.INSTANCES):
        mine, other = copies[instance % 2], copies[1 - instance % 2]
        trios.append((make_a(mine), make_b(other), make_a(other)))
    for plan in (p for trio in trios for p in trio):
        if plan.restore is not None:
            plan.restore()
    return [tuple(trio[side].run for trio in trios) for side in range(3)]


def _whole_cycles(rounds: int) -> int:
    """Rounds come in whole cycles of the instances: a count that is not gets rounded up."""
    return -(-rounds // ab_stats.INSTANCES) * ab_stats.INSTANCES


def _copy_of(x):
    """The input again, in new memory: an array (CuPy or NumPy), or a tuple or list of them."""
    if isinstance(x, (tuple, list)):
        return type(x)(_copy_of(item) for item in x)
    return x.copy() if hasattr(x, "copy") else x


def chart(results: list[ABResult], path, a: str, b: str) -> None:
    """Each size's samples in the order they were taken (A and B interleaved), and B/A with its interval."""
    import os
    import sys

    if "matplotlib" not in sys.modules:  # a junk MPLBACKEND raises at matplotlib's import (report/charts/matplotlib_figure.py)
        os.environ["MPLBACKEND"] = "Agg"
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(results) + 1, figsize=(3.2 * (len(results) + 1), 2.8), squeeze=False)
    for axis, result in zip(axes[0], results):
        axis.plot(np.array(result.a_ms) * 1e3, ".", markersize=2, label=f"A {a}")
        axis.plot(np.array(result.b_ms) * 1e3, ".", markersize=2, label=f"B {b}")
        axis.set_title(f"n = {result.case_a.n:,}", fontsize=8)
        axis.set_xlabel("round", fontsize=7)
        axis.set_ylabel("us (cold)", fontsize=7)
        axis.tick_params(labelsize=6)
    axes[0][0].legend(fontsize=6)
    summary = axes[0][-1]
    for index, result in enumerate(results):
        summary.errorbar([index], [result.ratio], yerr=[[result.ratio - result.ci_low], [result.ci_high - result.ratio]],
                         fmt="o", capsize=3)
    summary.axhline(1.0, color="grey", linewidth=0.8)
    summary.set_xticks(range(len(results)), [f"{r.case_a.n:,}" for r in results], fontsize=6, rotation=30)
    summary.set_title("B/A, 95 % interval", fontsize=8)
    summary.tick_params(labelsize=6)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def rounds_problem(rounds: int) -> str | None:
    """What is wrong with a whole number of rounds, or None: the rule of --rounds and of primbench.ab's rounds."""
    if not MIN_ROUNDS <= rounds <= MAX_ROUNDS:
        return f"give {MIN_ROUNDS} to {MAX_ROUNDS} rounds (each times A and B once)"
    return None


def threshold_problem(threshold: float) -> str | None:
    """What is wrong with a threshold (a number), or None; NaN is refused with the rest."""
    if not 0 <= threshold < 1:
        return "give a relative change from 0 to 1 (0.01 is 1 %)"
    return None


def names_problem(a: str, b: str, sides: tuple[str, str] = ("A", "B")) -> str | None:
    """What is wrong with A and B as a pair of variant names (`sides` says what to call them), or None."""
    for side, name in zip(sides, (a, b)):
        if any(c in name for c in "*?["):
            return f"{side} {name[:80]!r}: give one variant, not a pattern (ab pairs two variants case by case)"
    if a.partition("/")[0] != b.partition("/")[0]:
        return f"{a[:80]} and {b[:80]}: {sides[0]} and {sides[1]} must be variants of one op, to share an input"
    return None


def check_request(a: str, b: str | None, *, base: str | None, rounds: int, threshold: float) -> str:
    """B (A itself when only --base is given), once the request makes sense: one variant a side, of
    one op, a rounds count and a threshold in range. Refused in one line otherwise."""
    if b is None and base is None:
        raise UserError("ab: give B (op/variant), or --base REV to time A at that git revision against A now")
    b = b or a
    if problem := rounds_problem(rounds):
        raise UserError(f"--rounds {rounds}: {problem}")
    if problem := threshold_problem(threshold):
        raise UserError(f"--threshold {threshold}: {problem}")
    if problem := names_problem(a, b):
        raise UserError(problem)
    return b


def ab_variants(a: str, b: str | None = None, *, base: str | None = None, sizes=None, blocks=None, dtypes=None,
                rounds: int = DEFAULT_ROUNDS, threshold: float = DEFAULT_THRESHOLD) -> tuple[str, list[ABResult]]:
    """Variant B (op/name) against variant A, or A at git revision `base` against A now when B is
    None. `sizes`, `blocks` (lists of ints) and `dtypes` narrow the op's usual sweep. Returns (A's
    label, one ABResult per size). Bad values are refused in one line before the GPU is touched."""
    from primbench.config import subset

    b = check_request(a, b, base=base, rounds=rounds, threshold=threshold)
    config = subset.variant_config((a, b), sizes=sizes, blocks=blocks, dtypes=dtypes)
    variant_a, label_a = side_a_at(base, a, b)
    return label_a, run_ab(config, a, b, rounds=rounds, threshold=threshold, variant_a=variant_a)


def side_a_at(base: str | None, a: str, b: str, option: str = "--base"):
    """(A's variant at git revision `base`, or None for today's; A's label), from git alone (no GPU)."""
    if base is None:
        return None, a
    from primbench import registry
    from primbench.run.ab_revision import variant_at

    variant_a = variant_at(base, a, option)
    op, _, name = b.partition("/")
    if variant_a.hash() == registry.get(op, name).hash():
        print(f"note: {a} at {base} and {b} now have the same hash (same code): expect SAME")
    return variant_a, f"{a} at {base}"


def ab_callables(fn_a, fn_b, *, rounds: int = DEFAULT_ROUNDS, threshold: float = DEFAULT_THRESHOLD, setup_a=None,
                 setup_b=None, label: str | None = None) -> ABResult:
    """Is fn_b faster than fn_a? Cold samples of each taken in turn, each round in a random order,
    on the caller's GPU and stream (as primbench.measure: CuPy, or torch alone), judged by the
    rule `primbench ab` prints. Verifying the two compute the same thing is the caller's part. The
    arguments come checked (primbench.ab checks them: run/ab_arguments.py)."""
    from primbench.measuring.case_limit import DEFAULT_CASE_LIMIT_S, process_ends_if_hung
    from primbench.measuring.measure import callers_timer

    # A callable holds its own buffers, so nothing swaps; the A/A slice (fn_a again) still measures
    # what the order leaves between identical sides, and widens the interval by it.
    with callers_timer() as (_device, timer), process_ends_if_hung(f"primbench.ab({label or 'fn_a, fn_b'})"[:120],
                                                                   DEFAULT_CASE_LIMIT_S, timer):
        taken = timer.interleaved([fn_a, fn_b, fn_a], _whole_cycles(rounds), setups=[setup_a, setup_b, setup_a])
    return ABResult.of(taken, threshold=threshold, label=label)
