"""Paths as a user typed them: looked at without an exception the user cannot act on, and named in a
message whatever bytes they hold.

pathlib's exists(), is_file() and is_dir() raise on a name the system refuses (a part over 255
bytes, a loop of links) and a name that is not UTF-8 arrives as lone surrogates, which a strict
stream cannot print. Every check of a path the user gave goes through `kind_of`, and every path
named in a message through `shown`.
"""

from __future__ import annotations

import errno
import os
import stat

from primbench.errors import UserError

SHOWN_CHARACTERS = 240  # a path in a message: the line stays readable, both ends of the name kept

FILE, FOLDER, SPECIAL = "file", "folder", "special"  # what kind_of answers; None: nothing is there


def escaped(text) -> str:
    """Text safe to print on any stream: bytes that are not UTF-8 (a file name's, kept by Python as
    lone surrogates) written as \\xNN, as repr() would write them."""
    text = os.fsdecode(text) if isinstance(text, bytes) else str(text)
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def shown(path) -> str:
    """A path for a message: escaped, and a very long one cut in the middle."""
    text = escaped(os.fspath(path) if isinstance(path, os.PathLike) else path)
    if len(text) <= SHOWN_CHARACTERS:
        return text
    half = SHOWN_CHARACTERS // 2 - 2
    return f"{text[:half]}...{text[-half:]} ({len(os.fsencode(os.fspath(path)))} bytes)"


def refused(path, exc: OSError) -> UserError | None:
    """The one line for a path the system will not look up at all, else None."""
    if exc.errno == errno.ENAMETOOLONG:
        return UserError(f"{shown(path)}: file name too long (at most 255 bytes a name, 4096 a path); "
                         "give a shorter one")
    if exc.errno == errno.ELOOP:
        return UserError(f"{shown(path)}: too many levels of symbolic links (a link that points at itself?); "
                         "give the file itself")
    return None


def status(path) -> os.stat_result | None:
    """os.stat of `path` (links followed), None when nothing is there; a name the system refuses,
    or one it may not look at, is one UserError line."""
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise refused(path, exc) or UserError(f"{shown(path)}: cannot look at it ({exc.strerror or exc}); "
                                              "check the path and its permissions") from None


def kind_of(path) -> str | None:
    """FILE, FOLDER, SPECIAL (a FIFO, a device, a socket) or None when nothing is there."""
    found = status(path)
    if found is None:
        return None
    if stat.S_ISREG(found.st_mode):
        return FILE
    return FOLDER if stat.S_ISDIR(found.st_mode) else SPECIAL


def special_kind(path) -> str:
    """'a FIFO', 'a character device', ... : what a path that is neither a file nor a folder is."""
    mode = os.stat(path).st_mode
    for test, name in ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def exists(path) -> bool:
    return status(path) is not None


def is_file(path) -> bool:
    return kind_of(path) == FILE


def is_dir(path) -> bool:
    return kind_of(path) == FOLDER
