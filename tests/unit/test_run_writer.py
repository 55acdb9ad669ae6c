"""One writer per run file, and a full disk said in one line: what `run`, `run --resume` and a run over
several GPUs rely on when they append to a run file (runfile/io.py RunWriter, runfile/lock.py)."""

import errno
import gzip
import os
import subprocess
import sys

import pytest

from primbench.runfile import io as runfile_io
from primbench.runfile.io import RunFileError, RunWriter, load_run
from primbench.runfile.records import RunResume
from tests.conftest import REPO, RUNS

HOLD = """
import sys, time
from primbench.runfile.io import RunWriter
writer = RunWriter(sys.argv[1], create=False)
print("holding", flush=True)
time.sleep(60)
"""


@pytest.fixture
def interrupted(tmp_path):
    """A real run (progression.jsonl.gz) as an interrupted plain run file: its end record taken off."""
    lines = gzip.decompress((RUNS / "progression.jsonl.gz").read_bytes()).decode().splitlines()
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(line for line in lines if '"kind":"end"' not in line) + "\n")
    return path


@pytest.fixture
def held(interrupted):
    """The run file, its writer's lock held by another process for as long as the test runs."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(interrupted)], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert holder.stdout.readline().strip() == "holding"
    yield interrupted, holder.pid
    holder.kill()
    holder.wait()


def test_a_second_writer_is_refused_in_one_line_naming_the_first(held):
    path, pid = held
    before = path.read_bytes()
    with pytest.raises(RunFileError) as refused:
        RunWriter(path, create=False)
    message = str(refused.value)
    assert message.startswith(f"{path}: is being written by process {pid}: ") and str(path) in message
    assert "one writer at a time" in message and "\n" not in message
    assert path.read_bytes() == before


def test_a_second_resume_is_refused_before_it_reads_or_needs_a_gpu(held):
    path, pid = held
    before = path.read_bytes()
    result = subprocess.run([sys.executable, "bench.py", "run", "--resume", str(path)], cwd=REPO, capture_output=True,
                            text=True, timeout=120)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"is being written by process {pid}" in lines[0] and "no NVIDIA GPU" not in lines[0]
    assert path.read_bytes() == before


def test_the_lock_ends_with_its_writer_however_it_ends(interrupted):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(interrupted)], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert holder.stdout.readline().strip() == "holding"
    holder.kill()  # SIGKILL: no clean-up ran
    holder.wait()
    with RunWriter(interrupted, create=False) as writer:  # free again, and no lock file was left behind
        writer.append(RunResume(at="now", done_before=0))
    assert sorted(p.name for p in interrupted.parent.iterdir()) == ["run.jsonl"]


def _fill_the_disk_after(monkeypatch, records: int):
    """os.fsync as on a disk that fills after `records` records were written."""
    calls = {"n": 0}
    real = os.fsync

    def fsync(fd):
        calls["n"] += 1
        if calls["n"] > records:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd)

    monkeypatch.setattr(runfile_io.os, "fsync", fsync)


def test_a_full_disk_mid_run_is_one_line_naming_resume_and_keeps_every_record_before(interrupted, monkeypatch):
    cases_before = len(load_run(interrupted).cases)
    _fill_the_disk_after(monkeypatch, 1)
    writer = RunWriter(interrupted, create=False)
    writer.append(RunResume(at="now", done_before=cases_before))
    with pytest.raises(RunFileError) as full:
        writer.append(RunResume(at="later", done_before=cases_before))
    assert str(full.value) == (f"{interrupted}: No space left on device while writing it; every record before is kept: "
                               f"free some space, then finish it with `primbench run --resume {interrupted}`")
    writer.close()
    monkeypatch.undo()
    run = load_run(interrupted)  # whole, interrupted, the resume line that fitted kept
    assert not run.finished and len(run.cases) == cases_before and len(run.resumes) >= 1


def test_a_new_run_that_cannot_write_its_header_is_removed_and_says_nothing_was_recorded(tmp_path, monkeypatch):
    header = load_run(RUNS / "progression.jsonl.gz").header
    path = tmp_path / "new.jsonl"
    _fill_the_disk_after(monkeypatch, 0)
    writer = RunWriter(path, create=True)
    with pytest.raises(RunFileError, match="No space left on device; nothing was recorded .the file is removed."):
        writer.append(header)
    assert not path.exists()


def test_another_write_error_is_not_called_a_full_disk(interrupted, monkeypatch):
    monkeypatch.setattr(runfile_io.os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.EIO, "I/O error")))
    with RunWriter(interrupted, create=False) as writer, pytest.raises(OSError, match="I/O error"):
        writer.append(RunResume(at="now", done_before=0))
