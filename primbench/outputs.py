"""Writing what primbench makes (reports, pages, summaries, baselines) without harming what it reads.

Two rules: an output never overwrites an input (a report written over its own run file would lose
the raw samples), and a write is whole or absent: it goes to a temporary file beside the target
and is renamed into place, so an interrupted or failed write leaves nothing half-written.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from primbench.errors import UserError


def refuse_overwriting_inputs(outputs, inputs) -> None:
    """One line, before any work, when an output path is one of the inputs (a folder output: when an
    input lies inside it, where the pages written could land on it)."""
    inputs = [Path(p).resolve() for p in inputs if p is not None and not str(p).startswith("ref:")]
    for output in (Path(o) for o in outputs if o is not None):
        target = output.resolve()
        for source in inputs:
            if source == target or (output.is_dir() and target in source.parents):
                raise UserError(f"{output}: is an input of this command ({source}); write the output elsewhere, "
                                "primbench never overwrites what it reads")


def check_writable(path) -> None:
    """Refuse, before any work, an output path that is a folder or whose parent is a file."""
    if path is None:
        return
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{path}: is a folder; give a file name")
    parent = next((p for p in path.parents if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise UserError(f"{path}: {parent} is a file, not a folder; give another path")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()  # what open() would give a new file


def write_atomically(path, data: str | bytes) -> Path:
    """Write `data` to `path` through a temporary file renamed into place; a write that cannot
    happen (permission, a full disk, a parent that is a file) is one UserError line, nothing left."""
    path = Path(path)
    check_writable(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(handle, "wb") as out:
            out.write(payload)
        os.chmod(temporary, _FILE_MODE)  # mkstemp makes it 0600; a report or site page is for others to read
        os.replace(temporary, path)
        temporary = None
    except OSError as exc:
        raise UserError(f"{path}: cannot write it ({exc.strerror or exc}); choose a folder you can write to") from None
    finally:
        if temporary is not None and os.path.exists(temporary):
            os.unlink(temporary)
    return path
