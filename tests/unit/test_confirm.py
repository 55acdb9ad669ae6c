"""`check --confirm`: each SLOWER or FASTER suspect is timed again on the GPU at hand against the
baseline's code, and the gate fails only on what that confirms. The timing itself needs a GPU
(tests/gpu, and the device runs in docs/perf-notes.md); here a stand-in answers for it, on real H200
runs with planted moves."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from primbench.compare import confirmation, verdicts
from primbench.errors import UserError
from primbench.runfile import protocol
from primbench.runfile.io import load_run

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "tests" / "data" / "runs"


def planted(factor=1.3, count=3):
    """fixture-a as baseline; fixture-b with `count` cases of 200 us or more made `factor` x slower."""
    base, new = load_run(RUNS / "fixture-a.jsonl.gz"), load_run(RUNS / "fixture-b.jsonl.gz")
    keys = [r.key for r in new.cases if np.median(r.cold_ms) * 1e3 > 200][:count]
    cases = [dataclasses.replace(r, samples=dataclasses.replace(r.samples, cold_ms=tuple(t * factor for t in r.cold_ms)))
             if r.key in keys else r for r in new.cases]
    return base, dataclasses.replace(new, cases=cases), keys


def answering(verdict, calls=None):
    def retime(case, hashes, sha, rounds, threshold, seconds):
        if calls is not None:
            calls.append((case.key, hashes, sha, rounds, threshold, seconds))
        if isinstance(verdict, Exception):
            raise verdict
        ratio = {"SLOWER": 1.3, "FASTER": 0.77, "SAME": 1.001, "UNSURE": 1.04}[verdict]
        return ratio, ratio - 0.01, ratio + 0.01, verdict
    return retime


def test_a_suspect_the_gpu_does_not_reproduce_fails_nothing():
    base, new, keys = planted()
    code, pairs = verdicts.check(base, new)
    assert code == 1 and {p.text for p in pairs if p.regressed} == set(keys)
    calls = []
    result = confirmation.confirm_suspects(pairs, base, new, answering("SAME", calls))
    assert not any(p.regressed for p in pairs)
    assert result.line() == ("confirm: 3 suspect(s), timed again on this GPU interleaved against the baseline's code at "
                             f"{base.git['sha'][:12]}: 3 not reproduced")
    for pair in (p for p in pairs if p.text in keys):
        assert pair.note.startswith("not reproduced on this GPU (board or protocol shift): B/A 1.001 [0.991, 1.011] SAME")
    # each suspect is timed on its own case, against the baseline's commit, at the cold threshold, within bounds
    assert {call[0] for call in calls} == set(keys) and {call[2] for call in calls} == {base.git["sha"]}
    assert all(call[4] == verdicts.DEFAULT_THRESHOLD and confirmation.MIN_ROUNDS <= call[3] <= confirmation.MAX_ROUNDS
               for call in calls)


def test_a_confirmed_suspect_fails_the_gate_and_says_so():
    base, new, keys = planted()
    _, pairs = verdicts.check(base, new)
    confirmation.confirm_suspects(pairs, base, new, answering("SLOWER"))
    failing = [p for p in pairs if p.regressed]
    assert {p.text for p in failing} == set(keys)
    assert all(p.confirmation == verdicts.CONFIRMED and p.note.startswith("confirmed on this GPU: B/A 1.300")
               for p in failing)


@pytest.mark.parametrize("answer, reason", [
    ("UNSURE", "the interleaved A/B could not tell (UNSURE)"),
    (UserError("--base abc: no such commit in /repo; give a sha"), "--base abc: no such commit in /repo; give a sha"),
])
def test_a_suspect_that_cannot_be_settled_still_fails_with_the_reason(answer, reason):
    base, new, keys = planted()
    _, pairs = verdicts.check(base, new)
    result = confirmation.confirm_suspects(pairs, base, new, answering(answer))
    assert {p.text for p in pairs if p.regressed} == set(keys)
    assert result.reasons == {reason: 3} and f"(unconfirmed: 3 {reason})" in result.line()


def test_without_a_gpu_every_suspect_stays_unconfirmed_and_fails():
    base, new, keys = planted()
    _, pairs = verdicts.check(base, new)
    result = confirmation.confirm_suspects(pairs, base, new, answering("SAME"), cannot="no GPU here")
    assert {p.text for p in pairs if p.regressed} == set(keys) and result.reasons == {"no GPU here": 3}


def test_the_limit_bounds_how_many_suspects_are_timed_the_largest_moves_first():
    base, new, keys = planted(count=3)
    slower = {keys[0]: 1.6, keys[1]: 1.3, keys[2]: 1.45}
    cases = [dataclasses.replace(r, samples=dataclasses.replace(r.samples, cold_ms=tuple(t * slower[r.key] / 1.3
                                                                                          for t in r.cold_ms)))
             if r.key in slower else r for r in new.cases]
    new = dataclasses.replace(new, cases=cases)
    _, pairs = verdicts.check(base, new)
    calls = []
    result = confirmation.confirm_suspects(pairs, base, new, answering("SAME", calls), limit=2)
    assert [call[0] for call in calls] == [keys[0], keys[2]]  # 1.6 x, then 1.45 x
    assert result.reasons == {"over the limit of 2 suspects (--confirm-limit)": 1}
    assert [p.text for p in pairs if p.regressed] == [keys[1]]


def test_a_protocol_marked_suspect_fails_only_when_this_gpu_confirms_it():
    base, new, keys = planted()
    new = dataclasses.replace(new, header=dataclasses.replace(new.header, protocol=protocol.declared()))
    _, pairs = verdicts.check(base, new)
    assert not any(p.regressed for p in pairs)  # marked "protocol changed": not gated
    confirmation.confirm_suspects(pairs, base, new, answering("SLOWER"))
    assert {p.text for p in pairs if p.regressed} == set(keys)


def test_rounds_fit_the_seconds_a_suspect_may_take():
    assert confirmation.rounds_for(0.01, 30) == confirmation.MAX_ROUNDS  # a 10 us kernel: every round fits
    assert confirmation.rounds_for(2000.0, 30) == confirmation.MIN_ROUNDS  # a 2 s one: the fewest rounds ab takes
    assert confirmation.rounds_for(50.0, 30) == 198  # 30 s / (3 x 50.3 ms)


def test_the_round_bounds_are_those_ab_takes():
    from primbench.run import ab

    assert (confirmation.MIN_ROUNDS, confirmation.MAX_ROUNDS) == (ab.MIN_ROUNDS, ab.DEFAULT_ROUNDS)


def test_a_re_timing_that_cannot_be_done_is_one_reason_from_its_child_process():
    # Each suspect is timed in a child process: whatever it meets comes back as one line, never a
    # traceback in check. Here, without a GPU, a variant no one registered, and a real one.
    from primbench.run.confirm import retime_in_child
    from primbench.runfile.case_id import CaseId

    unknown = CaseId("reduce", "no_such_variant", "float32", 1000, 256, "uniform")
    with pytest.raises(UserError, match=r"^reduce/no_such_variant is not registered here"):
        retime_in_child(unknown, (None, None), "HEAD", 16, 0.05, 1.0)
    real = CaseId("reduce", "vector_load_sum", "float32", 1000, 256, "uniform")
    with pytest.raises(UserError) as refused:
        retime_in_child(real, (None, None), "0" * 40, 16, 0.05, 1.0)
    assert "\n" not in str(refused.value) and "Traceback" not in str(refused.value)


def test_the_child_leaves_no_commit_checkout_behind(tmp_path, monkeypatch):
    # Each side taken from git goes to a temporary folder; the child ends by os._exit, which skips
    # the interpreter's clean-up, and bisect starts one child per step. Without a GPU it ends after
    # taking both sides; with one it times 16 rounds of a small case.
    from primbench.run.confirm import retime_in_child
    from primbench.runfile.case_id import CaseId

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    case = CaseId("reduce", "vector_load_sum", "float32", 1000, 256, "uniform")
    try:
        retime_in_child(case, (None, None), "HEAD", 16, 0.05, 1.0, new_sha="HEAD")
    except UserError:
        pass
    assert not list(tmp_path.glob("primbench-base-*"))
