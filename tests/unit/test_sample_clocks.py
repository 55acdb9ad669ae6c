"""Each cold sample's SM clock (primbench/measuring/timing.py): read from its hold's stamps, kept
beside the samples in the run file, and a throttled sample discarded and retaken after a pause;
on a stand-in GPU whose clock readings are scripted (no GPU here)."""

from __future__ import annotations

import json

import pytest

from primbench.measuring import timing
from primbench.measuring.policy import TimingPolicy, policy_problem
from primbench.measuring.timing import Timer
from primbench.runfile.records import Samples
from primbench.runfile.schema import record_problem
from tests.unit.test_measure import RecordingCalls


class ClockedCalls(RecordingCalls):
    """A stand-in whose holds can be stamped; the SM clock of the i-th stamped hold is `clocks[i]`
    (the last one repeated), 1 ms per sample."""

    def __init__(self, clocks):
        super().__init__()
        self.clocks, self.stamped, self.slots = list(clocks), 0, []

    def hold(self, microseconds, stamps=None, slot=0):
        self.log.append("hold")
        if stamps is not None:
            self.slots.append(slot)

    def stamp_buffer(self, slots):
        return [0] * (4 * slots)

    def sm_clocks_mhz(self, stamps, count):
        taken = [self.clocks[min(self.stamped + i, len(self.clocks) - 1)] for i in range(count)]
        self.stamped += count
        return taken


POLICY = TimingPolicy(min_samples=8, max_samples=8, warmup=1, min_time_s=0.0, batch_below_us=0.0, max_time_s=5.0)


def test_every_kept_sample_carries_its_clock_and_a_throttled_one_is_retaken_after_a_pause(monkeypatch):
    pauses = []
    monkeypatch.setattr(timing.time, "sleep", pauses.append)
    calls = ClockedCalls([1980, 1980, 900, 1980, 1975, 1400, 1980, 1980, 1980, 1980, 1980])
    timer = Timer(1 << 20, calls)
    timer.min_clock_mhz = 0.75 * 1980
    result = timer.measure(lambda: None, POLICY)
    assert len(result.cold_ms) == 8 and len(result.cold_clock_mhz) == 8
    assert result.throttled == 2  # 900 and 1400 MHz: under 75 % of 1980
    assert all(clock >= timer.min_clock_mhz for clock in result.cold_clock_mhz)
    assert pauses and all(p == timing.RECOVERY_S for p in pauses)
    samples, record = result.as_record()
    assert record["throttled_discarded"] == result.throttled and len(samples.cold_clock_mhz) == len(samples.cold_ms)


def test_a_gpu_that_stays_throttled_still_ends_at_the_wall_cap(monkeypatch):
    monkeypatch.setattr(timing.time, "sleep", lambda s: None)
    clock = iter(range(0, 10**6))
    monkeypatch.setattr(timing.time, "perf_counter", lambda: next(clock) * 0.01)  # 10 ms per reading
    calls = ClockedCalls([500])  # always under the floor
    timer = Timer(1 << 20, calls)
    timer.min_clock_mhz = 1485.0
    policy = TimingPolicy(min_samples=4, max_samples=100, warmup=1, min_time_s=0.0, batch_below_us=0.0, max_time_s=1.0)
    result = timer.measure(lambda: None, policy)
    assert len(result.cold_ms) >= 4 and result.throttled > 0  # it ended, and only past the cap kept any
    assert result.cold_clock_mhz == [500] * len(result.cold_ms)  # kept past the cap, each with its clock


def test_a_back_end_without_stamps_keeps_every_sample_and_no_clock():
    calls = RecordingCalls()
    timer = Timer(1 << 20, calls)
    timer.min_clock_mhz = 1485.0
    result = timer.measure(lambda: None, POLICY)
    assert len(result.cold_ms) == 8 and result.cold_clock_mhz == [] and result.throttled == 0


def test_the_clocks_round_trip_through_the_run_file_and_a_wrong_count_is_refused():
    samples = Samples((0.1, 0.2), (), None, (1980.0, 1965.5))
    assert Samples.from_json(json.loads(json.dumps(samples.to_json()))) == samples
    assert "cold_clock_mhz" not in Samples((0.1,), (), None).to_json()  # nothing written where none was read
    case = {"kind": "case", "key": "reduce/v/float32/n=8/block=256/uniform", "op": "reduce", "variant": "v",
            "dtype": "float32", "n": 8, "block": 256, "distribution": "uniform", "status": "ok",
            "samples": {"cold_ms": [0.1, 0.2], "batch_ms": [], "batch_size": None, "cold_clock_mhz": [1980.0, 1965.5]}}
    assert record_problem(case) is None
    for bad in ([1980.0], [1980.0, -1.0], [1980.0, float("nan")], "1980"):
        case["samples"]["cold_clock_mhz"] = bad
        assert "cold_clock_mhz" in (record_problem(case) or ""), bad


def test_the_clock_floor_is_a_fraction_of_the_default_clock():
    assert policy_problem(TimingPolicy(min_clock_fraction=0.0)) is None  # 0 keeps every sample
    for bad in (-0.1, 1.0, 1.5):
        name, _ = policy_problem(TimingPolicy(min_clock_fraction=bad))
        assert name == "min_clock_fraction"


@pytest.mark.parametrize("clocks", [[1980] * 20, [1980, 1000] * 20])
def test_the_count_of_discarded_samples_is_the_count_under_the_floor(monkeypatch, clocks):
    monkeypatch.setattr(timing.time, "sleep", lambda s: None)
    calls = ClockedCalls(clocks)
    timer = Timer(1 << 20, calls)
    timer.min_clock_mhz = 1485.0
    result = timer.measure(lambda: None, POLICY)
    under = sum(clock < 1485.0 for clock in clocks[:calls.stamped])
    assert len(result.cold_ms) == 8 and result.throttled == under == calls.stamped - 8


class RoundCalls(ClockedCalls):
    """As ClockedCalls, and each sample's time is the value its operation left in `ran`: a sample
    says which operation (and which of its alternatives) it timed."""

    def __init__(self, clocks):
        super().__init__(clocks)
        self.ran, self.at_end = None, {}

    def record(self, event):
        super().record(event)
        self.at_end[id(event)] = self.ran

    def elapsed_ms(self, start, end):
        return self.at_end[id(end)]


def _sides(calls):
    """Two operations of two alternatives each (round r runs alternative r mod 2): side s's
    alternative k leaves 10 s + k + 1."""
    return [tuple((lambda v=10 * side + k + 1: setattr(calls, "ran", float(v))) for k in range(2)) for side in range(2)]


def test_an_interleaved_round_with_a_throttled_sample_is_retaken_whole_in_its_own_place(monkeypatch):
    pauses = []
    monkeypatch.setattr(timing.time, "sleep", pauses.append)
    # 4 rounds of 2 samples in one chunk; the 4th sample (round 1's second) ran at 900 MHz
    calls = RoundCalls([1980, 1980, 1980, 900, 1980, 1980, 1980, 1980, 1970, 1960])
    timer = Timer(1 << 20, calls)
    timer.min_clock_mhz = 1485.0
    taken = timer.interleaved(_sides(calls), rounds=4, warmup=0)
    assert taken.throttled_rounds == 1 and pauses == [timing.RECOVERY_S] and calls.stamped == 10
    # round r stays round r on both sides: the retaken round 1 ran alternative 1 again
    assert taken.samples_ms == [[1.0, 2.0, 1.0, 2.0], [11.0, 12.0, 11.0, 12.0]]
    assert all(len(side) == 4 and min(side) >= 1485.0 for side in taken.clock_mhz)
    assert sorted(taken.clock_mhz[0] + taken.clock_mhz[1]) == [1960, 1970] + [1980] * 6  # the retake's clocks kept


def test_interleaved_samples_on_a_gpu_that_stays_throttled_still_end(monkeypatch):
    monkeypatch.setattr(timing.time, "sleep", lambda s: None)
    calls = RoundCalls([500])
    timer = Timer(1 << 20, calls)
    timer.min_clock_mhz = 1485.0
    taken = timer.interleaved(_sides(calls), rounds=4, warmup=0)
    assert taken.throttled_rounds == 4  # as many retakes as rounds, then the throttled rounds are kept
    assert taken.samples_ms == [[1.0, 2.0, 1.0, 2.0], [11.0, 12.0, 11.0, 12.0]] and taken.clock_mhz == [[500] * 4] * 2


def test_interleaved_samples_with_no_clock_floor_keep_every_round_and_its_clocks():
    calls = RoundCalls([1980, 700])
    taken = Timer(1 << 20, calls).interleaved(_sides(calls), rounds=2, warmup=0)
    assert taken.throttled_rounds == 0 and taken.samples_ms == [[1.0, 2.0], [11.0, 12.0]]
    assert sorted(taken.clock_mhz[0] + taken.clock_mhz[1]) == [700, 700, 700, 1980]
