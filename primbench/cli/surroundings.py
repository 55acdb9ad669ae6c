"""What the command line finds around it that no argument names: a standard output that is closed
(`primbench check ... >&-`), and a working folder that was deleted under the shell that started it.

A closed standard output is met as a closed pipe is: the reader has gone, here before the first
line. Python starts with sys.stdout None where descriptor 1 is closed (print() then drops every
line, and a flush is an AttributeError), and with a stream whose writes fail (EBADF) where it is
open for reading only (`1</dev/null`); a stream closed in the process fails with a ValueError. Either way sys.stdout becomes ClosedOutput, whose first
write raises ClosedStandardOutput, a BrokenPipeError: every command then ends as after `| head -0`,
and main says once why."""

from __future__ import annotations

import errno
import io
import os
import sys

CLOSED_LINE = ("standard output is closed (>&-) or takes no writes, so nothing this command prints can be read; "
               "send it to /dev/null or a file instead")
DELETED_LINE = "the working folder was deleted: cd to an existing folder"


class ClosedStandardOutput(BrokenPipeError):
    """A write to a standard output that is closed."""


class ClosedOutput(io.TextIOBase):
    """sys.stdout where descriptor 1 takes no writes: the first line written raises."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise ClosedStandardOutput(errno.EBADF, CLOSED_LINE)

    def flush(self) -> None:  # nothing was taken, so nothing is pending
        pass

    def fileno(self) -> int:
        # rich, meeting a closed pipe, points descriptor 1 at /dev/null before it exits: that is harmless here too.
        return 1


def stand_in_for_a_closed_stdout():
    """Put ClosedOutput in sys.stdout's place where standard output takes no writes; return what
    was there, for put_back(), or None where standard output is fine."""
    if sys.stdout is not None and not _descriptor_refuses_writes(sys.stdout):
        return None
    before = sys.stdout
    sys.stdout = ClosedOutput()
    return (before,)


def put_back(saved) -> None:
    if saved is not None and isinstance(sys.stdout, ClosedOutput):
        sys.stdout = saved[0]


def _descriptor_refuses_writes(stream) -> bool:
    if getattr(stream, "closed", False):  # a stream closed in this process: a write is a ValueError
        return True
    try:
        fd = stream.fileno()
    except (AttributeError, ValueError, OSError):  # a stand-in (a test's capture) takes what is printed
        return False
    return _refuses_writes(fd)


def _refuses_writes(fd: int) -> bool:
    try:
        import fcntl

        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    except ImportError:  # no fcntl (Windows): a failed write is still met as EBADF (is_closed_stdout)
        return False
    except OSError:  # EBADF: closed
        return True
    return flags & os.O_ACCMODE == os.O_RDONLY


def is_closed_stdout(exc: OSError) -> bool:
    """An EBADF from writing standard output (a stream that was not replaced, or a flush at the end)."""
    return exc.errno == errno.EBADF and exc.filename is None and _refuses_writes(1)


def working_folder_problem() -> str | None:
    """The line for a working folder the system cannot give (deleted, or one it cannot name),
    where a command's relative paths would be looked up; None where it is fine."""
    try:
        os.getcwd()
    except FileNotFoundError:
        return DELETED_LINE
    except OSError as exc:
        return f"the working folder cannot be read ({exc.strerror}): cd to another folder"
    return None
