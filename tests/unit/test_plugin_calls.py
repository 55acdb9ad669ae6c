"""primbench/plugin_calls.py: a plugin's report code under a time limit that its own `except
Exception` cannot swallow, and a timer set before the call put back after it."""

import signal
import time

from primbench import plugin_calls


def test_code_that_swallows_its_own_errors_is_stopped_at_its_limit_all_the_same():
    def swallows():
        while True:
            try:
                time.sleep(0.05)
            except Exception:  # noqa: BLE001 - the plugin's own catch-all, as a careless one writes it
                pass

    started = time.monotonic()
    result, error = plugin_calls.call(swallows, limit_s=0.3)
    assert result is None and isinstance(error, plugin_calls.PluginTimeout), error
    assert time.monotonic() - started < 5
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # no timer left running


def test_code_that_catches_even_the_stop_once_is_stopped_by_the_next_one():
    def catches_once():
        try:
            while True:
                time.sleep(0.05)
        except BaseException:  # noqa: BLE001 - the stop itself, caught once
            pass
        while True:
            time.sleep(0.05)

    result, error = plugin_calls.call(catches_once, limit_s=0.2)
    assert result is None and isinstance(error, plugin_calls.PluginTimeout), error


def test_a_timer_set_before_the_call_is_put_back_with_what_was_left_of_it():
    fired = []

    def mine(signum, frame):
        fired.append(signum)

    previous = signal.signal(signal.SIGALRM, mine)
    try:
        signal.setitimer(signal.ITIMER_REAL, 30.0)
        assert plugin_calls.call(lambda: 7, limit_s=5) == (7, None)
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 25 < left <= 30 and signal.getsignal(signal.SIGALRM) is mine  # the caller's, running on
        assert not fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
