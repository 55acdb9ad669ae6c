"""Writing what primbench makes (reports, pages, summaries, baselines) without harming what it reads.

Three rules: an output never overwrites an input (a report written over its own run file would lose
the raw samples); a write to a file is whole or absent: it goes to a temporary file beside the
target and is renamed into place, so an interrupted or failed write leaves nothing half-written;
and what is not a file (a FIFO, a terminal, /dev/null, /dev/stdout, a shell's `>(cmd)`) is written
where it is, as a stream, and never replaced: renaming a file over /dev/stdout would turn the
machine's /dev/stdout into a regular file, and the output would reach no reader. Those rules are for
the outputs a user names; inside a folder of primbench's own (a published site), the names are its
own, and whatever sits at one, a link included, is replaced and never written through
(write_own_file).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import sys
import tempfile
import time
from pathlib import Path

from primbench.errors import UserError
from primbench.pathnames import FILE, FOLDER, SPECIAL, exists, is_dir, kind_of, shown, status

STANDARD_OUTPUT = "-"  # `-o -`: where a command's output may go to standard output
READER_WAIT_S = 5.0  # a FIFO nobody reads yet: how long to wait for its reader before saying so

# The names of a descriptor this process has open: /dev/stdout, /dev/fd/N (what a shell's `>(cmd)`
# passes), /proc/self/fd/N. Written through the descriptor itself, such an output goes on from
# where the stream is, as a shell's redirection does, whatever the descriptor is open on.
_STANDARD_STREAMS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_DESCRIPTOR_NAME = re.compile(r"^/(?:dev/fd|proc/self/fd|proc/(\d+)/fd)/(\d+)$")
_MOST_LINKS = 40  # as the kernel follows at most 40 links in one lookup


def refuse_overwriting_inputs(outputs, inputs) -> None:
    """One line, before any work, when an output path is one of the inputs (a folder output: when an
    input lies inside it, where the pages written could land on it)."""
    sources = [(p, _identity(p)) for p in inputs if p is not None and not str(p).startswith("ref:")]
    for output in (o for o in outputs if o is not None and o != STANDARD_OUTPUT):
        if _writes_in_place(output):
            continue  # a stream is written to, never replaced
        target, folder = _identity(output), is_dir(output)
        for source, identity in sources:
            inside = folder and Path(os.path.realpath(output)) in Path(os.path.realpath(source)).parents
            if identity == target or inside:
                raise UserError(f"{shown(output)}: is an input of this command ({shown(os.path.realpath(source))}); "
                                "write the output elsewhere, primbench never overwrites what it reads")


def refuse_one_file_twice(named: dict) -> None:
    """One line, before any work, when two outputs of one command are one file (`--markdown F
    --junit ./F`, or a link to F): the second would replace the first. Two streams (both
    /dev/stdout) are not refused: each is written after the other, and nothing is replaced."""
    seen = {}
    for flag, path in named.items():
        if path is None or path == STANDARD_OUTPUT or _writes_in_place(path):
            continue
        identity = _identity(path)
        if identity in seen:
            other, other_path = seen[identity]
            raise UserError(f"{other} {shown(other_path)} and {flag} {shown(path)} are the same file; "
                            "give each output its own path")
        seen[identity] = (flag, path)


def refuse_standard_output(flag: str, path, why: str) -> None:
    """One line when `-` is given for an output that cannot go to standard output (`why` says what
    is there already, or why it must be a file)."""
    if path == STANDARD_OUTPUT:
        raise UserError(f"{flag} -: {why}; give a file name (./- for a file named '-')")


def check_writable(path, *, longest_name: int = 0, follow_links: bool = True) -> None:
    """Refuse, before any work, an output path that is a folder, whose parent is a file, whose
    folder this user may not write into, or whose full path is too long to write (`longest_name`:
    the longest name to be written beside it, for a folder of pages). `follow_links=False`: for
    write_own_file, which replaces what it finds at the name, a link or a FIFO included."""
    if path is None or (follow_links and _writes_in_place(path)):
        return
    text = os.fspath(path)
    path = Path(path)
    _refuse_a_path_too_long(path, longest_name)
    kind = _kind_here(path) if not follow_links else kind_of(path)
    if kind == FOLDER:
        raise UserError(f"{shown(path)}: is a folder; give a file name")
    if kind is None and text.endswith(os.sep):  # Path() drops the '/': the file would be written as the folder's name
        raise UserError(f"{shown(text)}: ends in '/', a folder, and there is none; give a file name")
    parent = next((p for p in path.parents if exists(p)), None)
    if parent is not None and not is_dir(parent):
        raise UserError(f"{shown(path)}: {shown(parent)} is a file, not a folder; give another path")
    # The temporary file goes into the folder the file (a link: the file it names) lies in, or into
    # the nearest folder there is, if folders are to be made: asked now, a folder that refuses is one
    # line before any work, not a line after the progress lines.
    target = Path(os.path.realpath(path)) if follow_links and os.path.islink(path) else path
    folder = next((p for p in target.parents if exists(p)), None)
    effective = os.access in os.supports_effective_ids  # a set-user-ID run: the user it runs as
    if folder is not None and not os.access(folder, os.W_OK | os.X_OK, effective_ids=effective):
        raise UserError(f"{shown(path)}: cannot write it ({shown(folder)} is not a folder this user may write into); "
                        "choose a folder you can write to")


# The temporary file beside a target: "." + 40 bytes of its name + "." + 8 random + ".tmp".
_TEMPORARY_NAME_BYTES = 54


def _refuse_a_path_too_long(path: Path, longest_name: int) -> None:
    """A relative output is written under the working folder's full path (through a temporary file
    renamed into place, with the links resolved): from a folder nested deeper than the system's
    4096 bytes a path, that write fails. Refused now, not after the work."""
    limit = _path_limit()
    folder = os.fsencode(os.path.realpath(path.parent))  # a working folder gone: the CLI's own one line
    name = max(len(os.fsencode(path.name)), longest_name, _TEMPORARY_NAME_BYTES)
    if len(folder) + 1 + name >= limit:
        nested = " (the working folder is nested that deep)" if not path.is_absolute() else ""
        raise UserError(f"{shown(path)}: cannot write it: its folder's full path is {len(folder):,} bytes, and the system "
                        f"takes at most {limit} a path{nested}; give a path in a folder nearer the root")


def _path_limit() -> int:
    try:
        return os.pathconf("/", "PC_PATH_MAX")
    except (OSError, ValueError, AttributeError):
        return 4096


def _kind_here(path: Path) -> str | None:
    """kind_of for the name itself: a link is not followed (FILE: it is replaced as a file is)."""
    return FILE if os.path.islink(path) else kind_of(path)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()  # what open() would give a new file


def encoded(data: str | bytes) -> bytes:
    """UTF-8 bytes of what is written. A file name that is not UTF-8 reaches a page as lone
    surrogates: written escaped (\\xNN), the output stays valid UTF-8, which XML and JSON need."""
    if isinstance(data, bytes):
        return data
    try:
        return data.encode("utf-8")
    except UnicodeEncodeError:
        from primbench.pathnames import escaped

        return escaped(data).encode("utf-8")


def write_to_standard_output(data: str | bytes) -> None:
    """`-o -`: the whole output on standard output, after what was printed before it."""
    sys.stdout.flush()
    binary = getattr(sys.stdout, "buffer", None)
    if binary is None:  # a text stream standing in for stdout (a test's capture)
        sys.stdout.write(data if isinstance(data, str) else data.decode("utf-8", "backslashreplace"))
    else:
        binary.write(encoded(data))
        binary.flush()


def goes_to_standard_output(path) -> bool:
    """Whether writing `path` writes this process's standard output (/dev/stdout, /dev/fd/1, or the
    FIFO or terminal stdout is open on): a command then prints no "written to" line, which would
    land in the middle of its own output."""
    if path is None or path == STANDARD_OUTPUT:
        return path is not None
    if _own_descriptor(path) == 1:
        return True
    try:
        here, out = os.stat(path), os.fstat(1)
    except (OSError, ValueError):
        return False
    return kind_of(path) == SPECIAL and (here.st_dev, here.st_ino) == (out.st_dev, out.st_ino)


def write_atomically(path, data: str | bytes) -> Path:
    """Write `data` to `path`: a file through a temporary file renamed into place (through a link,
    onto the file it names); anything else in place. A write that cannot happen (permission, a full
    disk, a parent that is a file) is one UserError line, nothing left."""
    payload = encoded(data)
    descriptor = _own_descriptor(path)
    if descriptor is not None or kind_of(path) == SPECIAL:
        _write_in_place(Path(path), payload, descriptor)
        return Path(path)
    check_writable(path)
    path = Path(path)
    _replace(Path(os.path.realpath(path)), payload, path)  # a link stays a link; the file it names gets the new text
    return path


def write_own_file(path, data: str | bytes) -> Path:
    """Write `data` to a name primbench chose itself inside a folder of its own (a site's pages and
    caches): whatever is found at that name (a file, a link, a FIFO) is replaced by a regular file,
    never written through. A link planted in a site folder would otherwise take the page, or the
    cache, to a file anywhere else. The rule that a special file is written in place is for the
    outputs a user names (-o /dev/stdout), and a user names no file inside a site."""
    check_writable(path, follow_links=False)
    _replace(Path(path), encoded(data), Path(path))
    return Path(path)


def _replace(target: Path, payload: bytes, path: Path) -> None:
    """`payload` into a temporary file beside `target`, renamed over it (`path`: what the user named)."""
    temporary = None
    try:
        with _signals_held():
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                # The name kept short: a 255-byte target name plus a prefix and suffix would be too long.
                handle, temporary = tempfile.mkstemp(prefix=f".{target.name[:40]}.", suffix=".tmp", dir=target.parent)
                with os.fdopen(handle, "wb") as out:
                    out.write(payload)
                os.chmod(temporary, _FILE_MODE)  # mkstemp makes it 0600; a report or site page is for others to read
                os.replace(temporary, target)
                temporary = None
            finally:
                if temporary is not None and os.path.exists(temporary):
                    os.unlink(temporary)
    except OSError as exc:
        raise UserError(f"{shown(path)}: cannot write it ({exc.strerror or exc}); choose a folder you can write to") from None


@contextlib.contextmanager
def _signals_held():
    """While a temporary file exists, Ctrl-C (or a TERM) waits until it is renamed or removed: a
    KeyboardInterrupt raised between creating it and remembering its name would leave it behind."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _identity(path):
    """What two names of one file share: its device and inode where it is there, else the path
    with its links resolved (so F, ./F and a link to F agree before F exists)."""
    found = status(path)
    return (found.st_dev, found.st_ino) if found is not None else os.path.realpath(path)


def _writes_in_place(path) -> bool:
    return _own_descriptor(path) is not None or kind_of(path) == SPECIAL


def _own_descriptor(path) -> int | None:
    """N when `path` names descriptor N of this process (/dev/stdout, /dev/fd/N, a link to one)."""
    current = os.path.abspath(os.fspath(path))
    for _ in range(_MOST_LINKS):
        if current in _STANDARD_STREAMS:
            return _STANDARD_STREAMS[current]
        named = _DESCRIPTOR_NAME.match(current)
        if named and (named[1] is None or int(named[1]) == os.getpid()):
            return int(named[2])
        try:
            target = os.readlink(current)
        except OSError:  # not a link (or nothing there): an ordinary path
            return None
        current = os.path.normpath(os.path.join(os.path.dirname(current), target))
    return None


def _write_in_place(path: Path, payload: bytes, descriptor: int | None) -> None:
    """Stream `payload` into a FIFO, a device or an open descriptor: never renamed over, never
    truncated. A reader that has gone is a BrokenPipeError, which the CLI ends quietly with."""
    for stream in (sys.stdout, sys.stderr):  # what was printed comes first, as it was printed first
        stream.flush()
    try:
        handle = os.dup(descriptor) if descriptor is not None else _open_special(path)
    except OSError as exc:
        why = {errno.ENXIO: f"nothing reads it (a FIFO with no reader after {READER_WAIT_S:.0f} s); start the reader first",
               errno.EBADF: "no such open file descriptor in primbench"}.get(exc.errno, exc.strerror or str(exc))
        raise UserError(f"{shown(path)}: cannot write it ({why})") from None
    try:
        view = memoryview(payload)
        while view:
            view = view[os.write(handle, view):]
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise UserError(f"{shown(path)}: cannot write it ({exc.strerror or exc})") from None
    finally:
        os.close(handle)


def _open_special(path: Path) -> int:
    """Open a FIFO or a device for writing. Opened non-blocking, so that a FIFO with no reader
    yet is waited for a few seconds and then named, instead of hanging forever."""
    deadline = time.monotonic() + READER_WAIT_S
    while True:
        try:
            handle = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    os.set_blocking(handle, True)  # the reader reads at its own pace: writes wait for it
    return handle
