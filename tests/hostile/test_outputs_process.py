"""Outputs and the process under hostile conditions: an output that is not a regular file (a FIFO,
a pipe from `>(cmd)`, a device, a link to one) is written in place and never replaced; `-o -`;
two outputs naming one file; Ctrl-C at any moment; a reader that closed the pipe; a junk
MPLBACKEND; names too long to look up or not UTF-8; a plugin path that is a FIFO."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import primbench.cli.main  # noqa: F401 (imported here once: each forked case then starts at once)
import primbench.report.context  # noqa: F401
from primbench import outputs
from primbench.errors import UserError
from tests.hostile import harness

REPO = Path(__file__).resolve().parents[2]
PAYLOAD = bytes(range(256)) * 800  # 200 KiB: more than a pipe holds, so it is streamed while read
LONG = "a" * 300




def _one_line(outcome, code: int, says: str) -> str:
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    where = f"exit {outcome.code}; stderr {outcome.stderr[-600:]!r}"
    assert outcome.code == code and "Traceback" not in outcome.stderr + outcome.stdout, where
    assert len(lines) == 1 and lines[0].startswith("primbench: ") and says in lines[0], where
    return lines[0]


def _cli(argv, folder: Path):
    return harness.run_cli(argv, folder, folder.parent / "output")


def _start(argv, cwd, **popen):
    return subprocess.Popen([sys.executable, "-m", "primbench", *argv], cwd=cwd, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(REPO), **popen.pop("env", {})), **popen)


def _read_all(fd: int, into: list) -> threading.Thread:
    def read():
        with os.fdopen(fd, "rb") as stream:
            into.append(stream.read())
    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


# -- write_atomically: a file is replaced whole; anything else is written in place -------------------
def test_a_fifo_and_a_link_to_it_are_streamed_into_never_replaced(tmp_path):
    fifo, link = tmp_path / "fifo", tmp_path / "link"
    os.mkfifo(fifo)
    link.symlink_to(fifo)
    for target in (fifo, link):
        got = []
        reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
        reader.start()
        outputs.write_atomically(target, PAYLOAD)
        reader.join(10)
        assert got == [PAYLOAD]
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "link"]  # no temporary file


def test_a_pipe_named_by_dev_fd_and_a_link_to_it_are_written_in_place(tmp_path):
    read_end, write_end = os.pipe()
    got = []
    reader = _read_all(read_end, got)
    link = tmp_path / "to-the-pipe"
    link.symlink_to(f"/dev/fd/{write_end}")
    outputs.write_atomically(f"/dev/fd/{write_end}", PAYLOAD)  # what a shell's `-o >(cmd)` passes
    outputs.write_atomically(link, b"and more")
    os.close(write_end)
    reader.join(10)
    assert got == [PAYLOAD + b"and more"] and link.is_symlink()
    assert [p.name for p in tmp_path.iterdir()] == ["to-the-pipe"]


def test_a_character_device_stays_a_character_device(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # /dev/null's numbers
    except PermissionError:
        pytest.skip("this container may not make device nodes")
    outputs.write_atomically(device, PAYLOAD)
    assert stat.S_ISCHR(os.lstat(device).st_mode) and os.major(os.lstat(device).st_rdev) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["null"]


def test_a_fifo_nobody_reads_is_one_line_after_a_short_wait_not_a_hang(tmp_path, monkeypatch):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    monkeypatch.setattr(outputs, "READER_WAIT_S", 0.2)
    started = time.monotonic()
    with pytest.raises(UserError, match="fifo: cannot write it .nothing reads it"):
        outputs.write_atomically(fifo, "x")
    assert time.monotonic() - started < 3 and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_file_is_still_replaced_whole_and_through_a_link_the_link_stays(tmp_path):
    target, link = tmp_path / "page.html", tmp_path / "link.html"
    target.write_text("old")
    link.symlink_to(target.name)
    outputs.write_atomically(link, "new")
    outputs.write_atomically(tmp_path / "fresh.html", "fresh")
    assert target.read_text() == "new" and link.is_symlink() and (tmp_path / "fresh.html").read_text() == "fresh"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh.html", "link.html", "page.html"]


# -- the command line: `-o -`, `-o >(cmd)`, one file named twice ----------------------------------------
def test_export_and_report_dash_o_dash_write_to_standard_output(folder):
    before = harness.fingerprint([folder])
    csv = _cli(["export", "good.jsonl", "--format", "csv", "-o", "-"], folder)
    page = _cli(["report", "good.jsonl", "-o", "-"], folder)
    assert csv.code == 0 and csv.stdout.startswith("key,op,variant,") and "csv:" not in csv.stdout, csv.stderr
    assert page.code == 0 and page.stdout.rstrip().endswith("</html>") and page.stderr == "", page.stderr[-400:]
    assert harness.fingerprint([folder]) == before  # nothing written, no file named '-'


def test_export_into_a_pipe_from_dev_fd_as_a_shell_gives_for_dash_o_process_substitution(folder):
    read_end, write_end = os.pipe()
    got = []
    reader = _read_all(read_end, got)
    outcome = _cli(["export", "good.jsonl", "--format", "csv", "-o", f"/dev/fd/{write_end}"], folder)
    os.close(write_end)
    reader.join(10)
    assert outcome.code == 0 and outcome.stderr == "" and f"csv: /dev/fd/{write_end} (20 cases)" in outcome.stdout
    assert got and got[0].startswith(b"key,op,variant,") and got[0].count(b"\n") == 21


@pytest.mark.parametrize("argv, says", [
    (["check", "new.jsonl", "--baseline", "good.jsonl", "--markdown", "-"], "--markdown -: check prints its table there"),
    (["check", "new.jsonl", "--baseline", "good.jsonl", "--junit", "-"], "--junit -: check prints its table there"),
    (["compare", "good.jsonl", "new.jsonl", "--html", "-"], "--html -: compare prints its table there"),
    (["publish", "good.jsonl", "-o", "-"], "-o -: a site is a folder of pages"),
], ids=["check --markdown -", "check --junit -", "compare --html -", "publish -o -"])
def test_dash_where_standard_output_holds_something_else_is_one_line(folder, argv, says):
    before = harness.fingerprint([folder])
    line = _one_line(_cli(argv, folder), 2, says)
    assert "give a file name" in line and harness.fingerprint([folder]) == before


@pytest.mark.parametrize("markdown, junit, make", [
    ("F", "F", None),
    ("F", "./F", None),
    ("F", "sub/../F", lambda f: (f / "sub").mkdir()),
    ("F", "L", lambda f: (f / "L").symlink_to("F")),  # a link to a file not yet there
    ("F", "H", lambda f: ((f / "F").write_text("kept\n"), os.link(f / "F", f / "H"))),  # a hard link
], ids=["F and F", "F and ./F", "F and sub/../F", "a link to F", "a hard link to F"])
def test_two_outputs_that_are_one_file_are_refused_and_nothing_is_written(folder, markdown, junit, make):
    if make:
        make(folder)
    before = harness.fingerprint([folder])
    _one_line(_cli(["check", "new.jsonl", "--baseline", "good.jsonl", "--markdown", markdown, "--junit", junit], folder),
              2, "are the same file; give each output its own path")
    assert harness.fingerprint([folder]) == before
    assert (folder / "F").exists() == (junit == "H")  # only the hard link case made F


# -- the process: Ctrl-C, a closed pipe, MPLBACKEND ------------------------------------------------------
# `python -m primbench`, and what the `primbench` console script (and bench.py) runs.
ENTRY_POINTS = {"-m": ["-m", "primbench"], "script": ["-c", "import sys; from primbench.cli.main import main; sys.exit(main())"]}
# Printed by -X importtime once the first module below the CLI's own has loaded: from then on
# primbench's Ctrl-C handler is in place. Before it the interpreter itself is starting, which
# no package can speak for.
LOADING = re.compile(r"^import time:.*\| +primbench\.pathnames$")


def _interrupt(argv, cwd: Path, entry: str, delay: float):
    """Start the CLI, send SIGINT `delay` s after it began loading primbench; (exit code, stderr lines)."""
    process = subprocess.Popen([sys.executable, "-X", "importtime", *ENTRY_POINTS[entry], *argv], cwd=cwd,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               env=dict(os.environ, PYTHONPATH=str(REPO)))
    lines, loading = [], threading.Event()

    def read():
        for line in process.stderr:
            lines.append(line.rstrip("\n"))
            if LOADING.match(line.rstrip()):
                loading.set()
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert loading.wait(30), lines[-5:]
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    code = process.wait(30)
    reader.join(10)
    return code, [line for line in lines if not line.startswith("import time:")]


def _assert_interrupted_cleanly(code, lines, where: str) -> None:
    where = f"{where}: exit {code}, stderr {lines[-8:]!r}"
    text = "\n".join(lines)
    assert code in (0, 130) and "Traceback" not in text and "Exception ignored" not in text, where
    assert all(line.startswith("primbench: ") for line in lines), where  # progress lines are one-liners too
    if code == 130:
        assert lines[-1] == "primbench: interrupted", where


def _assert_nothing_half_written(folder: Path) -> None:
    assert not [p for p in folder.rglob("*") if p.name.startswith(".") and ".tmp" in p.name]  # no temporary file
    for page in folder.rglob("*.html"):  # renamed into place whole, or not at all
        assert page.read_text().rstrip().endswith("</html>"), page
    for cache in folder.rglob("*.json"):
        json.loads(cache.read_text())


@pytest.mark.parametrize("entry, delays", [("-m", (0.0, 0.05, 0.2, 0.5, 0.9, 1.4)), ("script", (0.0, 0.1, 0.6))])
def test_ctrl_c_during_report_at_any_moment_is_one_line_exit_130_nothing_half_written(folder, entry, delays):
    before = harness.fingerprint([folder / "good.jsonl"])
    codes = []
    for i, delay in enumerate(delays):  # while the modules load, while reading the run, rendering, writing
        code, lines = _interrupt(["report", "good.jsonl", "-o", f"r{i}.html"], folder, entry, delay)
        _assert_interrupted_cleanly(code, lines, f"report, SIGINT {delay} s into loading")
        codes.append(code)
    _assert_nothing_half_written(folder)
    assert 130 in codes and harness.fingerprint([folder / "good.jsonl"]) == before


def test_once_a_command_line_command_has_finished_ctrl_c_is_ignored_and_an_importers_is_kept():
    # Python's finalization puts SIGINT's default action back where a Python handler is set, so a
    # Ctrl-C while the interpreter shuts down ended a finished report by the signal (exit -2, seen
    # once in make test at 0.6 s); an ignored SIGINT is left ignored. Only the console script's call
    # (no argv) stops listening: a caller passing argv, as pytest does here, keeps its own handler.
    probe = ("import signal, sys; from primbench.cli.main import main; sys.argv = ['primbench', 'list']; "
             "code = main(); print('ignored' if signal.getsignal(signal.SIGINT) is signal.SIG_IGN else 'listening'); "
             "sys.exit(code)")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert result.returncode == 0 and result.stdout.splitlines()[-1] == "ignored", result.stdout[-300:] + result.stderr
    from primbench.cli import main as cli_main

    before = signal.getsignal(signal.SIGINT)
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli_main.main(["list"]) == 0
    assert signal.getsignal(signal.SIGINT) is before


def test_ctrl_c_during_publish_at_any_moment_is_one_line_exit_130_nothing_half_written(folder):
    """publish writes many pages (run pages, history, GPUs, index, two caches): a Ctrl-C between
    any two leaves each of them whole or absent, and the next publish finishes the site."""
    before = harness.fingerprint([folder / "good.jsonl", folder / "new.jsonl"])
    codes = []
    for delay in (0.0, 0.15, 0.4, 0.8, 1.2, 1.7, 2.3):
        code, lines = _interrupt(["publish", "good.jsonl", "new.jsonl", "-o", "site"], folder, "-m", delay)
        _assert_interrupted_cleanly(code, lines, f"publish, SIGINT {delay} s into loading")
        codes.append(code)
        _assert_nothing_half_written(folder / "site")
        shutil.rmtree(folder / "site", ignore_errors=True)  # each try starts a fresh site: every page is drawn
    assert 130 in codes and harness.fingerprint([folder / "good.jsonl", folder / "new.jsonl"]) == before
    finished = _cli(["publish", "good.jsonl", "-o", "site"], folder)
    assert finished.code == 0 and (folder / "site" / "index.html").read_text().rstrip().endswith("</html>")


def test_a_closed_pipe_ends_quietly_zero_for_a_listing_141_for_data_and_the_gate(folder):
    commands = {"list": (["list"], 0), "export": (["export", "good.jsonl", "--format", "csv", "-o", "-"], 141),
                "check": (["check", "new.jsonl", "--baseline", "good.jsonl"], 141)}
    running = {}
    for name, (argv, _) in commands.items():
        read_end, write_end = os.pipe()
        os.close(read_end)  # the reader has gone before the first line: `| true` without the race
        running[name] = _start(argv, folder, stdout=write_end, text=True)
        os.close(write_end)
    before = harness.fingerprint([folder])
    for name, process in running.items():
        _, err = process.communicate(timeout=30)
        assert (process.returncode, err) == (commands[name][1], ""), f"{name}: exit {process.returncode}, {err[-600:]!r}"
    assert harness.fingerprint([folder]) == before


def test_a_junk_mplbackend_does_not_stop_the_charts(folder):
    import json

    lines = (folder / "new.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    header["device"]["name"] = "NVIDIA A100"  # another GPU model: compare draws its scatter with matplotlib
    (folder / "other.jsonl").write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    both = ("from primbench.cli.main import main; import sys; "
            "sys.exit(main(['report', 'good.jsonl', '-o', 'r.html']) or main(['compare', 'good.jsonl', 'other.jsonl', '--html', 'c.html']))")
    process = subprocess.run([sys.executable, "-c", both], cwd=folder, capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, MPLBACKEND="junk", PYTHONPATH=str(REPO)))
    assert process.returncode == 0 and "Traceback" not in process.stderr, process.stderr[-800:]
    assert (folder / "r.html").exists() and "data:image/svg+xml" in (folder / "c.html").read_text()


# -- names: too long to look up, not UTF-8; a plugin that is a FIFO ---------------------------------------
@pytest.mark.parametrize("argv", [
    ["report", LONG], ["report", "good.jsonl", "-o", LONG + ".html"], ["export", LONG],
    ["export", "good.jsonl", "-o", LONG], ["check", LONG], ["compare", LONG, "good.jsonl"], ["publish", LONG],
    ["baseline", LONG], ["list", "--plugin", LONG + ".py"],
], ids=lambda argv: " ".join(a if len(a) < 20 else "LONG" for a in argv))
def test_a_name_too_long_to_look_up_is_one_line(folder, argv):
    before = harness.fingerprint([folder])
    line = _one_line(_cli(argv, folder), 2, "file name too long")
    assert len(line) < 400 and harness.fingerprint([folder]) == before


def test_a_run_with_a_legal_255_byte_name_gets_its_report(folder):
    name = "r" * (255 - len(".jsonl")) + ".jsonl"
    (folder / name).write_bytes((folder / "good.jsonl").read_bytes())
    outcome = _cli(["report", name], folder)
    assert outcome.code == 0 and "Traceback" not in outcome.stderr, outcome.stderr[-400:]
    assert (folder / (name[:-len(".jsonl")] + ".html")).read_text().rstrip().endswith("</html>")


def test_names_that_are_not_utf8_are_shown_escaped(folder):
    (folder / os.fsdecode(b"r\xff.jsonl")).write_bytes((folder / "good.jsonl").read_bytes())
    before = harness.fingerprint([folder])
    missing = _one_line(_cli(["report", os.fsdecode(b"missing\xfe.jsonl")], folder), 2, "no such run file")
    plugin = _one_line(_cli(["list", "--plugin", os.fsdecode(b"p\xfe.py")], folder), 2, "no such file")
    assert "missing\\xfe.jsonl" in missing and "plugin p\\xfe.py" in plugin
    assert harness.fingerprint([folder]) == before
    written = _cli(["export", os.fsdecode(b"r\xff.jsonl"), "-o", os.fsdecode(b"o\xfe.csv")], folder)
    assert written.code == 0 and "csv: o\\xfe.csv (20 cases)" in written.stdout and written.stderr == "", written.stderr
    assert os.path.exists(folder / os.fsdecode(b"o\xfe.csv"))


def test_a_plugin_that_is_a_fifo_is_not_a_regular_file(folder):
    os.mkfifo(folder / "plugin.py")
    _one_line(_cli(["list", "--plugin", "plugin.py"], folder), 2, "plugin plugin.py: is a FIFO (named pipe), not a regular file")
    assert stat.S_ISFIFO(os.lstat(folder / "plugin.py").st_mode)


# -- an output folder that refuses to be written: one line, before any progress line ----------------
@pytest.fixture
def refusing(tmp_path):
    """make(folder): the folder refuses new files. As root (CI here), a permission bit refuses
    nothing, so the folder is made immutable (chattr +i); as anyone else it is made read-only."""
    made = []

    def make(where: Path) -> Path:
        where.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(where)], capture_output=True).returncode:
                pytest.skip("root, and this file system cannot make a folder immutable")
        else:
            where.chmod(0o555)
        made.append(where)
        return where
    yield make
    for where in made:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(where)], check=True)
        else:
            where.chmod(0o755)


@pytest.mark.parametrize("argv, refused", [
    (["report", "good.jsonl", "-o", "locked/r.html"], "locked/r.html"),
    (["report", "locked/good.jsonl"], "locked/good.html"),  # the page beside its run, in a folder that refuses
    (["publish", "good.jsonl", "-o", "locked"], "locked/index.html"),
    (["publish", "good.jsonl", "-o", "locked/site"], "locked/site/index.html"),
    (["export", "good.jsonl", "-o", "locked/x.csv"], "locked/x.csv"),
    (["export", "good.jsonl", "--format", "nvbench-json", "--jsonbin", "locked/bins", "-o", "x.json"], "locked/bins/0.bin"),
    (["check", "new.jsonl", "--baseline", "good.jsonl", "--markdown", "locked/m.md"], "locked/m.md"),
    (["check", "new.jsonl", "--baseline", "good.jsonl", "--junit", "locked/j.xml"], "locked/j.xml"),
    (["compare", "good.jsonl", "new.jsonl", "--html", "locked/c.html"], "locked/c.html"),
    (["baseline", "good.jsonl", "--folder", "locked"], "locked/nvidia-h200.jsonl.gz"),
], ids=lambda value: " ".join(value[:2]) + (" " + value[-1] if len(value) > 2 else "") if isinstance(value, list) else None)
def test_an_output_folder_that_refuses_writing_is_one_line_and_nothing_is_written(folder, refusing, argv, refused):
    (folder / "locked").mkdir()
    (folder / "locked" / "good.jsonl").write_bytes((folder / "good.jsonl").read_bytes())
    refusing(folder / "locked")
    before = harness.fingerprint([folder])
    _one_line(_cli(argv, folder), 2, f"{refused}: cannot write it (locked is not a folder this user may write into)")
    assert harness.fingerprint([folder]) == before and sorted(p.name for p in (folder / "locked").iterdir()) == ["good.jsonl"]


def test_a_site_whose_runs_folder_refuses_writing_is_one_line_before_any_page(folder, refusing):
    assert _cli(["publish", "good.jsonl", "-o", "site"], folder).code == 0
    lines = (folder / "new.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    header["run_id"] += "-next"  # a run the site has no page for yet: its page goes into runs/
    (folder / "next.jsonl").write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    refusing(folder / "site" / "runs")
    before = harness.fingerprint([folder])
    _one_line(_cli(["publish", "good.jsonl", "next.jsonl", "-o", "site"], folder), 2,
              "site/runs/index.html: cannot write it (site/runs is not a folder this user may write into)")
    assert harness.fingerprint([folder]) == before


# -- every command that writes a file writes a pipe it is given in place ------------------------------
@pytest.mark.parametrize("argv, starts", [
    (["report", "good.jsonl", "-o"], b"<!DOCTYPE html>"),
    (["export", "good.jsonl", "--format", "gbench-json", "-o"], b"{"),
    (["check", "new.jsonl", "--baseline", "good.jsonl", "--markdown"], b"#"),
    (["check", "new.jsonl", "--baseline", "good.jsonl", "--junit"], b"<?xml"),
    (["compare", "good.jsonl", "new.jsonl", "--html"], b"<!DOCTYPE html>"),
], ids=lambda value: " ".join(value[:1] + value[-1:]) if isinstance(value, list) else None)
def test_every_writer_streams_into_a_pipe_it_is_given_and_leaves_no_file(folder, argv, starts):
    read_end, write_end = os.pipe()
    got = []
    reader = _read_all(read_end, got)
    before = harness.fingerprint([folder])
    outcome = _cli([*argv, f"/dev/fd/{write_end}"], folder)
    os.close(write_end)
    reader.join(10)
    assert outcome.code == 0 and "Traceback" not in outcome.stderr, outcome.stderr[-400:]
    assert got and got[0].lstrip().lower().startswith(starts.lower()), got[0][:80] if got else got
    assert harness.fingerprint([folder]) == before  # nothing written beside the inputs, no file named 'N'


def test_a_real_shells_dash_o_process_substitution_gets_the_report(folder):
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    script = f'"{sys.executable}" -m primbench report good.jsonl -o >(cat > got.html); status=$?; wait $!; exit $status'
    process = subprocess.run(["bash", "-c", script], cwd=folder, capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert process.returncode == 0 and "Traceback" not in process.stderr, process.stderr[-400:]
    assert (folder / "got.html").read_text().rstrip().endswith("</html>")
    assert sorted(p.name for p in folder.iterdir()) == ["good.jsonl", "got.html", "new.jsonl"]


def test_a_sample_file_that_is_a_fifo_nobody_reads_is_one_line_not_a_hang(folder, monkeypatch):
    (folder / "bins").mkdir()
    os.mkfifo(folder / "bins" / "0.bin")
    monkeypatch.setattr(outputs, "READER_WAIT_S", 0.2)  # the forked command inherits it
    before = harness.fingerprint([folder])
    outcome = _cli(["export", "good.jsonl", "--format", "nvbench-json", "--jsonbin", "bins", "-o", "x.json"], folder)
    _one_line(outcome, 2, "bins/0.bin: cannot write it (nothing reads it")
    assert outcome.seconds < 10 and stat.S_ISFIFO(os.lstat(folder / "bins" / "0.bin").st_mode)
    assert harness.fingerprint([folder]) == before and not (folder / "x.json").exists()


@pytest.mark.parametrize("json_path, says", [
    ("bins", "-o bins and --jsonbin bins are one path"),
    ("bins/./3.bin", "-o bins/./3.bin: is the name of a sample file in --jsonbin bins"),
], ids=["the samples' folder", "a sample file's name"])
def test_a_json_export_that_is_its_own_sample_folder_or_file_is_refused_before_any_sample(folder, json_path, says):
    before = harness.fingerprint([folder])
    _one_line(_cli(["export", "good.jsonl", "--format", "nvbench-json", "--jsonbin", "bins", "-o", json_path], folder), 2, says)
    assert harness.fingerprint([folder]) == before and not (folder / "bins").exists()
