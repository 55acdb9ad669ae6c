"""The process's surroundings (issue 52, item 6): a standard output that is closed (`>&-`) or open
for reading only, a working folder deleted under the shell, and one nested deeper than a path may
be. Each is met as a closed pipe is: one line at most, never a traceback, never exit 1 (a gate's
regression) for a gate that found nothing, and nothing written where it could not be finished."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

import primbench.cli.main  # noqa: F401 (imported here once: each forked case then starts at once)
import primbench.report.context  # noqa: F401
from primbench import registry
from tests.hostile import harness

REPO = Path(__file__).resolve().parents[2]
CLOSED = 141  # as a closed pipe: the command's product or verdict never reached anyone




def _lines(outcome) -> list[str]:
    return [line for line in outcome.stderr.splitlines() if line.strip()]


def _assert_one_line(outcome, code: int, says: str) -> None:
    where = f"exit {outcome.code}; stderr {outcome.stderr[-600:]!r}"
    lines = _lines(outcome)
    assert outcome.code == code and "Traceback" not in outcome.stderr + outcome.stdout, where
    assert lines and lines[-1].startswith("primbench: ") and says in lines[-1], where
    assert all(line.startswith("primbench: ") for line in lines), where  # progress lines, then the one


# -- a closed standard output ----------------------------------------------------------------------
def _close_stdout():
    os.close(1)
    sys.stdout = None  # what Python itself starts with where descriptor 1 is closed


def _read_only_stdout():
    os.dup2(os.open(os.devnull, os.O_RDONLY), 1)  # `1</dev/null`: every write fails with EBADF
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False))


COMMANDS = {  # argv, its exit with no reader: 0 for a listing, 141 for a product or a verdict
    "list": (["list"], 0),
    "run --dry-run": (["run", "progression", "--dry-run"], CLOSED),
    "run --variant --dry-run": (["run", "--variant", "reduce/reduce2_sequential", "--dry-run"], CLOSED),
    "export": (["export", "good.jsonl"], CLOSED),
    "export -o -": (["export", "good.jsonl", "--format", "csv", "-o", "-"], CLOSED),
    "check": (["check", "new.jsonl", "--baseline", "good.jsonl"], CLOSED),
    "compare": (["compare", "good.jsonl", "new.jsonl"], CLOSED),
    "report -o": (["report", "good.jsonl", "-o", "r.html"], CLOSED),
}


@pytest.mark.parametrize("stdout", [_close_stdout, _read_only_stdout], ids=["closed", "read-only"])
@pytest.mark.parametrize("argv, code", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_closed_standard_output_is_one_line_and_the_exit_of_a_closed_pipe(folder, argv, code, stdout):
    before = harness.fingerprint([folder / "good.jsonl", folder / "new.jsonl"])
    outcome = harness.run_cli(argv, folder, folder.parent / "output", in_child=stdout)
    _assert_one_line(outcome, code, "standard output is closed")
    assert harness.fingerprint([folder / "good.jsonl", folder / "new.jsonl"]) == before


def test_a_check_that_finds_a_regression_with_stdout_closed_is_still_not_a_pass(folder):
    # Its table never reached anyone: 141, neither the 0 of a pass nor the 1 it would have printed.
    from tests.run_copies import edited_copy, scale_samples

    slowed = "reduce/reduce6_grid_stride_shuffle/float32/n=33554432/block=256/uniform"
    edited_copy(folder / "good.jsonl", folder / "slow.jsonl", lambda record: scale_samples(record, slowed, 1.5))
    printed = harness.run_cli(["check", "slow.jsonl", "--baseline", "good.jsonl"], folder, folder.parent / "printed")
    assert printed.code == 1 and "SLOWER" in printed.stdout, printed.stderr[-600:]  # where it can print, a regression
    outcome = harness.run_cli(["check", "slow.jsonl", "--baseline", "good.jsonl"], folder, folder.parent / "output",
                              in_child=_close_stdout)
    _assert_one_line(outcome, CLOSED, "standard output is closed")


def test_the_console_script_started_with_stdout_closed_ends_in_one_line(folder):
    # The real thing: Python starts with descriptor 1 closed, and flushes at exit.
    started = {name: subprocess.Popen([sys.executable, "-m", "primbench", *argv], cwd=folder, stderr=subprocess.PIPE,
                                      text=True, env=dict(os.environ, PYTHONPATH=str(REPO)), preexec_fn=lambda: os.close(1))
               for name, argv in (("list", ["list"]), ("check", ["check", "new.jsonl", "--baseline", "good.jsonl"]))}
    for name, process in started.items():
        _, err = process.communicate(timeout=60)
        assert (process.returncode, err.count("\n")) == ({"list": 0, "check": CLOSED}[name], 1), f"{name}: {err[-600:]!r}"
        assert err.startswith("primbench: standard output is closed") and "Exception ignored" not in err, err


# -- a working folder that was deleted ----------------------------------------------------------------
def _delete_the_working_folder():
    os.rmdir(os.getcwd())


@pytest.fixture
def gone(folder) -> Path:
    """An empty folder to start in, which the child deletes before the command (as `rm -r` from
    another shell would); the runs are in `folder`, named by absolute paths."""
    where = folder.parent / "gone"
    where.mkdir()
    return where


def _in_a_deleted_folder(argv, gone: Path):
    return harness.run_cli(argv, gone, gone.parent / "output", in_child=_delete_the_working_folder)


# progression.yaml: every float32 sum at 2^25 (the library baselines' among them).
_FLOAT32_SUMS = sum("float32" in v.dtypes for v in registry.variants("reduce"))


def test_commands_that_need_no_working_folder_work_in_a_deleted_one(folder, gone):
    good, new = str(folder / "good.jsonl"), str(folder / "new.jsonl")
    for argv, shows in ((["run", "--variant", "reduce/reduce2_sequential", "--dry-run"], "cases in 1 sweeps"),
                        (["check", new, "--baseline", good], "check: 0 regression(s)"), (["compare", good, new], "reduce"),
                        (["export", good], "key"), (["list"], "reduce2_sequential"),
                        (["run", str(REPO / "configs" / "progression.yaml"), "--dry-run"], f"{_FLOAT32_SUMS} cases")):
        outcome = _in_a_deleted_folder(argv, gone)
        assert outcome.code == 0 and outcome.stderr == "" and shows in outcome.stdout, f"{argv}: {outcome.stderr[-600:]!r}"
        gone.mkdir()


@pytest.mark.parametrize("argv", [
    ["report", "good.jsonl"], ["export", "good.jsonl"], ["report", "{good}", "-o", "r.html"], ["run", "mine.yaml", "--dry-run"],
    ["publish", "{good}", "-o", "site"], ["export", "{good}", "-o", "x.csv"], ["compare", "{good}", "{good}", "--html", "c.html"],
    ["baseline", "{good}"], ["check", "new.jsonl", "--baseline", "{good}"], ["run", "--variant", "reduce/*", "--plugin", "p.py"],
], ids=lambda argv: " ".join(a.replace("{good}", "ABS") for a in argv))
def test_a_relative_path_in_a_deleted_working_folder_is_one_line_saying_so(folder, gone, argv):
    before = harness.fingerprint([folder])
    outcome = _in_a_deleted_folder([a.replace("{good}", str(folder / "good.jsonl")) for a in argv], gone)
    _assert_one_line(outcome, 2, "the working folder was deleted: cd to an existing folder")
    assert len(_lines(outcome)) == 1 and harness.fingerprint([folder]) == before


# -- a working folder nested deeper than a path may be ----------------------------------------------------
@pytest.fixture
def deep(folder):
    """A descriptor of a folder nested 5,000 bytes below `folder` (a path past the 4,096 the system
    takes: made and entered one level at a time), holding good.jsonl; the child starts in it."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(25):
        os.mkdir("d" * 200, dir_fd=fd)
        inner = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    run = os.open("good.jsonl", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(run, (folder / "good.jsonl").read_bytes())
    os.close(run)
    yield fd
    os.close(fd)


def _in_the_deep_folder(argv, folder: Path, deep_fd: int):
    return harness.run_cli(argv, folder, folder.parent / "output", in_child=lambda: os.fchdir(deep_fd))


def _deep_listing(deep_fd: int) -> list[str]:
    return sorted(os.listdir(deep_fd))


@pytest.mark.parametrize("argv", [
    ["report", "good.jsonl", "-o", "r.html"], ["report", "good.jsonl"], ["export", "good.jsonl", "-o", "x.csv"],
    ["check", "good.jsonl", "--baseline", "good.jsonl", "--junit", "j.xml"], ["compare", "good.jsonl", "good.jsonl", "--html", "c.html"],
    ["publish", "good.jsonl", "-o", "site"], ["baseline", "good.jsonl"],
], ids=" ".join)
def test_a_relative_output_in_a_folder_too_deep_for_a_path_is_refused_before_any_work(folder, deep, argv):
    outcome = _in_the_deep_folder(argv, folder, deep)
    _assert_one_line(outcome, 2, "the system takes at most 4096 a path (the working folder is nested that deep)")
    assert len(_lines(outcome)) == 1 and _deep_listing(deep) == ["good.jsonl"]  # no progress line, no page, no temporary file


def test_reading_and_listing_in_a_folder_too_deep_for_a_path_still_work(folder, deep):
    for argv in (["check", "good.jsonl", "--baseline", "good.jsonl"], ["export", "good.jsonl"],
                 ["run", "--variant", "reduce/reduce2_sequential", "--dry-run"]):
        outcome = _in_the_deep_folder(argv, folder, deep)
        assert outcome.code == 0 and outcome.stderr == "", f"{argv}: {outcome.stderr[-600:]!r}"
