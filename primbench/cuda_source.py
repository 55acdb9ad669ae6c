"""Reading a CUDA source (a variant's .cu and the headers it includes) for its identity hash and for
NVRTC: the file is checked before it is opened, and its bytes are decoded as UTF-8 whatever the
locale, so that a variant's hash is the same under C, Latin-1 and UTF-8 and no Latin-1 byte in a
comment becomes a traceback.

Decoded rather than hashed as bytes: the identity hash has always covered the decoded text (as a
UTF-8 locale read it), so every recorded hash stays valid, and NVRTC takes text anyway. A file that
is not UTF-8 is one line naming the file and the line of its first bad byte.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from primbench import pathnames
from primbench.errors import UserError


class SourceError(UserError):
    """A CUDA source that cannot be read: missing, not a regular file, unreadable or not UTF-8."""

    def __init__(self, message: str, path: Path):
        super().__init__(message)
        self.path = path


def problem(path: Path) -> str | None:
    """Why `path` cannot be a CUDA source (it is missing, a folder, a FIFO, a device), else None.
    Looked at with stat only: a FIFO is never opened, so nothing blocks on it."""
    kind = pathnames.kind_of(path)
    if kind == pathnames.FILE:
        return None
    if kind is None:
        return "no such file"
    return "is a folder" if kind == pathnames.FOLDER else f"is {pathnames.special_kind(path)}, not a regular file"


def read(path: Path) -> str:
    """The text of the CUDA file at `path`, read as UTF-8 with newlines as Path.read_text gives them
    (\\r\\n and \\r as \\n: the hashes recorded so far were taken so). Any fault is one SourceError line."""
    why = problem(path)
    if why is not None:
        raise SourceError(f"CUDA source {pathnames.shown(path)}: {why}; give the .cu file itself", path)
    try:
        # O_NONBLOCK: should a FIFO take the file's place after the check, opening it does not wait
        # for a writer, and fstat below refuses it.
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SourceError(f"CUDA source {pathnames.shown(path)}: cannot read it ({exc.strerror or exc}); "
                          "check its permissions", path) from None
    with os.fdopen(handle, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise SourceError(f"CUDA source {pathnames.shown(path)}: is not a regular file; give the .cu file itself", path)
        data = file.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SourceError(f"CUDA source {pathnames.shown(path)}: line {line}: byte 0x{data[exc.start]:02x} is not "
                          "UTF-8; save the file as UTF-8 (primbench reads every file as UTF-8, whatever the locale)",
                          path) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")
