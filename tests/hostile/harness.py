"""Running one hostile input through the CLI in isolation: a forked child with a memory cap, a
timeout, its output captured, and every input file hashed before and after.

Forking the test process (which has imported primbench and its libraries once) costs
milliseconds, where starting Python for each of 150 cases would cost minutes.
"""

from __future__ import annotations

import hashlib
import os
import resource
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

MEMORY_CAP_BYTES = 1 << 30  # address space a case may add to the test process's own
TIMEOUT_S = 30.0


@dataclass
class Outcome:
    code: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    seconds: float
    max_rss_bytes: int


def fingerprint(paths) -> dict:
    """sha256 of every file under the given paths (folders walked), to show nothing was changed."""
    hashes = {}
    for path in map(Path, paths):
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path] if path.is_file() else []
        for file in files:
            hashes[str(file)] = hashlib.sha256(file.read_bytes()).hexdigest()
    return hashes


def _vm_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


def run_cli(argv: list[str], cwd: Path, out_dir: Path, in_child=None) -> Outcome:
    """`primbench ARGV` in a forked child, in `cwd`, under the memory cap and the timeout;
    `in_child()`, where given, changes the child's surroundings first (closes its stdout, deletes
    its working folder, ...)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stdout_path, stderr_path = out_dir / "stdout", out_dir / "stderr"
    limit = _vm_bytes() + MEMORY_CAP_BYTES
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 99
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            os.chdir(cwd)
            out, err = open(stdout_path, "w"), open(stderr_path, "w")
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            sys.stdout, sys.stderr = out, err
            if in_child is not None:
                in_child()
            from primbench.cli import main as cli_main

            try:
                code = cli_main.main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        except BaseException:  # noqa: BLE001 (reported as a traceback: the test then fails)
            import traceback

            traceback.print_exc()
            code = 99
        finally:
            try:
                for stream in (sys.stderr, sys.stdout):  # stdout may be None or closed (in_child)
                    if stream is not None:
                        stream.flush()
            finally:  # whatever happens, the child never returns into pytest
                os._exit(code if isinstance(code, int) and 0 <= code < 256 else 99)
    return _wait(pid, started, stdout_path, stderr_path)


def _wait(pid: int, started: float, stdout_path: Path, stderr_path: Path) -> Outcome:
    code, usage = _exit_of(pid, started + TIMEOUT_S)
    return Outcome(code, stdout_path.read_text(errors="replace"), stderr_path.read_text(errors="replace"),
                   time.monotonic() - started, usage.ru_maxrss * 1024)


def _exit_of(pid: int, deadline: float):
    """The child's exit code (None: killed at the deadline) and its resource usage."""
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), usage
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            return None, os.wait4(pid, 0)[2]
        time.sleep(0.005)


@dataclass
class Streamed:
    lines: list[str]  # the first lines read from its standard output
    first_line_s: float | None  # seconds from the fork to the first line; None: none came
    rss_growth_bytes: int  # the child's peak resident memory, past the test process's own at the fork
    code: int | None  # its exit once the reader had closed the pipe; None: killed at the timeout
    stderr: str
    exit_s: float  # seconds from the reader closing the pipe to the child's exit


def stream_cli(argv: list[str], cwd: Path, out_dir: Path, *, lines: int, memory_cap: int, timeout: float) -> Streamed:
    """`primbench ARGV` in a forked child under `memory_cap` more address space, its standard output
    a pipe: read `lines` lines (or until `timeout`), then close the pipe, as `| head` does, and wait."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stderr_path = out_dir / "stderr"
    limit, resident = _vm_bytes() + memory_cap, _status_bytes("VmRSS:")
    read_end, write_end = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            os.close(read_end)
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            os.chdir(cwd)
            err = open(stderr_path, "w")
            os.dup2(write_end, 1)
            os.dup2(err.fileno(), 2)
            sys.stdout, sys.stderr = open(1, "w", closefd=False), err
            from primbench.cli import main as cli_main

            code = cli_main.main(argv)
        except BaseException:  # noqa: BLE001 (a traceback: the test then fails)
            import traceback

            traceback.print_exc()
        finally:
            try:
                sys.stderr.flush()
            finally:
                os._exit(code if isinstance(code, int) and 0 <= code < 256 else 99)
    os.close(write_end)
    got, first, peak = _read_lines(read_end, pid, lines, started + timeout)
    first = None if first is None else first - started
    os.close(read_end)
    closed = time.monotonic()
    code, _ = _exit_of(pid, closed + timeout)
    return Streamed(got, first, max(0, peak - resident), code, stderr_path.read_text(errors="replace"),
                    time.monotonic() - closed)


def _read_lines(fd: int, pid: int, count: int, deadline: float) -> tuple[list[str], float | None, int]:
    """Up to `count` lines from `fd` before `deadline`; when the first came; the child's peak memory."""
    import select

    buffer, first = b"", None
    while buffer.count(b"\n") < count and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            buffer += chunk
            first = first or (time.monotonic() if b"\n" in buffer else None)
    return buffer.decode(errors="replace").splitlines()[:count], first, _status_bytes("VmHWM:", pid)


def _status_bytes(field: str, pid: int | str = "self") -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    except OSError:  # the child has ended already
        pass
    return 0
