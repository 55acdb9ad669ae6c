"""Energy per operation, read from NVML's total-energy counter while the plan runs back to back.

The counter (nvmlDeviceGetTotalEnergyConsumption, mJ since the driver loaded) moves in steps,
every 100 ms on the H200, so a window is timed from one step to a later one, both seen by polling
the counter on the host: the two polling delays are alike and cancel. The GPU is kept busy all the
while (a loop of launches a few deep, measuring/energy_loop.py), so the window's mean draw is the
operation's; the GPU time per operation comes from events over the same window. Energy per
operation = mean watts x GPU ms per operation, pooled over the windows. Before the windows, the plan runs until two
successive steps agree (the ramp: power rises for the first few hundred ms). A counter that goes
backwards (a driver reload or a wrap) drops that window; one that stops moving ends the case's
energy with a reason. Nothing here imports CuPy: the loop and the meter are handed in, so the
rules are tested with stand-ins (tests/unit/test_energy.py).
"""

from __future__ import annotations

import statistics
import time

from primbench.measuring.energy_policy import EnergyPolicy

STEP_TIMEOUT_S = 2.0  # a counter that has not moved in this long is not counting
POLL_SLEEP_S = 0.0002  # between counter reads: NVML answers in tens of us; no need to spin harder
INSTANT_EVERY_S = 0.01  # instant-power readings (the peak) this often during the windows
GIVE_UP_S = 30.0  # a window with no operation done in this long ends the case's energy
FINISH_WAIT_S = 5.0  # after a failed window, how long the queued launches are waited for
IDLE_S = 0.3  # idle draw at run start: counter steps over at least this long
METHOD = "nvmlDeviceGetTotalEnergyConsumption"


class EnergyUnavailable(Exception):
    """Why no energy figure can be taken (no counter, a counter that stopped): one line.
    `counter`: the fault is the GPU's counter's, so no later case can measure either."""

    def __init__(self, message: str, counter: bool = True):
        super().__init__(message)
        self.counter = counter


class NvmlMeter:
    """The counter and instant power of one GPU, through pynvml."""

    def __init__(self, pynvml, handle):
        self.nvml, self.handle = pynvml, handle
        self._instant_field = getattr(pynvml, "NVML_FI_DEV_POWER_INSTANT", None)

    def energy_mj(self) -> int:
        try:
            return int(self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle))
        except self.nvml.NVMLError as exc:
            raise EnergyUnavailable(f"this GPU or driver has no total-energy counter (NVML: {exc})") from None

    def instant_w(self) -> float | None:
        """Instant power (NVML's POWER_INSTANT field, mW), else None: nvmlDeviceGetPowerUsage is a
        1 s average on recent GPUs, no use for a peak."""
        if self._instant_field is None:
            return None
        try:
            (value,) = self.nvml.nvmlDeviceGetFieldValues(self.handle, [self._instant_field])
            if value.nvmlReturn != 0:
                return None
            return float(value.value.uiVal) / 1000.0
        except (self.nvml.NVMLError, AttributeError, TypeError, ValueError):
            return None


def _next_step(meter, last: int, clock, sleep, feed=lambda: None, on_poll=lambda now: None) -> tuple[int, float]:
    """Poll the counter (feeding the GPU between reads) until it differs from `last`; return the
    new value and the host time it was seen."""
    deadline = clock() + STEP_TIMEOUT_S
    while True:
        feed()
        value = meter.energy_mj()
        now = clock()
        on_poll(now)
        if value != last:
            return value, now
        if now > deadline:
            raise EnergyUnavailable(f"the energy counter did not move in {STEP_TIMEOUT_S:g} s")
        sleep(POLL_SLEEP_S)


def idle_power(meter, *, clock=time.perf_counter, sleep=time.sleep) -> dict:
    """The draw with nothing running: counter steps over at least IDLE_S, from a step to a step.
    {"idle_w", "counter_step_s"}; raises EnergyUnavailable."""
    value, start = _next_step(meter, meter.energy_mj(), clock, sleep)
    first_value, steps, now = value, [], start
    while now - start < IDLE_S or not steps:
        previous = now
        value, now = _next_step(meter, value, clock, sleep)
        steps.append(now - previous)
    joules = (value - first_value) / 1000.0
    if joules <= 0:
        raise EnergyUnavailable("the energy counter went backwards while the GPU was idle")
    return {"idle_w": round(joules / (now - start), 2), "counter_step_s": round(statistics.median(steps), 4)}


def measure(loop, meter, policy: EnergyPolicy, *, clock=time.perf_counter, sleep=time.sleep) -> dict:
    """Run `loop` (feed(), done() -> (marker, operations done), gpu_ms(marker, marker), finish(),
    ops_per_launch, method) until the draw settles, then policy.windows windows; the case's energy
    object (docs/run-file.md). Raises EnergyUnavailable."""
    try:
        result = _measure(loop, meter, policy, clock, sleep)
    except BaseException:
        loop.finish(wait_s=FINISH_WAIT_S)  # never wait for ever on a launch that may not end
        raise
    loop.finish()
    return result


def _measure(loop, meter, policy: EnergyPolicy, clock, sleep) -> dict:
    started = clock()
    value, now = _next_step(meter, meter.energy_mj(), clock, sleep, loop.feed)
    steps: list[tuple[float, int]] = []  # (seconds, mJ) of each step seen
    value, now, settled = _ramp(loop, meter, policy, clock, sleep, value, now, started, steps)
    ramp_s = now - started
    windows, discarded, instant = _windows(loop, meter, policy, clock, sleep, value, now, steps)
    figures = pooled(windows)
    return {
        "mj_per_op": round(figures["mj_per_op"], 9),
        "avg_w": round(figures["avg_w"], 3),
        "peak_w": round(max(instant), 3) if instant else None,
        "op_ms": round(figures["op_ms"], 9),
        "windows": windows,
        "ramp_s": round(ramp_s, 4),
        "settled": settled,
        "window_s": policy.window_s,
        "counter_step_s": round(statistics.median(s for s, _ in steps), 4) if steps else None,
        "counter_step_mj": statistics.median(mj for _, mj in steps) if steps else None,
        "ops_per_launch": loop.ops_per_launch,
        "method": loop.method,
        "discarded_windows": discarded,
    }


def pooled(windows: list[dict]) -> dict:
    """The windows taken together: all their millijoules over all their operations (and seconds).
    Not the median window: at the H200's 700 W cap the power controller swings the draw by up to
    +-5 % between half-second windows, and three runs of configs/energy.yaml agreed within 2 % on
    33 of 34 cases pooled, 28 of 34 by the median window (docs/perf-notes.md)."""
    mj = sum(w["mj"] for w in windows)
    ops = sum(w["ops"] for w in windows)
    seconds = sum(w["seconds"] for w in windows)
    return {"mj_per_op": mj / ops, "avg_w": mj / seconds / 1000.0, "op_ms": seconds * 1e3 / ops}


def _ramp(loop, meter, policy, clock, sleep, value, now, started, steps) -> tuple[int, float, bool]:
    """Counter steps until two successive ones agree within settle_tolerance (after min_ramp_s),
    or max_ramp_s has passed: (the counter, the time, whether it settled)."""
    watts: list[float] = []
    while True:
        previous_value, previous_time = value, now
        value, now = _next_step(meter, value, clock, sleep, loop.feed)
        seconds, mj = now - previous_time, value - previous_value
        if mj > 0:
            steps.append((seconds, mj))
            watts.append(mj / seconds / 1000.0)
        ramp = now - started
        if ramp >= policy.min_ramp_s and len(watts) >= 2 and abs(watts[-1] / watts[-2] - 1) <= policy.settle_tolerance:
            return value, now, True
        if ramp >= policy.max_ramp_s:
            return value, now, False


def _windows(loop, meter, policy, clock, sleep, value, now, steps) -> tuple[list[dict], int, list[float]]:
    """policy.windows windows, each from a counter step to the first step past window_s with
    operations done since it began: (the windows, how many were dropped, instant-power readings)."""
    instant: list[float] = []
    last_instant = [now]

    def on_poll(at):
        if at - last_instant[0] >= INSTANT_EVERY_S:
            last_instant[0] = at
            reading = meter.instant_w()
            if reading is not None:
                instant.append(reading)

    windows, discarded = [], 0
    edge_value, edge_time, (edge_marker, edge_ops) = value, now, loop.done()
    progress_ops, progress_time = edge_ops, now  # when an operation last finished
    while len(windows) < policy.windows:
        if discarded > policy.windows:
            raise EnergyUnavailable(f"the energy counter went backwards in {discarded} windows (reset or wrapped)")
        value, now = edge_value, edge_time
        while True:
            step_value, step_time = value, now
            value, now = _next_step(meter, value, clock, sleep, loop.feed, on_poll)
            if value > step_value:
                steps.append((now - step_time, value - step_value))
            marker, ops_done = loop.done()
            if ops_done > progress_ops:
                progress_ops, progress_time = ops_done, now
            if value < edge_value or (now - edge_time >= policy.window_s and ops_done > edge_ops):
                break
            if now - progress_time > GIVE_UP_S:  # the counter moves but no launch finishes: a stuck kernel
                raise EnergyUnavailable(f"no operation finished in {GIVE_UP_S:g} s of an energy window", counter=False)
        if value < edge_value:  # a reset or a wrap: no figure from this window, and the moment it was
            discarded += 1      # seen is no step of the counter: the next window starts at its next step
            value, now = _next_step(meter, value, clock, sleep, loop.feed, on_poll)
            marker, ops_done = loop.done()
        else:
            seconds, mj = now - edge_time, value - edge_value
            op_ms = loop.gpu_ms(edge_marker, marker) / (ops_done - edge_ops)
            windows.append({"seconds": round(seconds, 6), "mj": mj, "ops": round(seconds * 1e3 / op_ms, 3),
                            "op_ms": round(op_ms, 9), "avg_w": round(mj / seconds / 1000.0, 3)})
        edge_value, edge_time, edge_marker, edge_ops = value, now, marker, ops_done
    return windows, discarded, instant
