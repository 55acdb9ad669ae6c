"""Floors that travel across GPU models: a case fails when it runs under a fraction of its own
speed of light (runfile/frame.py `pct_sol`: the time a cold pure read of its minimal bytes takes,
or a copy for a variant that writes as much as it reads, measured at that very byte count on the
GPU that ran it). A time threshold belongs to one GPU model; "this sum reads at 90 % of a cold read
of its own bytes" holds on whatever GPU a CI runner gets, with no baseline at all.

Gated only where memory binds: cases that move at least `from_bytes` of minimal traffic (64 MiB by
default, more than an H200's 60 MiB of L2). Below tens of MiB the light is a few microseconds and a
launch's fixed cost weighs as much as the memory, so a floor there would fail good kernels for their
launch. A case whose light is unknown (a variant that does not declare its traffic, a run made
before the sized probes) is counted as unknown, never failed; a failed case is the gate's own
business (check fails it already). No CuPy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from primbench.errors import UserError

# 2^24 float32 elements: past the H200's L2, where the sized read probe takes 21 us or more. The same
# bound as the library sanity rule's (runfile/libraries.py FAR_MIN_BYTES), for the same reason.
DEFAULT_FROM_BYTES = 2**26
UNDER, MET, UNKNOWN, SMALL = "UNDER FLOOR", "met", "light unknown", "too small"


@dataclass(frozen=True)
class LightFloor:
    """A floor: `fraction` of each case's speed of light (0.9: 90 %), for cases of `from_bytes` or more."""

    fraction: float
    from_bytes: int = DEFAULT_FROM_BYTES

    def words(self) -> str:
        return f"{percent(self.fraction)} of light from {_size_words(self.from_bytes)}"


@dataclass(frozen=True)
class FloorCase:
    """One case against the floor: its key, minimal bytes, % of its light (NaN: unknown), and status."""

    key: str
    bytes: int
    pct_sol: float
    status: str


def is_fraction(value) -> bool:
    """Whether `value` can be a floor's fraction of the speed of light: a number above 0 and at most
    1 (not a bool, not NaN). The one rule; the CLI and config (check_fraction) and the pytest
    fixture's `min_light` each word its refusal in their own way."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and 0 < value <= 1  # False for NaN


def check_fraction(value, where: str) -> float:
    """A floor's fraction, 0 < f <= 1, refused in one line naming `where` it came from."""
    if not is_fraction(value):
        raise UserError(f"{where} {value!r}: give the fraction of each case's speed of light it must reach, "
                        "above 0 and at most 1 (0.9 is 90 %)")
    return float(value)


def check_from_bytes(value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 2**50:
        raise UserError(f"{where} {value!r}: give the smallest case gated, in minimal bytes (a whole number, e.g. "
                        f"{DEFAULT_FROM_BYTES} for 64 MiB)")
    return value


def floor_from(fraction: float | None, from_bytes: int | None, compare_block: dict | None) -> LightFloor | None:
    """The floor in force: the command line's, else the run config's `compare: {min_light, min_light_from_bytes}`,
    else none. A bound given without a fraction is refused: it would gate nothing."""
    block = compare_block or {}
    if fraction is None:
        fraction = block.get("min_light")
    if from_bytes is None:
        from_bytes = block.get("min_light_from_bytes")
    if fraction is None:
        if from_bytes is not None:
            raise UserError("--min-light-from bounds --min-light; give --min-light too (e.g. --min-light 0.9)")
        return None
    fraction = check_fraction(fraction, "--min-light")
    return LightFloor(fraction, DEFAULT_FROM_BYTES if from_bytes is None else check_from_bytes(from_bytes, "--min-light-from"))


def floor_of_run(header_config: dict | None) -> LightFloor | None:
    """The floor a run's own config set (compare.min_light), for the report; None where it set none
    or the values are not a floor (a run file is data anyone may have written)."""
    block = (header_config or {}).get("compare") if isinstance(header_config, dict) else None
    try:
        return floor_from(None, None, block if isinstance(block, dict) else None)
    except UserError:
        return None


def under_mask(frame, floor: LightFloor):
    """True for each case of the frame that ran and fails the floor (as judge's UNDER)."""
    light = frame["pct_sol"].astype(float)
    return (frame["status"] == "ok") & (frame["bytes"].astype(float) >= floor.from_bytes) & (light < 100.0 * floor.fraction)


def judge(frame, floor: LightFloor) -> list[FloorCase]:
    """Every case of a run's frame (runfile/frame.to_frame) that ran, against the floor."""
    cases = []
    for row in frame[frame["status"] == "ok"].itertuples(index=False):
        nbytes = int(row.bytes) if _finite(row.bytes) else 0  # a case with no bytes model: none to price
        light = float(row.pct_sol) if _finite(row.pct_sol) else math.nan
        if nbytes < floor.from_bytes:
            status = SMALL
        elif not math.isfinite(light):
            status = UNKNOWN
        else:
            status = UNDER if light < 100.0 * floor.fraction else MET
        cases.append(FloorCase(row.key, nbytes, light, status))
    return cases


def under(cases: list[FloorCase]) -> list[FloorCase]:
    """The cases that fail the floor, furthest under first."""
    return sorted((c for c in cases if c.status == UNDER), key=lambda c: (c.pct_sol, c.key))


def summary(cases: list[FloorCase], floor: LightFloor) -> str:
    """'light floor (90 % of light from 64 MiB): 2 of 40 cases under it; 120 smaller not gated; 3 light unknown'."""
    count = {status: sum(c.status == status for c in cases) for status in (UNDER, MET, UNKNOWN, SMALL)}
    gated = count[UNDER] + count[MET]
    parts = [f"light floor ({floor.words()}): {count[UNDER]} of {gated} case(s) under it"]
    if count[SMALL]:
        parts.append(f"{count[SMALL]} smaller not gated")
    if count[UNKNOWN]:
        parts.append(f"{count[UNKNOWN]} with no light measured, not gated")
    return "; ".join(parts)


# check prints at most this many cases under the floor, the furthest under first; JUnit and Markdown hold every one.
SHOWN = 20


def line(case: FloorCase, floor: LightFloor) -> str:
    shown = f"{case.pct_sol:.1f}"
    if float(shown) >= 100.0 * floor.fraction:  # 89.96 is under 90: say so in the digits shown
        shown = f"{case.pct_sol:.3f}"
    return f"  under the floor: {case.key}  {shown} % of light (floor {percent(floor.fraction)})"


def lines(cases: list[FloorCase], floor: LightFloor, *, everything: bool = False) -> list[str]:
    """check's lines for the cases under the floor: the SHOWN furthest under, then how many more."""
    failing = under(cases)
    shown = failing if everything else failing[:SHOWN]
    more = [f"  ... and {len(failing) - len(shown)} more under the floor (--all lists every one)"] if len(shown) < len(failing) else []
    return [line(case, floor) for case in shown] + more


def alone_lines(gpu_name: str, cases: list[FloorCase], floor: LightFloor, *, everything: bool = False) -> list[str]:
    """What `check --min-light` prints of a run whose GPU has no baseline (cli/check_light.py; the
    README's generated example quotes the same lines)."""
    return [f"no baseline for {gpu_name}: the light floor alone gates this run", summary(cases, floor),
            *lines(cases, floor, everything=everything), f"check: {len(under(cases))} case(s) under the light floor"]


def _finite(value) -> bool:
    try:
        return value is not None and math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def percent(fraction: float) -> str:
    """0.9 -> '90 %', 0.925 -> '92.5 %'."""
    return f"{100 * fraction:.4g} %"


def _size_words(nbytes: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes:,} bytes"
