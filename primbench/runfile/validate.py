"""What the run-file reader hands every command, checked in the pass that reads it: each record's
fields (nested ones included) against what report, compare, check, export, profile and --resume
read of them, and the records against each other (one end record, closing the cases it counts;
each case measured on one of the header's GPUs).

A record that breaks a rule is refused with one line naming the first bad field (as a dotted path:
'determinism.across_grids[0].grids') and the line it is on: nothing downstream meets a value of a
type it does not expect, or a number that would divide by zero or print Infinity. Fields this
primbench does not read are let through, so a later primbench may add its own.

What each field holds and must meet is declared once, with its record (runfile/records.py, and the
blocks in runfile/fields.py); this module compiles those declarations, and holds only what a field
cannot say alone: a case's key spells its fields, its clocks match its samples, an ok case has
samples, and the records of a file agree. `schema.py` turns the same declarations into the
published JSON Schema.
"""

from __future__ import annotations

from primbench.runfile.case_id import CaseId
from primbench.runfile.fields import STATUSES
from primbench.runfile.json_spec import compiled, object_problem
from primbench.runfile.records import RECORD_TYPES, json_fields


def compiled_records(record_types: dict) -> dict[str, tuple]:
    """{kind: its compiled spec} from each record type's field declarations (runfile/records.py,
    whose objects name their blocks in runfile/fields.py): compiled once, when this module loads."""
    return {kind: compiled(json_fields(record_type)) for kind, record_type in record_types.items()}


_COMPILED = compiled_records(RECORD_TYPES)


def record_problem(record: dict) -> str | None:
    """What is wrong with one record (already migrated to the current schema), or None."""
    spec = _COMPILED.get(record.get("kind"))
    if spec is None:
        return f"kind {str(record.get('kind'))[:40]!r} is not one of {', '.join(_COMPILED)}"
    problem = object_problem(record, spec)
    if problem is None and record["kind"] == "case":
        return _case_problem(record)
    return problem


def _case_problem(case: dict) -> str | None:
    """What a case's fields must meet together (each alone is its declaration's)."""
    if CaseId.from_record(case).key != case["key"]:  # the pairing key must say what the fields say
        return f"'key' {case['key'][:120]!r} does not match its op, variant, dtype, n, block, distribution and params"
    samples = case.get("samples") or {}
    clocks = samples.get("cold_clock_mhz")
    if clocks is not None and len(clocks) != len(samples.get("cold_ms") or []):
        return "'samples.cold_clock_mhz' must hold one SM clock in MHz per cold sample"
    if case["status"] == "ok" and not samples.get("cold_ms"):
        return "an 'ok' case with no cold samples"
    return None


class RunChecks:
    """The rules between a run's records, fed each record in file order after its own check: no
    second header, no case twice, nothing after the end record but a resume record (which reopens
    the run), end counts that are those of every case before them, and every case (and GPU
    reading) from one of the header's GPUs. A file without an end record is an interrupted run,
    and reads."""

    def __init__(self, header: dict):
        self.keys: dict[str, int] = {}
        self.counts = dict.fromkeys(STATUSES, 0)
        self.end_line: int | None = None
        self.uuids = header_gpus(header)

    def problem(self, record: dict, number: int) -> str | None:
        kind = record["kind"]
        if kind == "header":
            return "a second header; two runs were written into one file"
        if kind == "resume":
            self.end_line = None
            return None
        if self.end_line is not None:
            return (f"a {kind} record after the end record (line {self.end_line}); a finished run ends with it: "
                    "the file was edited or two runs were joined")
        if kind == "case":
            return self._case(record, number)
        if kind == "end":
            self.end_line = number
            return self._end(record)
        if kind == "telemetry" and record["device_uuid"] and self.uuids and record["device_uuid"] not in self.uuids:
            return f"telemetry of GPU {record['device_uuid'][:80]!r}, not one of the header's ({self._gpus()})"
        return None

    def _case(self, case: dict, number: int) -> str | None:
        key = case["key"]
        if key in self.keys:
            return (f"case {key[:120]!r} again (first on line {self.keys[key]}); "
                    "a run measures each case once: the file is damaged or two runs were joined")
        uuid = case.get("device_uuid")
        if uuid is not None and self.uuids and uuid not in self.uuids:
            return (f"case {key[:120]!r} names GPU {uuid[:80]!r} ('device_uuid'), not one of the header's "
                    f"({self._gpus()}); it was measured in another run: the file was edited or two runs were joined")
        self.keys[key] = number
        self.counts[case["status"]] += 1
        return None

    def _end(self, end: dict) -> str | None:
        recorded = {status: end.get(status, 0) for status in STATUSES}
        if recorded == self.counts:
            return None
        before = ("no cases come before it" if not any(self.counts.values()) else
                  "the cases before it are " + ", ".join(f"{count} {status}" for status, count in self.counts.items()))
        return (f"the end record counts {', '.join(f'{count} {status}' for status, count in recorded.items())}, and "
                f"{before}; the file was edited (the end record is written from the cases it closes)")

    def _gpus(self) -> str:
        return ", ".join(sorted(self.uuids))[:200]


def header_gpus(header: dict) -> set[str]:
    """The GPUs a run's header names: its device's UUID and each of its `gpus.devices` (a GPU whose
    NVML gave no UUID is named as the scheduler names it, gpu<index>). Empty where it names none."""
    uuids = {header.get("device", {}).get("uuid")}
    for entry in (header.get("gpus") or {}).get("devices") or []:
        device = entry.get("device") or {}
        uuids.add(device.get("uuid") or (f"gpu{entry['index']}" if "index" in entry and "device" in entry else None))
    uuids.discard(None)
    uuids.discard("")
    return uuids
