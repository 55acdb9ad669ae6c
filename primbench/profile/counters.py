"""Hardware counters per case from ncu: its CSV read back into each case's launches (the records,
and the counters file they are written to, are runfile/counters.py's).

ncu (`--csv --page raw --print-units base`) writes one row per profiled kernel launch: a header
row, a units row, then the launches in order, with its own messages on lines that start with "==".
The child (profile/child.py) launched a marker kernel whose grid's x size is the case's index + 1
before each case's plan, so every launch after a marker, up to the next one, belongs to that case.
"""

from __future__ import annotations

import csv
import io
import math
import re

from primbench.errors import UserError
from primbench.runfile.counters import CaseCounters, Launch

MARKER_NAME = "primbench_case_marker"  # the kernel profile/child.py launches before each case's plan
PERMISSION_HELP = ("profiling is not permitted on this machine (ERR_NVGPUCTRPERM): run as root, or load the driver "
                   "with NVreg_RestrictProfilingToAdminUsers=0 (https://developer.nvidia.com/ERR_NVGPUCTRPERM)")


def _number(text: str) -> float | None:
    text = (text or "").strip().replace(",", "")
    if text in ("", "n/a", "N/A", "nan"):
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _dims(text: str) -> tuple[int, int, int]:
    numbers = [int(n) for n in re.findall(r"\d+", text or "")]
    return tuple((numbers + [1, 1, 1])[:3]) if numbers else (0, 0, 0)


def ncu_messages(text: str) -> list[str]:
    """ncu's own lines (==PROF==, ==WARNING==, ==ERROR==)."""
    return [line.strip() for line in text.splitlines() if line.startswith("==")]


def check_ncu_errors(text: str) -> None:
    """One clear line for the faults that leave nothing to read."""
    errors = [m for m in ncu_messages(text) if m.startswith("==ERROR==")]
    if any("ERR_NVGPUCTRPERM" in m for m in errors):
        raise UserError(f"profile: {PERMISSION_HELP}")
    if errors and not [line for line in text.splitlines() if line and not line.startswith("==")]:
        raise UserError(f"profile: ncu failed: {errors[0][len('==ERROR=='):].strip()[:200]}")


def parse_launches(text: str, metrics: dict[str, str]) -> dict[int, list[Launch]]:
    """{case index: its launches} from ncu's raw-page CSV; `metrics` maps primbench's counter
    names to ncu's metric names (profile.capture.METRICS). Launches before the first marker belong to no case."""
    check_ncu_errors(text)
    rows = list(csv.reader(io.StringIO("\n".join(line for line in text.splitlines() if line and not line.startswith("==")))))
    if not rows:
        return {}
    header = rows[0]
    column = {name: index for index, name in enumerate(header)}
    for needed in ("Kernel Name", "Grid Size", "Block Size"):
        if needed not in column:
            raise UserError(f"profile: ncu's CSV has no {needed!r} column; was it written with --csv --page raw?")
    wanted = {name: column.get(metric) for name, metric in metrics.items()}
    launches: dict[int, list[Launch]] = {}
    current = None
    for row in rows[1:]:
        if len(row) != len(header):
            continue
        name = row[column["Kernel Name"]]
        if not name or (row[column["ID"]] == "" if "ID" in column else False):  # the units row
            continue
        grid = _dims(row[column["Grid Size"]])
        if MARKER_NAME in name:
            current = grid[0] - 1
            launches.setdefault(current, [])
            continue
        if current is None:
            continue
        counters = {key: (_number(row[index]) if index is not None else None) for key, index in wanted.items()}
        launches[current].append(Launch(name, grid, _dims(row[column["Block Size"]]), counters))
    return launches


def cases_from_capture(csv_text: str, manifest: dict, metrics: dict[str, str]) -> list[CaseCounters]:
    """The child's manifest joined with ncu's launches: one CaseCounters per case, in order."""
    launches = parse_launches(csv_text, metrics)
    cases = []
    for entry in manifest["cases"]:
        claim = entry.get("counter_claim")
        case = CaseCounters(entry["key"], entry.get("variant_hash"), entry.get("minimal_bytes"),
                            counter_claim=tuple(claim) if claim else None)
        if not entry.get("profiled"):
            case.reason = entry.get("reason") or "not profiled"
        elif not launches.get(entry["index"]):
            case.reason = "ncu recorded no kernel of this case (a kernel ncu could not profile?)"
        else:
            case.launches = launches[entry["index"]]
        cases.append(case)
    return cases


def case_line(case: CaseCounters) -> str:
    """One line per case for the terminal: DRAM bytes against the declared ones, or why none."""
    if not case.profiled:
        return f"not profiled  {case.key}: {case.reason}"
    dram = case.dram_bytes()
    if dram is None or not case.minimal_bytes:
        return f"profiled      {case.key}: {len(case.launches)} launches"
    return (f"profiled      {case.key}: {len(case.launches)} launches, DRAM {dram / 1e6:,.1f} MB, "
            f"{dram / case.minimal_bytes - 1:+.1%} against the declared {case.minimal_bytes / 1e6:,.1f} MB")
