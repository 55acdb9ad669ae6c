"""The run file's records as types: `RunHeader`, `CaseRecord`, `RunEnd`, `RunResume` and `Telemetry`.

Each one writes its own line (`to_json`) and reads it back (`from_json`); every reader of a run
gets these values, never a dict, and the runner writes nothing else. Older schemas are migrated to
the current one here, in one place (`migrate`), as each line is read; files are never rewritten.

A case record is its `CaseId` (written flat: key, op, variant, dtype, n, block, distribution,
params) plus what happened. Nested detail (verification, determinism, timing policy, NVML state,
device and host facts) stays JSON objects, their fields described in runfile/fields.py.

Each field is described once, in its declaration here (`_json`): the JSON types it may hold,
whether a line must have it, and what its value must meet, as a json_spec.Field: a rule, and for
an object the block of fields it holds (named from runfile/fields.py), for an array its items, for
a map its values. The reader's check (runfile/validate.py compiles it once into closures) and the
published JSON Schema (runfile/schema.py) are both derived from these declarations, so neither can
know a field the other lacks. The description sits on the record, not the record on a table in
validate.py, because a record is where one reads and adds a field: its type, its default, its
comment and what the file holds stay on one line, and validate.py keeps only what a table cannot
say (the key spells the case; records agree with each other).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from primbench.runfile import fields as inside
from primbench.runfile.case_id import CaseId, Params
from primbench.runfile.json_spec import F, Field, between

SCHEMA_VERSION = 4


def json_field(types, *, required: bool = False, default=None, factory=None, **spec):
    """A field written to JSON: the JSON types its value may hold ("string", "integer", "number",
    "object", "array", "boolean", "null"), whether a line must have it, and what the value must
    meet (json_spec.Field's `fields`, `items`, `values`, `rule`, `holds`)."""
    meta = {"json": F(types, required=required, **spec)}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


_json = json_field


def json_fields(record_type) -> dict[str, Field]:
    """{JSON field: its Field} of a record type, its case identity written flat."""
    fields = {"kind": F("string", required=True)}
    fields.update(getattr(record_type, "FLAT_FIELDS", {}))
    for f in dataclasses.fields(record_type):
        if "json" in f.metadata:
            fields[f.name] = f.metadata["json"]
    return fields


def _known(record_type, obj: dict) -> dict:
    """The fields of `obj` the type holds (a later primbench may add others; they are not lost
    from the file, only not read)."""
    names = {f.name for f in dataclasses.fields(record_type)}
    return {name: value for name, value in obj.items() if name in names}


def _plain(record, omit_empty: tuple = ()) -> dict:
    """A record's JSON fields in declaration order; a None that the field's types do not allow,
    and an empty value named in omit_empty, are left out."""
    out = {}
    for f in dataclasses.fields(record):
        if "json" not in f.metadata:
            continue
        value = getattr(record, f.name)
        if value is None and "null" not in f.metadata["json"].kinds:
            continue
        if f.name in omit_empty and not value:
            continue
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


@dataclass(frozen=True)
class Samples:
    """A case's raw timings in ms: one launch per cold sample (L2 flushed before each), and
    batches of `batch_size` back-to-back launches, each sample one batch's mean."""

    cold_ms: tuple[float, ...] = ()
    batch_ms: tuple[float, ...] = ()
    batch_size: int | None = None
    # The SM clock (MHz) of each cold sample, from its hold's cycle and nanosecond stamps; empty
    # where it was not measured (a run before these were kept, or a callable timed through torch).
    cold_clock_mhz: tuple[float, ...] = ()

    @classmethod
    def from_json(cls, obj: dict | None) -> "Samples":
        obj = obj or {}
        return cls(tuple(obj.get("cold_ms") or ()), tuple(obj.get("batch_ms") or ()), obj.get("batch_size"),
                   tuple(obj.get("cold_clock_mhz") or ()))

    def to_json(self) -> dict:
        written = {"cold_ms": list(self.cold_ms), "batch_ms": list(self.batch_ms), "batch_size": self.batch_size}
        if self.cold_clock_mhz:
            written["cold_clock_mhz"] = list(self.cold_clock_mhz)
        return written


@dataclass(frozen=True)
class CaseRecord:
    """One case as measured: its identity, how it ended, and everything behind the figures."""

    # The identity's JSON fields (CaseId), written flat and checked like the others.
    FLAT_FIELDS = {"key": F("string", required=True), "op": F("string", required=True),
                   "variant": F("string", required=True), "dtype": F("string", required=True),
                   "n": F("integer", required=True, rule=inside.CASE_N), "block": F(("integer", "null"), rule=inside.BLOCK),
                   "distribution": F(("string", "null")), "params": inside.PARAMS}

    case: CaseId
    status: str = _json("string", required=True, default="ok", rule=inside.STATUS)  # ok, failed (a wrong result) or skipped (not run)
    variant_hash: str | None = _json(("string", "null"))  # the code measured; see variant._variant_hash
    bytes: float | None = _json("number", rule=inside.BYTES)  # the minimal bytes a kernel must move (bandwidth's numerator)
    seed: int | None = _json("integer")
    started: str | None = _json("string")
    reason: str | None = _json(("string", "null"))  # why it failed or was skipped
    launches: tuple[dict, ...] = _json("array", items=F("object", fields=inside.LAUNCH), holds="objects",
                                       factory=tuple)  # each launch's kernel, grid, block
    samples: Samples = _json("object", fields=inside.SAMPLES, factory=Samples)
    verify: dict = _json("object", fields=inside.VERIFY, factory=dict)  # {"exact": ..., "random": ..., "written": ...}
    determinism: dict = _json("object", fields=inside.DETERMINISM, factory=dict)  # repeated runs and scaled grids: same bits?
    timing: dict = _json("object", fields=inside.CASE_TIMING, factory=dict)  # why sampling stopped, spin and enqueue times
    nvml: dict = _json("object", fields=inside.NVML, factory=dict)  # clocks, throttle reasons, temperature after (and before)
    flags: tuple[str, ...] = _json("array", items=F("string"), holds="names", factory=tuple)  # e.g. throttled, noise_target_missed
    elapsed_s: float | None = _json("number", rule=inside.SECONDS)
    log: str | None = _json("string")  # a build failure's full compiler output
    device_uuid: str | None = _json("string")  # the GPU that measured it (runs over several GPUs; schema 3)
    # Energy per operation where the config asked for it (measuring/energy.py; optional, the schema
    # version is unchanged): mj_per_op, avg_w, peak_w, the windows it came from, the ramp, the
    # counter's step; or only `reason` where it could not be measured.
    energy: dict = _json("object", fields=inside.ENERGY, factory=dict)
    # In a baseline made of several runs (`primbench baseline A B C`; runfile/baselines.py): the
    # runs' ids and each one's median of the cold and batch samples, in the header's baseline.runs
    # order (None where a run lacks the figure). The case's own samples are those of its middle run.
    between_runs: dict = _json("object", fields=inside.BETWEEN_RUNS, factory=dict)

    @property
    def key(self) -> str:
        return self.case.key

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def cold_ms(self) -> tuple[float, ...]:
        return self.samples.cold_ms

    @classmethod
    def from_json(cls, obj: dict) -> "CaseRecord":
        """A checked case line (schema.record_problem found nothing) as a record."""
        values = _known(cls, obj)
        values.update(case=CaseId.from_record(obj), samples=Samples.from_json(obj.get("samples")),
                      launches=tuple(obj.get("launches") or ()), flags=tuple(obj.get("flags") or ()))
        for name in ("verify", "determinism", "timing", "nvml", "energy", "between_runs"):
            values[name] = obj.get(name) or {}
        return cls(**values)

    def to_json(self) -> dict:
        case = self.case
        out = {"kind": "case", "key": case.key, "op": case.op, "variant": case.variant, "dtype": case.dtype,
               "n": case.n, "block": case.block, "distribution": case.distribution}
        if case.params:
            out["params"] = dict(case.params.items_sorted())
        out.update(_plain(self, omit_empty=("verify", "determinism", "timing", "nvml", "energy",
                                                    "between_runs")))
        out["samples"] = self.samples.to_json()
        return out


@dataclass(frozen=True)
class RunHeader:
    """A run's first line: what ran where, with which code, config and timing policy."""

    run_id: str = _json("string", required=True)
    # the versions primbench wrote (the reader names a newer one, and migrates an older one)
    schema: int = _json("integer", required=True, default=SCHEMA_VERSION,
                        rule=between(1, SCHEMA_VERSION, f"a schema version from 1 to {SCHEMA_VERSION}"))
    started: str | None = _json("string")
    tool: dict = _json("object", fields=inside.TOOL, factory=dict)  # {"name", "version"}
    git: dict = _json("object", fields=inside.GIT, factory=dict)  # {"sha", "dirty", "source"}; sha None for published figures
    config_path: str | None = _json("string")
    config_hash: str | None = _json("string")
    config: dict = _json("object", fields=inside.CONFIG, factory=dict)  # the resolved config, enough to re-expand the sweep
    host: dict = _json("object", fields=inside.HOST, factory=dict)
    device: dict = _json("object", required=True, fields=inside.DEVICE, factory=dict)  # primbench.measuring.device.Device.info
    copy: dict = _json("object", fields=inside.PROBE, factory=dict)  # the copy bandwidth probe: bytes, samples_ms, method
    # The pure-read probe (schema 4; primbench/measuring/ceilings.py): bytes, samples_ms, method, grid, block.
    read: dict = _json("object", fields=inside.PROBE, factory=dict)
    # The read and copy probes at each byte count the cases move (primbench/measuring/ceilings.py
    # measure_sized): read_method, copy_method, read and copy as [{bytes, samples_ms}]. Absent
    # before it was measured: such a run's "% light" is unknown, and only "% peak read" is shown.
    ceilings: dict = _json("object", fields=inside.CEILINGS, factory=dict)
    software: dict = _json("object", factory=dict)
    timing: dict = _json("object", fields=inside.TIMING_POLICY, factory=dict)  # the timing policy (TimingPolicy.as_dict)
    # "op/name" -> Variant.describe()
    variants: dict = _json("object", values=F("object", fields=inside.VARIANT_INFO), factory=dict)
    # Runs over several GPUs (schema 3; absent for one GPU): mode, the GPUs selected, each GPU's
    # device info and copy probe, and a replica's group (primbench/run/scheduler.py writes it).
    gpus: dict = _json("object", fields=inside.GPUS, factory=dict)
    # The energy counter at run start, where the config asks for energy (measuring/energy.py):
    # available, reason, idle_w (the GPU's draw with nothing running), counter_step_s, method,
    # policy. Absent when no case asked for energy.
    energy: dict = _json("object", fields=inside.HEADER_ENERGY, factory=dict)
    # How the figures were measured (measuring/protocol.py): a revision per part (cold sample, batch,
    # throttle rule, probes). Absent in runs made before it was recorded: runfile/protocol.py says so.
    protocol: dict = _json("object", fields=inside.PROTOCOL, factory=dict)
    # A baseline made of several runs (runfile/baselines.py): the runs, each {run_id, started, sha,
    # device_uuid}; its cases carry `between_runs`. Absent for a run and a baseline of one run.
    baseline: dict = _json("object", fields=inside.BASELINE, factory=dict)
    published: bool = False  # quoted figures (compare's ref:<id>): never written, never given a verdict

    @property
    def device_name(self) -> str:
        return self.device.get("name") or "unknown GPU"

    @property
    def peak_gbps(self) -> float:
        return self.device.get("peak_gbps") or math.nan

    @classmethod
    def from_json(cls, obj: dict) -> "RunHeader":
        values = _known(cls, obj)
        values.pop("published", None)
        return cls(**{name: (value if value is not None else {}) if name in _OBJECTS else value
                      for name, value in values.items()})

    def to_json(self) -> dict:
        return {"kind": "header", **_plain(self, omit_empty=("gpus", "ceilings", "energy", "protocol", "baseline"))}


_OBJECTS = {f.name for f in dataclasses.fields(RunHeader) if "json" in f.metadata and f.metadata["json"].kinds == ("object",)}


class _Line:
    """A record whose JSON line is its `kind` and its declared fields, read back as they were written."""

    KIND = ""

    @classmethod
    def from_json(cls, obj: dict):
        return cls(**_known(cls, obj))

    def to_json(self) -> dict:
        return {"kind": self.KIND, **_plain(self)}


@dataclass(frozen=True)
class RunEnd(_Line):
    """The last line of a finished run, with its case counts."""

    KIND = "end"
    finished: str | None = _json("string")
    ok: int = _json("integer", default=0, rule=inside.COUNT)
    failed: int = _json("integer", default=0, rule=inside.COUNT)
    skipped: int = _json("integer", default=0, rule=inside.COUNT)


@dataclass(frozen=True)
class RunResume(_Line):
    """Where `--resume` picked an interrupted run up again."""

    KIND = "resume"
    at: str | None = _json("string")
    done_before: int = _json("integer", default=0, rule=inside.COUNT)


@dataclass(frozen=True)
class Telemetry(_Line):
    """One GPU's state read through NVML by its worker between cases (runs over several GPUs):
    a slow GPU's heat, power and clocks over the whole run, not only around each case."""

    KIND = "telemetry"
    device_uuid: str = _json("string", required=True, default="")
    at: str | None = _json("string")
    sm_clock_mhz: float | None = _json("number")
    mem_clock_mhz: float | None = _json("number")
    temperature_c: float | None = _json("number")
    power_w: float | None = _json("number")
    reasons: tuple[str, ...] = _json("array", items=F("string"), holds="names", factory=tuple)  # active clock-event reasons (device.py)
    error: str | None = _json("string")  # what NVML refused to read

    @classmethod
    def from_json(cls, obj: dict) -> "Telemetry":
        values = _known(cls, obj)
        values["reasons"] = tuple(obj.get("reasons") or ())
        return cls(**values)


RECORD_TYPES = {"header": RunHeader, "case": CaseRecord, "end": RunEnd, "resume": RunResume, "telemetry": Telemetry}


# -- migrations: MIGRATIONS[v] turns a version-v line into version v + 1 --------------------------
def _v1_to_v2(obj: dict) -> dict:
    """Schema 2 names the check on the case's own (random) input `verify.random`; schema 1 called
    it `verify.float`, also for integer and array outputs. The header only changes its number."""
    obj = dict(obj)
    if obj.get("kind") == "header":
        obj["schema"] = 2
    elif obj.get("kind") == "case" and isinstance(obj.get("verify"), dict) and "float" in obj["verify"]:
        verify = dict(obj["verify"])
        verify["random"] = verify.pop("float")
        obj["verify"] = verify
    return obj


def _v2_to_v3(obj: dict) -> dict:
    """Schema 3 adds runs over several GPUs (header `gpus`, case `device_uuid`, `telemetry` lines);
    a schema-2 file has none of them, so only the header's number changes."""
    if obj.get("kind") == "header":
        obj = dict(obj, schema=3)
    return obj


def _v3_to_v4(obj: dict) -> dict:
    """Schema 4 adds the header's pure-read probe (`read`); a schema-3 run measured none, so only
    the header's number changes and its speed of light for read-only cases is unknown."""
    if obj.get("kind") == "header":
        obj = dict(obj, schema=4)
    return obj


MIGRATIONS: dict[int, callable] = {1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4}


def readable_schema(version) -> bool:
    """Whether primbench can read a file written in this schema version (now or by migration)."""
    return isinstance(version, int) and not isinstance(version, bool) and 1 <= version <= SCHEMA_VERSION \
        and all(v in MIGRATIONS for v in range(version, SCHEMA_VERSION))


def migrate(obj: dict, version: int) -> dict:
    """One line of a version-`version` file as the current schema writes it."""
    while version < SCHEMA_VERSION:
        obj = MIGRATIONS[version](obj)
        version += 1
    return _series_renamed(obj)


def _series_renamed(obj: dict) -> dict:
    """A header whose variants name a series by a former name (the library's was "baseline") as
    this version names it. Not a schema step: files of the current schema written before the
    rename say "baseline" too, and the meaning is unchanged."""
    from primbench.series import series_name

    variants = obj.get("variants") if obj.get("kind") == "header" else None
    if not isinstance(variants, dict):
        return obj
    renamed = {}
    for key, info in variants.items():
        series = info.get("series") if isinstance(info, dict) else None
        renamed[key] = dict(info, series=series_name(series)) if isinstance(series, str) else info
    return dict(obj, variants=renamed)


__all__ = ["CaseRecord", "MIGRATIONS", "Params", "RECORD_TYPES", "RunEnd", "RunHeader", "RunResume", "SCHEMA_VERSION",
           "Samples", "Telemetry", "json_field", "json_fields", "migrate", "readable_schema"]
