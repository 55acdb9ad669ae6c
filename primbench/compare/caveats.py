"""What a reader must know before trusting a comparison, said in one line each: the runs are in the
wrong order or are the same run, or the baseline lacks cases that the new run has (a stale
baseline: those cases are not gated, and `check --strict` fails on them)."""

from __future__ import annotations

import math
from datetime import datetime

from primbench.compare.digest import ONLY_IN_NEW, fold_class
from primbench.compare.verdicts import Pair
from primbench.runfile.io import Run


def _started(run: Run) -> datetime | None:
    try:
        return datetime.fromisoformat(str(run.header.started))
    except ValueError:  # a published progression, or a run file with no usable start time
        return None


def time_order(base: Run, new: Run) -> str | None:
    """A warning when the two runs are one run, or the new one started before the baseline."""
    if base.header.run_id and base.header.run_id == new.header.run_id:
        return f"warning: the baseline and the new run are the same run ({new.header.run_id}): nothing can have changed"
    before, after = _started(base), _started(new)
    if before is None or after is None or (before.tzinfo is None) != (after.tzinfo is None) or after >= before:
        return None
    return (f"warning: the new run started {after:%Y-%m-%d %H:%M}, before the baseline ({before:%Y-%m-%d %H:%M}): "
            "is the order right? the baseline comes first")


def median_sm_clock_mhz(run: Run) -> float | None:
    """The median SM clock over every cold sample of the run that carries one (None: none do)."""
    import numpy as np

    clocks = [c for record in run.cases for c in record.samples.cold_clock_mhz]
    return float(np.median(clocks)) if clocks else None


def _short_names(uuids) -> dict[str, str]:
    """Each GPU's NVML uuid as people quote it, its first group ("GPU-69251176-cd04-..." ->
    "69251176"); whole (cut to 40 characters) where two would read alike (MIG-..., stand-ins)."""
    short = {u: str(u).removeprefix("GPU-").split("-")[0] or str(u) for u in uuids}
    clash = {name for name in short.values() if list(short.values()).count(name) > 1}
    return {u: (str(u)[:40] if name in clash else name) for u, name in short.items()}


def _boards_by_case(run: Run) -> dict[str, str]:
    """{case key: the uuid of the GPU that measured it}: its own (a run over several GPUs), else the header's."""
    header = run.header.device.get("uuid")
    return {c.key: c.device_uuid or header for c in run.cases if c.device_uuid or header}


def other_board(base: Run, new: Run) -> str | None:
    """Where cases both runs hold were measured on another GPU than the baseline's, what the
    machine line says of it: "another GPU (ab24714d; the baseline's 69251176)", or for a run over
    several GPUs how many. Boards of one model differ by more than a kernel change (up to 18 % in
    energy, up to 20 % in the batch figure of one-wave kernels under 2^20, docs/perf-notes.md), so
    a reader of a gate's verdict must know. None where every shared case has its baseline's GPU,
    or a side names none."""
    before, after = _boards_by_case(base), _boards_by_case(new)
    # A baseline of several runs (runfile/baselines.py) has seen each of its runs' boards.
    seen = {source.get("device_uuid") for source in base.header.baseline.get("runs") or ()} - {None}
    shared = [key for key in after if key in before]
    moved = [key for key in shared if after[key] != before[key] and after[key] not in seen]
    if not moved:
        return None
    new_boards = sorted({after[key] for key in moved})
    base_boards = sorted({before[key] for key in moved})
    names = _short_names(new_boards + base_boards)
    listed = f"{', '.join(names[u] for u in new_boards)}; the baseline's {', '.join(names[u] for u in base_boards)}"
    if len(moved) == len(shared) and len(new_boards) == len(base_boards) == 1:
        return f"another GPU ({listed})"
    return f"another GPU for {len(moved)} of the {len(shared)} cases both runs hold ({listed})"


def machine_shift(base: Run, new: Run) -> str | None:
    """One line setting the two machines side by side, new against baseline: whether it is another
    GPU, the read and copy ceilings measured at each run's start and the median SM clock of their
    samples, so that a shift of every case can be read as the machine's ("machine: the new run is on
    another GPU (ab24714d; the baseline's 69251176); its read ceiling +1.7 %, copy +0.6 %, median SM
    clock -0.3 % against the baseline's"). None when there is nothing to set side by side (a
    published baseline)."""
    def change(before, after):
        if not (before and after) or not all(map(math.isfinite, (before, after))):
            return None
        percent = round((after / before - 1) * 100, 1)
        return "0.0 %" if percent == 0 else f"{percent:+.1f} %".replace("-", "\u2212")

    parts = [f"{name} {text}" for name, text in (
        ("read ceiling", change(base.read_gbps, new.read_gbps)),
        ("copy", change(base.copy_gbps, new.copy_gbps)),
        ("median SM clock", change(median_sm_clock_mhz(base), median_sm_clock_mhz(new)))) if text]
    board = other_board(base, new)
    shifts = f"{', '.join(parts)} against the baseline's" if parts else ""
    if board:
        return f"machine: the new run is on {board}" + (f"; its {shifts}" if shifts else "")
    return f"machine: the new run's {shifts}" if shifts else None


def missing_from_baseline(pairs: list[Pair]) -> dict[str, int]:
    """{op: cases} of the new run that the baseline lacks, in the pairs' op order."""
    counts: dict[str, int] = {}
    for p in pairs:
        if fold_class(p) == ONLY_IN_NEW:
            counts[p.op] = counts.get(p.op, 0) + 1
    return counts


def stale_baseline(pairs: list[Pair], new: Run, renew_command: str) -> str | None:
    """Three lines: the baseline lacks cases of the new run, how many of which ops; how to renew it
    (printed whole, however long: a command cut short is no use)."""
    missing = missing_from_baseline(pairs)
    if not missing:
        return None
    total = sum(missing.values())
    ops = ", ".join(f"{count} {op}" for op, count in missing.items())
    return (f"stale baseline: it lacks {total} of this run's {len(new.cases)} cases, which are not gated:\n  {ops}\n"
            f"  renew it from a clean run: {renew_command}")
