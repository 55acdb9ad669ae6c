"""Which cases get an energy figure and how it is taken: `EnergyPolicy` (a config's
`timing: energy:` block, or `run --energy`), and the rules its values keep.

Why these defaults (an H200, 2026-12-02): NVML's total-energy counter steps every 100 ms; over a
loop of sums at 2^28 floats the first 100 ms read 237 W because power ramps up, 0.2 s read 137 mJ
per sum, 0.5 s and 1.0 s read 139.8 and 140.7. So the plan runs back to back until two successive
counter steps agree within `settle_tolerance` (at least `min_ramp_s`, at most `max_ramp_s`), then
`windows` windows of `window_s` each, from one counter step to a later one; the figure is all
their millijoules over all their operations. At least two windows: compare's interval comes from
their spread. See measuring/energy.py.
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass, fields

from primbench.measuring.policy import shown_number


@dataclass(frozen=True)
class EnergyPolicy:
    # Globs over a case's "op/variant" or its whole key (reduce/*, */cub_*, reduce/vector_load_sum/float32/n=268435456/*).
    cases: tuple[str, ...] = ("*",)
    min_ramp_s: float = 0.3
    max_ramp_s: float = 2.0
    settle_tolerance: float = 0.02
    window_s: float = 0.5
    windows: int = 3

    def selects(self, case) -> bool:
        """Whether the case (a CaseId) gets an energy figure."""
        names = (f"{case.op}/{case.variant}", case.key)
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.cases for name in names)

    def as_dict(self) -> dict:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["cases"] = list(self.cases)
        return values


# window_s stays under measuring/energy.py's GIVE_UP_S (30 s), past which a window is taken for stuck.
NUMBERS = {"min_ramp_s": (0.0, 60.0), "max_ramp_s": (0.0, 60.0), "settle_tolerance": (0.0, 1.0), "window_s": (0.05, 20.0)}
WINDOWS = (2, 100)


def field_names() -> list[str]:
    return [f.name for f in fields(EnergyPolicy)]


def energy_problem(values: dict) -> tuple[str | None, str] | None:
    """The first rule an energy block's values (known names only) break, as (the setting, what is
    wrong), or None. `cases` is a list of globs; the numbers are seconds or a fraction."""
    if "cases" in values:
        cases = values["cases"]
        if isinstance(cases, str):
            cases = [cases]
        if not isinstance(cases, list) or not cases or not all(isinstance(c, str) and c.strip() for c in cases):
            return "cases", "must be a list of globs over op/variant or case keys, e.g. [reduce/*, scan/cub_*]"
    for name, (low, high) in NUMBERS.items():
        if name not in values:
            continue
        value = values[name]
        # An int is finite however long (math.isfinite of 10**400 raises), and compares exactly.
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float) and not math.isfinite(value)):
            return name, f"must be a number of {'seconds' if name.endswith('_s') else 'a fraction'}, not {value!r}"
        if not low <= value <= high:
            return name, f"{shown_number(value)} is outside {low:g} to {high:g}"
    if "windows" in values:
        value = values["windows"]
        if isinstance(value, bool) or not isinstance(value, int) or not WINDOWS[0] <= value <= WINDOWS[1]:
            shown = shown_number(value) if type(value) is int else repr(value)[:60]
            return "windows", f"must be a whole number from {WINDOWS[0]} to {WINDOWS[1]}, not {shown}"
    merged = EnergyPolicy(**{k: v for k, v in values.items() if k != "cases"})
    if merged.max_ramp_s < merged.min_ramp_s:
        return "max_ramp_s", f"{merged.max_ramp_s:g} s is shorter than min_ramp_s {merged.min_ramp_s:g} s"
    return None


def policy_from(values: dict) -> EnergyPolicy:
    """An EnergyPolicy from checked values (energy_problem found nothing)."""
    cases = values.get("cases", ["*"])
    cases = [cases] if isinstance(cases, str) else cases
    numbers = {k: (int(v) if k == "windows" else float(v)) for k, v in values.items() if k != "cases"}
    return EnergyPolicy(cases=tuple(c.strip() for c in cases), **numbers)
