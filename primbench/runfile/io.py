"""The run file: JSON Lines with a header, one record per case, written line by line.

Schema: docs/run-file.md; the records are the types of primbench/runfile/records.py. This module never
imports CuPy: report, compare and check read runs on machines without a GPU.
"""

from __future__ import annotations

import errno
import functools
import json
import math
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from primbench.runfile import lock, stats
from primbench.runfile.lines import (  # RunFileError: readers import it from here
    RunFileError,
    looks_cut_short,
    read_lines,
)
from primbench.runfile.records import (
    SCHEMA_VERSION,
    CaseRecord,
    RunEnd,
    RunHeader,
    RunResume,
    Telemetry,
    migrate,
    readable_schema,
)
from primbench.runfile.validate import RunChecks, record_problem


def gpu_slug(device_name: str) -> str:
    """A GPU model as a file name part: 'NVIDIA H200' -> 'nvidia-h200'."""
    return re.sub(r"[^a-z0-9]+", "-", (device_name or "unknown-gpu").lower()).strip("-")


RUN_SUFFIX = ".jsonl"  # a run as written, a line at a time
ARCHIVED_RUN_SUFFIX = ".jsonl.gz"  # a run as archived (gzip: 7x smaller), as baselines are kept
RUN_SUFFIXES = (ARCHIVED_RUN_SUFFIX, RUN_SUFFIX)  # the longer first


def is_run_file(path) -> bool:
    """Whether the file is named like a run (publish walks a folder for them)."""
    return Path(path).name.endswith(RUN_SUFFIXES)


def run_stem(path) -> str:
    """The run's file name without .jsonl.gz or .jsonl: its run id, for runs primbench named."""
    name = Path(path).name
    for suffix in RUN_SUFFIXES:  # the longer first
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return Path(path).stem


def report_path(run_path) -> Path:
    """Where a run's report goes by default: beside it, <run>.html."""
    return Path(run_path).with_name(run_stem(run_path) + ".html")


@dataclass
class Run:
    """A run file as read: its header, its case records in order, and how it ended."""

    path: Path
    header: RunHeader
    cases: list[CaseRecord]
    end: RunEnd | None = None
    resumes: list[RunResume] = field(default_factory=list)
    telemetry: list[Telemetry] = field(default_factory=list)  # each GPU's NVML readings (runs over several GPUs)
    warnings: list[str] = field(default_factory=list)
    written_schema: int = SCHEMA_VERSION  # the version on disk (the records above are migrated to the current one)

    @property
    def finished(self) -> bool:
        return self.end is not None

    @property
    def device(self) -> dict:
        return self.header.device

    @property
    def git(self) -> dict:
        """The commit the run was made from: {"sha", "dirty", "source"} (sha None for published figures)."""
        return self.header.git

    @property
    def copy_gbps(self) -> float:
        return copy_bandwidth_gbps(self.header)

    @property
    def read_gbps(self) -> float:
        return read_bandwidth_gbps(self.header)

    @functools.cached_property
    def sized_ceilings_gbps(self) -> dict[str, dict[int, float]]:
        return sized_ceilings_gbps(self.header)

    @functools.cached_property
    def idle_draws_w(self) -> dict[str | None, float]:
        """Each GPU's idle draw (W) measured at its start, by the UUID its cases carry (a GPU whose
        NVML gave none as gpu<index>, as the scheduler names it); None keys the header's own GPU.
        A shard's file has one header, its first GPU's: the other GPUs' draws are in `gpus.devices`."""
        draws = {}
        for entry in (self.header.gpus or {}).get("devices") or []:
            idle = (entry.get("energy") or {}).get("idle_w")
            if _is_watts(idle):
                uuid = (entry.get("device") or {}).get("uuid") or f"gpu{entry.get('index')}"
                draws[uuid] = float(idle)
        idle = (self.header.energy or {}).get("idle_w")
        if _is_watts(idle):
            draws[None] = float(idle)
        return draws

    def idle_w(self, device_uuid: str | None = None) -> float | None:
        """The idle draw of the GPU that measured a case (its `device_uuid`); the header's for a case
        of the header's own GPU or one that names none. None for another GPU whose draw the file
        lacks (a shard run written before each GPU's was kept): GPU 0's would be wrong for it."""
        draws = self.idle_draws_w
        if device_uuid and device_uuid != self.header.device.get("uuid"):
            return draws.get(device_uuid)
        return draws.get(device_uuid, draws.get(None)) if device_uuid else draws.get(None)

    @functools.cached_property
    def _frame(self):
        from primbench.runfile.frame import to_frame

        return to_frame(self)

    def frame(self):
        """One row per case with the derived statistics (pandas DataFrame), built once per run;
        callers that add columns work on a copy."""
        return self._frame.copy()


def _is_watts(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def read_bandwidth_gbps(header: RunHeader) -> float:
    """Median rate of the pure-read probe measured at run start (primbench/measuring/ceilings.py); NaN for a
    run made before schema 4, which measured none."""
    read = header.read
    summary = stats.summarize(read.get("samples_ms") or [])
    if summary is None or not read.get("bytes"):
        return math.nan
    return stats.bandwidth_gbps(read["bytes"], summary.median)


def sized_ceilings_gbps(header: RunHeader) -> dict[str, dict[int, float]]:
    """The rates of the probes at each byte count the run's cases move (measuring/ceilings.py
    measure_sized), by kind of traffic: {"read": {bytes: GB/s}, "read_write": {bytes: GB/s}} (the
    copy's bytes count what it reads and writes); empty for a run that measured none."""
    ceilings = header.ceilings or {}
    rates: dict[str, dict[int, float]] = {"read": {}, "read_write": {}}
    for traffic, probes in (("read", ceilings.get("read") or []), ("read_write", ceilings.get("copy") or [])):
        for probe in probes:
            summary = stats.summarize(probe.get("samples_ms") or [])
            if summary is not None and probe.get("bytes"):
                rates[traffic][int(probe["bytes"])] = stats.bandwidth_gbps(probe["bytes"], summary.median)
    return rates


def copy_bandwidth_gbps(header: RunHeader) -> float:
    """Median bandwidth of the copy measured at run start, from its raw samples."""
    copy = header.copy
    summary = stats.summarize(copy.get("samples_ms") or [])
    if summary is None or not copy.get("bytes"):
        return math.nan
    return stats.bandwidth_gbps(copy["bytes"], summary.median)


def _parse_line(path: Path, number: int, line: str, ended: bool, warnings: list[str]) -> dict | None:
    """One line as a JSON object with a kind, or None for a last line cut short by an
    interruption (dropped, with a warning)."""
    if not line.strip():
        what = "a blank line; primbench writes none, so the file was edited or damaged" if ended else \
            "after the last record: junk (white space); the file is corrupted"
        raise RunFileError(f"{path}:{number}: {what}")
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        if not ended and looks_cut_short(line):
            warnings.append(f"{path}:{number}: dropped a truncated last line (the run was interrupted mid-write)")
            return None
        where = "after the last record: junk" if not ended else f"not valid JSON ({exc.msg})"
        raise RunFileError(f"{path}:{number}: {where}; the file is corrupted") from None
    except (RecursionError, ValueError):  # nesting thousands deep; an integer of thousands of digits
        raise RunFileError(f"{path}:{number}: a value nested or sized past any run record; the file is damaged") from None
    if not isinstance(obj, dict) or "kind" not in obj:
        raise RunFileError(f"{path}:{number}: not a primbench record (no 'kind'); is this a run file?")
    return obj


def _schema_of(path: Path, header: dict) -> int:
    """The schema version a file was written in, from its header, if primbench reads it."""
    version = header.get("schema")
    if not isinstance(version, int) or isinstance(version, bool):
        raise RunFileError(f"{path}: header has no integer 'schema'; not a primbench run file")
    if version > SCHEMA_VERSION:
        raise RunFileError(
            f"{path}: schema version {version} is newer than this primbench reads ({SCHEMA_VERSION}); "
            "update primbench (git pull) to read it"
        )
    if not readable_schema(version):
        raise RunFileError(f"{path}: schema version {version} is not one primbench ever wrote (it reads 1 to {SCHEMA_VERSION})")
    return version


def load_run(path) -> Run:
    """Read a run file, dropping (with a warning) a last line cut short by an interruption.
    Each line is parsed, migrated and checked as it is read, so a damaged file is refused at its
    first bad line and memory holds only the records that passed."""
    path = Path(path)
    if not path.exists():
        raise RunFileError(f"{path}: no such run file; runs are under results/<gpu>/ (e.g. `ls results/*/*.jsonl`)")
    if path.is_dir():
        raise RunFileError(f"{path}: is a folder; give a run file (results/<run>.jsonl)")
    run, warnings, checks = None, [], None
    try:  # an archived (gzip) run is unpacked as it is read; one cut short reads like an interrupted run
        for number, line, ended in read_lines(path, warnings):
            obj = _parse_line(path, number, line, ended, warnings)
            if obj is None:
                continue
            if run is None:
                if obj.get("kind") != "header":
                    break
                run = Run(path=path, header=None, cases=[], warnings=warnings, written_schema=_schema_of(path, obj))
            obj = migrate(obj, run.written_schema)
            checks = _add_record(run, obj, number, checks)
    except OSError as exc:
        raise RunFileError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if run is None:
        raise RunFileError(f"{path}: no header on line 1; not a primbench run file")
    return run


def _add_record(run: Run, obj: dict, number: int, checks: RunChecks | None) -> RunChecks:
    """Check one migrated line, alone and against the lines before it (`checks`, None for the
    header), and add it to the run as its typed record; the checks to go on with."""
    path = run.path
    problem = record_problem(obj)
    if problem:
        raise RunFileError(f"{path}:{number}: {obj.get('kind', 'record')} record {problem}; the file is damaged")
    if checks is None:
        run.header = RunHeader.from_json(obj)
        return RunChecks(obj)
    problem = checks.problem(obj, number)
    if problem:
        raise RunFileError(f"{path}:{number}: {problem}")
    kind = obj["kind"]
    if kind == "case":
        run.cases.append(CaseRecord.from_json(obj))
    elif kind == "end":
        run.end = RunEnd.from_json(obj)
    elif kind == "resume":
        run.resumes.append(RunResume.from_json(obj))
        run.end = None  # a resumed run is finished only by a later end record
    elif kind == "telemetry":
        run.telemetry.append(Telemetry.from_json(obj))
    return checks


class RunWriter:
    """Appends JSON lines to a run file, flushing each so an interruption loses nothing finished. It
    holds the file's writer lock (runfile/lock.py) while open: a second writer is refused. A full
    disk is one line naming --resume, with every record written before it kept."""

    def __init__(self, path, *, create: bool):
        self.path = Path(path)
        self._created, self._written = create, 0
        self._one_at_a_time = threading.Lock()  # the case limit's thread may record a hung case
        if create:
            if self.path.exists():
                raise RunFileError(f"{self.path}: already exists; primbench never overwrites a run")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "x", encoding="utf-8")
        else:
            self._file = open(self.path, "a", encoding="utf-8")
        try:
            lock.take(self._file, self.path)
        except BlockingIOError as exc:
            self._file.close()
            raise RunFileError(f"{self.path}: is being written by {exc}; one writer at a time: wait for it to end "
                               "(or stop it), then `primbench run --resume` it if it did not finish") from None

    def append(self, record) -> None:
        """Write one record (a type of primbench/runfile/records.py) as one line and push it to disk."""
        with self._one_at_a_time:
            try:
                self._file.write(record_line(record))
                self._file.flush()
                os.fsync(self._file.fileno())
            except OSError as exc:
                if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
                    raise
                self._full(exc)
            self._written += 1

    def _full(self, exc: OSError) -> None:
        """The disk (or the user's quota) is full: one line. A new run that could not even write its
        header is removed (nothing was recorded); any other keeps every whole record, and --resume
        cuts the last, half-written line and goes on."""
        why = os.strerror(exc.errno)
        try:
            self._file.close()
        except OSError:  # the flush of what could not be written fails again
            pass
        if self._created and not self._written:
            self.path.unlink(missing_ok=True)
            raise RunFileError(f"{self.path}: {why}; nothing was recorded (the file is removed): free some space "
                               "and start the run again")
        raise RunFileError(f"{self.path}: {why} while writing it; every record before is kept: free some space, then "
                           f"finish it with `primbench run --resume {self.path}`")

    def close(self) -> None:
        try:
            self._file.close()
        except OSError:  # a flush on a full disk at close: append already said so
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def record_line(record) -> str:
    """A record as the one line the run file holds, newline included."""
    return json.dumps(record.to_json(), separators=(",", ":"), allow_nan=False, default=_json_default) + "\n"


def _json_default(value):
    # numpy scalars reach here from measurements; NaN is not JSON, so it becomes null.
    if hasattr(value, "item"):
        value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return value
    raise TypeError(f"cannot store {type(value).__name__} in a run file")


def repair_truncated_tail(path) -> bool:
    """Cut a last line left half-written by an interruption, so that appending can go on; a whole
    record that only lacks its newline (the kill fell between the two) is kept and its line ended."""
    path = Path(path)
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return False
    cut = data.rfind(b"\n") + 1
    try:  # a whole record whose newline was not yet written is kept, and its line ended
        json.loads(data[cut:])
        with open(path, "ab") as handle:
            handle.write(b"\n")
        return True
    except (ValueError, RecursionError):
        pass
    with open(path, "r+b") as handle:
        handle.truncate(cut)
    return True
