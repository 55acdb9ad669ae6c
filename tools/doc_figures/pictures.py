"""The screenshots the docs show carry the id of the run they picture, in a PNG text chunk, so a
test can say a picture is of a run that is no longer the reference (a picture cannot be checked
figure by figure). tests/e2e/screenshots.py stamps each one it takes; making them needs Chromium,
so `make docs` cannot: the check names the command."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

PICTURES = ("docs/report.png", "docs/report-topk.png")  # of the reference's report (tests/e2e/screenshots.py)
KEY = "primbench-run"
SIGNATURE = b"\x89PNG\r\n\x1a\n"
COMMAND = "python -m tests.e2e.screenshots docs/ (needs chromium)"


def _chunks(data: bytes):
    """(type, payload, start, end) of each chunk of a PNG."""
    if not data.startswith(SIGNATURE):
        raise ValueError("not a PNG")
    at = len(SIGNATURE)
    while at < len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        kind = data[at + 4:at + 8]
        yield kind, data[at + 8:at + 8 + length], at, at + 12 + length
        at += 12 + length


def stamped_run(path: Path) -> str | None:
    """The run id a picture was stamped with, or None."""
    for kind, payload, _, _ in _chunks(Path(path).read_bytes()):
        if kind == b"tEXt" and payload.startswith(KEY.encode() + b"\0"):
            return payload.split(b"\0", 1)[1].decode("latin-1")
    return None


def stamp(path: Path, run_id: str) -> None:
    """Write `run_id` into the PNG at `path` (any earlier stamp replaced), before its IEND chunk."""
    data = Path(path).read_bytes()
    kept, end = [], None
    for kind, payload, start, stop in _chunks(data):
        if kind == b"IEND":
            end = data[start:stop]
        elif not (kind == b"tEXt" and payload.startswith(KEY.encode() + b"\0")):
            kept.append(data[start:stop])
    payload = KEY.encode() + b"\0" + run_id.encode("latin-1")
    chunk = struct.pack(">I", len(payload)) + b"tEXt" + payload + struct.pack(">I", zlib.crc32(b"tEXt" + payload))
    Path(path).write_bytes(SIGNATURE + b"".join(kept) + chunk + (end or b""))


def problems(root: Path, run_id: str) -> list[str]:
    """Each picture that is missing, or not stamped with the reference run's id."""
    found = []
    for name in PICTURES:
        path = root / name
        shown = stamped_run(path) if path.is_file() else None
        if shown != run_id:
            what = f"shows run {shown}" if shown else "says no run it shows" if path.is_file() else "is missing"
            found.append(f"{name}: {what}, the reference run is {run_id}: {COMMAND}")
    return found
