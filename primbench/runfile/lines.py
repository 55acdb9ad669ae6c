"""A run file's lines, read with bounded memory, plain or gzip-compressed.

A run file comes from anywhere (a CI artifact, a colleague, a damaged disk), so nothing in it may
make reading it unbounded: a small gzip that unpacks to gigabytes, one line of a gigabyte, or a
gigabyte of padding after the last record. Compressed files are unpacked in chunks as they are
read; each line and the whole file have a cap far above any real run; what is not a record is
refused with the line it is on, never skipped. The one exception is the last line of a file
cut short while a record was being written (an interrupted run): it is dropped with a warning.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from pathlib import Path

from primbench.errors import UserError

# A case record holds at most a few thousand samples (about 10 bytes each): far under 16 MiB.
MAX_LINE_BYTES = 16 << 20
# 100,000 cases (the largest sweep a config accepts without --allow-large) at about 5 KB each.
MAX_RUN_BYTES = 1 << 30
_READ_CHUNK = 1 << 20


GZIP_MAGIC = b"\x1f\x8b"  # a gzip member's first two bytes (RFC 1952)


class RunFileError(UserError):
    """A run file that cannot be read: missing, not JSON, no header, or an unknown schema."""


def is_gzip(path) -> bool:
    """Whether the file is gzip-compressed, by its first bytes (an archived run, or a copy of one
    under any name, e.g. a baseline made from it)."""
    with open(path, "rb") as handle:
        return handle.read(2) == GZIP_MAGIC


def _plain_chunks(handle) -> Iterator[bytes]:
    return iter(lambda: handle.read(_READ_CHUNK), b"")


def _gzip_chunks(handle, path: Path, warnings: list[str]) -> Iterator[bytes]:
    """The unpacked content, a chunk at a time. Several gzip members one after another are one
    file, as zcat reads them (what `gzip -c part >> run.jsonl.gz`, pigz and bgzip write); a file cut
    short yields what decodes, with a warning (its last line then reads as cut short); bytes after
    a member that do not start another are refused."""
    unpack, data = zlib.decompressobj(wbits=31), b""  # 31: a gzip header and trailer
    for packed in iter(lambda: handle.read(64 << 10), b""):
        data, held_back = data + packed, False
        while data or held_back:
            if unpack.eof:  # a member ended: another must start here
                if len(data) < len(GZIP_MAGIC):
                    break  # its first bytes are still to be read
                if not data.startswith(GZIP_MAGIC):
                    raise RunFileError(f"{path}: has data after the end of its gzip stream; it is damaged or two files "
                                       "were joined (gunzip it and check its lines)")
                unpack = zlib.decompressobj(wbits=31)
            try:
                chunk = unpack.decompress(data, _READ_CHUNK)
            except zlib.error as exc:
                raise RunFileError(f"{path}: its gzip stream is damaged ({exc})") from None
            yield chunk
            # A full chunk may leave output inside zlib with no input left to feed it: ask again.
            held_back = len(chunk) == _READ_CHUNK and not unpack.eof
            data = unpack.unused_data if unpack.eof else unpack.unconsumed_tail
    if unpack.eof and data:
        raise RunFileError(f"{path}: has data after the end of its gzip stream; it is damaged or two files "
                           "were joined (gunzip it and check its lines)")
    if not unpack.eof:
        warnings.append(f"{path}: its gzip stream ends early (the file was cut short); what came after the cut is missing")


def read_lines(path: Path, warnings: list[str]) -> Iterator[tuple[int, str, bool]]:
    """(line number, text, whether the line ended with a newline) for each line of the file;
    what reading it found worth a warning is appended to `warnings`."""
    with open(path, "rb") as handle:
        chunks = _gzip_chunks(handle, path, warnings) if handle.read(2) == GZIP_MAGIC else _plain_chunks(handle)
        handle.seek(0)
        number, total, pending = 0, 0, b""
        for chunk in chunks:
            total += len(chunk)
            if total > MAX_RUN_BYTES:
                raise RunFileError(f"{path}: holds over {MAX_RUN_BYTES >> 30} GiB (unpacked); no run is that large: "
                                   "it is damaged or not a run file")
            *whole, pending = (pending + chunk).split(b"\n")
            for line in whole:
                number += 1
                yield number, _text(path, number, line), True
            if len(pending) > MAX_LINE_BYTES:
                break
        if pending:
            yield number + 1, _text(path, number + 1, pending), False


def _text(path: Path, number: int, line: bytes) -> str:
    if len(line) > MAX_LINE_BYTES:
        raise RunFileError(f"{path}:{number}: a line over {MAX_LINE_BYTES >> 20} MiB; no run record is that long: "
                           "the file is damaged")
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        raise RunFileError(f"{path}:{number}: not UTF-8 text; the file is damaged or not a run file") from None


_RECORD_START = re.compile(r'\{\s*"kind"\s*:')


def looks_cut_short(text: str) -> bool:
    """Whether an unfinished last line is a record cut off mid-write (the start of a JSON object
    as primbench writes it, '{"kind":...'), rather than junk appended to the file."""
    return bool(_RECORD_START.match(text)) or (text != "" and '{"kind":'.startswith(text))
