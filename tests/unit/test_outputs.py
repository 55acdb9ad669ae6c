"""Outputs never overwrite an input, and a write is whole or absent (issue 21's data-loss class):
report, compare, check and publish refuse an output that is one of their inputs, with one line
and exit 2, the input unchanged; a write that cannot happen leaves nothing behind."""

import hashlib
import shutil

import pytest

from primbench import outputs
from primbench.errors import UserError
from tests.conftest import RUNS
from tests.unit.conftest import forked_cli


def _cli(cwd, *args):
    return forked_cli(cwd, *args)  # tests/unit/conftest.py: the command line in a forked child


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def two_runs(tmp_path):
    a, b = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    shutil.copy(RUNS / "progression.jsonl.gz", a)
    shutil.copy(RUNS / "progression.jsonl.gz", b)
    return a, b


@pytest.mark.parametrize("command", [
    lambda a, b: ("report", a, "-o", a),
    lambda a, b: ("compare", a, b, "--html", b),
    lambda a, b: ("check", b, "--baseline", a, "--junit", a),
    lambda a, b: ("check", b, "--baseline", a, "--markdown", b),
    lambda a, b: ("publish", a.parent, "-o", a.parent),
], ids=["report -o the run", "compare --html an input", "check --junit the baseline", "check --markdown the run",
        "publish into the runs' folder"])
def test_an_output_that_is_an_input_is_refused_and_the_input_kept(two_runs, tmp_path, command):
    a, b = two_runs
    before = {p: _digest(p) for p in (a, b)}
    result = _cli(tmp_path, *command(a, b))
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and "never overwrites what it reads" in lines[0], result.stderr
    assert {p: _digest(p) for p in (a, b)} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl.gz", "b.jsonl.gz"]  # nothing else written


def test_a_write_that_cannot_happen_is_one_line_and_leaves_nothing(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = _cli(tmp_path, "report", RUNS / "progression.jsonl.gz", "-o", blocker / "report.html")
    assert result.returncode == 2 and "is a file, not a folder" in result.stderr and "Traceback" not in result.stderr


def test_a_failed_rename_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "page.html"
    target.write_text("old")

    def refuse(source, destination):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outputs.os, "replace", refuse)
    with pytest.raises(UserError, match="page.html: cannot write it .No space left on device."):
        outputs.write_atomically(target, "new")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["page.html"]


def test_a_report_beside_its_run_and_a_site_elsewhere_are_written(two_runs, tmp_path):
    a, _ = two_runs
    assert _cli(tmp_path, "report", a).returncode == 0 and (tmp_path / "a.html").exists()
    site = _cli(tmp_path, "publish", a, "-o", tmp_path / "site")
    assert site.returncode == 0 and (tmp_path / "site" / "index.html").exists(), site.stderr


def test_a_written_file_gets_the_mode_open_would_give_it(tmp_path):
    # mkstemp's 0600 would keep a published page from the web server's user.
    import os

    from primbench.outputs import write_atomically

    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    written = write_atomically(tmp_path / "page.html", "<p>x</p>")
    assert os.stat(written).st_mode & 0o777 == os.stat(plain).st_mode & 0o777
