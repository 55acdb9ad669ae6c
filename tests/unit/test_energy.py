"""Energy per operation (measuring/energy.py) against a stand-in NVML: a counter that steps every
100 ms over a known draw, one that is missing, one that goes backwards (a reset or a wrap), one that
stops; the ramp rule; the idle draw; and the config's `timing: energy:` block and `run --energy`."""

import math
import types

import pytest

from primbench.config.loading import config_from_dict, config_from_header
from primbench.errors import ConfigError
from primbench.measuring import energy
from primbench.measuring.energy_policy import EnergyPolicy
from primbench.run.case_energy import CaseEnergy
from primbench.runfile.case_id import CaseId


class Clock:
    """Host time that moves only when the code under test reads the counter or sleeps."""

    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t

    def sleep(self, seconds):
        self.t += seconds


class Meter:
    """NVML's counter over a draw `watts(t)`: the energy integrated to the last 100 ms step, in whole mJ;
    `backwards_at`: the counter restarts from 0 there (a driver reload, or a wrap)."""

    def __init__(self, clock, watts, step_s=0.1, read_s=50e-6, backwards_at=None, stops_at=None, instant=True):
        self.clock, self.watts, self.step_s, self.read_s = clock, watts, step_s, read_s
        self.backwards_at, self.stops_at, self.instant = backwards_at, stops_at, instant
        self.reads = 0

    def _energy_j(self, t):  # the integral of watts over [0, t], by 1 ms slices (kept as they grow)
        slices = int(round(t / 1e-3))
        sums = self.__dict__.setdefault("_sums", [0.0])
        while len(sums) <= slices:
            sums.append(sums[-1] + self.watts((len(sums) - 1) * 1e-3) * 1e-3)
        return sums[slices]

    def energy_mj(self):
        self.reads += 1
        self.clock.t += self.read_s
        t = self.clock.t
        if self.stops_at is not None and t >= self.stops_at:
            t = self.stops_at
        stepped = math.floor(t / self.step_s) * self.step_s
        if self.backwards_at is not None and t >= self.backwards_at:
            return int(1000 * (self._energy_j(stepped) - self._energy_j(math.floor(self.backwards_at / self.step_s) * self.step_s)))
        return int(1000 * self._energy_j(stepped)) + 10**9  # a counter far from 0, as since the driver loaded

    def instant_w(self):
        return self.watts(self.clock.t) if self.instant else None


class Loop:
    """The GPU running operations of `op_ms` back to back since time 0, in launches of `per_launch`."""

    def __init__(self, clock, op_ms, per_launch=10):
        self.clock, self.op_ms, self.ops_per_launch, self.method = clock, op_ms, per_launch, "graph"
        self.finished = False

    def feed(self):
        pass

    def done(self):
        ops = int(self.clock.t * 1e3 / self.op_ms) // self.ops_per_launch * self.ops_per_launch
        return ops * self.op_ms, ops  # the marker: the GPU time (ms) at which the newest launch ended

    def gpu_ms(self, start, end):
        return end - start

    def finish(self, wait_s=None):
        self.finished = True
        self.waited = wait_s


def ramp_to(steady_w, from_w=200.0, over_s=0.3):
    return lambda t: from_w + (steady_w - from_w) * min(1.0, t / over_s)


def test_steady_draw_gives_watts_times_operation_time():
    clock = Clock()
    meter = Meter(clock, ramp_to(500.0))
    loop = Loop(clock, op_ms=2.0)
    result = energy.measure(loop, meter, EnergyPolicy(), clock=clock, sleep=clock.sleep)
    assert result["mj_per_op"] == pytest.approx(500.0 * 2.0, rel=0.01)  # W x ms = mJ
    assert result["avg_w"] == pytest.approx(500.0, rel=0.01)
    assert result["op_ms"] == pytest.approx(2.0, rel=1e-6)
    assert result["settled"] is True and result["ramp_s"] >= 0.3
    assert len(result["windows"]) == 3 and all(w["seconds"] >= 0.5 for w in result["windows"])
    assert result["counter_step_s"] == pytest.approx(0.1, abs=0.002)
    assert result["peak_w"] == pytest.approx(500.0, rel=0.01)
    assert result["discarded_windows"] == 0 and result["ops_per_launch"] == 10 and result["method"] == "graph"
    assert loop.finished


def test_the_ramp_is_not_counted_in_the_figure():
    """A draw that ramps from 200 W to 600 W over 0.8 s: the windows start after it has settled."""
    clock = Clock()
    result = energy.measure(Loop(clock, op_ms=1.0), Meter(clock, ramp_to(600.0, over_s=0.8)), EnergyPolicy(),
                            clock=clock, sleep=clock.sleep)
    assert result["ramp_s"] >= 0.8
    assert result["mj_per_op"] == pytest.approx(600.0, rel=0.01)


def test_a_draw_that_never_settles_stops_ramping_at_max_ramp_and_says_so():
    clock = Clock()
    swinging = lambda t: 400.0 + 150.0 * (int(t / 0.1) % 2)  # noqa: E731 - alternates 400 and 550 W every step
    policy = EnergyPolicy(max_ramp_s=1.0)
    result = energy.measure(Loop(clock, op_ms=1.0), Meter(clock, swinging), policy, clock=clock, sleep=clock.sleep)
    assert result["settled"] is False
    assert 1.0 <= result["ramp_s"] < 1.15


def test_a_counter_that_goes_backwards_drops_that_window_and_takes_another():
    clock = Clock()
    meter = Meter(clock, ramp_to(500.0), backwards_at=1.05)  # inside the first or second window
    result = energy.measure(Loop(clock, op_ms=2.0), meter, EnergyPolicy(), clock=clock, sleep=clock.sleep)
    assert result["discarded_windows"] == 1
    assert len(result["windows"]) == 3
    assert result["mj_per_op"] == pytest.approx(1000.0, rel=0.01)


def test_a_counter_that_stops_moving_is_one_reason_not_a_hang():
    clock = Clock()
    meter = Meter(clock, ramp_to(500.0), stops_at=0.7)
    loop = Loop(clock, op_ms=2.0)
    with pytest.raises(energy.EnergyUnavailable, match="did not move"):
        energy.measure(loop, meter, EnergyPolicy(), clock=clock, sleep=clock.sleep)
    assert loop.finished and clock.t < 0.7 + energy.STEP_TIMEOUT_S + 0.1


def test_a_loop_whose_operations_stop_finishing_ends_with_a_reason_not_a_hang():
    clock = Clock()
    loop = Loop(clock, op_ms=2.0)
    stuck = types.SimpleNamespace(at=None)

    def done():  # the GPU stops finishing launches once the windows begin
        stuck.at = stuck.at if stuck.at is not None else Loop.done(loop)
        return stuck.at

    loop.done = done
    with pytest.raises(energy.EnergyUnavailable, match="no operation finished"):
        energy.measure(loop, Meter(clock, ramp_to(500.0)), EnergyPolicy(), clock=clock, sleep=clock.sleep)
    assert loop.finished and clock.t < energy.GIVE_UP_S + 3.0
    assert loop.waited == energy.FINISH_WAIT_S  # a failed window never waits for ever on the queue


class SlowingLoop(Loop):
    """Operations of 2 ms until t = 1.5 s, then of 3 ms: each window's op_ms must be its own."""

    def done(self):
        t_ms = self.clock.t * 1e3
        ops = t_ms / 2.0 if t_ms <= 1500 else 750 + (t_ms - 1500) / 3.0
        ops = int(ops) // self.ops_per_launch * self.ops_per_launch
        gpu_ms = ops * 2.0 if ops <= 750 else 1500 + (ops - 750) * 3.0
        return gpu_ms, ops


def test_each_window_gets_the_time_per_operation_of_its_own_span():
    clock = Clock()
    result = energy.measure(SlowingLoop(clock, op_ms=2.0), Meter(clock, ramp_to(500.0)), EnergyPolicy(min_ramp_s=0.3),
                            clock=clock, sleep=clock.sleep)
    first, *_, last = result["windows"]
    assert first["op_ms"] == pytest.approx(2.0, rel=0.02) and last["op_ms"] == pytest.approx(3.0, rel=0.02)
    assert result["mj_per_op"] == pytest.approx(sum(w["mj"] for w in result["windows"]) / sum(w["ops"] for w in result["windows"]))


def test_a_counter_that_stops_during_one_case_is_told_to_every_later_case_at_once(monkeypatch):
    from primbench.measuring import energy_loop

    calls = []

    def stopped(loop, meter, policy, **_):
        calls.append(1)
        raise energy.EnergyUnavailable("the energy counter did not move in 2 s")

    monkeypatch.setattr(energy_loop, "PlanLoop", lambda *args: None)
    monkeypatch.setattr(energy, "measure", stopped)
    taker = CaseEnergy(types.SimpleNamespace(pynvml=FakeNvml(), handle=None), gpu=None, policy=EnergyPolicy())
    measurement = types.SimpleNamespace(batch_ms=[0.01], cold_ms=[0.02])
    first = taker.measure(plan=types.SimpleNamespace(run=None), measurement=measurement)
    second = taker.measure(plan=types.SimpleNamespace(run=None), measurement=measurement)
    assert first == second == {"reason": "the energy counter did not move in 2 s"} and len(calls) == 1


def test_without_instant_power_the_peak_is_null_and_the_figure_stands():
    clock = Clock()
    result = energy.measure(Loop(clock, op_ms=2.0), Meter(clock, ramp_to(450.0), instant=False), EnergyPolicy(),
                            clock=clock, sleep=clock.sleep)
    assert result["peak_w"] is None and result["mj_per_op"] == pytest.approx(900.0, rel=0.01)


def test_a_slow_operation_longer_than_a_step_still_gets_whole_windows():
    """full_sort takes 27 ms: one operation per launch, and a window ends only past one done."""
    clock = Clock()
    result = energy.measure(Loop(clock, op_ms=27.0, per_launch=1), Meter(clock, ramp_to(300.0)), EnergyPolicy(),
                            clock=clock, sleep=clock.sleep)
    assert result["mj_per_op"] == pytest.approx(300.0 * 27.0, rel=0.02)


def test_idle_power_reads_the_draw_with_nothing_running():
    clock = Clock()
    idle = energy.idle_power(Meter(clock, lambda t: 75.0), clock=clock, sleep=clock.sleep)
    assert idle["idle_w"] == pytest.approx(75.0, rel=0.01) and idle["counter_step_s"] == pytest.approx(0.1, abs=0.002)
    assert clock.t >= energy.IDLE_S


class FakeNvml:
    """pynvml with or without the energy counter."""

    class NVMLError(Exception):
        pass

    def __init__(self, counter=True):
        self.counter = counter

    def nvmlDeviceGetTotalEnergyConsumption(self, handle):
        if not self.counter:
            raise self.NVMLError("Not Supported")
        return 123


def test_a_gpu_without_the_counter_gets_a_reason_in_the_header_and_each_case_and_the_run_goes_on():
    device = types.SimpleNamespace(pynvml=FakeNvml(counter=False), handle=object())
    taker = CaseEnergy(device, gpu=None, policy=EnergyPolicy())
    header = taker.header()
    assert header["available"] is False and "no total-energy counter" in header["reason"] and "Not Supported" in header["reason"]
    assert header["idle_w"] is None and header["policy"]["windows"] == 3
    assert taker.measure(plan=None, measurement=None) == {"reason": header["reason"]}


def test_the_nvml_meter_reads_the_counter_and_turns_an_error_into_one_line():
    assert energy.NvmlMeter(FakeNvml(), None).energy_mj() == 123
    with pytest.raises(energy.EnergyUnavailable, match="no total-energy counter"):
        energy.NvmlMeter(FakeNvml(counter=False), None).energy_mj()


SWEEP = [{"op": "reduce", "variants": ["vector_load_sum", "cub_device_reduce"], "sizes": ["2^20"]}]


def test_the_energy_block_selects_cases_by_glob_and_is_recorded_in_the_resolved_config():
    config = config_from_dict({"timing": {"energy": {"cases": ["reduce/cub_*"], "window_s": 0.25}}, "sweeps": SWEEP})
    chosen = [case.variant for case in config.cases() if config.energy_for(case)]
    assert chosen == ["cub_device_reduce"]
    assert config.resolved()["timing"]["energy"]["window_s"] == 0.25
    again = config_from_header(types.SimpleNamespace(config=config.resolved()), "run.jsonl")  # what --resume reads
    assert again.energy == config.energy and again.hash() == config.hash()


def test_energy_true_means_every_case_and_no_block_leaves_the_config_hash_as_it_was():
    assert config_from_dict({"timing": {"energy": True}, "sweeps": SWEEP}).energy == EnergyPolicy()
    plain = config_from_dict({"sweeps": SWEEP})
    assert plain.energy is None and "energy" not in plain.resolved()["timing"]
    assert config_from_dict({"timing": {"energy": False}, "sweeps": SWEEP}).hash() == plain.hash()


@pytest.mark.parametrize("block, words", [
    ("yes", "must be true, false or a mapping"),
    ({"windows": 0}, "timing.energy.windows: must be a whole number from 2 to 100"),
    ({"windows": 1}, "timing.energy.windows: must be a whole number from 2 to 100"),
    ({"window_s": 31}, "timing.energy.window_s: 31 is outside 0.05 to 20"),
    ({"cases": []}, "timing.energy.cases: must be a list of globs"),
    ({"window_s": float("nan")}, "timing.energy.window_s: must be a number"),
    ({"min_ramp_s": 3, "max_ramp_s": 1}, "timing.energy.max_ramp_s: 1 s is shorter than min_ramp_s 3 s"),
    ({"windws": 3}, "timing.energy.windws: unknown key"),
])
def test_a_bad_energy_block_is_one_line_naming_the_setting(block, words):
    with pytest.raises(ConfigError, match=words.replace(".", r"\.")):
        config_from_dict({"timing": {"energy": block}, "sweeps": SWEEP})


def test_run_dash_dash_energy_widens_the_selection_to_every_case_and_keeps_the_settings():
    from primbench.cli.run import _with_energy

    config = config_from_dict({"timing": {"energy": {"cases": ["reduce/cub_*"], "windows": 5}}, "sweeps": SWEEP})
    widened = _with_energy(config, True)
    assert widened.energy.windows == 5 and all(widened.energy_for(c) for c in widened.cases())
    assert _with_energy(config, False) is config


def test_a_glob_may_name_a_whole_case_key():
    case = CaseId("reduce", "vector_load_sum", "float32", 2**28, 256, "uniform", ())
    assert EnergyPolicy(cases=("reduce/vector_load_sum/float32/n=268435456/*",)).selects(case)
    assert not EnergyPolicy(cases=("reduce/vector_load_sum/float32/n=1024/*",)).selects(case)
