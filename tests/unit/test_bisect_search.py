"""The search of `primbench bisect` (primbench/run/bisect_search.py), with no git and no GPU: each
commit of a history has a time, and each step's B/A is the ratio of two commits' times with an
interval of +-0.3 % (ab's at 2^28 on the H200) judged by ab's rule."""

import pytest

from primbench.errors import UserError
from primbench.run import bisect_search
from primbench.run.ab import verdict
from primbench.run.bisect_history import Commit
from primbench.run.bisect_search import AMONG, FOUND, NOT_REPRODUCED, NOT_TOLD, SPREAD, STOPPED, Search


def history(count: int) -> list[Commit]:
    return [Commit(f"{i:03d}" + "a" * 37, f"commit {i}") for i in range(count)]


def timer(times, *, half_width=0.003, fails=(), calls=None):
    """B/A of two commits from their `times`; a commit in `fails` does not build."""
    def time_pair(a: Commit, b: Commit):
        ia, ib = int(a.sha[:3]), int(b.sha[:3])
        if calls is not None:
            calls.append((ia, ib))
        for i in (ia, ib):
            if i in fails:
                raise UserError(f"does not build: commit {i}")
        ratio = times[ib] / times[ia]
        low, high = ratio * (1 - half_width), ratio * (1 + half_width)
        return ratio, low, high, verdict(ratio, low, high, 0.01)
    return time_pair


def search(times, *, max_steps=10, **kwargs):
    calls = []
    bisection = Search(history(len(times)), timer(times, calls=calls, **kwargs), max_steps=max_steps, threshold=0.01)
    return bisection.run(), calls


def slower_from(culprit: int, count: int, factor=1.03) -> list[float]:
    return [1.0] * culprit + [factor] * (count - culprit)


def test_the_third_of_five_commits_is_found_in_three_steps_and_confirmed_against_its_parent():
    outcome, calls = search(slower_from(2, 5))
    assert outcome.kind == FOUND and outcome.commit == 2
    assert calls == [(0, 4), (0, 2), (1, 2)]  # BAD, the middle, then the middle against its parent
    assert "against its parent 001" in outcome.line and "its parent against GOOD: B/A 1.0000" in outcome.detail
    assert "SAME (derived)" in outcome.detail


@pytest.mark.parametrize("count", [2, 3, 5, 9, 33, 257])
def test_every_culprit_is_found_within_the_default_steps(count):
    for culprit in range(1, count):
        outcome, calls = search(slower_from(culprit, count))
        assert (outcome.kind, outcome.commit) == (FOUND, culprit), (count, culprit, outcome.line)
        assert len(calls) <= 10, (count, culprit, calls)
        # named only once timed, or derived, SLOWER against its own parent
        assert f"against its parent{', GOOD' if culprit == 1 else ''}" in outcome.line


def test_a_history_where_nothing_changes_is_not_reproduced_after_one_step():
    outcome, calls = search([1.0] * 5)
    assert outcome.kind == NOT_REPRODUCED and calls == [(0, 4)]
    assert outcome.line == "not reproduced: BAD is not SLOWER than GOOD on this GPU (B/A 1.0000 [0.9970, 1.0030] SAME)"


def test_a_faster_bad_is_not_reproduced_and_an_untold_one_says_so():
    assert search([1.0, 1.0, 0.95])[0].kind == NOT_REPRODUCED
    outcome, _ = search([1.0, 1.0, 1.03], half_width=0.05)  # an interval that holds 1 and 2 x the threshold
    assert outcome.kind == NOT_TOLD and "give more --rounds" in outcome.line


def test_a_move_that_builds_up_over_several_commits_is_called_spread():
    outcome, _ = search([1.0, 1.006, 1.012, 1.018, 1.024])
    assert outcome.kind == SPREAD and outcome.range == (1, 2)
    assert outcome.line.startswith("spread over several commits: 002")


def test_a_commit_that_does_not_build_is_skipped_and_its_neighbours_searched():
    outcome, calls = search(slower_from(4, 6), fails=(2,))
    assert (outcome.kind, outcome.commit) == (FOUND, 4)
    assert (0, 2) in calls and not [c for c in calls[calls.index((0, 2)) + 1:] if 2 in c]


def test_where_only_skipped_commits_lie_before_the_first_slower_it_names_them_all():
    outcome, _ = search(slower_from(3, 5), fails=(2,))
    assert outcome.kind == AMONG and outcome.range == (2, 3)
    assert outcome.line.startswith("not settled: the first SLOWER commit is one of 002aaaaaaaaa, 003aaaaaaaaa")


def test_max_steps_bounds_the_calls_and_says_which_commits_are_left():
    outcome, calls = search(slower_from(20, 50), max_steps=3)
    assert len(calls) == 3 and outcome.kind == STOPPED
    assert outcome.range == (13, 24) and "stopped after 3 steps (--max-steps 3)" in outcome.line


def test_with_one_step_left_the_culprit_is_named_unconfirmed():
    outcome, calls = search(slower_from(2, 5), max_steps=2)
    assert len(calls) == 2 and outcome.kind == STOPPED  # the middle is SLOWER, one commit before it still unknown
    outcome, calls = search(slower_from(1, 3), max_steps=2)
    assert (outcome.kind, outcome.commit, len(calls)) == (FOUND, 1, 2)


def test_endpoints_that_cannot_be_timed_are_one_line():
    with pytest.raises(UserError, match=r"^bisect: BAD could not be timed against GOOD \(does not build: commit 4\)"):
        search(slower_from(2, 5), fails=(4,))


def test_a_derived_interval_is_the_product_of_the_two_it_comes_from():
    bisection = Search(history(3), timer([1.0, 1.02, 1.05]), max_steps=10, threshold=0.01)
    bisection._step(0, 2)
    bisection._step(1, 2)
    derived = bisection.known(0, 1)
    first, second = bisection.timed[(0, 2)], bisection.timed[(1, 2)]
    assert derived.derived and derived.ratio == pytest.approx(first.ratio / second.ratio)
    assert derived.low == pytest.approx(first.low / second.high) and derived.high == pytest.approx(first.high / second.low)
    assert bisection.known(0, 2) is first and bisection.known(1, 0) is not None


def test_step_lines_say_what_was_timed_against_what():
    h = history(5)
    step = bisect_search.Step(3, 1, 2, bisect_search.Timing(1.03, 1.02, 1.04, "SLOWER"))
    assert step.line(h) == "step 3: 002aaaaaaaaa commit 2 against its parent: B/A 1.0300 [1.0200, 1.0400] SLOWER"
    skipped = bisect_search.Step(2, 0, 2, None, 2, "does not build: x.cu(3): error")
    assert skipped.line(h) == "step 2: 002aaaaaaaaa commit 2 against GOOD: skipped: does not build: x.cu(3): error"
