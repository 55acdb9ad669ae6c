"""Energy per operation for the cases a config's `timing: energy:` selects: the run's meter (NVML's
energy counter, asked once), the header's idle draw, and each case's windows after its timing
samples (measuring/energy.py, measuring/energy_loop.py). A GPU without the counter gets a reason in
the header and in each selected case, and the run goes on."""

from __future__ import annotations

from primbench.measuring import energy
from primbench.runfile import stats


class CaseEnergy:
    def __init__(self, device, gpu, policy):
        self.device, self.gpu, self.policy = device, gpu, policy
        self._meter = None
        self._reason: str | None = None

    def meter(self):
        """The energy meter, or None with the reason kept."""
        if self._meter is None and self._reason is None:
            meter = energy.NvmlMeter(self.device.pynvml, self.device.handle)
            try:
                meter.energy_mj()
                self._meter = meter
            except energy.EnergyUnavailable as exc:
                self._reason = str(exc)
        return self._meter

    def header(self) -> dict:
        """The header's `energy`: whether the counter answers, and the idle draw, measured before
        any probe runs."""
        state = {"available": False, "reason": None, "idle_w": None, "counter_step_s": None,
                 "method": energy.METHOD, "policy": self.policy.as_dict()}
        meter = self.meter()
        if meter is not None:
            try:
                state.update(energy.idle_power(meter), available=True)
            except energy.EnergyUnavailable as exc:
                self._meter, self._reason = None, str(exc)
        state["reason"] = self._reason
        return state

    def measure(self, plan, measurement) -> dict:
        """The case's energy object: its plan back to back after its timing samples."""
        from primbench.measuring.energy_loop import PlanLoop

        meter = self.meter()
        if meter is None:
            return {"reason": self._reason}
        # The hot, back-to-back time per operation (the batch figure where it was taken) sizes the launches.
        op_ms = stats.summarize(measurement.batch_ms or measurement.cold_ms).median
        try:
            return energy.measure(PlanLoop(self.gpu, plan.run, op_ms), meter, self.policy)
        except energy.EnergyUnavailable as exc:
            if exc.counter:  # the counter itself stopped or broke: later cases are told at once
                self._meter, self._reason = None, str(exc)
            return {"reason": str(exc)}
