"""`primbench bisect GOOD BAD OP/VARIANT --sizes N`: the commit between GOOD and BAD that made one
case of a variant SLOWER, on this GPU. The search is run/bisect_search.py; the commits are
run/bisect_history.py's; each step is `check --confirm`'s re-timing (run/confirm.py): in a child
process with a time limit, the variant as one commit declared it against the variant as another
did (ab_revision.variant_at: each commit's folder taken from git into a temporary folder, so the
working tree and its checkout are never touched), both verified, then `primbench ab`'s interleaved
rounds and its verdict. A child per step means a commit whose kernel hangs or breaks the CUDA
context costs that step alone, and is set aside with the reason like one that does not build.

Everything the user gives is checked here before the GPU is touched (no GPU is needed to refuse a
request): the numbers, the variant and its one case, the commits, and the variant's declaration at
GOOD and BAD.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass

from primbench.errors import UserError
from primbench.run import ab
from primbench.run.bisect_history import Commit, first_parent_line
from primbench.run.bisect_search import STOPPED, Outcome, Search, Step
from primbench.runfile.case_id import CaseId, size_text

# The endpoints, 8 halvings (up to 256 commits between GOOD and BAD) and the culprit against its parent.
DEFAULT_MAX_STEPS = 10
MAX_STEPS = 64
# A step's samples; the child also gets confirm.CHILD_OVERHEAD_S for Python, two builds and the
# verification: a step that has not ended after 10 minutes sets its commit aside.
STEP_SECONDS = 420.0


@dataclass(frozen=True)
class BisectRequest:
    """A bisection once every argument is checked: the variant, its one case, the commits from GOOD
    to BAD, and the rule of each step."""

    variant: str
    case: CaseId
    history: list[Commit]
    rounds: int
    threshold: float
    max_steps: int

    def header(self) -> str:
        good, bad = self.history[0], self.history[-1]
        return (f"bisect {self.case.label}: {len(self.history) - 1} commit(s) after GOOD {good.label()} up to BAD "
                f"{bad.sha[:12]} (first parent); each step {self.rounds} interleaved rounds, threshold "
                f"{self.threshold:.1%}; at most {self.max_steps} steps")


def prepare(good: str, bad: str, variant: str, *, sizes, blocks, dtypes, rounds: int = ab.DEFAULT_ROUNDS,
            threshold: float = ab.DEFAULT_THRESHOLD, max_steps: int = DEFAULT_MAX_STEPS) -> BisectRequest:
    """The request, from git and the registry alone. `sizes`, `blocks` and `dtypes` are parsed
    (config/subset.py); each mistake is one UserError line."""
    from primbench.run.ab_revision import repository_of, variant_at

    if problem := ab.rounds_problem(rounds):
        raise UserError(f"--rounds {rounds}: {problem}")
    if problem := ab.threshold_problem(threshold):
        raise UserError(f"--threshold {threshold}: {problem}")
    if not 1 <= max_steps <= MAX_STEPS:
        raise UserError(f"--max-steps {max_steps}: give 1 to {MAX_STEPS} steps (each one interleaved A/B)")
    case = one_case(variant, sizes, blocks, dtypes)
    root, _declared_by = repository_of(variant, option="bisect")
    history = first_parent_line(root, good, bad)
    for role, commit in (("GOOD", history[0]), ("BAD", history[-1])):
        variant_at(commit.sha, variant, option=f"bisect {role}")  # declared there, and loads: else one line now
    return BisectRequest(variant, case, history, rounds, threshold, max_steps)


def one_case(variant: str, sizes, blocks, dtypes) -> CaseId:
    """The one case a bisection times: the variant at one size, one block size (256 where it takes
    it, as ab chooses) and one dtype (the op's first), the op's first distribution."""
    from primbench import registry
    from primbench.config import subset

    if any(c in variant for c in "*?["):
        raise UserError(f"bisect {variant[:80]!r}: give one variant, not a pattern (bisect times one case)")
    subset.variant_names(variant, where=f"bisect {variant[:80]!r}")
    for option, given, example in (("--sizes", sizes, "--sizes 2^28"), ("--blocks", blocks, "--blocks 256"),
                                   ("--dtypes", dtypes, "--dtypes float32")):
        if given is not None and len(given) != 1:
            raise UserError(f"{option} {','.join(map(str, given))[:80]}: bisect times one case; give one, e.g. {example}")
    if not sizes:
        raise UserError("bisect: give the size of the case to time, e.g. --sizes 2^28 (the size the regression was seen at)")
    op, _, name = variant.partition("/")
    taken = registry.get(op, name).block_sizes  # a library variant's is empty: it chooses its own
    if blocks and taken and blocks[0] not in taken:
        raise UserError(f"--blocks {blocks[0]}: {variant} takes block sizes {','.join(map(str, taken))}")
    cases = [case for case in subset.variant_config((variant,), sizes=sizes, blocks=blocks, dtypes=dtypes).cases()
             if f"{case.op}/{case.variant}" == variant]
    if len(cases) != 1:
        raise UserError(f"bisect {variant[:80]}: {len(cases)} cases at these sizes, block sizes and dtypes; "
                        "give one of each")
    return cases[0]


def step_timer(request: BisectRequest) -> Callable[[Commit, Commit], tuple]:
    """Each step: commit b's declaration against commit a's, timed in a child process on this GPU
    (run/confirm.py). No usable GPU is one line here, before the first step."""
    from primbench.measuring.device import require_gpu
    from primbench.run.confirm import retime_in_child

    require_gpu()

    def time_pair(a: Commit, b: Commit) -> tuple:
        return retime_in_child(request.case, (None, None), a.sha, request.rounds, request.threshold, STEP_SECONDS,
                               new_sha=b.sha)

    return time_pair


def search(request: BisectRequest, time_pair: Callable, on_step: Callable[[Step], None]) -> tuple[list[Step], Outcome]:
    """The steps taken (each handed to `on_step` as it is done) and how the search ended."""
    bisection = Search(request.history, time_pair, max_steps=request.max_steps, threshold=request.threshold,
                       on_step=on_step)
    outcome = bisection.run()
    return bisection.steps, outcome


def next_command(request: BisectRequest, outcome: Outcome, plugins=()) -> str | None:
    """The command that goes on where a search stopped at --max-steps: the commits still in
    question, between the last one known good and the first known SLOWER; None otherwise."""
    if outcome.kind != STOPPED or outcome.range is None:
        return None
    first, last = outcome.range
    return command_line(request.history[first - 1].sha[:12], request.history[last].sha[:12], request.variant,
                        request.case, plugins)


def command_line(good: str, bad: str, variant: str, case: CaseId, plugins=()) -> str:
    """`primbench bisect GOOD BAD OP/VARIANT --sizes N --blocks B --dtypes T [--plugin FILE]`, each
    part quoted for a POSIX shell (a name read from a run file is data, not a command)."""
    words = ["primbench", "bisect", good, bad, variant, "--sizes", size_text(case.n).replace(",", "")]
    if case.block is not None:
        words += ["--blocks", str(case.block)]
    words += ["--dtypes", case.dtype]
    for plugin in plugins:
        words += ["--plugin", str(plugin)]
    return " ".join(shlex.quote(word) for word in words)


def to_json(request: BisectRequest, steps: list[Step], outcome: Outcome) -> dict:
    """What --json writes: the case, the commits' ends, every step and the outcome."""
    history = request.history
    return {"variant": request.variant, "case": request.case.key, "good": history[0].sha, "bad": history[-1].sha,
            "commits": len(history) - 1, "rounds": request.rounds, "threshold": request.threshold,
            "max_steps": request.max_steps, "steps": [step.to_dict(history) for step in steps],
            "outcome": {"kind": outcome.kind, "line": outcome.line, "detail": outcome.detail,
                        "commit": history[outcome.commit].sha if outcome.commit is not None else None,
                        "range": [history[i].sha for i in outcome.range] if outcome.range else None}}
