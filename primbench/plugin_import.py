"""What surrounds the import of one plugin file (registry.load_plugin runs it):

- the plugin's folder is first on sys.path while it imports, so that it can import a module that
  sits beside it (`import helpers`), as a script can; afterwards the folder stays on sys.path, last,
  so that a function of the plugin importing a sibling later still finds it, while no sibling can
  shadow a module primbench imports after (a plugin's `yaml.py`). Sibling modules share one
  namespace with every other plugin's: give them names of their own.
- a real Ctrl-C is told apart from a KeyboardInterrupt the plugin raises itself: SIGINT's handler
  notes the signal's arrival before doing what it did before. A KeyboardInterrupt with no SIGINT
  behind it is the plugin's fault (exit 2, one line), not the user stopping the command (130).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from pathlib import Path


class CtrlC:
    """Whether a SIGINT arrived while the plugin imported."""

    arrived = False


@contextlib.contextmanager
def importing(plugin: Path):
    """Around a plugin's exec_module: yields a CtrlC, which stays readable after the block."""
    watch = CtrlC()
    folder = str(plugin.parent)
    sys.path.insert(0, folder)
    try:
        with noting_sigint(watch):
            yield watch
    finally:
        with contextlib.suppress(ValueError):  # the plugin took it off itself
            sys.path.remove(folder)
        if folder not in sys.path:
            sys.path.append(folder)


@contextlib.contextmanager
def noting_sigint(watch: CtrlC):
    previous = signal.getsignal(signal.SIGINT)
    # Signals reach only the main thread; SIG_IGN, SIG_DFL and a C handler (None) raise no
    # KeyboardInterrupt, so any one met there is the plugin's own.
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield
        return

    def note(signum, frame):
        watch.arrived = True
        previous(signum, frame)  # Python's default raises KeyboardInterrupt; an embedder's does its own

    signal.signal(signal.SIGINT, note)
    try:
        yield
    finally:
        # Put back what was there, also when the plugin set a handler of its own: how a command ends
        # on Ctrl-C (one line, 130, no temporary file left) is primbench's.
        signal.signal(signal.SIGINT, previous)


def lingering_threads() -> list[threading.Thread]:
    """Threads that would keep the process alive after the command has finished (non-daemon ones
    other than the main thread): primbench starts none, so they are a plugin's."""
    main = threading.main_thread()
    return [t for t in threading.enumerate() if t is not main and t.is_alive() and not t.daemon]
