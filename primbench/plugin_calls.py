"""A call of a plugin's own function while a report is drawn (an op's report_sections or
report_tables): whatever it raises, SystemExit and its own KeyboardInterrupt included, comes back
as the error to name on the page, and one that does not return within its limit is stopped. A real
Ctrl-C (SIGINT arrived) still stops the command, as everywhere (one line, exit 130).

The limit is a SIGALRM timer, so it holds in the main thread, where primbench calls these, and
stops Python code (a loop, a sleep), not a single C call that never returns to Python. The stop is
a BaseException, raised again every second, so that code catching its own errors (`except
Exception`) is stopped too; a timer set before the call is put back after it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time

from primbench import plugin_import

LIMIT_S = 60.0  # a report's whole render takes a few seconds: a function this slow is stuck
AGAIN_S = 1.0  # the stop is raised again this often, until the function gives up


class PluginTimeout(BaseException):
    """Raised inside the plugin's function when its time is up (not an Exception: its own
    `except Exception` does not swallow it)."""


def call(function, *args, limit_s: float | None = None):
    """(function(*args), None), or (None, the exception it ended with); `limit_s`: LIMIT_S."""
    limit_s = LIMIT_S if limit_s is None else limit_s
    watch = plugin_import.CtrlC()
    try:
        with plugin_import.noting_sigint(watch), _time_limit(limit_s):
            return function(*args), None
    except KeyboardInterrupt as error:
        if watch.arrived:
            raise
        return None, error
    except BaseException as error:  # noqa: BLE001 - a plugin's code can raise anything, SystemExit too
        return None, error


def described(error: BaseException) -> str:
    """The error as a page or a warning line names it."""
    if isinstance(error, PluginTimeout):
        return str(error)
    if isinstance(error, KeyboardInterrupt):
        return "it raised KeyboardInterrupt, with no Ctrl-C pressed"
    if isinstance(error, SystemExit):
        return f"it called sys.exit({error.code!r}), which ends no report"
    try:
        text = str(error)
    except Exception:  # noqa: BLE001 - an exception whose str() raises
        text = ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


@contextlib.contextmanager
def _time_limit(seconds: float):
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    armed = [True]  # off before the timer is: an alarm that comes as the call ends stops nothing

    def stop(signum, frame):
        if armed[0]:
            raise PluginTimeout(f"it did not return within {seconds:g} s (a loop that never ends?) and was stopped")

    previous = signal.signal(signal.SIGALRM, stop)
    started = time.monotonic()
    outer = signal.setitimer(signal.ITIMER_REAL, seconds, AGAIN_S)  # (delay, interval) of a timer set before
    try:
        yield
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer[0] > 0:  # the caller's own alarm, with what was left of it
            signal.setitimer(signal.ITIMER_REAL, max(outer[0] - (time.monotonic() - started), 1e-3), outer[1])
