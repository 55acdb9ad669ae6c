"""One writer per run file at a time: `run`, `run --resume` and the parent of a run over several GPUs
hold an exclusive lock on the file they append to, for as long as they write it. A second writer is
refused in one line that names the first (its process id and command line, where the system tells).

The lock is flock(2) on the run file's own descriptor: it is released when that process ends however
it ends (a SIGKILL too), so no stale lock file is ever left in results/, and reading the file (every
reader opens its own descriptor) never disturbs it. Where the system has no flock (not Linux or a
BSD), nothing is locked. Nothing here imports CuPy.
"""

from __future__ import annotations

import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # no flock on this system: runs are not locked
    fcntl = None

PROC_LOCKS = Path("/proc/locks")
MAX_LOCKS_BYTES = 4 << 20  # /proc/locks of a busy host; past this the holder is just "another process"


def take(handle, path: Path) -> None:
    """Lock the open run file `handle` for this process, or raise BlockingIOError with the holder's
    description as its message (the caller closes the handle and says it in one line)."""
    if fcntl is None:
        return
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise BlockingIOError(holder(path)) from None


def holder(path: Path) -> str:
    """'process 4073: python bench.py run --resume r.jsonl' for the process holding the lock on
    `path`, from /proc/locks; 'another process' where that cannot be read."""
    try:
        stat = os.stat(path)
        with open(PROC_LOCKS, "rb") as handle:
            table = handle.read(MAX_LOCKS_BYTES).decode("ascii", "replace")
    except OSError:
        return "another process"
    where = f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}:{stat.st_ino}"
    for line in table.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 4073 08:01:1234567 0 EOF" (a "->" marks a waiter: not the holder)
        if len(fields) >= 6 and fields[1] == "FLOCK" and "->" not in fields and fields[5] == where:
            return _described(fields[4])
    return "another process"


def _described(pid: str) -> str:
    try:
        with open(f"/proc/{int(pid)}/cmdline", "rb") as handle:
            words = handle.read(4096).split(b"\0")
    except (OSError, ValueError):
        return f"process {pid}"
    # One line: an argument may hold newlines (python -c "..."), and the message is one line.
    command = " ".join(" ".join(word.decode("utf-8", "backslashreplace").split()) for word in words if word)
    return f"process {pid}: {command[:160]}" if command else f"process {pid}"
