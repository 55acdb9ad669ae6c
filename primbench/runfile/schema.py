"""What a run file's records must hold, checked as each line is read, and the same rules as a JSON
Schema (docs/run-file.schema.json, generated here) for other tools.

A record that breaks a rule is refused with one line naming the file, the line and the field: a
damaged or hand-made run never reaches a report, a comparison or a gate (a NaN, zero or negative
sample would read as FASTER; a duplicate case key would pair twice).
"""

from __future__ import annotations

import math

from primbench.runfile.case_id import CaseId
from primbench.runfile.records import SCHEMA_VERSION, CaseRecord, RunEnd, RunHeader, RunResume, Telemetry, json_fields

# field -> (JSON types allowed, required), from the record types' own field declarations.
HEADER, CASE, END, RESUME, TELEMETRY = (json_fields(t) for t in (RunHeader, CaseRecord, RunEnd, RunResume, Telemetry))
RECORDS = {"header": HEADER, "case": CASE, "end": END, "resume": RESUME, "telemetry": TELEMETRY}
STATUSES = ("ok", "failed", "skipped")
SAMPLE_LISTS = ("cold_ms", "batch_ms")
MAX_N = 2**40  # far past any GPU's memory; a larger n is damage, not a measurement

_PYTHON = {"string": str, "integer": int, "number": (int, float), "object": dict, "array": list, "null": type(None),
           "boolean": bool}


def _a_time(value) -> bool:
    """A finite number of milliseconds above 0 (an integer of 400 digits is not: float() overflows)."""
    try:
        return _is(value, "number") and math.isfinite(float(value)) and value > 0
    except OverflowError:
        return False


def _all_times(values: list) -> bool:
    """True only if every value is a time (`_a_time`), decided in C loops: a run holds about 400
    samples per case, and one Python call per sample made loading the reference run take a second.
    False means "look one by one", which finds the bad value; it is never a wrong True."""
    if not values:
        return True
    if not set(map(type, values)) <= {float, int}:  # bool is neither: its type is bool
        return False
    try:
        total = math.fsum(values)  # NaN or inf anywhere makes it NaN or inf, or raises
    except (OverflowError, ValueError):
        return False
    return math.isfinite(total) and min(values) > 0


def _is(value, kind: str) -> bool:
    return isinstance(value, _PYTHON[kind]) and (kind == "boolean" or not isinstance(value, bool))


def record_problem(record: dict) -> str | None:
    """What is wrong with one record (already migrated to the current schema), or None."""
    fields = RECORDS.get(record.get("kind"))
    if fields is None:
        return f"kind {str(record.get('kind'))[:40]!r} is not one of {', '.join(RECORDS)}"
    for name, (kinds, required) in fields.items():
        if name not in record:
            if required:
                return f"lacks '{name}'"
            continue
        if not any(_is(record[name], kind) for kind in kinds):
            return f"'{name}' must be {' or '.join(kinds)}, not {type(record[name]).__name__}"
    if record["kind"] == "header":
        return _header_problem(record)
    return _case_problem(record) if record["kind"] == "case" else None


# One level down, what readers use: (record field, inner field) -> JSON types allowed.
HEADER_INNER = {("device", "name"): ("string",), ("device", "peak_gbps"): ("number", "null"),
                ("device", "l2_bytes"): ("integer", "null"), ("git", "sha"): ("string", "null"),
                ("git", "dirty"): ("boolean", "null"), ("copy", "bytes"): ("number",), ("copy", "samples_ms"): ("array",),
                ("read", "bytes"): ("number",), ("read", "samples_ms"): ("array",)}


# What the report reads of each header variant (Variant.describe): field -> JSON types allowed.
TRAFFIC = ("read", "read_write")  # Variant.traffic
VARIANT_INFO = {"op": ("string",), "name": ("string",), "hash": ("string",), "origin": ("string",), "series": ("string",),
                "order": ("integer",), "notes": ("string",), "hazard": ("string", "null"),
                "deterministic_expected": ("boolean", "null"), "grid_independent": ("boolean",),
                "work_span": ("array", "null"), "block_sizes": ("array",), "params": ("object",), "traffic": ("string", "null")}


def _header_problem(header: dict) -> str | None:
    for (outer, inner), kinds in HEADER_INNER.items():
        value = (header.get(outer) or {}).get(inner, None) if isinstance(header.get(outer), dict) else None
        if inner in (header.get(outer) or {}) and not any(_is(value, kind) for kind in kinds):
            return f"'{outer}.{inner}' must be {' or '.join(kinds)}, not {type(value).__name__}"
    for key, info in (header.get("variants") or {}).items():
        if not isinstance(info, dict):
            return f"'variants.{str(key)[:80]}' must be object, not {type(info).__name__}"
        for name, kinds in VARIANT_INFO.items():
            if name in info and not any(_is(info[name], kind) for kind in kinds):
                return f"'variants.{str(key)[:80]}.{name}' must be {' or '.join(kinds)}, not {type(info[name]).__name__}"
        if info.get("work_span") is not None and not (len(info["work_span"]) == 2 and all(isinstance(t, str) for t in info["work_span"])):
            return f"'variants.{str(key)[:80]}.work_span' must be two texts (work, span)"
    for probe in ("copy", "read"):
        samples = (header.get(probe) or {}).get("samples_ms") or []
        if not isinstance(samples, list) or any(not _a_time(t) for t in samples):
            return f"'{probe}.samples_ms' must hold finite times above 0"
        nbytes = (header.get(probe) or {}).get("bytes")
        if nbytes is not None and (isinstance(nbytes, bool) or not (isinstance(nbytes, (int, float)) and math.isfinite(nbytes) and nbytes > 0)):
            return f"'{probe}.bytes' must be a number of bytes above 0"
    for name, info in (header.get("variants") or {}).items():
        if info.get("traffic") not in (*TRAFFIC, None):
            return f"'variants.{str(name)[:80]}.traffic' must be one of {', '.join(TRAFFIC)}"
    return None


def _case_problem(case: dict) -> str | None:
    if case["status"] not in STATUSES:
        return f"'status' must be one of {', '.join(STATUSES)}, not {case['status'][:40]!r}"
    if not 1 <= case["n"] <= MAX_N:
        return f"'n' {case['n']} is outside 1..2^40"
    if case.get("block") is not None and not 1 <= case["block"] <= 1 << 20:
        return f"'block' {case['block']} is not a block size"
    for name, value in (case.get("params") or {}).items():
        if not _is(value, "integer"):
            return f"'params.{str(name)[:40]}' must be an integer"
    if CaseId.from_record(case).key != case["key"]:  # the pairing key must say what the fields say
        return f"'key' {case['key'][:120]!r} does not match its op, variant, dtype, n, block, distribution and params"
    samples = case.get("samples") or {}
    for name in SAMPLE_LISTS:
        values = samples.get(name, [])
        if not isinstance(values, list):
            return f"'samples.{name}' must be a list of times"
        bad = None if _all_times(values) else next((t for t in values if not _a_time(t)), None)
        if bad is not None:
            return f"'samples.{name}' holds {bad!r}; every time must be a finite number of milliseconds above 0"
    clocks = samples.get("cold_clock_mhz")
    if clocks is not None and (not isinstance(clocks, list) or len(clocks) != len(samples.get("cold_ms") or [])
                               or not (_all_times(clocks) or all(_a_time(c) for c in clocks))):
        return "'samples.cold_clock_mhz' must hold one SM clock in MHz (finite, above 0) per cold sample"
    if samples.get("batch_size") is not None and not (_is(samples["batch_size"], "integer") and samples["batch_size"] > 0):
        return "'samples.batch_size' must be a count of launches above 0"
    if case["status"] == "ok" and not samples.get("cold_ms"):
        return "an 'ok' case with no cold samples"
    if not all(isinstance(launch, dict) for launch in case.get("launches") or []):
        return "'launches' must hold objects"
    if not all(isinstance(flag, str) for flag in case.get("flags") or []):
        return "'flags' must hold names"
    return None


def json_schema() -> dict:
    """The rules above as a JSON Schema (draft 2020-12), one line of a run file per instance."""
    definitions = {}
    for kind, fields in RECORDS.items():
        properties = {name: {"type": list(kinds) if len(kinds) > 1 else kinds[0]} for name, (kinds, _) in fields.items()}
        properties["kind"] = {"const": kind}
        definitions[kind] = {"type": "object", "properties": properties,
                             "required": [name for name, (_, required) in fields.items() if required]}
    case = definitions["case"]["properties"]
    case["status"] = {"enum": list(STATUSES)}
    case["n"] = {"type": "integer", "minimum": 1, "maximum": MAX_N}
    positive = {"type": "array", "items": {"type": "number", "exclusiveMinimum": 0}}
    case["samples"] = {"type": "object", "properties": {name: positive for name in (*SAMPLE_LISTS, "cold_clock_mhz")}}
    case["params"] = {"type": "object", "additionalProperties": {"type": "integer"}}
    case["launches"] = {"type": "array", "items": {"type": "object"}}
    case["flags"] = {"type": "array", "items": {"type": "string"}}
    header = definitions["header"]["properties"]
    for (outer, inner), kinds in HEADER_INNER.items():
        header[outer].setdefault("properties", {})[inner] = {"type": list(kinds) if len(kinds) > 1 else kinds[0]}
    header["copy"]["properties"]["samples_ms"] = positive
    header["variants"] = {"type": "object", "additionalProperties": {"type": "object", "properties": {
        name: {"type": list(kinds) if len(kinds) > 1 else kinds[0]} for name, kinds in VARIANT_INFO.items()}}}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"primbench run file: one JSON object per line (schema {SCHEMA_VERSION})",
        "description": "Generated by primbench/runfile/schema.py; docs/run-file.md explains each field.",
        "oneOf": [{"$ref": f"#/$defs/{kind}"} for kind in RECORDS],
        "$defs": definitions,
    }


if __name__ == "__main__":  # python -m primbench.runfile.schema > docs/run-file.schema.json
    import json

    print(json.dumps(json_schema(), indent=2, sort_keys=True))
