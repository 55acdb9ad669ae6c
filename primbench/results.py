"""The run file: JSON Lines with a header, one record per case, written line by line.

Schema: docs/run-file.md. This module never imports CuPy: report, compare and check read runs
on machines without a GPU.
"""

from __future__ import annotations

import json
import re
import math
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from primbench import stats
from primbench.errors import UserError
from primbench.run_schema import record_problem

SCHEMA_VERSION = 2


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


# Step-by-step migrations: MIGRATIONS[v] turns a version-v header or record into version v + 1.
# Files are never rewritten: an older run is migrated each time it is read.
MIGRATIONS: dict[int, callable] = {1: _v1_to_v2}


def gpu_slug(device_name: str) -> str:
    """A GPU model as a file name part: 'NVIDIA H200' -> 'nvidia-h200'."""
    return re.sub(r"[^a-z0-9]+", "-", (device_name or "unknown-gpu").lower()).strip("-")


class RunFileError(UserError):
    """A run file that cannot be read: missing, not JSON, no header, or an unknown schema."""


RUN_SUFFIXES = (".jsonl.gz", ".jsonl")  # a run as archived (gzip: 7x smaller), and as written


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


def is_gzip(path) -> bool:
    """Whether the file is gzip-compressed, by its first bytes (an archived run, or a copy of one
    under any name, e.g. a baseline made from it)."""
    with open(path, "rb") as handle:
        return handle.read(2) == b"\x1f\x8b"


def report_path(run_path) -> Path:
    """Where a run's report goes by default: beside it, <run>.html."""
    return Path(run_path).with_name(run_stem(run_path) + ".html")


@dataclass
class Run:
    """A run file as read: its header, its case records in order, and how it ended."""

    path: Path
    header: dict
    cases: list[dict]
    end: dict | None = None
    resumes: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    written_schema: int = SCHEMA_VERSION  # the version on disk (the records above are migrated to the current one)

    @property
    def finished(self) -> bool:
        return self.end is not None

    @property
    def device(self) -> dict:
        return self.header.get("device") or {}

    @property
    def git(self) -> dict:
        """The commit the run was made from: {"sha", "dirty", "source"} (sha None for published figures)."""
        return self.header.get("git") or {}

    @property
    def copy_gbps(self) -> float:
        return copy_bandwidth_gbps(self.header)

    def frame(self):
        """One row per case with the derived statistics (pandas DataFrame)."""
        return to_frame(self)


def copy_bandwidth_gbps(header: dict) -> float:
    """Median bandwidth of the copy measured at run start, from its raw samples."""
    copy = header.get("copy") or {}
    summary = stats.summarize(copy.get("samples_ms") or [])
    if summary is None or not copy.get("bytes"):
        return math.nan
    return stats.bandwidth_gbps(copy["bytes"], summary.median)


def _migrate(obj: dict, version: int, path: Path) -> dict:
    while version < SCHEMA_VERSION:
        obj = MIGRATIONS[version](obj)
        version += 1
    return obj


def _parse_lines(path: Path, text: str) -> tuple[list, list[str]]:
    """(line number, record) for each line of a run file, and the warnings reading it gave (a last
    line cut short by an interruption is dropped with one)."""
    lines = text.splitlines()
    warnings: list[str] = []
    objects: list[dict] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            is_last = number == len(lines) and not text.endswith("\n")
            if is_last:
                warnings.append(f"{path}:{number}: dropped a truncated last line (the run was interrupted mid-write)")
                continue
            raise RunFileError(f"{path}:{number}: not valid JSON ({exc.msg}); the file is corrupted") from None
        except (RecursionError, ValueError):  # nesting thousands deep; an integer of thousands of digits
            raise RunFileError(f"{path}:{number}: a value nested or sized past any run record; the file is damaged") from None
        if not isinstance(obj, dict) or "kind" not in obj:
            raise RunFileError(f"{path}:{number}: not a primbench record (no 'kind'); is this a run file?")
        objects.append((number, obj))
    return objects, warnings


def load_run(path) -> Run:
    """Read a run file, dropping (with a warning) a last line cut short by an interruption."""
    path = Path(path)
    if not path.exists():
        raise RunFileError(f"{path}: no such run file; runs are under results/<gpu>/ (e.g. `ls results/*/*.jsonl`)")
    if path.is_dir():
        raise RunFileError(f"{path}: is a folder; give a run file (results/<run>.jsonl)")
    try:
        if is_gzip(path):  # an archived run; a gzip cut short reads as a truncated last line
            text = _gunzip_what_decodes(path.read_bytes()).decode("utf-8", errors="strict")
        else:
            text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, zlib.error) as exc:
        raise RunFileError(f"{path}: cannot read it as a run file ({exc})") from None
    objects, warnings = _parse_lines(path, text)
    if not objects or objects[0][1].get("kind") != "header":
        raise RunFileError(f"{path}: no header on line 1; not a primbench run file")
    header = objects[0][1]
    version = header.get("schema")
    if not isinstance(version, int):
        raise RunFileError(f"{path}: header has no integer 'schema'; not a primbench run file")
    if version < 1 or (version < SCHEMA_VERSION and version not in MIGRATIONS):
        raise RunFileError(f"{path}: schema version {version} is not one primbench ever wrote (it reads 1 to {SCHEMA_VERSION})")
    if version > SCHEMA_VERSION:
        raise RunFileError(
            f"{path}: schema version {version} is newer than this primbench reads ({SCHEMA_VERSION}); "
            "update primbench (git pull) to read it"
        )
    run = Run(path=path, header=_migrate(header, version, path), cases=[], warnings=warnings, written_schema=version)
    seen_keys: dict[str, int] = {}
    for number, obj in objects:
        obj = _migrate(obj, version, path) if number != objects[0][0] else run.header
        problem = record_problem(obj)
        if problem:
            raise RunFileError(f"{path}:{number}: {obj.get('kind', 'record')} record {problem}; the file is damaged")
        kind = obj["kind"]
        if kind == "case":
            if obj["key"] in seen_keys:
                raise RunFileError(f"{path}:{number}: case {obj['key'][:120]!r} again (first on line {seen_keys[obj['key']]}); "
                                   "a run measures each case once: the file is damaged or two runs were joined")
            seen_keys[obj["key"]] = number
            run.cases.append(obj)
        elif kind == "end":
            run.end = obj
        elif kind == "resume":
            run.resumes.append(obj)
            run.end = None  # a resumed run is finished only by a later end line
        elif kind == "header" and number != objects[0][0]:
            raise RunFileError(f"{path}:{number}: a second header; two runs were written into one file")
    return run


class RunWriter:
    """Appends JSON lines to a run file, flushing each so an interruption loses nothing finished."""

    def __init__(self, path, *, create: bool):
        self.path = Path(path)
        if create:
            if self.path.exists():
                raise RunFileError(f"{self.path}: already exists; primbench never overwrites a run")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "x", encoding="utf-8")
        else:
            self._file = open(self.path, "a", encoding="utf-8")

    def append(self, obj: dict) -> None:
        """Write one record as one line and push it to disk."""
        line = json.dumps(obj, separators=(",", ":"), allow_nan=False, default=_json_default)
        self._file.write(line + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _json_default(value):
    # numpy scalars reach here from measurements; NaN is not JSON, so it becomes null.
    if hasattr(value, "item"):
        value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return value
    raise TypeError(f"cannot store {type(value).__name__} in a run file")


def _gunzip_what_decodes(data: bytes) -> bytes:
    """A gzip file's content (one member, as `gzip` writes it), or as much of it as decodes when
    the file was cut short."""
    return zlib.decompressobj(wbits=31).decompress(data)  # 31: a gzip header and trailer


def repair_truncated_tail(path) -> bool:
    """Cut a last line left half-written by an interruption, so that appending can go on."""
    path = Path(path)
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return False
    cut = data.rfind(b"\n") + 1
    with open(path, "r+b") as handle:
        handle.truncate(cut)
    return True


def _all_or_none(values):
    values = list(values)
    return all(values) if values else None


def param_items(case: dict) -> tuple:
    """A case record's own parameters as sorted (name, value) pairs: how identities hold them."""
    return tuple(sorted((case.get("params") or {}).items()))


def params_text(params: dict) -> str:
    """A case's own parameters as text: 'radius=4', or '' for none."""
    return ",".join(f"{name}={value}" for name, value in sorted(params.items()))


def variant_label(name: str, params: dict) -> str:
    """How tables and plots name a variant at some parameter values: 'blur1d_shared_halo[radius=4]'."""
    return f"{name}[{params_text(params)}]" if params else name


def _identity_columns(case: dict, info: dict) -> dict:
    """What a case is: its key, op, variant (and its label at its parameters), size, status."""
    params = case.get("params") or {}
    return {
        "key": case["key"],
        "op": case["op"],
        # A variant run at several values of its own parameters is one line per value.
        "variant": variant_label(case["variant"], params),
        "variant_name": case["variant"],
        "params": params_text(params),
        "param_items": param_items(case),  # as model.Params holds them
        "variant_hash": case.get("variant_hash"),
        "series": info.get("series", ""),
        "order": info.get("order", 0),
        "dtype": case["dtype"],
        "n": case["n"],
        "block": case.get("block"),
        "distribution": case.get("distribution"),
        "bytes": case.get("bytes"),
        "status": case["status"],
        "reason": case.get("reason"),
    }


def _timing_columns(case: dict, scale: dict) -> dict:
    """How long it took, from the raw samples: median, spread, GB/s and % of both peaks."""
    samples = case.get("samples") or {}
    cold = stats.summarize(samples.get("cold_ms") or [])
    batch = stats.summarize(samples.get("batch_ms") or [])
    median = cold.median if cold else math.nan
    gbps = stats.bandwidth_gbps(case.get("bytes") or 0, median) if cold else math.nan
    peak, copy_gbps, l2_bytes = scale["peak"], scale["copy"], scale["l2_bytes"]
    return {
        "median_ms": median,
        "noise": cold.noise if cold else math.nan,
        "samples": cold.count if cold else 0,
        "p05_ms": cold.p05 if cold else math.nan,
        "p95_ms": cold.p95 if cold else math.nan,
        "batch_median_ms": batch.median if batch else math.nan,
        "batch_size": samples.get("batch_size"),
        "gbps": gbps,
        "pct_peak": 100.0 * gbps / peak if peak else math.nan,
        "pct_copy": 100.0 * gbps / copy_gbps if copy_gbps else math.nan,
        "l2_resident": bool(l2_bytes and (case.get("bytes") or 0) <= l2_bytes),
        "stop": (case.get("timing") or {}).get("stop"),
    }


def _check_columns(case: dict) -> dict:
    """What verification found: the exact and random checks, determinism across runs and grids, launches."""
    verify = case.get("verify") or {}
    random_check = verify.get("random") or {}
    exact_check = verify.get("exact") or {}
    determinism = case.get("determinism") or {}
    return {
        "exact_ok": exact_check.get("ok"),
        "random_ok": random_check.get("ok"),
        "error": random_check.get("error"),
        "tolerance": random_check.get("tolerance"),
        "bitwise_equal": determinism.get("bitwise_equal"),
        "result_hex": determinism.get("result_hex"),
        # The reproducibility probe: True if every scaled grid gave the same bits, None if not tried.
        "grids_bitwise_equal": _all_or_none(probe.get("bitwise_equal") for probe in determinism.get("across_grids") or []),
        "grids_probed": "across_grids" in determinism,  # False in runs made before the probe existed
        "got": random_check.get("got"),
        "expected": random_check.get("expected"),
        "reference_kind": random_check.get("reference"),
        "abs_sum": random_check.get("abs_sum"),
        "serial_float32": random_check.get("serial_float32"),
        "flags": ",".join(case.get("flags") or []),
        # The first launch with a grid: atomic variants start with the memset of their target.
        "grid": next((launch["grid"] for launch in case.get("launches") or [] if launch.get("grid")), None),
        "launches": len(case.get("launches") or []),
        "launch_list": case.get("launches") or [],  # what each launch declared (grid, and e.g. top-k's group)
    }


def to_frame(run: Run):
    """One row per case, with median, noise, GB/s and % of both peaks derived from raw samples."""
    import pandas as pd

    device = run.device
    scale = {"peak": device.get("peak_gbps") or math.nan, "copy": run.copy_gbps, "l2_bytes": device.get("l2_bytes") or 0}
    variants = run.header.get("variants", {})
    rows = [{**_identity_columns(case, variants.get(f"{case['op']}/{case['variant']}", {})),
             **_timing_columns(case, scale), **_check_columns(case)} for case in run.cases]
    columns = None if rows else ["key", "op", "variant", "variant_name", "params", "param_items", "status", "n", "block", "median_ms", "gbps"]
    return pd.DataFrame(rows, columns=columns)
