"""A run over several GPUs: one worker process per GPU (primbench/run/worker.py), this process the only
writer of the run files. No CuPy here.

`shard` splits the cases across the GPUs into one run file whose cases each name their GPU
(`device_uuid`); the header's `gpus` holds every GPU's device info and copy probe. `replicate` runs
every case on every GPU, one run file per GPU (`<group>-gpu<i>`), each an ordinary one-GPU run
that also names its group, so that `primbench replicas` can set them side by side.

Only whole lines reach a run file: a worker killed mid-line leaves a partial line in its pipe,
which is dropped. SIGINT or SIGTERM here is passed to every worker as SIGTERM; what they finished
is written, then the run stops without an end record, and `--resume` finishes it. A worker that
crashes loses only its own unfinished cases: the others go on, the run is left unfinished, and the
summary says which GPU and how many cases. A worker whose kernel broke its CUDA context is
replaced by a fresh one for the rest of its cases.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from primbench.resources import child_environment
from primbench.run.gpus import Gpu
from primbench.runfile.case_id import CaseId
from primbench.runfile.records import RECORD_TYPES, CaseRecord, RunHeader

STOP_GRACE_S = 60.0  # after SIGTERM, how long a worker may take to leave before it is killed


def worker_command(records_fd: int) -> list[str]:
    """The command that starts one worker (tests put a stand-in GPU behind the same worker)."""
    return [sys.executable, "-m", "primbench.run.worker", "--records-fd", str(records_fd)]


@dataclass
class Sink:
    """One run file being written, with its counts and the cases it still lacks."""

    writer: object
    run_id: str  # what the cases' input seeds derive from: the run id (a replica's: its group's)
    missing: set[str]  # the keys of the cases not yet recorded; the run ends when none is left
    ok: int = 0
    failed: int = 0
    skipped: int = 0

    def add(self, record: CaseRecord) -> None:
        self.writer.append(record)
        self.missing.discard(record.key)
        setattr(self, record.status, getattr(self, record.status) + 1)


@dataclass
class Worker:
    gpu: Gpu
    cases: list[CaseId]  # assigned and not yet recorded
    process: subprocess.Popen
    fd: int
    pending: bytes = b""
    header: RunHeader | None = None
    early: list = field(default_factory=list)  # telemetry read before its run file exists
    sink: Sink | None = None
    exit_code: int | None = None
    restarts: int = 0
    expect_uuid: str | None = None

    @property
    def uuid(self) -> str:
        return (self.header.device.get("uuid") if self.header else None) or f"gpu{self.gpu.index}"

    @property
    def label(self) -> str:
        return f"GPU {self.gpu.index} ({self.uuid})" if self.header else f"GPU {self.gpu.index}"


@dataclass
class GpusSummary:
    """How a run over several GPUs ended."""

    paths: list[Path]
    mode: str
    ok: int = 0
    failed: int = 0
    skipped: int = 0
    interrupted: bool = False
    crashes: list[str] = field(default_factory=list)  # one line per worker that left cases unrun
    not_run: int = 0
    unfinished: list[Path] = field(default_factory=list)  # the run files that --resume would complete


class Scheduler:
    """Workers, their pipes, and the signal handling of one run."""

    def __init__(self, job: dict):
        self.job = job  # the first line every worker is told: the config
        self.selector = selectors.DefaultSelector()
        self.workers: list[Worker] = []
        self.stopping = False
        self.stop_deadline: float | None = None
        self.progress = None
        self._previous = {}

    # -- processes -----------------------------------------------------------------------------
    def spawn(self, gpu: Gpu, cases: list[CaseId], restarts: int = 0) -> Worker:
        read_end, write_end = os.pipe()
        env = child_environment(CUDA_VISIBLE_DEVICES=gpu.visible)
        process = subprocess.Popen(worker_command(write_end), stdin=subprocess.PIPE, pass_fds=(write_end,), env=env,
                                   encoding="utf-8")
        os.close(write_end)
        worker = Worker(gpu, list(cases), process, read_end, restarts=restarts)
        self.selector.register(read_end, selectors.EVENT_READ, worker)
        self.workers.append(worker)
        self.tell(worker, self.job)
        return worker

    def tell(self, worker: Worker, message: dict | None) -> None:
        """One line on the worker's stdin (None: close it); a worker already gone is not an error."""
        try:
            if message is not None:
                worker.process.stdin.write(json.dumps(message) + "\n")
                worker.process.stdin.flush()
            else:
                worker.process.stdin.close()
        except (BrokenPipeError, OSError, ValueError):
            pass

    def start_cases(self, worker: Worker, run_id: str) -> None:
        self.tell(worker, {"run_id": run_id, "cases": [case.key for case in worker.cases]})
        self.tell(worker, None)

    def live(self) -> list[Worker]:
        return [w for w in self.workers if w.exit_code is None]

    # -- signals -------------------------------------------------------------------------------
    def install_signals(self) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            self._previous[signum] = signal.signal(signum, self._on_signal)

    def _on_signal(self, signum, frame) -> None:
        # Only a flag: the loop below writes whole lines, and a signal must not cut one.
        self.stopping = True

    def restore_signals(self) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _stop_workers(self) -> None:
        if self.stop_deadline is None:
            self.stop_deadline = time.monotonic() + STOP_GRACE_S
            for worker in self.live():
                _signal(worker, signal.SIGTERM)
        elif time.monotonic() > self.stop_deadline:
            for worker in self.live():
                _signal(worker, signal.SIGKILL)

    def close(self) -> None:
        """Leave no worker behind, whatever happened."""
        for worker in self.live():
            _signal(worker, signal.SIGTERM)
        for worker in self.live():
            try:
                worker.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                _signal(worker, signal.SIGKILL)
                worker.process.wait()
            worker.exit_code = worker.process.returncode
        self.selector.close()
        if self.progress:
            self.progress.close()

    # -- the pipes -----------------------------------------------------------------------------
    def pump(self, on_line, on_exit, timeout: float = 0.5) -> None:
        """Read what the workers sent: each whole line to on_line(worker, obj), each worker that
        closed its pipe to on_exit(worker) once its exit code is known."""
        if self.stopping:
            self._stop_workers()
        for key, _ in self.selector.select(timeout):
            worker = key.data
            chunk = os.read(worker.fd, 1 << 16)
            if chunk:
                *lines, worker.pending = (worker.pending + chunk).split(b"\n")
                for line in lines:
                    obj = _record_of(worker, line)
                    if obj is not None:
                        on_line(worker, obj)
                continue
            self.selector.unregister(worker.fd)
            os.close(worker.fd)
            worker.pending = b""  # a half line from a worker killed mid-write: never written anywhere
            worker.exit_code = worker.process.wait()
            on_exit(worker)


def _signal(worker: Worker, signum) -> None:
    try:
        worker.process.send_signal(signum)
    except (ProcessLookupError, OSError):
        pass


def _record_of(worker: Worker, line: bytes):
    """A worker's line as its typed record, or None (with a warning) for one that breaks the schema."""
    from primbench.runfile.schema import record_problem

    try:
        obj = json.loads(line)
        problem = record_problem(obj) if isinstance(obj, dict) else "is not a JSON object"
    except (ValueError, RecursionError):
        problem = "is not JSON"
    if problem:
        print(f"primbench: warning: ignored a line from the worker on GPU {worker.gpu.index}: it {problem}", file=sys.stderr)
        return None
    return RECORD_TYPES[obj["kind"]].from_json(obj)
