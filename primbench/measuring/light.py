"""A byte count's speed of light on the caller's GPU, for code that times outside a run (the pytest
fixture's `min_light`): the median cold time of the read probe over those bytes, or of a device copy
of them for traffic that writes as much as it reads, measured by measuring/ceilings.py exactly as a
run's sized probes are (every launch shape screened, the fastest timed). A run file's `pct_sol` is
the same figure: a floor set in a test and one set on `check` mean the same thing.
"""

from __future__ import annotations

TRAFFIC = ("read", "read_write")


def light_ms(nbytes: int, traffic: str = "read") -> float:
    """Milliseconds a cold pure read (traffic "read") or copy ("read_write": half read, half
    written) of `nbytes` takes on the caller's GPU: the median of the probe's cold samples."""
    from primbench.measuring import ceilings
    from primbench.measuring.measure import _check_bytes, _resolve_policy, callers_timer
    from primbench.runfile import stats

    if traffic not in TRAFFIC:
        raise ValueError(f"traffic must be 'read' (a pure read of the bytes) or 'read_write' (as much written as "
                         f"read), not {str(traffic)[:40]!r}")
    if nbytes is None:
        raise TypeError("bytes must be given: the speed of light is that of the bytes one call moves")
    _check_bytes(nbytes)
    reads, copies = ([int(nbytes)], []) if traffic == "read" else ([], [int(nbytes)])
    with callers_timer() as (device, timer):
        sized = ceilings.measure_sized(timer, _resolve_policy(None, {}), device, reads, copies)
    probes = sized["read" if traffic == "read" else "copy"]
    if not probes:  # measure_sized leaves out a size the GPU has no memory for
        raise MemoryError(f"no GPU memory for a {nbytes:,}-byte probe of the speed of light")
    return stats.summarize(probes[0]["samples_ms"]).median
