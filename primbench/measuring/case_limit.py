"""A case's time limit (`timing: case_limit_s`): a case that makes no progress for that long is
called hung, and `expire` is called from a watching thread. Progress is the case's start and every
chunk of samples the Timer takes (`Timer.last_progress`), so a case that keeps sampling is not cut
short however long it samples; its build, its verification and its first chunk of samples (4 of
them) must each fit in the limit, and a kernel that never returns is found one limit after its last
sign of life.

Why a thread and not an exception: a hung kernel holds the host inside the CUDA driver (CuPy's
synchronize releases the GIL and never returns), where no Python exception can reach, and the
process's CUDA context can run nothing more anyway. So `expire` does what needs doing without the
stuck thread: the runner records the case as failed and replaces its process (run/runner.py), a
worker reports it and ends (run/worker.py), and `measure` or `ab` end the process with one line.
Nothing here imports CuPy.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time

DEFAULT_CASE_LIMIT_S = 60.0  # 7x the longest case of the reference and energy runs (8.4 s, with energy)


class CaseLimit:
    """Watches one case at a time; `expire(case, seconds since it started)` runs on the watching
    thread when the case has made no progress for `limit_s`, and should end or replace the process
    (if it raises, the process ends with EXIT_FAILED; if it returns, watching stops). Once a case is
    expired it is the watcher's: should the case return after all, its thread waits there for the
    end, and records nothing more (a case must not be written twice)."""

    def __init__(self, limit_s: float, expire, timer=None, *, poll_s: float | None = None):
        self.limit_s, self._expire, self._timer = float(limit_s), expire, timer
        self._poll_s = poll_s if poll_s is not None else min(1.0, self.limit_s / 4)
        self._lock = threading.Lock()
        self._case, self._since, self._expired = None, 0.0, None
        self._closed = threading.Event()
        self._expire_returned = threading.Event()  # expire came back instead of ending the process
        self._thread = threading.Thread(target=self._watch, name="primbench-case-limit", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop watching for good (the thread ends within one poll)."""
        self._closed.set()

    @contextlib.contextmanager
    def watching(self, case):
        """Within the block, `case` is the one watched."""
        token = object()  # this watch, whichever case it is: two watches of one case are two tokens
        with self._lock:
            self._case, self._since = (token, case), time.monotonic()
        try:
            yield
        finally:
            with self._lock:
                expired = self._expired is token
                self._case = None
            if expired:  # the watcher is ending the process: nothing more may be written
                self._expire_returned.wait()

    def _hung(self):
        """(the watched case, when it started) if it has made no progress for the limit, marking it
        expired in the same step; else None."""
        with self._lock:
            if self._case is None:
                return None
            last = max(self._since, getattr(self._timer, "last_progress", 0.0) or 0.0)
            if time.monotonic() - last <= self.limit_s:
                return None
            token, case = self._case
            self._expired = token
            return case, self._since

    def _watch(self) -> None:
        from primbench.errors import EXIT_FAILED

        while not self._closed.wait(self._poll_s):
            hung_case = self._hung()
            if hung_case is None:
                continue
            case, started = hung_case
            try:
                self._expire(case, time.monotonic() - started)
            except BaseException as exc:  # a broken expire must still end the stuck process
                end_process(f"{case}: {hung(self.limit_s)} ({str(exc)[:200]})", EXIT_FAILED)
            self._expire_returned.set()
            return


def hung(limit_s: float) -> str:
    """What a hung case did, in words: 'made no progress for 60 s (timing: case_limit_s)'."""
    return f"made no progress for {limit_s:g} s (timing: case_limit_s)"


def hung_reason(limit_s: float) -> str:
    """A hung case's record's reason."""
    return f"{hung(limit_s)}: a kernel that never returns? Its process was replaced, and the run went on"


@contextlib.contextmanager
def process_ends_if_hung(what: str, limit_s: float, timer=None):
    """For `measure` and `ab`, which run in their caller's process: where the block makes no
    progress for `limit_s`, one line naming `what`, and the process ends with EXIT_FAILED, as
    pytest-timeout's thread method ends a hung test session: the caller's CUDA context can run
    nothing more, and an exception cannot reach a thread held inside the driver."""
    from primbench.errors import EXIT_FAILED

    def expire(case, seconds: float) -> None:
        end_process(f"{case} {hung(limit_s)}: a kernel that never returns? This process's GPU can run nothing more, "
                    f"so it ends here (after {seconds:.0f} s)", EXIT_FAILED)

    limit = CaseLimit(limit_s, expire, timer)
    try:
        with limit.watching(what):
            yield
    finally:
        limit.close()


def end_process(line: str, code: int) -> None:
    """For a hung `measure` or `ab`, whose caller's process can run nothing more on this GPU: one
    line on standard error, then the process ends (os._exit: the stuck thread cannot be joined)."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    os.write(2, f"primbench: {line}\n".encode("utf-8", "backslashreplace"))
    os._exit(code)
