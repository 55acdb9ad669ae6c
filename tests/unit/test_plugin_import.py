"""What surrounds a plugin's import (primbench/plugin_import.py): its folder on sys.path, so it can
import a module beside it, kept last afterwards so nothing beside it shadows primbench's imports;
a real SIGINT told apart from a KeyboardInterrupt the plugin raises itself; and threads that would
keep a finished command alive found."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest

from primbench import plugin_import


@pytest.fixture
def own_sys_path(monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield
    for name in ("sibling_of_a_plugin_x1",):
        sys.modules.pop(name, None)


def test_a_plugin_imports_a_module_beside_it_and_its_folder_stays_last(tmp_path, own_sys_path):
    (tmp_path / "sibling_of_a_plugin_x1.py").write_text("VALUE = 7\n")
    with plugin_import.importing(tmp_path / "plugin.py"):
        assert sys.path[0] == str(tmp_path)
        import sibling_of_a_plugin_x1

        assert sibling_of_a_plugin_x1.VALUE == 7
    assert sys.path[-1] == str(tmp_path) and sys.path.count(str(tmp_path)) == 1


def test_a_folder_already_on_the_path_is_not_added_twice(tmp_path, own_sys_path):
    sys.path.append(str(tmp_path))
    with plugin_import.importing(tmp_path / "plugin.py"):
        sys.path.remove(str(tmp_path))  # a plugin that edits sys.path itself does not break the clean-up
    assert sys.path.count(str(tmp_path)) == 1


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals reach the main thread")
def test_a_real_sigint_is_told_apart_from_a_keyboard_interrupt_the_plugin_raises(tmp_path, own_sys_path):
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with plugin_import.importing(tmp_path / "p.py") as watch:
                raise KeyboardInterrupt  # the plugin's own
        assert watch.arrived is False
        with pytest.raises(KeyboardInterrupt):
            with plugin_import.importing(tmp_path / "p.py") as watch:
                os.kill(os.getpid(), signal.SIGINT)  # a real one, as Ctrl-C sends
                time.sleep(5)  # the handler raises at once; the sleep is only a bound
        assert watch.arrived is True
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # primbench's handler back
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_non_daemon_thread_is_found_lingering_and_a_daemon_one_is_not():
    stop = threading.Event()
    lingering = threading.Thread(target=stop.wait, name="plugin-thread", daemon=False)
    background = threading.Thread(target=stop.wait, name="daemon-thread", daemon=True)
    lingering.start()
    background.start()
    try:
        names = [t.name for t in plugin_import.lingering_threads()]
        assert "plugin-thread" in names and "daemon-thread" not in names
    finally:
        stop.set()
        lingering.join()
    assert "plugin-thread" not in [t.name for t in plugin_import.lingering_threads()]
