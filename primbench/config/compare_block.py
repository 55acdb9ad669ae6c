"""The config's `compare:` block: how large a change counts, per op or variant, and which variants
may get slower without failing `check` (each with the reason a reviewer reads).

    compare:
      threshold: 0.05                          # relative; the default is 5 %
      thresholds: {reduce/seed000_*: 0.1}      # per op or op/variant glob
      abs_floor_us: 4.0                        # no verdict on a smaller absolute change (cold figure)
      batch_below_us: 40.0                     # under this cold median, the graph-batch figure is gated
      batch_abs_floor_us: 0.1                  # ... with this floor instead
      batch_threshold: 0.08                    # ... and this relative threshold (unless `thresholds` names the variant)
      exempt: {reduce/vector_compensated_sum: "trades 8 % speed for 10x accuracy"}
      require_baseline: true                   # `check` fails when the baseline lacks cases of the run (as --strict)
      energy_threshold: 0.05                   # relative; gate energy per op: fail a case whose interval lies wholly
                                               # above 1 + this (unset: energy is shown, never gated)
      min_light: 0.9                           # `check` fails a case under 90 % of its own speed of light ...
      min_light_from_bytes: 67108864           # ... among cases of at least this many minimal bytes (default 64 MiB)
"""

from __future__ import annotations

import fnmatch

from primbench import registry
from primbench.config.values import integer, number, reject_unknown
from primbench.text_safety import quoted

COMPARE_KEYS = ("threshold", "thresholds", "abs_floor_us", "batch_below_us", "batch_abs_floor_us", "batch_threshold",
                "exempt", "require_baseline", "energy_threshold", "min_light", "min_light_from_bytes")


def compare_block(raw, src) -> dict:
    """The `compare:` block: threshold (relative), thresholds {op or op/variant glob: relative}, abs_floor_us."""
    path = ("compare",)
    if not isinstance(raw, dict):
        raise src.error(path, "must be a mapping such as {threshold: 0.05, thresholds: {reduce/seed000_*: 0.1}}")
    reject_unknown(raw, COMPARE_KEYS, path, src)
    result = {}
    for key in ("threshold", "batch_threshold", "energy_threshold"):
        if key in raw:
            result[key] = _fraction(raw[key], path + (key,), src)
    for key in ("abs_floor_us", "batch_below_us", "batch_abs_floor_us"):
        if key in raw:
            value = number(raw[key], path + (key,), src)
            if value < 0:
                raise src.error(path + (key,), f"must be 0 or more microseconds, not {value}")
            result[key] = float(value)
    overrides = raw.get("thresholds", {})
    if not isinstance(overrides, dict):
        raise src.error(path + ("thresholds",), "must map an op or op/variant glob to a threshold, e.g. {reduce/seed000_*: 0.1}")
    if overrides:
        result["thresholds"] = {}
        keys = [v.key for v in registry.variants()]
        for pattern, value in overrides.items():
            if not isinstance(pattern, str) or not pattern.split("/")[0] in registry.ops():
                raise src.error(path + ("thresholds", pattern), f"{quoted(pattern)} names no op; valid ops: {', '.join(registry.ops())}")
            if "/" in pattern and not any(fnmatch.fnmatchcase(key, pattern) for key in keys):
                raise src.error(path + ("thresholds", pattern), f"{quoted(pattern)} matches no variant; see `primbench list`")
            result["thresholds"][pattern] = _fraction(value, path + ("thresholds", pattern), src)
    exempt = _exemptions(raw.get("exempt", {}), path + ("exempt",), src)
    if exempt:
        result["exempt"] = exempt
    if "min_light" in raw:
        value = number(raw["min_light"], path + ("min_light",), src)
        if not 0 < value <= 1:
            raise src.error(path + ("min_light",), f"must be the fraction of each case's speed of light it must reach, "
                                                   f"above 0 and at most 1 (0.9 is 90 %), not {value}")
        result["min_light"] = float(value)
    if "min_light_from_bytes" in raw:
        result["min_light_from_bytes"] = integer(raw["min_light_from_bytes"], path + ("min_light_from_bytes",), src,
                                                 minimum=1, maximum=2**50)
    if "require_baseline" in raw:
        if not isinstance(raw["require_baseline"], bool):
            raise src.error(path + ("require_baseline",), f"must be true or false, not {str(raw['require_baseline'])[:40]!r}")
        result["require_baseline"] = raw["require_baseline"]
    return result


def _exemptions(raw, path, src) -> dict:
    """{op/variant glob: reason}: variants whose changed code may be SLOWER without failing `check`."""
    if not isinstance(raw, dict):
        raise src.error(path, "must map an op/variant glob to the reason it may get slower, e.g. "
                              "{reduce/vector_compensated_sum: \"trades speed for accuracy\"}")
    keys = [v.key for v in registry.variants()]
    for pattern, reason in raw.items():
        if not isinstance(pattern, str) or not any(fnmatch.fnmatchcase(key, pattern) for key in keys):
            raise src.error(path + (pattern,), f"{quoted(str(pattern), 80)} matches no variant (give op/variant, e.g. "
                                               "reduce/vector_*); see `primbench list`")
        if not isinstance(reason, str) or not reason.strip():
            raise src.error(path + (pattern,), "give the reason this variant may get slower, as text a reviewer reads")
    return {pattern: reason.strip()[:300] for pattern, reason in raw.items()}


def _fraction(value, path, src) -> float:
    value = number(value, path, src)
    if not 0 < value < 1:
        raise src.error(path, f"must be a relative change between 0 and 1 (0.05 is 5 %), not {value}")
    return float(value)
