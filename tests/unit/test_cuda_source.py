"""A CUDA source is checked before it is opened and read as UTF-8 whatever the locale: a missing
file, a folder, a FIFO or a byte that is not UTF-8 is one line naming the file (and the line of the
bad byte), never a traceback or a wait; a good file reads exactly as a UTF-8 locale's read_text did,
which keeps every recorded variant hash valid."""

from __future__ import annotations

import os
import threading

import pytest

from primbench import cuda_source
from primbench.cuda_source import SourceError
from primbench.errors import UserError
from primbench.variant import expand_includes


def test_a_utf8_source_reads_as_a_utf8_locales_read_text_did(tmp_path):
    path = tmp_path / "k.cu"
    path.write_bytes("// caf\u00e9 \u2014 \u65e5\u672c\r\n__global__ void k() {}\r\n// old Mac\rend\n".encode("utf-8"))
    assert cuda_source.read(path) == path.read_text(encoding="utf-8")
    assert cuda_source.read(path) == "// caf\u00e9 \u2014 \u65e5\u672c\n__global__ void k() {}\n// old Mac\nend\n"


def test_a_byte_that_is_not_utf8_names_the_file_its_line_and_the_fix(tmp_path):
    path = tmp_path / "latin1.cu"
    path.write_bytes(b"__global__ void k() {}\n\n// caf\xe9 (Latin-1)\n")
    with pytest.raises(SourceError) as caught:
        cuda_source.read(path)
    line = str(caught.value)
    assert str(path) in line and "line 3" in line and "0xe9" in line and "save the file as UTF-8" in line
    assert isinstance(caught.value, UserError) and "\n" not in line


@pytest.mark.parametrize("kind", ["missing", "folder", "fifo"])
def test_what_is_not_a_regular_file_is_refused_without_being_opened(tmp_path, kind):
    path = tmp_path / "k.cu"
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    words = {"missing": "no such file", "folder": "is a folder", "fifo": "FIFO"}[kind]
    outcome = {}

    def read():  # in a thread: a read that waited on the FIFO would fail the join below, not hang the tests
        try:
            cuda_source.read(path)
        except SourceError as exc:
            outcome["line"] = str(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "reading a FIFO waited for a writer"
    assert str(path) in outcome["line"] and words in outcome["line"]


def test_an_included_header_is_read_the_same_way_and_one_nvrtc_brings_is_left_out(tmp_path):
    (tmp_path / "main.cu").write_text('#include "mine.cuh"\n#include "cuda_fp16.h"\nvoid f();\n', encoding="utf-8")
    (tmp_path / "mine.cuh").write_bytes(b"// \xff\n")
    with pytest.raises(SourceError, match=r"mine\.cuh: line 1: byte 0xff"):
        expand_includes(tmp_path / "main.cu")
    (tmp_path / "mine.cuh").write_text("// \u00b5s\n", encoding="utf-8")
    assert expand_includes(tmp_path / "main.cu") == '#include "mine.cuh"\n#include "cuda_fp16.h"\nvoid f();\n\n// \u00b5s\n'
