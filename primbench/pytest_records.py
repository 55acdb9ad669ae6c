"""The pytest plugin's timings as run-file records (primbench/pytest_plugin.py): each gpubench call
is one CaseRecord (op "pytest", the test's id and label as the variant, the bytes as n), a
session's calls are one run file, and under pytest-xdist each worker's timings travel to the
controller as plain JSON (config.workeroutput) and are read back as the same records.

A record is built when its call is timed, and the verdict engine judges that very record: what
is gated is what --gpubench-save and --gpubench-json write. No CuPy here.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

from primbench.runfile.case_id import CaseId
from primbench.runfile.records import CaseRecord, RunEnd, RunHeader, Samples

OP = "pytest"


@dataclass(frozen=True)
class Timing:
    """One gpubench call: its record, the GPU that timed it (Device.info), the result's one line
    for the terminal summary, and its verdict against the baseline ("" where none was judged)."""

    record: CaseRecord
    device: dict
    line: str
    verdict: str = ""

    def to_json(self) -> dict:
        return {"record": self.record.to_json(), "device": self.device, "line": self.line, "verdict": self.verdict}

    @classmethod
    def from_json(cls, obj: dict) -> "Timing":
        return cls(CaseRecord.from_json(obj["record"]), dict(obj["device"]), obj["line"], obj.get("verdict", ""))


def case_of(nodeid: str, label, nbytes, taken: set[str]) -> CaseId:
    """The timing's case: the test's id and label as the variant, the bytes as n. A test that times
    twice under one name gets '#2', '#3', ...: a run file holds each key once. `taken`: the
    variants this process recorded already (a test runs whole in one process, xdist or not)."""
    name = nodeid.replace("/", ".") + (f"[{label}]" if label else "")
    unique, count = name, 1
    while unique in taken:
        count += 1
        unique = f"{name}#{count}"
    return CaseId(OP, unique, "any", int(nbytes or 1), None, None)  # n: the bytes (a case's n is at least 1)


def code_hash(function) -> str:
    """The test function's source, hashed: a baseline then shows "code changed" where the test did
    (as a variant's hash does for a kernel). Without its source, its name stands in."""
    import hashlib
    import inspect

    try:
        text = inspect.getsource(function)
    except (OSError, TypeError):
        text = f"{getattr(function, '__module__', '')}.{getattr(function, '__qualname__', function)}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def record_of(case: CaseId, result, test_hash: str) -> CaseRecord:
    """A primbench.measure result as its case record. `batch_method` is recorded as measure found
    it ("stream" for its host-launched batches): the verdict rule gates on a batch only where it
    was a CUDA graph, so a gpubench timing is judged on its cold samples, as such a case of a run is."""
    samples = Samples(tuple(round(t, 6) for t in result.cold_ms), tuple(round(t, 6) for t in result.batch_ms),
                      result.batch_size)
    return CaseRecord(case, status="ok", variant_hash=test_hash, bytes=float(result.bytes) if result.bytes else None,
                      samples=samples, timing={"stop": result.stop, "batch_method": result.batch_method}, started=_now())


def session_header(timings: list[Timing] | None = None, run_id: str = "this pytest session") -> RunHeader:
    """The header of a session's run file: its GPU (the first timing's), the default timing policy
    and the measuring protocol of this code (runfile/protocol.py), which a later comparison reads."""
    import platform
    import socket

    from primbench.measuring.policy import TimingPolicy
    from primbench.run.runner import git_state
    from primbench.runfile import protocol
    from primbench.version import __version__

    timings = timings or []
    variants = {f"{OP}/{t.record.case.variant}": {"op": OP, "name": t.record.case.variant, "hash": t.record.variant_hash,
                                                  "origin": "a pytest test (gpubench)", "series": OP, "order": index,
                                                  "notes": ""}
                for index, t in enumerate(timings)}
    return RunHeader(run_id=run_id, started=_now(), tool={"name": "primbench", "version": __version__, "via": "pytest"},
                     git=git_state() if timings else {},
                     host={"hostname": socket.gethostname(), "platform": platform.platform(),
                           "python": platform.python_version()},
                     device=timings[0].device if timings else {}, timing=TimingPolicy().as_dict(), variants=variants,
                     protocol=protocol.declared())


def run_file_text(timings: list[Timing]) -> str:
    """The session's timings as one primbench run file (header, a case a timing, end)."""
    import hashlib

    from primbench.runfile.io import record_line

    now = dt.datetime.now(dt.timezone.utc)
    digest = hashlib.sha256("".join(t.record.key for t in timings).encode()).hexdigest()[:6]
    header = session_header(timings, run_id=f"{now:%Y-%m-%d-%H%M%S}-pytest-{digest}")
    lines = [record_line(header)] + [record_line(t.record) for t in timings]
    lines.append(record_line(RunEnd(finished=_now(), ok=len(timings))))
    return "".join(lines)


@dataclass(frozen=True)
class Untimed:
    """What gpubench returns under --gpubench-disable: the callable ran once (after its setup) and
    was not timed. `converged` is True, as there was nothing to converge, so a test's `assert
    result.converged` checks correctness alone; `timed` is False (a measure result's is True), the
    figures are NaN or None, and `value` is what the callable returned."""

    label: str | None
    bytes: int | None
    value: object = None
    timed = False
    converged = True
    median_ms = median_us = noise = math.nan
    gbps = peak_gbps = pct_of_peak = batch_size = batch_median_ms = None
    stop = "not timed"

    @property
    def cold_ms(self) -> list:
        return []

    @property
    def batch_ms(self) -> list:
        return []

    def __str__(self) -> str:
        return (f"{self.label}: " if self.label else "") + "not timed (--gpubench-disable)"
