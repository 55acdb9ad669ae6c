"""When to stop sampling a case: `TimingPolicy` (a config's `timing:` block, or `primbench.measure`'s
keywords) and the rules every policy must keep, whoever built it.

The rules are stated once, here, on plain values; config/loading.py adds the file, line and key to
a broken rule, and primbench.measure raises it as a ValueError.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class TimingPolicy:
    """When to stop sampling a case (the YAML's `timing:` block)."""

    min_samples: int = 10
    max_noise: float = 0.005  # spread of single samples, relative: 1.4826 x MAD / median ...
    max_median_error: float = 0.0025  # ... or the median's relative standard error, whichever is met first
    min_time_s: float = 0.005  # accumulated measured GPU time
    max_time_s: float = 1.0  # wall-clock cap per case (then the noise target is reported as missed)
    max_samples: int = 10000
    warmup: int = 2
    batch_below_us: float = 100.0  # also take batch samples when the cold median is under this
    batch_target_ms: float = 0.5  # each batch sample lasts about this long on the GPU
    # A cold sample whose SM clock (read around its hold) is under this fraction of the GPU's
    # default clock is discarded and retaken after a pause, as nvbench does at 75 %; 0 keeps all.
    min_clock_fraction: float = 0.75
    # A case that makes no progress for this long (its start, then each chunk of samples) is hung:
    # failed with the reason, its process replaced, the run going on (measuring/case_limit.py).
    case_limit_s: float = 60.0

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def field_names() -> list[str]:
    return [f.name for f in fields(TimingPolicy)]


def integer_fields() -> set[str]:
    """The settings that take whole numbers (the others take any finite number)."""
    defaults = TimingPolicy()
    return {name for name in field_names() if isinstance(getattr(defaults, name), int)}


# The largest value a setting takes: past these one case would hold the GPU for hours (warm-up
# launches, samples, seconds) or its samples would outgrow a run-file line. The fractions
# (max_noise, max_median_error, min_clock_fraction) are bounded by policy_problem; batch_below_us
# past a second of cold median means "always batch", which a larger number says no better.
MAXIMUM = {"min_samples": 100_000, "max_samples": 100_000, "warmup": 1000, "min_time_s": 600, "max_time_s": 600,
           "batch_target_ms": 1000, "batch_below_us": 1_000_000, "case_limit_s": 86_400}


def shown_number(value) -> str:
    """A setting's value for a message: str() of an int of 5,000 digits raises, and a float of 1e300
    is shown short."""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value) if isinstance(value, int) and abs(value) < 10**30 else "a number of over 30 digits"


def type_problem(name: str, value) -> str | None:
    """What is wrong with one setting's value by its type (whole numbers for the counts, numbers for
    the rest), or None. primbench.measure raises this part as a TypeError."""
    if name in integer_fields():
        if isinstance(value, bool) or not isinstance(value, int):
            return f"must be a whole number, not {value!r:.60}"
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be a number, not {value!r:.60}"
    return None


def value_problem(name: str, value) -> str | None:
    """What is wrong with one setting's value by its type (type_problem), its sign (counts from 0),
    its finiteness or past its MAXIMUM, or None."""
    problem = type_problem(name, value)
    if problem is not None:
        return problem
    if name in integer_fields() and value < 0:
        return f"{shown_number(value)} is below the minimum 0"
    if isinstance(value, float) and not math.isfinite(value):  # an int is finite however long
        return f"must be a finite number, not {value!r}"
    if name in MAXIMUM and value > MAXIMUM[name]:
        shown = shown_number(value)
        why = ("a second of cold median is batched already" if name == "batch_below_us"
               else "more would hold one case on the GPU for hours")
        return f"{shown} is above the maximum {MAXIMUM[name]} ({why})"
    return None


def timing_problem(values: dict) -> tuple[str | None, str] | None:
    """The first rule a whole timing block breaks (each value by its type, then the bounds between
    them), as policy_problem says it; None when it keeps them all. `values` name known settings."""
    for name in field_names():  # in the order the settings are declared, as the first error reported
        problem = value_problem(name, values[name]) if name in values else None
        if problem is not None:
            return name, problem
    return policy_problem(TimingPolicy(**values))


def policy_problem(policy: TimingPolicy) -> tuple[str | None, str] | None:
    """The first rule `policy` breaks, as (the setting, or None for the block as a whole; what is
    wrong), or None when it keeps them all."""
    if policy.min_samples < 3:
        return "min_samples", "needs at least 3 samples for a median with a noise estimate"
    for key in ("max_noise", "max_median_error"):
        if not 0 < getattr(policy, key) < 1:
            return key, f"{shown_number(getattr(policy, key))} is not a fraction between 0 and 1 (0.005 means 0.5 %)"
    if policy.min_time_s < 0 or policy.max_time_s <= 0:
        return None, "min_time_s and max_time_s must be positive seconds"
    if policy.max_time_s < policy.min_time_s:
        return "max_time_s", f"{shown_number(policy.max_time_s)} s is shorter than min_time_s {shown_number(policy.min_time_s)} s"
    if policy.max_samples < policy.min_samples:
        return "max_samples", f"{shown_number(policy.max_samples)} is fewer than min_samples {shown_number(policy.min_samples)}"
    if policy.batch_below_us < 0 or policy.batch_target_ms <= 0:
        return None, "batch_below_us must be >= 0 and batch_target_ms > 0"
    if policy.case_limit_s < 1:
        return "case_limit_s", (f"{shown_number(policy.case_limit_s)} s is under 1 s: a case's build and verification "
                                "must fit in it (the default is 60 s)")
    if not 0 <= policy.min_clock_fraction < 1:
        return "min_clock_fraction", f"{shown_number(policy.min_clock_fraction)} is not a fraction from 0 to 1 (0.75 means 75 % of the default clock)"
    return None
