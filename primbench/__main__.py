"""`python -m primbench ...`: the same command line as the `primbench` script."""

import os
import signal
import sys


def _interrupted_while_starting(signum, frame):
    # Nothing is written while the modules load: ending at once loses nothing, and prints no traceback.
    sys.stderr.write("primbench: interrupted\n")
    sys.stderr.flush()
    os._exit(130)


signal.signal(signal.SIGINT, _interrupted_while_starting)
from primbench.cli.main import end_now, main  # noqa: E402
from primbench.errors import EXIT_INTERRUPTED  # noqa: E402

# From here Ctrl-C is a KeyboardInterrupt, which main() ends with one line after removing any
# temporary file; once main() has returned, the command has finished and Ctrl-C changes nothing.
signal.signal(signal.SIGINT, signal.default_int_handler)
code = main()
signal.signal(signal.SIGINT, signal.SIG_IGN)
if code == EXIT_INTERRUPTED:
    # CPython 3.11 marks a KeyboardInterrupt that passed through exec() of a string (dataclasses and
    # namedtuple build their methods so) as uncaught, and `python -m` then ends by SIGINT, not with
    # main's 130, though main caught it. Everything is written and closed by now: end here.
    end_now(code)
sys.exit(code)
